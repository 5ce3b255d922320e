//! [`Sha256`]: the digest of a file's bytes, held as its 32 bytes.
//!
//! Every planned file carries its digest in several places at once (the plan's op, the staged
//! transaction's op, the manifest entry), for every target of a run. As 64-character hex strings
//! those cost a heap allocation each (about 100 bytes with the allocator's header); as 32 bytes
//! they live inline and are copied freely. Text (the manifest, the journal, `--json`) still
//! carries lower-case hex: that is how a digest is written, read and shown.

use std::fmt;
use std::str::FromStr;

/// The sha256 of some bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sha256(pub [u8; 32]);

impl Sha256 {
    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Sha256 {
        use sha2::Digest as _;
        Sha256(sha2::Sha256::digest(bytes).into())
    }

    /// The digest a finished hasher holds.
    pub fn from_hasher(hasher: sha2::Sha256) -> Sha256 {
        use sha2::Digest as _;
        Sha256(hasher.finalize().into())
    }

    /// Lower-case hex, 64 ASCII bytes, made without the formatter: every manifest entry and
    /// journal op carries one, and 32 `{:02x}` writes each were 3% of an `--all` install's time.
    pub fn hex_bytes(&self) -> [u8; 64] {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut out = [0u8; 64];
        for (pair, b) in out.chunks_exact_mut(2).zip(self.0) {
            pair[0] = DIGITS[usize::from(b >> 4)];
            pair[1] = DIGITS[usize::from(b & 0x0f)];
        }
        out
    }
}

impl fmt::Display for Sha256 {
    /// Lower-case hex, 64 characters.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hex = self.hex_bytes();
        f.write_str(std::str::from_utf8(&hex).map_err(|_| fmt::Error)?)
    }
}

impl fmt::Debug for Sha256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sha256({self})")
    }
}

/// Text that is not 64 hex digits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a sha256 (64 hex digits): {0:?}")]
pub struct BadDigest(pub String);

impl FromStr for Sha256 {
    type Err = BadDigest;

    /// 64 hex digits, either case.
    fn from_str(s: &str) -> Result<Sha256, BadDigest> {
        let bad = || BadDigest(s.chars().take(80).collect());
        if s.len() != 64 {
            return Err(bad());
        }
        let mut out = [0u8; 32];
        for (i, pair) in s.as_bytes().chunks_exact(2).enumerate() {
            let digit = |c: u8| (c as char).to_digit(16).ok_or_else(bad);
            out[i] = (digit(pair[0])? << 4 | digit(pair[1])?) as u8;
        }
        Ok(Sha256(out))
    }
}

impl PartialEq<str> for Sha256 {
    /// Whether `other` is this digest in hex (either case).
    fn eq(&self, other: &str) -> bool {
        other.parse::<Sha256>().is_ok_and(|d| d == *self)
    }
}

impl serde::Serialize for Sha256 {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let hex = self.hex_bytes();
        s.serialize_str(std::str::from_utf8(&hex).map_err(serde::ser::Error::custom)?)
    }
}

impl<'de> serde::Deserialize<'de> for Sha256 {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Sha256, D::Error> {
        struct Hex;
        impl serde::de::Visitor<'_> for Hex {
            type Value = Sha256;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a sha256 as 64 hex digits")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Sha256, E> {
                v.parse().map_err(E::custom)
            }
        }
        d.deserialize_str(Hex)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_matches_the_usual_digest() {
        let d = Sha256::of(b"abc");
        let hex = d.to_string();
        assert_eq!(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(hex.parse::<Sha256>().unwrap(), d);
        assert_eq!(hex.to_uppercase().parse::<Sha256>().unwrap(), d);
        assert_eq!(serde_json::to_string(&d).unwrap(), format!("\"{hex}\""));
        assert_eq!(serde_json::from_str::<Sha256>(&format!("\"{hex}\"")).unwrap(), d);
        assert!(d == *hex.as_str());
    }

    #[test]
    fn text_that_is_not_a_digest_is_refused() {
        for bad in ["", "abc", &"g".repeat(64), &"a".repeat(63), &"a".repeat(65), &"é".repeat(32)] {
            assert!(bad.parse::<Sha256>().is_err(), "{bad:?}");
            assert!(serde_json::from_str::<Sha256>(&format!("{bad:?}")).is_err(), "{bad:?}");
        }
    }
}
