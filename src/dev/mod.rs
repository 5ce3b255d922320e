//! Maintainers' tools, not part of an install: [`attribution`] (emitted drift traced to its
//! sources), [`partition`] (the compact-content partition check), [`tokens`] (the token
//! benchmark), [`scale`] (synthetic content for the install benchmark), [`port`] (the
//! reference's own content in msd's conventions, for the same benchmark), [`gitx`] (git, for
//! base revisions), [`generated`] (the `--check` / `--write` idiom of generated files),
//! [`references`] (every reference the content makes, checked), [`tools`] (every tool a
//! command's workflows or an agent's text uses is one it is allowed), [`tool_names`] (prose
//! names no tool some runtime lacks).

pub(crate) mod attribution;
pub(crate) mod generated;
pub(crate) mod gitx;
pub(crate) mod partition;
pub(crate) mod port;
pub mod references;
pub(crate) mod scale;
pub(crate) mod tokens;
pub(crate) mod tool_names;
pub(crate) mod tools;
