//! `msd_run`: the runtime helper installed workflows call. All logic lives in the library.
fn main() -> std::process::ExitCode {
    msd_install::runtime_helper::main(std::env::args_os())
}
