//! The learned evaluation's weights file: safetensors (an 8-byte little-endian header
//! length, a JSON header, the raw tensors), every tensor `F32` in the trainer's layout
//! (`[out, in]`, row-major), and `__metadata__` holding `format` ([`FORMAT`]) and
//! `feature_set` ([`super::FEATURE_SET`]) plus free-form notes (`generation`, `trained_from`,
//! …). Read and written here only, torch-free: the trainer hands its tensors over as
//! [`Weights`].
//!
//! A file is refused, with its path and the reason, when it is not safetensors, names
//! another format or feature set, lacks a tensor or has one of the wrong dtype or shape,
//! has tensor data outside the file, or holds a non-finite weight.

use super::{FEATURE_SET, HIDDEN, L1, L1_INPUTS, L2, PSQ_INPUTS};
use anyhow::{bail, Context, Result};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// `format` in the header of every learned evaluation file.
pub const FORMAT: &str = "loazero-learned-eval";

/// Largest header accepted (bytes).
const MAX_HEADER: u64 = 1 << 20;

/// The tensors, in file order, with their shapes.
pub const TENSORS: [(&str, [usize; 2]); 8] = [
    ("ft.weight", [HIDDEN, PSQ_INPUTS]),
    ("ft.bias", [1, HIDDEN]),
    ("l1.weight", [L1, L1_INPUTS]),
    ("l1.bias", [1, L1]),
    ("l2.weight", [L2, L1]),
    ("l2.bias", [1, L2]),
    ("out.weight", [1, L2]),
    ("out.bias", [1, 1]),
];

/// The float weights of a learned evaluation, as trained: one vector per entry of
/// [`TENSORS`], row-major, plus the header's notes.
#[derive(Clone, Debug, PartialEq)]
pub struct Weights {
    /// The tensors in [`TENSORS`] order.
    pub tensors: Vec<Vec<f32>>,
    /// Free-form notes of the header (besides `format` and `feature_set`).
    pub notes: BTreeMap<String, String>,
}

/// A tensor's shape as written: biases are vectors.
fn file_shape(name: &str, shape: [usize; 2]) -> Vec<usize> {
    if name.ends_with(".bias") {
        vec![shape[1]]
    } else {
        shape.to_vec()
    }
}

impl Weights {
    /// Small random weights (a fixed `seed`), the start of a training from scratch and of
    /// tests.
    pub fn random(seed: u64) -> Weights {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let tensors = TENSORS
            .iter()
            .map(|(name, [o, i])| {
                let bound = if name.ends_with(".bias") {
                    0.1
                } else {
                    1.0 / (*i as f32).sqrt()
                };
                (0..o * i)
                    .map(|_| rng.random_range(-bound..bound))
                    .collect()
            })
            .collect();
        Weights {
            tensors,
            notes: BTreeMap::new(),
        }
    }

    /// The tensor called `name` (one of [`TENSORS`]).
    pub fn tensor(&self, name: &str) -> &[f32] {
        let i = TENSORS
            .iter()
            .position(|(n, _)| *n == name)
            .expect("a tensor name");
        &self.tensors[i]
    }

