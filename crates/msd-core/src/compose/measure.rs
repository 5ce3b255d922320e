//! How the composer and the guards measure text: LF-normalised UTF-8 bytes (SPEC section 5).

/// LF-normalised byte count (CRLF counts as one byte).
pub fn lf_bytes(bytes: &[u8]) -> u64 {
    let crlf = memchr::memchr_iter(b'\r', bytes).filter(|&i| bytes.get(i + 1) == Some(&b'\n')).count();
    (bytes.len() - crlf) as u64
}

#[cfg(test)]
mod tests {
    use super::lf_bytes;

    #[test]
    fn crlf_counts_as_one_byte_and_a_lone_cr_as_one() {
        for (text, want) in
            [("", 0), ("a", 1), ("\r\n", 1), ("\r", 1), ("\n\r", 2), ("a\r\r\nb", 4), ("x\r\n\r\n", 3), ("é\r\n", 3)]
        {
            assert_eq!(lf_bytes(text.as_bytes()), want, "{text:?}");
        }
    }
}
