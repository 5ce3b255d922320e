//! Progress bars for long runs: on stderr, only when stderr is a terminal and `--quiet` is not
//! given; silent when piped, so scripts and logs never see them.
//!
//! Input: whether output is quiet. Output: a [`txn::Progress`] sink the writer ticks. The bar
//! uses a plain template (no colours), so `NO_COLOR` has nothing to turn off.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::apply::{self, txn};

/// The bar of one run (hidden when not on a terminal).
pub struct Bars {
    bar: Option<ProgressBar>,
    label: String,
}

impl Bars {
    /// A bar labelled `label`, shown only when `enabled`.
    pub fn new(enabled: bool, label: &str) -> Bars {
        let bar = enabled.then(|| {
            let b = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
            b.set_style(
                ProgressStyle::with_template("{prefix} {msg:<8} [{bar:30}] {pos}/{len}")
                    .expect("static template")
                    .progress_chars("=> "),
            );
            b.set_prefix(label.to_string());
            b
        });
        Bars { bar, label: label.to_string() }
    }

    /// Whether bars should be drawn: stderr is a terminal and the run is not quiet.
    pub fn enabled(quiet: bool) -> bool {
        !quiet && std::io::stderr().is_terminal()
    }

    /// The label.
    pub fn label(&self) -> &str {
        &self.label
    }
}

impl txn::Progress for Bars {
    fn staging(&self, n: usize) {
        if let Some(b) = &self.bar {
            b.set_message("staging");
            b.set_length(n as u64);
            b.set_position(0);
        }
    }

    fn tick(&self) {
        if let Some(b) = &self.bar {
            b.inc(1);
        }
    }

    fn applying(&self, n: usize) {
        if let Some(b) = &self.bar {
            b.set_message("applying");
            b.set_length(n as u64);
            b.set_position(0);
        }
    }
}

impl Drop for Bars {
    fn drop(&mut self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// Bars for every target of a run, when `enabled` (see [`Bars::enabled`]).
pub struct RunBars {
    /// Whether to draw them.
    pub enabled: bool,
}

impl apply::Progress for RunBars {
    fn target(&self, label: &str) -> Box<dyn txn::Progress + '_> {
        Box::new(Bars::new(self.enabled, label))
    }
}
