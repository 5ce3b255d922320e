//! Rebuild when the embedded trees change: `include_dir!` does not see added or removed files.
fn main() {
    println!("cargo:rerun-if-changed=content");
    println!("cargo:rerun-if-changed=runtimes");
}
