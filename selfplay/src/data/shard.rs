//! Shard files: [`Sample`]s written as versioned, checksummed, zstd-compressed files,
//! atomically (temp file, fsync, rename), and read back with every defect reported as a
//! [`Error`] naming the file.
//!
//! Shard layout (all integers little-endian):
//!
//! | bytes | content |
//! |-------|---------|
//! | 8     | magic `LOAZSHRD` |
//! | 4     | format version ([`FORMAT_VERSION`]) |
//! | 4     | number of samples |
//! | 8     | length of the payload in bytes |
//! | 8     | FNV-1a 64 checksum of the payload |
//! | …     | payload: zstd(postcard(`Vec<WireSample>`)) |
//!
//! A position is stored compactly as two bitboards, side, variant id and ply, and (since
//! version 2) the variant's extra state ([`ExtraState`]: vanished cells, partners, seat,
//! reserves, pending drop); the rules as their spec string (`Rules` Display / parse
//! round-trip); moves as their 16-bit encoding; and (since version 3) whether the sample
//! is a tree-only position of Descent's tree learning ([`Sample::tree_only`]), and (since
//! version 4) the pieces of the game's last position ([`Sample::final_pieces`], the
//! occupancy head's target). Version 1 shards (no extra state, written before the
//! variants that need it) are still read: their positions get the extra state of
//! [`Position::new`]; version 1 and 2 samples are all played positions (`tree_only`
//! false); samples of versions 1 to 3 have no `final_pieces`.

use super::Sample;
use crate::atomic_file::write_atomically;
use crate::Error;
use loa::{Color, ExtraState, Move, Position, Rules, Variant};
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

/// First bytes of every shard.
pub const MAGIC: &[u8; 8] = b"LOAZSHRD";
/// Version of the shard format written by this build.
pub const FORMAT_VERSION: u32 = 4;
/// Oldest shard format version this build reads.
pub const OLDEST_READABLE_VERSION: u32 = 1;
/// File-name extension of shards.
pub const SHARD_EXTENSION: &str = "shard";
const HEADER_LEN: usize = 32;
const ZSTD_LEVEL: i32 = 3;
/// Most samples one shard may claim (writers use a few thousand).
const MAX_SHARD_SAMPLES: usize = 1 << 24;
/// Most serialized bytes one sample may take (positions, moves, policy: well under 1 KiB).
const MAX_SAMPLE_BYTES: usize = 4096;

/// A sample in format version 2: no tree-only flag. Versions 3 and 4 nest it whole:
/// postcard writes a nested struct's fields in line, so a version-3 sample is the bytes
/// of its version-2 fields followed by the flag, and a version-4 one the bytes of its
/// version-3 fields followed by the final pieces.
#[derive(Serialize, Deserialize)]
struct WireSampleV2 {
    black: u64,
    white: u64,
    side: u8,
    variant: u8,
    ply: u32,
    vanished: u64,
    partners: u64,
    seat: u8,
    reserve: [u8; 2],
    drop_pending: bool,
    rules: String,
    moves: Vec<u16>,
    policy: Vec<f32>,
    search_value: f32,
    outcome: f32,
}

/// A sample in format version 3: the version-2 fields and whether it is tree-only.
#[derive(Serialize, Deserialize)]
struct WireSampleV3 {
    v2: WireSampleV2,
    tree_only: bool,
}

/// A sample in format version 4: the version-3 fields (in line) and the pieces of the
/// game's last position (own, then opponent's, for the side to move).
#[derive(Serialize, Deserialize)]
struct WireSample {
    v2: WireSampleV2,
    tree_only: bool,
    final_pieces: Option<[u64; 2]>,
}

/// A sample in format version 1: no extra state.
#[derive(Serialize, Deserialize)]
struct WireSampleV1 {
    black: u64,
    white: u64,
    side: u8,
    variant: u8,
    ply: u32,
    rules: String,
    moves: Vec<u16>,
    policy: Vec<f32>,
    search_value: f32,
    outcome: f32,
}

