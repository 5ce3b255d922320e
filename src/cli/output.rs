//! Progress bars for long runs: on stderr, only when stderr is a terminal and `--quiet` is not
//! given; silent when piped, so scripts and logs never see them. And the one way to stdout
//! ([`print`], [`println`]): a reader that went away (`msd-install schema | head -1`, EPIPE) is
//! not an error and never a panic, so every command exits quietly with its own code. And the
//! styles of `--color` ([`Paint`]), from the choice the run's settings carry: no global state.
//!
//! Input: whether output is quiet. Output: a [`txn::Progress`] sink the writer ticks. The bar
//! uses a plain template (no colours), so `NO_COLOR` has nothing to turn off.

use std::fmt::Display;
use std::io::{IsTerminal, Write};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::apply::{self, txn};
use crate::cli::args::ColorChoice;

/// The bar of one run (hidden when not on a terminal).
pub(crate) struct Bars {
    bar: Option<ProgressBar>,
}

impl Bars {
    /// A bar labelled `label`, shown only when `enabled`.
    pub(crate) fn new(enabled: bool, label: &str) -> Bars {
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
        Bars { bar }
    }

    /// Whether bars should be drawn: stderr is a terminal and the run is not quiet.
    pub(crate) fn enabled(quiet: bool) -> bool {
        !quiet && std::io::stderr().is_terminal()
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

/// Bars for every target of a run, when enabled (see [`Bars::enabled`]): drawn together, one
/// line each, as two targets are staged at once.
pub(crate) struct RunBars {
    multi: Option<MultiProgress>,
}

impl RunBars {
    /// The bars of a run, drawn only when `enabled`.
    pub(crate) fn new(enabled: bool) -> RunBars {
        RunBars { multi: enabled.then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr())) }
    }
}

impl apply::Progress for RunBars {
    fn target(&self, label: &str) -> Box<dyn txn::Progress + '_> {
        let mut bars = Bars::new(self.multi.is_some(), label);
        if let (Some(multi), Some(bar)) = (&self.multi, bars.bar.take()) {
            bars.bar = Some(multi.add(bar));
        }
        Box::new(bars)
    }
}

/// Whether stdout gets color and alignment under `--color c`: `always`, or `auto` with stdout a
/// terminal and `NO_COLOR` unset or empty (<https://no-color.org>).
pub(crate) fn color(c: ColorChoice) -> bool {
    match c {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stdout().is_terminal()
        }
    }
}

/// The styles of printed text; plain when [`color`] is off.
pub(crate) struct Paint {
    on: bool,
}

impl Paint {
    /// Styles for stdout under `--color c`.
    pub(crate) fn stdout(c: ColorChoice) -> Paint {
        Paint { on: color(c) }
    }

    fn style(&self, s: console::Style, text: &str) -> String {
        s.force_styling(self.on).apply_to(text).to_string()
    }

    /// Added lines, success.
    pub(crate) fn green(&self, text: &str) -> String {
        self.style(console::Style::new().green(), text)
    }

    /// Removed lines, problems.
    pub(crate) fn red(&self, text: &str) -> String {
        self.style(console::Style::new().red(), text)
    }

    /// Hunk headers.
    pub(crate) fn cyan(&self, text: &str) -> String {
        self.style(console::Style::new().cyan(), text)
    }

    /// Headings.
    pub(crate) fn bold(&self, text: &str) -> String {
        self.style(console::Style::new().bold(), text)
    }
}

/// Writes `text` to stdout. A closed stdout (EPIPE: the reader has what it wanted) drops the
/// rest quietly; any other failure to write is said once on stderr.
pub(crate) fn print(text: impl Display) {
    let mut out = std::io::stdout().lock();
    match write!(out, "{text}").and_then(|()| out.flush()) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => eprintln!("warning: writing to stdout: {e}"),
    }
}

/// [`print`] and a newline.
pub(crate) fn println(text: impl Display) {
    print(format_args!("{text}\n"));
}
