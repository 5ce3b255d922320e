//! `msd-install`: install msd-core into AI coding runtimes. All logic lives in the library.

/// mimalloc, not the C library's malloc: an install allocates and frees hundreds of thousands
/// of small buffers (paths, composed text, plan entries); see Cargo.toml.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    msd_install::cli::main(std::env::args_os())
}
