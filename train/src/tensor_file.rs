//! Named `f32` tensors with a JSON description in one safetensors file, written
//! atomically (temp file, fsync, rename). Models and checkpoints both use it; Python's
//! `safetensors.torch.load_file` reads the tensors, `safe_open(...).metadata()` the
//! description (key [`METADATA_KEY`]).

use anyhow::{bail, Context, Result};
use safetensors::tensor::{Dtype, TensorView};
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

/// Most bytes of a safetensors header (the JSON before the data), as the safetensors crate.
const MAX_HEADER_BYTES: usize = 100_000_000;

/// One tensor of a [`Layout`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorEntry {
    /// Its name.
    pub name: String,
    /// Its shape (every dimension ≥ 0; the product times 4 is `data.len()`).
    pub shape: Vec<i64>,
    /// Its bytes in the file (little-endian `f32`).
    pub data: std::ops::Range<usize>,
}

/// What the header of a file written by [`write()`] says, checked against the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The JSON description (metadata key [`METADATA_KEY`]).
    pub description: String,
    /// The tensors in file order.
    pub tensors: Vec<TensorEntry>,
    /// Offset of the first tensor byte (8 + the header length).
    pub data_start: usize,
}

/// A JSON value in which no object names a member twice, at any depth (a plain
/// `serde_json::Value` keeps one of them silently, and readers differ in which).
struct Strict(serde_json::Value);

impl<'de> serde::Deserialize<'de> for Strict {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        use serde::de::{Error, MapAccess, SeqAccess};
        use serde_json::Value;
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Strict;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("JSON")
            }
            fn visit_bool<E: Error>(self, v: bool) -> std::result::Result<Strict, E> {
                Ok(Strict(Value::Bool(v)))
            }
            fn visit_i64<E: Error>(self, v: i64) -> std::result::Result<Strict, E> {
                Ok(Strict(v.into()))
            }
            fn visit_u64<E: Error>(self, v: u64) -> std::result::Result<Strict, E> {
                Ok(Strict(v.into()))
            }
            fn visit_f64<E: Error>(self, v: f64) -> std::result::Result<Strict, E> {
                Ok(Strict(v.into()))
            }
            fn visit_str<E: Error>(self, v: &str) -> std::result::Result<Strict, E> {
                Ok(Strict(v.into()))
            }
            fn visit_unit<E: Error>(self) -> std::result::Result<Strict, E> {
                Ok(Strict(Value::Null))
            }
            fn visit_seq<A: SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> std::result::Result<Strict, A::Error> {
                let mut out = Vec::new();
                while let Some(Strict(v)) = a.next_element()? {
                    out.push(v);
                }
                Ok(Strict(Value::Array(out)))
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut a: A,
            ) -> std::result::Result<Strict, A::Error> {
                let mut out = serde_json::Map::new();
                while let Some((k, Strict(v))) = a.next_entry::<String, Strict>()? {
                    if out.contains_key(&k) {
                        return Err(A::Error::custom(format!("`{k}` given twice")));
                    }
                    out.insert(k, v);
                }
                Ok(Strict(Value::Object(out)))
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// The entry of one tensor in a safetensors header.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct HeaderEntry {
    dtype: String,
    shape: Vec<u64>,
    data_offsets: (u64, u64),
}

