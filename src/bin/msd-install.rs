//! `msd-install`: install msd-core into AI coding runtimes. All logic lives in the library.

fn main() -> std::process::ExitCode {
    msd_install::cli::main(std::env::args_os())
}
