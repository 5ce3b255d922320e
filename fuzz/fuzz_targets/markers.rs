//! The marker parser never panics; an accepted document strips to a subsequence of its lines
//! and a rejected one names a line inside the document.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else { return };
    match msd_core::markup::markers::parse("fuzz.md", src) {
        Ok(doc) => {
            let stripped = doc.strip();
            assert!(stripped.len() <= src.len());
            if !doc.has_markers() {
                assert_eq!(stripped, src);
            }
        }
        Err(e) => assert!(e.line >= 1 && e.line <= src.split('\n').count().max(1)),
    }
});
