//! The one home of player specs built from a file: a model searched by MCTS or UBFM, or a
//! learned evaluation inside alpha-beta. The run's gate and ratings, `benchmark`,
//! `ladder` and the learned stage build their players here, so that a file plays under
//! the same spec (and so the same name in results and ratings) wherever it plays.

use super::net_options::Device;
use super::spec::Value;
use super::PlayerSpec;
use anyhow::Result;
use std::path::Path;

/// The spec of the model at `path` searching `sims` MCTS simulations per move on `device`
/// (the `model` kind).
pub fn model_spec(path: &Path, sims: u32, device: Device) -> Result<PlayerSpec> {
    PlayerSpec::parse("model:path=_")?
        .with("path", Some(Value::File(path.to_path_buf())))?
        .with("sims", Some(Value::Int(sims as i64)))?
        .with("device", Some(Value::Device(device)))
}

/// The spec of the model at `path` searching `nodes` UBFM iterations per move on `device`
/// (the `ubfm` kind: the value head alone).
pub fn ubfm_spec(path: &Path, nodes: u32, device: Device) -> Result<PlayerSpec> {
    PlayerSpec::parse("ubfm:path=_")?
        .with("path", Some(Value::File(path.to_path_buf())))?
        .with("nodes", Some(Value::Int(nodes as i64)))?
        .with("device", Some(Value::Device(device)))
}

/// The spec of the learned alpha-beta: alpha-beta with the learned evaluation file `path`
/// (`eval=`), searching to `depth`, or with alpha-beta's default limits when `None`.
pub fn learned_alphabeta_spec(path: &Path, depth: Option<u32>) -> Result<PlayerSpec> {
    let base = match depth {
        Some(depth) => PlayerSpec::parse(&format!("alphabeta:depth={depth}"))?,
        None => PlayerSpec::parse("alphabeta")?,
    };
    base.with("eval", Some(Value::File(path.to_path_buf())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_of_files_print_as_their_kinds_spell_them() {
        let path = Path::new("/r/models/gen-0007.safetensors");
        assert_eq!(
            model_spec(path, 64, Device::Cpu).unwrap().to_string(),
            "model:path=/r/models/gen-0007.safetensors,sims=64"
        );
        assert_eq!(
            ubfm_spec(path, 300, Device::Cpu).unwrap().to_string(),
            "ubfm:path=/r/models/gen-0007.safetensors,nodes=300"
        );
        let nnue = Path::new("/r/models/nnue-0003.safetensors");
        assert_eq!(
            learned_alphabeta_spec(nnue, Some(3)).unwrap().to_string(),
            "alphabeta:depth=3,eval=/r/models/nnue-0003.safetensors"
        );
        assert_eq!(
            learned_alphabeta_spec(nnue, None).unwrap().to_string(),
            "alphabeta:eval=/r/models/nnue-0003.safetensors"
        );
    }
}
