//! The context predicate parser never panics, and every predicate and diagnostic it reports
//! sits on a line of the document.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else { return };
    let lines = src.split('\n').count();
    let parsed = msd_core::installed::predicates::parse(src);
    for p in &parsed.predicates {
        assert!(p.line >= 1 && p.line <= lines);
    }
    for m in &parsed.malformed {
        assert!(m.line >= 1 && m.line <= lines);
    }
});
