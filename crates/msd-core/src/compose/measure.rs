//! How the composer and the guards measure text: LF-normalised UTF-8 bytes (SPEC section 5).

/// LF-normalised byte count (CRLF counts as one byte).
pub fn lf_bytes(bytes: &[u8]) -> u64 {
    let crlf = bytes.windows(2).filter(|w| w == b"\r\n").count();
    (bytes.len() - crlf) as u64
}
