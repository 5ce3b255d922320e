//! Recover: finish (or undo) what an interrupted run left on a target, and nothing else.

use std::path::Path;

use super::ApplyError;
use super::take::hold;
use crate::apply::txn::Recovery;

/// Locks `home` and completes or rolls back what an interrupted run left there.
pub fn recover(home: &Path, allow_symlinks: bool) -> Result<Option<Recovery>, ApplyError> {
    if !home.is_dir() {
        return Ok(None);
    }
    let held = hold(&[home], allow_symlinks, None)?;
    Ok(held.recoveries.get(home).cloned())
}
