//! Scored positions on disk (`*.scored`): the positions of [`crate::scored_games`] with
//! their searched score, the game's result and the depth of the search that scored them,
//! so that the learned evaluation's games can be played once and trained on by several
//! trainings (`loazero train-eval --save-scored` and `--scored`; the learned-data arms of
//! docs/experiments.md).
//!
//! Format, version 1, little-endian: the 8 bytes `LOASCORE`, the version (u32), the
//! number of records (u64), then each record in 28 bytes: Black's pieces (u64), White's
//! (u64), the side to move (u8: 0 Black, 1 White), the ply (u32), the score (i32, for the
//! side to move), the result (i8: 1 win, 0 draw or unfinished, −1 loss, for the side to
//! move) and the search depth (u16). Standard-variant positions only (the learned
//! evaluation's). A file whose length, magic, version or records do not fit is refused
//! with an error naming the file and the record; a file is written whole or not at all
//! (a temporary file renamed over it).

use crate::scored_games::ScoredPosition;
use anyhow::{bail, Context, Result};
use loa::{Color, Position, Variant};
use std::io::Write;
use std::path::Path;

/// The file's first bytes.
pub const MAGIC: &[u8; 8] = b"LOASCORE";
/// The version this code writes and reads.
pub const VERSION: u32 = 1;
const HEADER: usize = 8 + 4 + 8;
const RECORD: usize = 8 + 8 + 1 + 4 + 4 + 1 + 2;

/// A scored position with the depth that scored it.
#[derive(Clone, Debug, PartialEq)]
pub struct ScoredRecord {
    /// The position, its score and its game's result.
    pub scored: ScoredPosition,
    /// The depth of the search that gave the score.
    pub depth: u16,
}

/// The bytes of `records` in the format of the module docs.
pub fn encode(records: &[ScoredRecord]) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(HEADER + RECORD * records.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(records.len() as u64).to_le_bytes());
    for (i, r) in records.iter().enumerate() {
        let p = &r.scored.position;
        if p.variant() != Variant::Standard {
            bail!("scored position {i}: only standard-variant positions can be written");
        }
        let outcome = r.scored.outcome;
        if ![-1.0, 0.0, 1.0].contains(&outcome) {
            bail!("scored position {i}: result {outcome} is not -1, 0 or 1");
        }
        out.extend_from_slice(&p.pieces(Color::Black).to_le_bytes());
        out.extend_from_slice(&p.pieces(Color::White).to_le_bytes());
        out.push(p.to_move() as u8);
        out.extend_from_slice(&p.ply().to_le_bytes());
        out.extend_from_slice(&r.scored.score.to_le_bytes());
        out.push(outcome as i8 as u8);
        out.extend_from_slice(&r.depth.to_le_bytes());
    }
    Ok(out)
}

/// The records of `bytes`; `what` names them in errors.
pub fn decode(bytes: &[u8], what: &str) -> Result<Vec<ScoredRecord>> {
    if bytes.len() < HEADER || &bytes[..8] != MAGIC {
        bail!("{what}: not a scored-positions file (it does not start with LOASCORE)");
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if version != VERSION {
        bail!("{what}: scored-positions version {version}; this loazero reads version {VERSION}");
    }
    let count = u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes"));
    let body = &bytes[HEADER..];
    if count.checked_mul(RECORD as u64) != Some(body.len() as u64) {
        bail!(
            "{what}: truncated or corrupt: the header says {count} records ({} bytes), the \
             file holds {} bytes of records",
            count.saturating_mul(RECORD as u64),
            body.len()
        );
    }
    body.chunks_exact(RECORD)
        .enumerate()
        .map(|(i, r)| {
            let u64_at = |at: usize| u64::from_le_bytes(r[at..at + 8].try_into().expect("8 bytes"));
            let to_move = match r[16] {
                0 => Color::Black,
                1 => Color::White,
                c => bail!("{what}: record {i}: side to move {c} is not 0 or 1"),
            };
            let mut position = Position::new(Variant::Standard, u64_at(0), u64_at(8), to_move)
                .with_context(|| format!("{what}: record {i}"))?;
            position.set_ply(u32::from_le_bytes(r[17..21].try_into().expect("4 bytes")));
            let score = i32::from_le_bytes(r[21..25].try_into().expect("4 bytes"));
            let outcome = match r[25] as i8 {
                o @ -1..=1 => o as f32,
                o => bail!("{what}: record {i}: result {o} is not -1, 0 or 1"),
            };
            let depth = u16::from_le_bytes(r[26..28].try_into().expect("2 bytes"));
            Ok(ScoredRecord {
                scored: ScoredPosition {
                    position,
                    score,
                    outcome,
                },
                depth,
            })
        })
        .collect()
}

/// Writes `records` to `path`, whole or not at all.
pub fn write(path: &Path, records: &[ScoredRecord]) -> Result<()> {
    let bytes = encode(records)?;
    let tmp = path.with_extension("scored.tmp");
    let mut file =
        std::fs::File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
    file.write_all(&bytes)
        .and_then(|_| file.sync_all())
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("cannot rename {} to {}", tmp.display(), path.display()))
}

