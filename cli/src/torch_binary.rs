//! `loazero-torch`, the binary with torch, found beside the running one: the torch-free
//! `loazero` replaces itself by it for a command that needs torch (`main.rs`), and
//! `loazero engine` hands a session over to it when asked for a network player
//! ([`crate::commands::engine`]).

use std::path::{Path, PathBuf};

/// Its file name.
pub const NAME: &str = "loazero-torch";

/// Its path: beside the running binary.
pub fn path() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe()
        .map_err(|e| anyhow::anyhow!("cannot locate the loazero binary itself: {e}"))?;
    Ok(exe.with_file_name(NAME))
}

/// The error of a failed start of it at `path`: what failed and how to build it.
pub fn cannot_run(path: &Path, err: std::io::Error) -> anyhow::Error {
    anyhow::anyhow!(
        "cannot run {}: {err} (this command needs torch, which the loazero binary runs from \
         {NAME} beside it; build both with `make build`)",
        path.display()
    )
}
