//! Positions in JSON text, for errors that serde cannot locate.

/// Finds the 1-based line and column of the first occurrence of `"key"` in `text`, to locate
/// semantic errors that serde cannot.
pub fn locate(text: &str, needle: &str) -> (usize, usize) {
    match text.find(needle) {
        Some(i) => {
            let before = &text[..i];
            let line = before.matches('\n').count() + 1;
            let col = i - before.rfind('\n').map_or(0, |p| p + 1) + 1;
            (line, col)
        }
        None => (1, 1),
    }
}