/// Reads the records of `path`.
pub fn read(path: &Path) -> Result<Vec<ScoredRecord>> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    decode(&bytes, &path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scored_games::{play_scored_games, ScoredGames};

    fn records() -> Vec<ScoredRecord> {
        let (played, _) = play_scored_games(
            None,
            &ScoredGames {
                games: 2,
                depth: 1,
                ..Default::default()
            },
        );
        played
            .into_iter()
            .enumerate()
            .map(|(i, scored)| ScoredRecord {
                scored,
                depth: 1 + (i % 3) as u16,
            })
            .collect()
    }

    #[test]
    fn records_come_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.scored");
        let written = records();
        assert!(written.iter().any(|r| r.scored.outcome != 0.0));
        write(&path, &written).unwrap();
        let read_back = read(&path).unwrap();
        assert_eq!(read_back, written);
        assert_eq!(
            std::fs::metadata(&path).unwrap().len() as usize,
            HEADER + RECORD * written.len()
        );
        assert!(!dir.path().join("a.scored.tmp").exists());
    }

    /// The first record's bytes, fixed: the format cannot change without a new version.
    #[test]
    fn the_format_is_the_documented_one() {
        let start = Position::start(Variant::Standard, &loa::Rules::classic());
        let record = ScoredRecord {
            scored: ScoredPosition {
                position: start,
                score: -300,
                outcome: -1.0,
            },
            depth: 5,
        };
        let bytes = encode(&[record]).unwrap();
        let mut expect = b"LOASCORE".to_vec();
        expect.extend([1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]);
        expect.extend(start.pieces(Color::Black).to_le_bytes());
        expect.extend(start.pieces(Color::White).to_le_bytes());
        expect.extend([0, 0, 0, 0, 0]);
        expect.extend((-300i32).to_le_bytes());
        expect.extend([0xff, 5, 0]);
        assert_eq!(bytes, expect);
        // b1–g1 and b8–g8 (a1 is bit 0).
        assert_eq!(start.pieces(Color::Black), 0x7e00_0000_0000_007e);
    }

    #[test]
    fn a_bad_file_is_refused_naming_the_file_and_the_record() {
        let good = encode(&records()).unwrap();
        let refused = |bytes: &[u8]| decode(bytes, "x.scored").unwrap_err().to_string();
        assert!(refused(b"LOASCOR").contains("not a scored-positions file"));
        assert!(refused(&good[..good.len() - 1]).contains("truncated or corrupt"));
        let mut longer = good.clone();
        longer.push(0);
        assert!(refused(&longer).contains("truncated or corrupt"));
        let mut version = good.clone();
        version[8] = 2;
        assert!(refused(&version).contains("version 2"));
        let mut side = good.clone();
        side[HEADER + RECORD + 16] = 7;
        assert!(refused(&side).contains("record 1: side to move 7"));
        let mut result = good.clone();
        result[HEADER + 25] = 2;
        assert!(refused(&result).contains("record 0: result 2"));
        let mut clash = good.clone();
        clash[HEADER + 8..HEADER + 16].copy_from_slice(&good[HEADER..HEADER + 8]);
        let e = refused(&clash);
        assert!(e.contains("x.scored: record 0"), "{e}");
        let mut huge = good.clone();
        huge[12..20].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(refused(&huge).contains("truncated or corrupt"));
        let e = read(Path::new("/nonexistent/y.scored"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("/nonexistent/y.scored"), "{e}");
    }
}
