//! The pipeline's own error: every way loading, validating, composing, converting, guarding or
//! synthesizing can fail. Each variant wraps the typed error of its stage, which carries the
//! path (and line:col where there is one); the CLI maps them to exit codes and hints.

use crate::pipeline::convert::ConvertError;
use crate::pipeline::fit::FitError;
use crate::pipeline::guard::GuardError;
use crate::pipeline::load::{ContentError, LoadError};
use crate::pipeline::synth::{HelperError, SynthError};
use crate::pipeline::target::TargetError;

/// Any error of the pipeline stages.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// Loading content or manifests failed.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// A content file is invalid.
    #[error(transparent)]
    Content(#[from] ContentError),
    /// The target cannot be resolved.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// Conversion failed.
    #[error(transparent)]
    Convert(#[from] ConvertError),
    /// Caps were violated.
    #[error(transparent)]
    Guard(#[from] GuardError),
    /// An emitted file cannot be composed to fit its cap (boxed: it names much).
    #[error(transparent)]
    Fit(Box<FitError>),
    /// The msd_run binary to install is missing.
    #[error(transparent)]
    Helper(#[from] HelperError),
    /// A runtime id that no manifest defines.
    #[error("unknown runtime `{given}`")]
    UnknownRuntime {
        /// What was asked for.
        given: String,
        /// The valid ids.
        valid: Vec<String>,
    },
    /// A profile the content does not define.
    #[error(transparent)]
    Profile(#[from] crate::pipeline::profile::ProfileError),
    /// No runtime was named and no manifest is marked primary.
    #[error("no runtime was named and no manifest is marked \"tier\": \"primary\"")]
    NoPrimary,
}

impl From<FitError> for PipelineError {
    fn from(e: FitError) -> PipelineError {
        PipelineError::Fit(Box::new(e))
    }
}

impl From<SynthError> for PipelineError {
    fn from(e: SynthError) -> PipelineError {
        match e {
            SynthError::Helper(h) => PipelineError::Helper(h),
            SynthError::Convert(c) => PipelineError::Convert(c),
        }
    }
}
