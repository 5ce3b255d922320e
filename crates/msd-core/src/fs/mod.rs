//! Disk access and paths: [`fsx`] (the one module that touches the filesystem), [`relpath`]
//! (validated relative paths), [`json`] (positions in JSON text for located errors).

pub mod fsx;
pub mod json;
pub mod relpath;
