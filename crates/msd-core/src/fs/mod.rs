//! Disk access and paths: [`fsx`] (the one module that touches the filesystem), [`relpath`]
//! (validated relative paths), [`json`] (positions in JSON text for located errors), [`bytes`]
//! (the bytes of a file to install: shared, embedded or read from a file), [`digest`] (their
//! sha256, as 32 bytes).

pub mod bytes;
pub mod digest;
pub mod fsx;
pub mod json;
pub mod relpath;