impl WireSampleV1 {
    fn into_current(self) -> Result<WireSample, String> {
        let variant =
            Variant::from_id(self.variant).ok_or(format!("unknown variant id {}", self.variant))?;
        let side = parse_side(self.side)?;
        // Version 1 had no extra state: the positions of `Position::new`.
        let extra = Position::new(variant, self.black, self.white, side)
            .map_err(|e| e.to_string())?
            .extra();
        let v2 = WireSampleV2 {
            black: self.black,
            white: self.white,
            side: self.side,
            variant: self.variant,
            ply: self.ply,
            vanished: extra.vanished,
            partners: extra.partners,
            seat: extra.seat,
            reserve: extra.reserve,
            drop_pending: extra.drop_pending,
            rules: self.rules,
            moves: self.moves,
            policy: self.policy,
            search_value: self.search_value,
            outcome: self.outcome,
        };
        Ok(WireSample {
            v2,
            tree_only: false,
            final_pieces: None,
        })
    }
}

fn parse_side(side: u8) -> Result<Color, String> {
    match side {
        0 => Ok(Color::Black),
        1 => Ok(Color::White),
        s => Err(format!("bad side to move {s}")),
    }
}

impl WireSample {
    fn from_sample(s: &Sample) -> WireSample {
        let extra = s.position.extra();
        let v2 = WireSampleV2 {
            black: s.position.pieces(Color::Black),
            white: s.position.pieces(Color::White),
            side: s.position.to_move().index() as u8,
            variant: s.position.variant().id(),
            ply: s.position.ply(),
            vanished: extra.vanished,
            partners: extra.partners,
            seat: extra.seat,
            reserve: extra.reserve,
            drop_pending: extra.drop_pending,
            rules: s.rules.to_string(),
            moves: s.moves.iter().map(|m| m.to_bits()).collect(),
            policy: s.policy.clone(),
            search_value: s.search_value,
            outcome: s.outcome,
        };
        WireSample {
            v2,
            tree_only: s.tree_only,
            final_pieces: s.final_pieces,
        }
    }

    fn into_sample(self) -> Result<Sample, String> {
        let WireSample {
            v2: w,
            tree_only,
            final_pieces,
        } = self;
        let variant =
            Variant::from_id(w.variant).ok_or(format!("unknown variant id {}", w.variant))?;
        let side = parse_side(w.side)?;
        let extra = ExtraState {
            vanished: w.vanished,
            partners: w.partners,
            seat: w.seat,
            reserve: w.reserve,
            drop_pending: w.drop_pending,
        };
        let mut position = Position::with_extra(variant, w.black, w.white, side, extra)
            .map_err(|e| e.to_string())?;
        position.set_ply(w.ply);
        let rules = Rules::parse(&w.rules).map_err(|e| e.message)?;
        let moves = w
            .moves
            .iter()
            .map(|&b| Move::from_bits(b).ok_or(format!("bad move encoding {b:#x}")))
            .collect::<Result<Vec<_>, _>>()?;
        let legal = position.legal_moves(&rules);
        if let Some(m) = moves.iter().find(|m| !legal.contains(m)) {
            return Err(format!(
                "move {m} is not legal in position {}",
                position.to_text()
            ));
        }
        if let Some(p) = w.policy.iter().find(|p| !(0.0..=1.0).contains(*p)) {
            return Err(format!("policy entry {p} outside [0, 1]"));
        }
        if !w.policy.is_empty() && w.policy.len() != moves.len() {
            return Err(format!(
                "policy has {} entries for {} moves",
                w.policy.len(),
                moves.len()
            ));
        }
        let finite = |x: f32| x.is_finite() && (-1.0..=1.0).contains(&x);
        if !finite(w.search_value) || !finite(w.outcome) {
            return Err("value outside [-1, 1]".into());
        }
        if tree_only && !(moves.is_empty() && w.policy.is_empty()) {
            return Err("a tree-only sample with moves or a policy".into());
        }
        if let Some([own, opponent]) = final_pieces {
            if tree_only {
                return Err("a tree-only sample with final pieces".into());
            }
            let board = position.geometry().cells;
            if own & opponent != 0 || (own | opponent) & !board != 0 {
                return Err(format!(
                    "final pieces {own:#x} and {opponent:#x} overlap or leave the board"
                ));
            }
        }
        Ok(Sample {
            position,
            rules,
            moves,
            policy: w.policy,
            search_value: w.search_value,
            outcome: w.outcome,
            tree_only,
            final_pieces,
        })
    }
}

/// FNV-1a 64-bit hash (the shard checksum).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |cause| Error::Io {
        path: path.to_path_buf(),
        cause,
    }
}

