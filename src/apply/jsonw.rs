//! JSON written by hand for the per-file lists an install writes on every run (the file
//! manifest of each target, the fast path's record of each target): the same bytes serde_json
//! writes for them (the tests compare the two), without serde's per-field calls. Serialising
//! those lists was a tenth of a fresh `--all`'s instructions other than sha256
//! (docs/PERFORMANCE.md, issue 37): one entry is a path, a size, a digest, a mode and a kind,
//! none of which needs serde's generality. Everything else keeps serde.

use msd_core::fs::digest::Sha256;
use msd_core::fs::fsx::FileMode;

use crate::pipeline::convert::FileKind;

/// `s` as a JSON string: as is between quotes when nothing in it needs an escape (a control
/// character, `"` or `\`), else through serde_json.
pub(crate) fn string(out: &mut Vec<u8>, s: &str) {
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        serde_json::to_writer(&mut *out, s).expect("a string serializes");
    }
}

/// An unsigned integer in decimal.
pub(crate) fn uint(out: &mut Vec<u8>, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

/// A signed integer in decimal.
pub(crate) fn int(out: &mut Vec<u8>, n: i64) {
    if n < 0 {
        out.push(b'-');
    }
    uint(out, n.unsigned_abs());
}

/// A digest as its 64 lower-case hex characters, quoted.
pub(crate) fn sha256(out: &mut Vec<u8>, d: &Sha256) {
    out.push(b'"');
    out.extend_from_slice(&d.hex_bytes());
    out.push(b'"');
}

/// A file mode as serde names it (quoted).
pub(crate) fn mode(out: &mut Vec<u8>, m: FileMode) {
    out.extend_from_slice(match m {
        FileMode::Regular => b"\"regular\"",
        FileMode::Executable => b"\"executable\"",
        FileMode::Private => b"\"private\"",
    });
}

/// A file kind as serde names it (quoted).
pub(crate) fn kind(out: &mut Vec<u8>, k: FileKind) {
    out.extend_from_slice(match k {
        FileKind::Command => b"\"command\"",
        FileKind::Skill => b"\"skill\"",
        FileKind::Agent => b"\"agent\"",
        FileKind::Workflow => b"\"workflow\"",
        FileKind::Core => b"\"core\"",
        FileKind::Program => b"\"program\"",
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn via<T: serde::Serialize>(v: &T) -> Vec<u8> {
        serde_json::to_vec(v).unwrap()
    }

    #[test]
    fn every_piece_is_what_serde_json_writes() {
        for s in ["", "agents/a.md", "é/ü “x”", "a\"b", "a\\b", "tab\there", "nl\n", "\u{1}\u{1f}", "\u{7f}"] {
            let mut out = Vec::new();
            string(&mut out, s);
            assert_eq!(out, via(&s), "{s:?}");
        }
        for n in [0u64, 7, 10, 99, 12_345, u64::MAX] {
            let mut out = Vec::new();
            uint(&mut out, n);
            assert_eq!(out, via(&n));
        }
        for n in [0i64, -1, 42, -1_700_000_000_123_456_789, i64::MIN, i64::MAX] {
            let mut out = Vec::new();
            int(&mut out, n);
            assert_eq!(out, via(&n));
        }
        let d = Sha256::of(b"x");
        let mut out = Vec::new();
        sha256(&mut out, &d);
        assert_eq!(out, via(&d));
        for m in [FileMode::Regular, FileMode::Executable, FileMode::Private] {
            let mut out = Vec::new();
            mode(&mut out, m);
            assert_eq!(out, via(&m));
        }
        for k in
            [FileKind::Command, FileKind::Skill, FileKind::Agent, FileKind::Workflow, FileKind::Core, FileKind::Program]
        {
            let mut out = Vec::new();
            kind(&mut out, k);
            assert_eq!(out, via(&k));
        }
    }
}
