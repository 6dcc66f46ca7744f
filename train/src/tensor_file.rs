//! Named `f32` tensors with a JSON description in one safetensors file, written
//! atomically (temp file, fsync, rename). Models and checkpoints both use it; Python's
//! `safetensors.torch.load_file` reads the tensors, `safe_open(...).metadata()` the
//! description (key [`METADATA_KEY`]).

use anyhow::{bail, Context, Result};
use safetensors::tensor::{Dtype, SafeTensors, TensorView};
use std::collections::HashMap;
use std::path::Path;
use tch::{Kind, Tensor};

/// The metadata key holding the JSON description.
pub const METADATA_KEY: &str = "loazero";

/// Writes `tensors` (any float kind and device; stored as contiguous `f32`) and the JSON
/// `description` to `path` atomically. Names must be unique.
pub fn write(path: &Path, tensors: &[(String, Tensor)], description: &str) -> Result<()> {
    let mut blobs: Vec<(String, Vec<usize>, Vec<u8>)> = Vec::with_capacity(tensors.len());
    for (name, t) in tensors {
        let t = t
            .detach()
            .to_device(tch::Device::Cpu)
            .to_kind(Kind::Float)
            .contiguous();
        let shape: Vec<usize> = t.size().iter().map(|&d| d as usize).collect();
        let numel = t.numel();
        let mut bytes = vec![0u8; numel * 4];
        t.f_copy_data_u8(&mut bytes, numel)
            .with_context(|| format!("copying tensor `{name}`"))?;
        blobs.push((name.clone(), shape, bytes));
    }
    let mut views = Vec::with_capacity(blobs.len());
    for (name, shape, bytes) in &blobs {
        let view = TensorView::new(Dtype::F32, shape.clone(), bytes)
            .map_err(|e| anyhow::anyhow!("tensor `{name}`: {e:?}"))?;
        views.push((name.as_str(), view));
    }
    let metadata = Some(HashMap::from([(
        METADATA_KEY.to_string(),
        description.to_string(),
    )]));
    let bytes = safetensors::tensor::serialize(views, &metadata)
        .map_err(|e| anyhow::anyhow!("{}: serialising: {e:?}", path.display()))?;
    selfplay::data::write_atomically(path, &bytes)?;
    Ok(())
}

/// The contents of a file written by [`write()`].
pub struct TensorFile {
    /// The JSON description.
    pub description: String,
    /// The tensors (CPU, `f32`), in file order.
    pub tensors: Vec<(String, Tensor)>,
}

impl TensorFile {
    /// Removes and returns the tensor called `name`.
    pub fn take(&mut self, name: &str) -> Option<Tensor> {
        let i = self.tensors.iter().position(|(n, _)| n == name)?;
        Some(self.tensors.swap_remove(i).1)
    }
}

/// Reads a file written by [`write()`]. A missing, truncated or foreign file is an error
/// naming it.
pub fn read(path: &Path) -> Result<TensorFile> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let (_, meta) = SafeTensors::read_metadata(&bytes).map_err(|e| {
        anyhow::anyhow!(
            "{}: not a safetensors file (truncated or corrupt?): {e:?}",
            path.display()
        )
    })?;
    let description = meta
        .metadata()
        .as_ref()
        .and_then(|m| m.get(METADATA_KEY))
        .cloned()
        .with_context(|| format!("{}: no loazero description in the file", path.display()))?;
    let st = SafeTensors::deserialize(&bytes)
        .map_err(|e| anyhow::anyhow!("{}: corrupt safetensors file: {e:?}", path.display()))?;
    let mut names: Vec<(usize, String)> = meta
        .tensors()
        .iter()
        .map(|(name, info)| (info.data_offsets.0, name.clone()))
        .collect();
    names.sort();
    let mut tensors = Vec::with_capacity(names.len());
    for (_, name) in names {
        let view = st
            .tensor(&name)
            .map_err(|e| anyhow::anyhow!("{}: tensor `{name}`: {e:?}", path.display()))?;
        if view.dtype() != Dtype::F32 {
            bail!(
                "{}: tensor `{name}` has dtype {:?}, expected F32",
                path.display(),
                view.dtype()
            );
        }
        let shape: Vec<i64> = view.shape().iter().map(|&d| d as i64).collect();
        let t = Tensor::f_from_data_size(view.data(), &shape, Kind::Float)
            .with_context(|| format!("{}: tensor `{name}`", path.display()))?;
        if t.isfinite().all().int64_value(&[]) == 0 {
            bail!(
                "{}: tensor `{name}` holds non-finite values",
                path.display()
            );
        }
        tensors.push((name, t));
    }
    Ok(TensorFile {
        description,
        tensors,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.safetensors");
        let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).view([2, 3]);
        let b = Tensor::from_slice(&[7.5f32]);
        write(
            &path,
            &[
                ("x.a".into(), a.shallow_clone()),
                ("y".into(), b.shallow_clone()),
            ],
            r#"{"k":1}"#,
        )
        .unwrap();
        let mut f = read(&path).unwrap();
        assert_eq!(f.description, r#"{"k":1}"#);
        assert_eq!(f.tensors.len(), 2);
        assert!(f.take("x.a").unwrap().equal(&a));
        assert!(f.take("y").unwrap().equal(&b));
        // Truncated file: an error naming the file.
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        let err = read(&path).err().unwrap().to_string();
        assert!(err.contains("t.safetensors"), "{err}");
        std::fs::write(&path, b"garbage").unwrap();
        assert!(read(&path).is_err());
        assert!(read(&dir.path().join("missing")).is_err());
    }
}