/// Serialises `samples` into the shard format (see the module docs).
pub fn encode_shard(samples: &[Sample]) -> Vec<u8> {
    let wire: Vec<WireSample> = samples.iter().map(WireSample::from_sample).collect();
    let raw = postcard::to_allocvec(&wire).expect("serialising plain data cannot fail");
    frame(FORMAT_VERSION, samples.len(), &raw)
}

/// The shard bytes of a postcard payload `raw` of `count` samples in format `version`.
fn frame(version: u32, count: usize, raw: &[u8]) -> Vec<u8> {
    let payload = zstd::bulk::compress(raw, ZSTD_LEVEL).expect("in-memory zstd cannot fail");
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&(count as u32).to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&fnv1a(&payload).to_le_bytes());
    out.extend_from_slice(&payload);
    out
}

/// The fixed-size header of a shard.
struct Header {
    version: u32,
    /// Samples the header claims (outside the checksum: bounded by [`MAX_SHARD_SAMPLES`],
    /// checked against the payload by [`decode_shard`]).
    count: usize,
    payload_len: u64,
    checksum: u64,
}

/// Parses and checks the header at the start of `bytes` (magic, a readable version, a
/// bounded sample count); `path` only names the file in errors.
fn parse_header(path: &Path, bytes: &[u8]) -> Result<Header, Error> {
    let corrupt = |reason: String| Error::Corrupt {
        path: path.to_path_buf(),
        reason,
    };
    if bytes.len() < HEADER_LEN {
        return Err(corrupt(format!(
            "{} bytes, shorter than the {HEADER_LEN}-byte header (truncated?)",
            bytes.len()
        )));
    }
    if &bytes[..8] != MAGIC {
        return Err(corrupt("bad magic (not a loazero shard)".into()));
    }
    let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap());
    let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap());
    let version = u32_at(8);
    if !(OLDEST_READABLE_VERSION..=FORMAT_VERSION).contains(&version) {
        return Err(corrupt(format!(
            "format version {version}; this build reads versions \
             {OLDEST_READABLE_VERSION} to {FORMAT_VERSION}"
        )));
    }
    let count = u32_at(12) as usize;
    // The sample count is outside the checksum: bound it (a header claiming 10^12
    // samples is an error, never a huge allocation).
    if count > MAX_SHARD_SAMPLES {
        return Err(corrupt(format!(
            "header claims {count} samples; a shard holds at most {MAX_SHARD_SAMPLES}"
        )));
    }
    Ok(Header {
        version,
        count,
        payload_len: u64_at(16),
        checksum: u64_at(24),
    })
}

/// The number of samples a shard's header claims, reading only the header: what a
/// replay window counts of shards too old to read whole. Errors like [`read_shard`] for a
/// missing, truncated or foreign file; the count itself is not checked against the
/// payload.
pub fn read_shard_sample_count(path: &Path) -> Result<usize, Error> {
    let mut header = Vec::with_capacity(HEADER_LEN);
    fs::File::open(path)
        .and_then(|f| f.take(HEADER_LEN as u64).read_to_end(&mut header))
        .map_err(io_err(path))?;
    Ok(parse_header(path, &header)?.count)
}