/// Parses and checks the safetensors header of `bytes` without making any tensor: the
/// header length, the JSON, the loazero description, and for every tensor an `F32` dtype,
/// a shape whose size (overflow-checked) matches its byte range, and byte ranges that tile
/// the data exactly. Torch-free, so that it can be fuzzed (`fuzz/`); the message names
/// what is wrong (the caller adds the file).
pub fn parse_layout(bytes: &[u8]) -> std::result::Result<Layout, String> {
    let Some((len, rest)) = bytes.split_first_chunk::<8>() else {
        return Err(format!(
            "{} bytes, shorter than the 8-byte header length",
            bytes.len()
        ));
    };
    let len = u64::from_le_bytes(*len);
    if len > MAX_HEADER_BYTES as u64 || len > rest.len() as u64 {
        return Err(format!(
            "header length {len} exceeds the file ({} bytes) or {MAX_HEADER_BYTES} bytes \
             (truncated or not a safetensors file?)",
            bytes.len()
        ));
    }
    let (header, data) = rest.split_at(len as usize);
    let header = std::str::from_utf8(header).map_err(|e| format!("header is not UTF-8: {e}"))?;
    let Strict(header) =
        serde_json::from_str(header).map_err(|e| format!("bad header JSON: {e}"))?;
    let serde_json::Value::Object(mut map) = header else {
        return Err("the header is not a JSON object".into());
    };
    let meta: HashMap<String, String> = match map.remove("__metadata__") {
        Some(m) => serde_json::from_value(m).map_err(|e| format!("bad __metadata__: {e}"))?,
        None => HashMap::new(),
    };
    if meta.get("format").map(String::as_str) == Some(eval::learned::file::FORMAT) {
        return Err(format!(
            "this is a learned alpha-beta evaluation (format {}), not a network: it plays as \
             `alphabeta:eval=FILE`",
            eval::learned::file::FORMAT
        ));
    }
    let description = meta
        .get(METADATA_KEY)
        .cloned()
        .ok_or_else(|| "no loazero description in the file (truncated or corrupt?)".to_string())?;
    let mut tensors = Vec::with_capacity(map.len());
    for (name, value) in map {
        let e: HeaderEntry =
            serde_json::from_value(value).map_err(|e| format!("tensor `{name}`: {e}"))?;
        if e.dtype != "F32" {
            return Err(format!(
                "tensor `{name}` has dtype {}, expected F32",
                e.dtype
            ));
        }
        let too_big = || format!("tensor `{name}`: shape {:?} is too large", e.shape);
        let mut elements: u64 = 1;
        let mut shape = Vec::with_capacity(e.shape.len());
        for &d in &e.shape {
            elements = elements.checked_mul(d).ok_or_else(too_big)?;
            shape.push(i64::try_from(d).map_err(|_| too_big())?);
        }
        let size = elements.checked_mul(4).ok_or_else(too_big)?;
        let (start, end) = e.data_offsets;
        if end < start || end - start != size || end > data.len() as u64 {
            return Err(format!(
                "tensor `{name}`: bytes {start}..{end} for shape {:?} in {} bytes of data",
                e.shape,
                data.len()
            ));
        }
        // In bounds of `data`, hence of usize.
        let range = 8 + len as usize + start as usize..8 + len as usize + end as usize;
        tensors.push(TensorEntry {
            name,
            shape,
            data: range,
        });
    }
    tensors.sort_by_key(|t| (t.data.start, t.data.end));
    let data_start = 8 + len as usize;
    let mut at = data_start;
    for t in &tensors {
        if t.data.start != at {
            return Err(format!(
                "tensor `{}` starts at byte {} of the data, expected {}",
                t.name,
                t.data.start - data_start,
                at - data_start
            ));
        }
        at = t.data.end;
    }
    if at != bytes.len() {
        return Err(format!(
            "the tensors end at byte {} of {} bytes of data",
            at - data_start,
            data.len()
        ));
    }
    Ok(Layout {
        description,
        tensors,
        data_start,
    })
}

