//! The capability manifest loader never panics; a rejected manifest names a line and column
//! inside the text (or 0:0 when the problem is the whole set).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let result = msd_core::manifest::capability::parse("fuzz/capability.json", text)
        .and_then(|cap| msd_core::manifest::capability::validate("fuzz/capability.json", text, &cap, "fuzz").map(|()| cap));
    if let Err(e) = result {
        let lines = text.split('\n').count();
        assert!(e.line <= lines + 1, "line {} of {lines}", e.line);
    }
});