/// Parses a shard's bytes; `path` only names the file in errors.
pub fn decode_shard(path: &Path, bytes: &[u8]) -> Result<Vec<Sample>, Error> {
    let corrupt = |reason: String| Error::Corrupt {
        path: path.to_path_buf(),
        reason,
    };
    let Header {
        version,
        count,
        payload_len,
        checksum,
    } = parse_header(path, bytes)?;
    let payload = &bytes[HEADER_LEN..];
    if payload.len() as u64 != payload_len {
        return Err(corrupt(format!(
            "payload is {} bytes, header says {payload_len} (truncated?)",
            payload.len()
        )));
    }
    if fnv1a(payload) != checksum {
        return Err(corrupt("checksum mismatch".into()));
    }
    // Decompress by streaming into a buffer that grows with the data actually there
    // (the count, bounded by the header's parser, only caps it).
    let cap = (count.max(1) * MAX_SAMPLE_BYTES).max(1 << 20) as u64;
    let mut raw = Vec::new();
    zstd::stream::read::Decoder::new(payload)
        .and_then(|d| d.take(cap + 1).read_to_end(&mut raw))
        .map_err(|e| corrupt(format!("zstd: {e}")))?;
    if raw.len() as u64 > cap {
        return Err(corrupt(format!(
            "more than {cap} bytes of samples for the {count} the header claims"
        )));
    }
    let postcard_err = |e: postcard::Error| corrupt(format!("postcard: {e}"));
    let wire: Vec<Result<WireSample, String>> = if version == 1 {
        postcard::from_bytes::<Vec<WireSampleV1>>(&raw)
            .map_err(postcard_err)?
            .into_iter()
            .map(WireSampleV1::into_current)
            .collect()
    } else if version == 2 {
        postcard::from_bytes::<Vec<WireSampleV2>>(&raw)
            .map_err(postcard_err)?
            .into_iter()
            .map(|v2| {
                Ok(WireSample {
                    v2,
                    tree_only: false,
                    final_pieces: None,
                })
            })
            .collect()
    } else if version == 3 {
        postcard::from_bytes::<Vec<WireSampleV3>>(&raw)
            .map_err(postcard_err)?
            .into_iter()
            .map(|WireSampleV3 { v2, tree_only }| {
                Ok(WireSample {
                    v2,
                    tree_only,
                    final_pieces: None,
                })
            })
            .collect()
    } else {
        postcard::from_bytes::<Vec<WireSample>>(&raw)
            .map_err(postcard_err)?
            .into_iter()
            .map(Ok)
            .collect()
    };
    if wire.len() != count {
        return Err(corrupt(format!(
            "{} samples, header says {count}",
            wire.len()
        )));
    }
    wire.into_iter()
        .enumerate()
        .map(|(i, w)| {
            w.and_then(WireSample::into_sample)
                .map_err(|e| corrupt(format!("sample {i}: {e}")))
        })
        .collect()
}

/// Writes a shard atomically (see [`write_atomically`]).
pub fn write_shard(path: &Path, samples: &[Sample]) -> Result<(), Error> {
    write_atomically(path, &encode_shard(samples))
}

/// Reads a whole shard. Truncation, corruption, a foreign file or a newer format version
/// are errors naming the file; never a panic.
pub fn read_shard(path: &Path) -> Result<Vec<Sample>, Error> {
    let bytes = fs::read(path).map_err(io_err(path))?;
    decode_shard(path, &bytes)
}

/// The shard files (`*.shard`, temp files excluded) of `dir`, newest first (by
/// modification time, then by name, descending). A missing directory has no shards.
pub fn list_shards(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err(dir)(e)),
    };
    let mut shards = Vec::new();
    for entry in entries {
        let entry = entry.map_err(io_err(dir))?;
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || path.extension().is_none_or(|e| e != SHARD_EXTENSION) {
            continue;
        }
        let modified = entry
            .metadata()
            .and_then(|m| m.modified())
            .unwrap_or(std::time::UNIX_EPOCH);
        shards.push((modified, path));
    }
    shards.sort_by(|a, b| b.cmp(a));
    Ok(shards.into_iter().map(|(_, p)| p).collect())
}

/// What [`read_recent_shards`] found.
#[derive(Debug, Default)]
pub struct ShardScan {
    /// Samples of the good shards, newest shard first.
    pub samples: Vec<Sample>,
    /// Shards read successfully.
    pub shards: Vec<PathBuf>,
    /// Shards skipped, with the reason.
    pub skipped: Vec<Error>,
}

/// Reads the newest shards of `dir` until at least `max_samples` samples are collected
/// (all shards if `None`). Defective shards are skipped and reported, not fatal.
pub fn read_recent_shards(dir: &Path, max_samples: Option<usize>) -> Result<ShardScan, Error> {
    let mut scan = ShardScan::default();
    for path in list_shards(dir)? {
        if max_samples.is_some_and(|m| scan.samples.len() >= m) {
            break;
        }
        match read_shard(&path) {
            Ok(samples) => {
                scan.samples.extend(samples);
                scan.shards.push(path);
            }
            Err(e) => scan.skipped.push(e),
        }
    }
    Ok(scan)
}

/// A fresh file name `<prefix>-<unix millis>-<pid>-<seq>.<extension>`, unique across
/// processes of one host sharing a directory and sortable by creation time.
pub fn unique_file_name(prefix: &str, seq: u64, extension: &str) -> String {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    format!(
        "{prefix}-{millis:013}-{}-{seq:05}.{extension}",
        std::process::id()
    )
}

/// A fresh shard file name (see [`unique_file_name`]).
pub fn shard_file_name(prefix: &str, seq: u64) -> String {
    unique_file_name(prefix, seq, SHARD_EXTENSION)
}

#[cfg(test)]
#[path = "shard_tests.rs"]
mod tests;