/// Reads a file written by [`write()`]. A missing, truncated or foreign file is an error
/// naming it; the header is checked ([`parse_layout`]) before any tensor is made.
pub fn read(path: &Path) -> Result<TensorFile> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let layout = parse_layout(&bytes)
        .map_err(|e| anyhow::anyhow!("{}: not a loazero network file: {e}", path.display()))?;
    let mut tensors = Vec::with_capacity(layout.tensors.len());
    for entry in layout.tensors {
        let name = entry.name;
        let data = bytes.get(entry.data).context("checked by parse_layout")?;
        let t = Tensor::f_from_data_size(data, &entry.shape, Kind::Float)
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
        description: layout.description,
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

    /// A learned alpha-beta evaluation given where a network is read is named for what it
    /// is, with the player spec that plays it, not called truncated or corrupt.
    #[test]
    fn a_learned_evaluation_file_is_named_as_such() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nnue-0001.safetensors");
        eval::learned::Weights::random(1).save(&path).unwrap();
        let err = read(&path).err().unwrap().to_string();
        assert!(
            err.contains("nnue-0001.safetensors")
                && err.contains("learned alpha-beta evaluation")
                && err.contains("alphabeta:eval=")
                && !err.contains("corrupt"),
            "{err}"
        );
    }

    /// A safetensors file of `header` (JSON) followed by `data`.
    fn file(header: &str, data: &[u8]) -> Vec<u8> {
        let mut b = (header.len() as u64).to_le_bytes().to_vec();
        b.extend_from_slice(header.as_bytes());
        b.extend_from_slice(data);
        b
    }

    #[test]
    fn layouts_are_checked_before_anything_is_allocated() {
        let meta = r#""__metadata__":{"loazero":"{}"}"#;
        let good = file(
            &format!(
                r#"{{{meta},"b":{{"dtype":"F32","shape":[1],"data_offsets":[8,12]}},"a":{{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}}}"#
            ),
            &[0; 12],
        );
        let l = parse_layout(&good).unwrap();
        assert_eq!(l.description, "{}");
        let names: Vec<&str> = l.tensors.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(l.tensors[1].data, l.data_start + 8..l.data_start + 12);
        let bad = |header: String, data: &[u8], want: &str| {
            let e = parse_layout(&file(&header, data)).unwrap_err();
            assert!(e.contains(want), "{header}: {e}");
        };
        let one = |t: &str| format!(r#"{{{meta},"t":{t}}}"#);
        // Shapes whose size overflows (safetensors 0.3 adds the offsets unchecked on a
        // shape of a zero dimension; its size checks are exact here), or one above i64.
        bad(
            one(r#"{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,0]}"#),
            &[],
            "too large",
        );
        bad(
            one(r#"{"dtype":"F32","shape":[0,9223372036854775808],"data_offsets":[0,0]}"#),
            &[],
            "too large",
        );
        bad(
            one(r#"{"dtype":"F32","shape":[1],"data_offsets":[0,18446744073709551615]}"#),
            &[0; 4],
            "bytes 0..",
        );
        bad(
            one(r#"{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}"#),
            &[0; 4],
            "tensor `t`",
        );
        bad(
            one(r#"{"dtype":"F16","shape":[2],"data_offsets":[0,4]}"#),
            &[0; 4],
            "dtype F16",
        );
        bad(
            one(r#"{"dtype":"F32","shape":[1000000000000],"data_offsets":[0,4000000000000]}"#),
            &[0; 4],
            "in 4 bytes of data",
        );
        bad(
            one(r#"{"dtype":"F32","shape":[1],"data_offsets":[4,8]}"#),
            &[0; 8],
            "starts at byte 4",
        );
        bad(
            one(r#"{"dtype":"F32","shape":[1],"data_offsets":[0,4]}"#),
            &[0; 8],
            "end at byte 4 of 8",
        );
        bad(
            r#"{"t":{"dtype":"F32","shape":[],"data_offsets":[0,4]}}"#.into(),
            &[0; 4],
            "no loazero",
        );
        // Found by fuzz/ (tensor_file): a tensor named twice, the first entry malformed;
        // the JSON map kept the second silently, safetensors refused the file.
        bad(
            format!(
                r#"{{{meta},"t":{{"dtype":"F32","shape":[],"dataets":[0,4]}},"t":{{"dtype":"F32","shape":[],"data_offsets":[0,4]}}}}"#
            ),
            &[0; 4],
            "`t` given twice",
        );
        bad(
            one(r#"{"dtype":"F32","shape":[],"data_offsets":[0,4],"shape":[1]}"#),
            &[0; 4],
            "`shape` given twice",
        );
        // A header length of 10^12 bytes, or past the end of the file.
        for len in [1_000_000_000_000u64, 100] {
            let mut b = len.to_le_bytes().to_vec();
            b.extend_from_slice(b"{}");
            assert!(parse_layout(&b).unwrap_err().contains("header length"));
        }
        assert!(parse_layout(b"short").is_err());
    }
}
