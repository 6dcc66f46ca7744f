//! `loazero export MODEL --out DIR`: the model as safetensors weights, a traced
//! TorchScript module (any batch size) and a `model.json` description; a learned
//! evaluation (`nnue-NNNN.safetensors`) as its checked weights and a JSON description.

use anyhow::{Context, Result};
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
    let bytes = std::fs::read(&args.model)
        .with_context(|| format!("cannot read {}", args.model.display()))?;
    if eval::learned::Weights::claims_format(&bytes) {
        return export_learned(&args, &bytes);
    }
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

/// A learned evaluation: `DIR/STEM.safetensors` (the weights, checked) and `DIR/STEM.json`
/// ([`eval::learned::Weights::describe`]).
fn export_learned(args: &Args, bytes: &[u8]) -> Result<()> {
    let weights = eval::learned::Weights::from_bytes(bytes)
        .with_context(|| format!("learned evaluation {} refused", args.model.display()))?;
    let stem = args
        .model
        .file_stem()
        .map_or("learned-eval".into(), |s| s.to_string_lossy().into_owned());
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let weights_path = args.out.join(format!("{stem}.safetensors"));
    weights.save(&weights_path)?;
    let json_path = args.out.join(format!("{stem}.json"));
    let text = serde_json::to_string_pretty(&weights.describe()).expect("plain data");
    std::fs::write(&json_path, format!("{text}\n"))
        .with_context(|| format!("cannot write {}", json_path.display()))?;
    println!("wrote {}", weights_path.display());
    println!("wrote {}", json_path.display());
    println!(
        "a learned alpha-beta evaluation: play it with alphabeta:eval={}",
        weights_path.display()
    );
    Ok(())
}
