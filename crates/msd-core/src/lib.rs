//! msd-core: the contract msd-install and msd_run share.
//!
//! - [`fs`]: every read and write of both binaries (atomic writes, confinement, locks), relative
//!   paths, positions in JSON text;
//! - [`markup`]: the `msd:` markers, the `when=` grammar, YAML frontmatter;
//! - [`manifest`]: the capability manifests of `runtimes/<id>/capability.json` (types, caps and
//!   tiers, settings surfaces, resolvers, validation);
//! - [`installed`]: what an installed core holds for msd_run (section manifest, resolvers, agent
//!   payloads, config keys, the invocation grammar, the context predicates);
//! - [`shell`]: quoting of the paths msd writes into content and command strings;
//! - [`compose`]: the fragment composer, how it measures, its contract gate and the
//!   review-prompt ladder.
//!
//! Nothing here prints, and nothing pulls in a CLI, rayon, progress bars or a tokenizer.

pub mod compose;
pub mod fs;
pub mod installed;
pub mod manifest;
pub mod markup;
pub mod shell;
