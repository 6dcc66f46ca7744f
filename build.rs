//! Links libtorch into the `loazero-torch` binary and the root test binaries so they start
//! without `LD_LIBRARY_PATH` and see CUDA where it exists (see `shared/notes/tch.md`):
//! an rpath to the canonicalized torch library directory, and `--no-as-needed -ltorch`
//! so the linker keeps `libtorch.so` (and through it `libtorch_cuda.so`) although no
//! symbol of it is referenced directly. The directory comes from torch-sys
//! (`DEP_TCH_LIBTORCH_LIB`, passed because this package depends on torch-sys directly).
//! The same directory is baked in as `LOAZERO_TORCH_LIB_BUILD` for `loazero info`.
//! The `loazero` binary gets none of this: it references no torch symbol, so with rustc's
//! `--as-needed` it has no DT_NEEDED on libtorch and starts without loading it.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=DEP_TCH_LIBTORCH_LIB");
    let lib = std::env::var("DEP_TCH_LIBTORCH_LIB").ok();
    let lib = lib.map(|l| std::fs::canonicalize(&l).unwrap_or_else(|_| l.into()));
    println!(
        "cargo:rustc-env=LOAZERO_TORCH_LIB_BUILD={}",
        lib.as_ref()
            .map(|l| l.display().to_string())
            .unwrap_or_default()
    );
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    let Some(lib) = lib else {
        println!("cargo:warning=DEP_TCH_LIBTORCH_LIB not set: loazero needs LD_LIBRARY_PATH");
        return;
    };
    let args = [
        format!("-Wl,-rpath,{}", lib.display()),
        "-Wl,--no-as-needed".to_string(),
        "-ltorch".to_string(),
    ];
    for arg in &args {
        println!("cargo:rustc-link-arg-bin=loazero-torch={arg}");
        println!("cargo:rustc-link-arg-tests={arg}");
    }
}
