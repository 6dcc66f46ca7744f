//! Links libtorch into this package's test binaries so they start without
//! `LD_LIBRARY_PATH` and see CUDA when it exists (see `shared/notes/tch.md`):
//! an rpath to the torch library directory, and `--no-as-needed -ltorch` so the linker
//! keeps `libtorch.so` (and through it `libtorch_cuda.so`) although no symbol of it is
//! referenced directly.

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_TCH_LIBTORCH_LIB");
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if target_os != "linux" {
        return;
    }
    let Ok(lib) = std::env::var("DEP_TCH_LIBTORCH_LIB") else {
        println!("cargo:warning=DEP_TCH_LIBTORCH_LIB not set: test binaries need LD_LIBRARY_PATH");
        return;
    };
    let lib = std::fs::canonicalize(&lib).unwrap_or_else(|_| lib.into());
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib.display());
    println!("cargo:rustc-link-arg=-Wl,--no-as-needed");
    println!("cargo:rustc-link-arg=-ltorch");
}
