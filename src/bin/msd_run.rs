//! `msd_run`: the runtime helper installed workflows call. All logic lives in the library.
fn main() -> std::process::ExitCode {
    msd_run::main(std::env::args_os())
}
