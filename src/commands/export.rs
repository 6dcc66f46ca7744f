//! `loazero export MODEL --out DIR`: the model as safetensors weights, a traced
//! TorchScript module (any batch size) and a `model.json` description.

use anyhow::Result;
use std::path::PathBuf;

/// Arguments of `loazero export`.
#[derive(clap::Args)]
pub struct Args {
    /// Model or checkpoint file (`.safetensors` written by loazero).
    pub model: PathBuf,
    /// Output directory (created if needed); receives model.safetensors, model.pt and
    /// model.json.
    #[arg(long)]
    pub out: PathBuf,
}

/// Writes the export files and reports the self-check of the traced module.
pub fn run(args: Args) -> Result<()> {
    let report = train::export::export(&args.model, &args.out)?;
    for f in &report.files {
        println!("wrote {}", f.display());
    }
    println!(
        "TorchScript check: max |traced - rust| = {:.2e} at batch sizes 1 and 5",
        report.max_abs_diff
    );
    Ok(())
}
