//! `msd_run`: the runtime helper installed workflows call. All logic lives in the library.
//!
//! On Unix the process starts at a C `main` of its own, not std's (`no_main`): a hook runs on
//! every tool call, and std's start-up work it does not need (the main thread's stack bounds,
//! read from `/proc/self/maps`) was a fifth of a status line's instructions. What std's start
//! gave that msd_run needs, [`msd_run::start`] gives (docs/PERFORMANCE.md, issue 37).
#![cfg_attr(unix, no_main)]

#[cfg(not(unix))]
fn main() -> std::process::ExitCode {
    msd_run::main(std::env::args_os())
}

/// The C runtime's entry point.
#[cfg(unix)]
#[unsafe(no_mangle)]
extern "C" fn main(argc: std::ffi::c_int, argv: *const *const std::ffi::c_char) -> std::ffi::c_int {
    // SAFETY: `argc` and `argv` are the C runtime's own.
    unsafe { msd_run::start(argc, argv) }
}