    /// The file's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut header = Map::new();
        let mut meta = Map::new();
        meta.insert("format".into(), FORMAT.into());
        meta.insert("feature_set".into(), FEATURE_SET.into());
        for (k, v) in &self.notes {
            if k != "format" && k != "feature_set" {
                meta.insert(k.clone(), v.clone().into());
            }
        }
        header.insert("__metadata__".into(), Value::Object(meta));
        let mut offset = 0usize;
        for ((name, shape), data) in TENSORS.iter().zip(&self.tensors) {
            let end = offset + 4 * data.len();
            header.insert(
                (*name).into(),
                serde_json::json!({
                    "dtype": "F32",
                    "shape": file_shape(name, *shape),
                    "data_offsets": [offset, end],
                }),
            );
            offset = end;
        }
        let mut text = serde_json::to_vec(&Value::Object(header)).expect("json");
        // Pad the header to 8 bytes (safetensors' alignment).
        while !text.len().is_multiple_of(8) {
            text.push(b' ');
        }
        let mut out = Vec::with_capacity(8 + text.len() + offset);
        out.extend_from_slice(&(text.len() as u64).to_le_bytes());
        out.extend_from_slice(&text);
        for data in &self.tensors {
            for x in data {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
        out
    }

    /// Writes the file with the project's atomic writer
    /// ([`selfplay::atomic_file::write_atomically`]): readers of `path` see the old file,
    /// no file, or the complete new one, and a failed save leaves the old file as it was
    /// (and no temporary file behind).
    pub fn save(&self, path: &Path) -> Result<()> {
        selfplay::atomic_file::write_atomically(path, &self.to_bytes())
            .with_context(|| format!("cannot save the learned evaluation {}", path.display()))
    }

    /// Whether `bytes` claim to be a learned evaluation file (a safetensors header whose
    /// `__metadata__` names [`FORMAT`]); [`Weights::from_bytes`] still checks the rest.
    pub fn claims_format(bytes: &[u8]) -> bool {
        let Some(n) = bytes
            .get(..8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8")))
        else {
            return false;
        };
        let header = usize::try_from(n)
            .ok()
            .filter(|&n| n as u64 <= MAX_HEADER)
            .and_then(|n| bytes.get(8..8 + n))
            .and_then(|h| serde_json::from_slice::<Map<String, Value>>(h).ok());
        header
            .as_ref()
            .and_then(|h| h.get("__metadata__"))
            .and_then(|m| m.get("format"))
            .and_then(Value::as_str)
            == Some(FORMAT)
    }

    /// A description of the file for other programs (`loazero export`): the format, the
    /// feature set, what every input and layer computes, and the notes.
    pub fn describe(&self) -> Value {
        use super::{GLOBAL_INPUTS, QA, SCORE_SCALE};
        let tensors: Vec<Value> = TENSORS
            .iter()
            .map(|(name, shape)| {
                serde_json::json!({"name": name, "shape": file_shape(name, *shape), "dtype": "F32"})
            })
            .collect();
        serde_json::json!({
            "format": FORMAT,
            "feature_set": FEATURE_SET,
            "tensors": tensors,
            "inputs": {
                "piece_square": format!(
                    "{PSQ_INPUTS} per perspective: 64 squares of the perspective's own pieces, \
                     then 64 of the other side's; White's perspective transposes the board \
                     (square (file, rank) → (rank, file)) so that both colours start on the \
                     first and last rows"
                ),
                "global": format!(
                    "{GLOBAL_INPUTS}: the hand-written evaluation's features and the piece \
                     count of the side to move, then of the other side, scaled \
                     (eval/src/learned/features.rs)"
                ),
            },
            "layers": [
                format!("ft: {PSQ_INPUTS} → {HIDDEN} per perspective, shared weights (loazero quantises them to i16 × {QA})"),
                format!("l1: [clip01(ft(mover)), clip01(ft(other)), global] ({L1_INPUTS}) → {L1}, clipped ReLU"),
                format!("l2: {L1} → {L2}, clipped ReLU"),
                "out: → 1, the side to move's win logit".to_string(),
            ],
            "score": format!("alpha-beta units = {SCORE_SCALE} × logit"),
            "notes": self.notes,
        })
    }

    /// Reads the file at `path` (errors name it).
    pub fn load(path: &Path) -> Result<Weights> {
        let bytes = std::fs::read(path)
            .with_context(|| format!("cannot read learned evaluation {}", path.display()))?;
        Weights::from_bytes(&bytes)
            .with_context(|| format!("learned evaluation {} refused", path.display()))
    }

    /// Parses a file's bytes (see the module docs for what is refused).
    pub fn from_bytes(bytes: &[u8]) -> Result<Weights> {
        if bytes.len() < 8 {
            bail!("{} bytes: too short for a safetensors file", bytes.len());
        }
        let n = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
        if n > MAX_HEADER || n > (bytes.len() - 8) as u64 {
            bail!(
                "header length {n} exceeds the file ({} bytes) or {MAX_HEADER}: not a \
                 safetensors file",
                bytes.len()
            );
        }
        let n = n as usize;
        let header: Map<String, Value> = serde_json::from_slice(&bytes[8..8 + n])
            .context("the safetensors header is not a JSON object")?;
        let data = &bytes[8 + n..];
        let meta = header
            .get("__metadata__")
            .and_then(Value::as_object)
            .context("no __metadata__ in the header: not a learned evaluation file")?;
        let text = |key: &str| meta.get(key).and_then(Value::as_str);
        match text("format") {
            Some(FORMAT) => {}
            Some(other) => bail!("format '{other}', expected '{FORMAT}'"),
            None => bail!(
                "no 'format' in the header: not a learned evaluation file (a policy-value \
                 network is a model:, not an eval=)"
            ),
        }
        match text("feature_set") {
            Some(FEATURE_SET) => {}
            Some(other) => bail!(
                "feature set '{other}', this build reads '{FEATURE_SET}' (retrain the \
                 evaluation with this version)"
            ),
            None => bail!("no 'feature_set' in the header"),
        }
        let mut notes = BTreeMap::new();
        for (k, v) in meta {
            if k != "format" && k != "feature_set" {
                let v = v
                    .as_str()
                    .with_context(|| format!("metadata '{k}' is not a string"))?;
                notes.insert(k.clone(), v.to_string());
            }
        }
        let mut tensors = Vec::with_capacity(TENSORS.len());
        for (name, shape) in TENSORS {
            let t = header
                .get(name)
                .and_then(Value::as_object)
                .with_context(|| format!("tensor '{name}' missing"))?;
            if t.get("dtype").and_then(Value::as_str) != Some("F32") {
                bail!("tensor '{name}': dtype {:?}, expected F32", t.get("dtype"));
            }
            let want = file_shape(name, shape);
            let got: Option<Vec<usize>> = t.get("shape").and_then(Value::as_array).map(|a| {
                a.iter()
                    .map(|d| d.as_u64().map_or(usize::MAX, |d| d as usize))
                    .collect()
            });
            if got.as_ref() != Some(&want) {
                bail!("tensor '{name}': shape {got:?}, expected {want:?}");
            }
            let offsets: Option<Vec<u64>> = t
                .get("data_offsets")
                .and_then(Value::as_array)
                .and_then(|a| a.iter().map(Value::as_u64).collect());
            let (begin, end) = match offsets.as_deref() {
                Some(&[b, e]) if b <= e && e <= data.len() as u64 => (b as usize, e as usize),
                _ => bail!(
                    "tensor '{name}': data_offsets {:?} outside the {} bytes of data",
                    t.get("data_offsets"),
                    data.len()
                ),
            };
            let count = shape[0] * shape[1];
            if end - begin != 4 * count {
                bail!(
                    "tensor '{name}': {} bytes of data, expected {}",
                    end - begin,
                    4 * count
                );
            }
            let values: Vec<f32> = data[begin..end]
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
                .collect();
            if let Some(i) = values.iter().position(|x| !x.is_finite()) {
                bail!("tensor '{name}': element {i} is {}", values[i]);
            }
            tensors.push(values);
        }
        Ok(Weights { tensors, notes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_survive_the_file() {
        let mut w = Weights::random(3);
        w.notes.insert("generation".into(), "2".into());
        let back = Weights::from_bytes(&w.to_bytes()).unwrap();
        assert_eq!(back, w);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nnue-0001.safetensors");
        w.save(&path).unwrap();
        assert_eq!(Weights::load(&path).unwrap(), w);
    }

    /// Saves replace the file whole: concurrent saves of two different networks over one
    /// path, read back all along, only ever show one of them complete (saves through one
    /// fixed temporary name could rename another save's half-written file into place), and
    /// leave no temporary file beside it.
    #[test]
    fn saves_never_show_a_half_written_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nnue-0001.safetensors");
        let (a, b) = (Weights::random(1), Weights::random(2));
        a.save(&path).unwrap();
        std::thread::scope(|s| {
            for w in [&a, &b] {
                let path = &path;
                s.spawn(move || {
                    for _ in 0..40 {
                        w.save(path).unwrap();
                    }
                });
            }
            for _ in 0..200 {
                let read = Weights::load(&path).unwrap();
                assert!(read == a || read == b);
            }
        });
        let read = Weights::load(&path).unwrap();
        assert!(read == a || read == b);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    /// A save that fails (here its rename: the destination is a folder) is an error naming
    /// the file; what was at the destination stays as it was, and no temporary file is
    /// left where a reader of the folder would find it.
    #[test]
    fn a_failed_save_leaves_the_destination_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nnue-0001.safetensors");
        std::fs::create_dir(&path).unwrap();
        std::fs::write(path.join("kept"), b"kept").unwrap();
        let err = format!("{:#}", Weights::random(1).save(&path).unwrap_err());
        assert!(err.contains("nnue-0001.safetensors"), "{err}");
        assert_eq!(std::fs::read(path.join("kept")).unwrap(), b"kept");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["nnue-0001.safetensors"]);
        let missing = dir
            .path()
            .join("no-such-folder")
            .join("nnue-0002.safetensors");
        let err = format!("{:#}", Weights::random(1).save(&missing).unwrap_err());
        assert!(err.contains("no-such-folder"), "{err}");
    }

    /// Every damage is refused with a message saying what is wrong, never a panic.
    #[test]
    fn corrupt_and_mismatched_files_are_refused_by_name() {
        let good = Weights::random(1).to_bytes();
        let n = u64::from_le_bytes(good[..8].try_into().unwrap()) as usize;
        let header = std::str::from_utf8(&good[8..8 + n]).unwrap().to_string();
        let with_header = |h: String| {
            let mut h = h.into_bytes();
            while !h.len().is_multiple_of(8) {
                h.push(b' ');
            }
            let mut b = (h.len() as u64).to_le_bytes().to_vec();
            b.extend_from_slice(&h);
            b.extend_from_slice(&good[8 + n..]);
            b
        };
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (Vec::new(), "too short"),
            (good[..good.len() - 4].to_vec(), "outside"),
            (u64::MAX.to_le_bytes().to_vec(), "header length"),
            (
                with_header(header.replace(FEATURE_SET, "loa8-other")),
                "feature set 'loa8-other'",
            ),
            (
                with_header(header.replace(FORMAT, "something-else")),
                "format 'something-else'",
            ),
            (
                with_header(header.replace("\"ft.bias\"", "\"ft.bias_\"")),
                "tensor 'ft.bias' missing",
            ),
            (
                with_header(header.replacen("\"F32\"", "\"F16\"", 1)),
                "dtype",
            ),
            (
                with_header(header.replace("[128,128]", "[128,64]")),
                "shape",
            ),
            (with_header("[1,2]".into()), "not a JSON object"),
            (
                with_header(header.replace("\"__metadata__\"", "\"__meta__\"")),
                "__metadata__",
            ),
        ];
        for (bytes, want) in cases {
            let e = format!("{:#}", Weights::from_bytes(&bytes).unwrap_err());
            assert!(e.contains(want), "expected '{want}' in: {e}");
        }
        let mut nan = Weights::random(1);
        nan.tensors[2][7] = f32::NAN;
        let e = format!("{:#}", Weights::from_bytes(&nan.to_bytes()).unwrap_err());
        assert!(e.contains("'l1.weight': element 7 is NaN"), "{e}");
        // Truncations and flipped bytes anywhere: an error or a valid file, never a panic.
        for cut in (0..good.len()).step_by(97) {
            let _ = Weights::from_bytes(&good[..cut]);
        }
        for at in (0..good.len()).step_by(13) {
            let mut b = good.clone();
            b[at] ^= 0x5a;
            let _ = Weights::from_bytes(&b);
        }
    }

    #[test]
    fn a_missing_file_is_named() {
        let e = format!(
            "{:#}",
            Weights::load(Path::new("/nonexistent/nnue.safetensors")).unwrap_err()
        );
        assert!(e.contains("/nonexistent/nnue.safetensors"), "{e}");
    }
}
