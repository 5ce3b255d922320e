//! The frontmatter reader never panics; what it accepts renders back to text that parses to
//! the same entries, and what it rejects names a line of the document.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else { return };
    match msd_core::markup::frontmatter::split("fuzz.md", src) {
        Ok((Some(fm), body)) => {
            let again = fm.render() + body;
            let (fm2, _) = msd_core::markup::frontmatter::split("fuzz.md", &again).expect("a rendered frontmatter parses");
            let keys: Vec<_> = fm.entries.iter().map(|e| e.key.clone()).collect();
            let keys2: Vec<_> = fm2.expect("still a frontmatter").entries.iter().map(|e| e.key.clone()).collect();
            assert_eq!(keys, keys2);
        }
        Ok((None, body)) => assert_eq!(body, src),
        Err(e) => assert!(e.line >= 1 && e.line <= src.split('\n').count() + 1),
    }
});
