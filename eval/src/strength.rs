//! Strength against the alpha-beta baseline (`loazero benchmark`): an MCTS player (a
//! trained model, usually) plays `alphabeta:ms=T` at the same time per move T, and
//! `alphabeta:depth=D` at a fixed simulation count, one match per pairing from balanced
//! openings with colours swapped ([`crate::arena`]).
//!
//! Output directory:
//! * `PAIRING/` (`time-50ms`, `depth-2`, …): the match's `results.jsonl` and `games/`, and
//!   `done.json` (a [`PairingResult`]) once the pairing is complete. A rerun reuses every
//!   complete pairing whose players and game count are unchanged, goes on with an
//!   unfinished one from the games its `results.jsonl` holds when they are this pairing's
//!   (a benchmark cut by Ctrl-C or a kill: [`crate::arena::can_resume`]), and replays the
//!   others from their first game ([`crate::arena::play_once_or_go_on`]).
//! * `results.csv` and `results.md`: every finished pairing, rewritten atomically (temporary
//!   file, fsync, rename) after each one.

use crate::arena::{
    can_resume, play_match, play_once_or_go_on, Control, GameResult, MatchConfig, Openings,
};
use crate::elo::Tally;
use crate::player::spec::Value;
use crate::player::{PlayerFactory, PlayerSpec};
use anyhow::{anyhow, bail, Context, Result};
use loa::{Rules, Variant};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// What a benchmark plays.
#[derive(Clone, Debug)]
pub struct StrengthConfig {
    /// The player measured: an `mcts:`, `model:`, `ubfm:` or learned `alphabeta:eval=`
    /// spec; its search count (simulations, iterations, or depth) and `ms` are replaced
    /// per pairing.
    pub player: PlayerSpec,
    /// Times per move (ms) of the equal-time pairings: player `ms=T` vs `alphabeta:ms=T`.
    pub times_ms: Vec<u64>,
    /// Depths of the fixed-depth pairings: player at `sims` vs `alphabeta:depth=D`.
    pub depths: Vec<u32>,
    /// Simulations per move of the player in the depth pairings.
    pub sims: u32,
    /// Games per pairing (even: every opening once with each colour).
    pub games: usize,
    /// Games played at once in the timed pairings (1 keeps the sides off each other's CPU).
    pub timed_threads: usize,
    /// Games played at once in the depth pairings.
    pub depth_threads: usize,
    /// The variant played.
    pub variant: Variant,
    /// The rules played under.
    pub rules: Rules,
    /// Where the games start.
    pub openings: Openings,
    /// Games still running after this many plies are scored a draw.
    pub max_plies: u32,
    /// Seed of the openings (the same openings in every pairing).
    pub seed: u64,
}

/// How a pairing limits the two sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Both sides think this many milliseconds per move.
    Time(u64),
    /// The player runs the configured simulations; alpha-beta searches to this depth.
    Depth(u32),
}

impl Level {
    /// The pairing's name and directory: `time-50ms` or `depth-2`.
    pub fn label(&self) -> String {
        match self {
            Level::Time(ms) => format!("time-{ms}ms"),
            Level::Depth(d) => format!("depth-{d}"),
        }
    }
}

/// One pairing: the player against the baseline at one level.
#[derive(Clone, Debug, PartialEq)]
pub struct Pairing {
    /// The baseline's level (time per move or depth).
    pub level: Level,
    /// The player under test, with the time or simulations of this level.
    pub player: PlayerSpec,
    /// The alpha-beta baseline at this level.
    pub baseline: PlayerSpec,
    /// Games played at once.
    pub threads: usize,
}

/// The result of one pairing (a row of `results.csv`; `done.json` of the pairing).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairingResult {
    /// [`Level::label`].
    pub pairing: String,
    /// The baseline's level.
    pub level: Level,
    /// The specs of the player and the baseline.
    pub player: String,
    /// The baseline's spec.
    pub baseline: String,
    /// The player's wins, draws and losses.
    pub tally: Tally,
    /// Elo of the player over the baseline and its 95% interval (±∞ for a clean sweep,
    /// stored in JSON as `"inf"` / `"-inf"`: [`crate::elo::any_float`]).
    #[serde(with = "crate::elo::any_float")]
    pub elo: f64,
    /// Lower end of the 95% interval.
    #[serde(with = "crate::elo::any_float")]
    pub elo_lower: f64,
    /// Upper end of the 95% interval.
    #[serde(with = "crate::elo::any_float")]
    pub elo_upper: f64,
    /// Mean thinking time per move of each side, in milliseconds (mean over games of
    /// each game's mean).
    pub player_ms_per_move: f64,
    /// The baseline's mean thinking time per move, in milliseconds.
    pub baseline_ms_per_move: f64,
}

impl PairingResult {
    /// The player's Elo over the baseline with its 95% interval.
    pub fn elo_estimate(&self) -> crate::elo::EloEstimate {
        crate::elo::EloEstimate {
            elo: self.elo,
            lower: self.elo_lower,
            upper: self.elo_upper,
        }
    }

    /// Its columns of `results.csv` (and of the ladder's `ladder.csv`) from the player's
    /// spec to the baseline's time per move: `player,baseline,games,wins,draws,losses,
    /// score,elo,elo_lower,elo_upper,player_ms_per_move,baseline_ms_per_move`.
    pub fn csv_columns(&self) -> String {
        let t = self.tally;
        format!(
            "{},{},{},{},{},{},{:.4},{:.1},{:.1},{:.1},{:.2},{:.2}",
            csv_field(&self.player),
            csv_field(&self.baseline),
            t.games(),
            t.wins,
            t.draws,
            t.losses,
            t.score(),
            self.elo,
            self.elo_lower,
            self.elo_upper,
            self.player_ms_per_move,
            self.baseline_ms_per_move
        )
    }

    /// Its cells of the text and Markdown tables (of `benchmark` and the ladder): W-D-L,
    /// score, Elo [95%], then the mean time per move of the player and of the baseline.
    pub fn table_cells(&self) -> [String; 5] {
        let t = self.tally;
        [
            format!("{}-{}-{}", t.wins, t.draws, t.losses),
            format!("{:.1}%", 100.0 * t.score()),
            self.elo_estimate().to_string(),
            format!("{:.1}", self.player_ms_per_move),
            format!("{:.1}", self.baseline_ms_per_move),
        ]
    }
}

/// `spec` limited to `ms` per move (no cap on its search count). Errors unless it is a
/// searching player with a count key (`sims` of `mcts:`/`model:`, `nodes` of `ubfm:`).
pub fn with_time(spec: &PlayerSpec, ms: u64) -> Result<PlayerSpec> {
    set_limits(spec, None, Some(ms))
}

/// `spec` at `count` simulations (MCTS) or iterations (UBFM) per move, no time limit.
/// Errors unless it is a searching player with a count key.
pub fn with_sims(spec: &PlayerSpec, count: u32) -> Result<PlayerSpec> {
    set_limits(spec, Some(count), None)
}

/// The key that counts a player's search per move, by kind: simulations of the MCTS
/// players, iterations of UBFM. Alpha-beta's `nodes` is not one: its pairings are the
/// baseline's.
const COUNT_KEYS: [(&str, &str); 3] = [("mcts", "sims"), ("model", "sims"), ("ubfm", "nodes")];

fn set_limits(spec: &PlayerSpec, count: Option<u32>, ms: Option<u64>) -> Result<PlayerSpec> {
    let int = |n: Option<u64>| n.map(|n| Value::Int(n as i64));
    if spec.kind().name == "alphabeta" {
        // The learned alpha-beta (`alphabeta:eval=FILE`): its count is the depth, so a
        // depth pairing is the same search with another evaluation.
        return spec
            .with("nodes", None)?
            .with("depth", int(count.map(u64::from)))?
            .with("ms", int(ms));
    }
    let Some((_, key)) = COUNT_KEYS
        .into_iter()
        .find(|(kind, _)| spec.kind().name == *kind)
    else {
        bail!("benchmark: the player '{spec}' is not an mcts:, model:, ubfm: or alphabeta: player");
    };
    spec.with(key, int(count.map(u64::from)))?
        .with("ms", int(ms))
}

impl StrengthConfig {
    /// The pairings in order: times (ascending as given), then depths. Errors on an odd or
    /// zero game count, no pairing, a zero time or depth, or a player that is not MCTS.
    pub fn pairings(&self) -> Result<Vec<Pairing>> {
        if self.games == 0 || self.games % 2 == 1 {
            bail!(
                "--games must be a positive even number (each opening is played with both \
                 colours), not {}",
                self.games
            );
        }
        if self.times_ms.is_empty() && self.depths.is_empty() {
            bail!("nothing to play: give --times and/or --depths");
        }
        if self.sims == 0 {
            bail!("--sims must be positive");
        }
        let mut out = Vec::new();
        for &ms in &self.times_ms {
            if ms == 0 {
                bail!("--times: a time per move must be positive");
            }
            out.push(Pairing {
                level: Level::Time(ms),
                player: with_time(&self.player, ms)?,
                baseline: PlayerSpec::parse(&format!("alphabeta:ms={ms}"))?,
                threads: self.timed_threads.max(1),
            });
        }
        for &d in &self.depths {
            if d == 0 || d > 60 {
                bail!("--depths: depth {d} is not in 1..=60");
            }
            // An alpha-beta player (a learned evaluation) searches the baseline's depth.
            let count = if self.player.kind().name == "alphabeta" {
                d
            } else {
                self.sims
            };
            out.push(Pairing {
                level: Level::Depth(d),
                player: with_sims(&self.player, count)?,
                baseline: PlayerSpec::parse(&format!("alphabeta:depth={d}"))?,
                threads: self.depth_threads.max(1),
            });
        }
        Ok(out)
    }
}

/// The completion file of a pairing's folder: its [`PairingResult`].
const DONE: &str = "done.json";

/// Called after each pairing with it, every result so far (its own last) and whether it
/// was reused from an earlier run; an error stops the benchmark.
pub type OnPairing<'a> = dyn FnMut(&Pairing, &[PairingResult], bool) -> Result<()> + 'a;

/// Plays every pairing of `config` into `out` (see the module docs), skipping complete
/// ones. `on_game` sees every finished game with the running tally of the player;
/// `on_pairing` is called after each pairing (played or reused) with every result so
/// far, after `results.csv` and `results.md` were written. Returns every result.
pub fn run(
    factory: &PlayerFactory,
    config: &StrengthConfig,
    out: &Path,
    on_game: &(dyn Fn(&Pairing, &GameResult, &Tally) + Sync),
    on_pairing: &mut OnPairing<'_>,
) -> Result<Vec<PairingResult>> {
    let pairings = config.pairings()?;
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut results = Vec::new();
    for pairing in &pairings {
        let dir = out.join(pairing.level.label());
        let match_config = pairing_match(config, pairing, &dir);
        let once = play_once_or_go_on(
            &dir,
            DONE,
            |r: &PairingResult| {
                r.player == pairing.player.name()
                    && r.baseline == pairing.baseline.name()
                    && r.tally.games() as usize == config.games
            },
            |_| can_resume(&pairing.player, &pairing.baseline, &match_config),
            |resume| {
                let match_config = MatchConfig {
                    resume,
                    ..match_config.clone()
                };
                play_pairing(factory, &match_config, pairing, on_game)
            },
        )?;
        results.push(once.result);
        write_tables(out, &results)?;
        on_pairing(pairing, &results, once.reused)?;
    }
    Ok(results)
}

/// The match a pairing plays into `dir` (from its first game).
fn pairing_match(config: &StrengthConfig, pairing: &Pairing, dir: &Path) -> MatchConfig {
    MatchConfig {
        games: config.games,
        variant: config.variant,
        rules: config.rules,
        openings: config.openings.clone(),
        threads: pairing.threads,
        max_plies: config.max_plies,
        seed: config.seed,
        out_dir: Some(dir.to_path_buf()),
        sgf: false,
        resume: false,
        cancel: Default::default(),
    }
}

/// Plays `match_config` (a [`pairing_match`], resumed or not) and sums it up.
fn play_pairing(
    factory: &PlayerFactory,
    match_config: &MatchConfig,
    pairing: &Pairing,
    on_game: &(dyn Fn(&Pairing, &GameResult, &Tally) + Sync),
) -> Result<PairingResult> {
    let report = play_match(
        factory,
        &pairing.player,
        &pairing.baseline,
        match_config,
        &|g, t| {
            on_game(pairing, g, t);
            Control::Continue
        },
    )
    .with_context(|| format!("pairing {}", pairing.level.label()))?;
    Ok(summarize(pairing, &report.games, report.tally))
}

/// The result of a pairing from its games.
pub fn summarize(pairing: &Pairing, games: &[GameResult], tally: Tally) -> PairingResult {
    let n = games.len().max(1) as f64;
    let mean_ms = |f: fn(&GameResult) -> f64| 1000.0 * games.iter().map(f).sum::<f64>() / n;
    let elo = tally.elo();
    PairingResult {
        pairing: pairing.level.label(),
        level: pairing.level,
        player: pairing.player.name(),
        baseline: pairing.baseline.name(),
        tally,
        elo: elo.elo,
        elo_lower: elo.lower,
        elo_upper: elo.upper,
        player_ms_per_move: mean_ms(|g| g.a_seconds_per_move),
        baseline_ms_per_move: mean_ms(|g| g.b_seconds_per_move),
    }
}

/// The header of `results.csv`.
pub const CSV_HEADER: &str = "pairing,kind,level,player,baseline,games,wins,draws,losses,\
score,elo,elo_lower,elo_upper,player_ms_per_move,baseline_ms_per_move";

/// `s` as one CSV field: quoted (inner quotes doubled) when it holds a comma, a quote or a
/// line break.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// `results.csv`: [`CSV_HEADER`], then one row per result. `level` is milliseconds for
/// `kind` = `time`, plies for `depth`; infinite Elo bounds read `inf` / `-inf`.
pub fn csv(results: &[PairingResult]) -> String {
    let mut s = String::from(CSV_HEADER);
    s.push('\n');
    for r in results {
        let (kind, level) = match r.level {
            Level::Time(ms) => ("time", ms),
            Level::Depth(d) => ("depth", d as u64),
        };
        s += &format!("{},{kind},{level},{}\n", r.pairing, r.csv_columns());
    }
    s
}

fn rows(results: &[PairingResult]) -> Vec<Vec<String>> {
    results
        .iter()
        .map(|r| {
            let pairing = match r.level {
                Level::Time(ms) => format!("{ms} ms vs {}", r.baseline),
                Level::Depth(_) => format!(
                    "{} vs {}",
                    count_label(&r.player).unwrap_or_else(|| r.player.clone()),
                    r.baseline
                ),
            };
            std::iter::once(pairing).chain(r.table_cells()).collect()
        })
        .collect()
}

/// A player spec's search count as a label: `400 sims` (MCTS) or `16 nodes` (UBFM); `None`
/// without one.
pub fn count_label(spec: &str) -> Option<String> {
    spec.split(',').find_map(|p| {
        (p.strip_prefix("sims=").map(|n| format!("{n} sims")))
            .or_else(|| p.strip_prefix("nodes=").map(|n| format!("{n} nodes")))
    })
}

const HEADERS: [&str; 6] = [
    "pairing",
    "W-D-L",
    "score",
    "Elo [95%]",
    "ms/move player",
    "ms/move alpha-beta",
];

/// The results as an aligned text table (what `loazero benchmark` prints).
pub fn table(results: &[PairingResult]) -> String {
    text_table(&HEADERS, &rows(results))
}

/// `results.md`: the player, then the table in Markdown.
pub fn markdown(results: &[PairingResult]) -> String {
    let mut s = String::from("# Benchmark against alpha-beta\n\n");
    let mut players: Vec<&str> = results.iter().map(|r| r.player.as_str()).collect();
    players.dedup();
    for p in players {
        s += &format!("- player: `{p}`\n");
    }
    s += "- Elo of the player over the baseline with its 95% interval; time per move is the \
          mean thinking time measured by the arena.\n\n";
    s += &markdown_table(&HEADERS, &rows(results));
    s
}

/// `rows` under `headers` as aligned text: the first column left-aligned, the others
/// right-aligned, columns two spaces apart, one line each (trailing spaces cut).
pub fn text_table<R: AsRef<[String]>>(headers: &[&str], rows: &[R]) -> String {
    let mut width: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (w, c) in width.iter_mut().zip(r.as_ref()) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        cells
            .zip(&width)
            .enumerate()
            .map(|(i, (c, &w))| {
                if i == 0 {
                    format!("{c:<w$}")
                } else {
                    format!("{c:>w$}")
                }
            })
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
    };
    let mut s = line(&mut headers.iter().copied()) + "\n";
    for r in rows {
        s += &line(&mut r.as_ref().iter().map(String::as_str));
        s.push('\n');
    }
    s
}

/// `rows` under `headers` as a Markdown table.
pub fn markdown_table<R: AsRef<[String]>>(headers: &[&str], rows: &[R]) -> String {
    let mut s = format!("| {} |\n", headers.join(" | "));
    s += &format!("|{}\n", "---|".repeat(headers.len()));
    for r in rows {
        s += &format!("| {} |\n", r.as_ref().join(" | "));
    }
    s
}

/// Writes `results.csv` and `results.md` of `results` into `dir`, each atomically.
pub fn write_tables(dir: &Path, results: &[PairingResult]) -> Result<()> {
    write_atomically(&dir.join("results.csv"), csv(results).as_bytes())?;
    write_atomically(&dir.join("results.md"), markdown(results).as_bytes())
}

fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    selfplay::data::write_atomically(path, bytes)
        .map_err(|e| anyhow!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(player: &str) -> StrengthConfig {
        StrengthConfig {
            player: PlayerSpec::parse(player).unwrap(),
            times_ms: vec![5, 20],
            depths: vec![1],
            sims: 16,
            games: 2,
            timed_threads: 1,
            depth_threads: 2,
            variant: Variant::Six,
            rules: Rules::classic(),
            openings: Openings::Random {
                plies: 2,
                max_eval: 150,
            },
            max_plies: 60,
            seed: 1,
        }
    }

    #[test]
    fn pairings_set_equal_times_and_fixed_sims() {
        let p = config("model:path=m.st,sims=400,device=cuda")
            .pairings()
            .unwrap();
        let names: Vec<(String, String, String, usize)> = p
            .iter()
            .map(|p| {
                (
                    p.level.label(),
                    p.player.name(),
                    p.baseline.name(),
                    p.threads,
                )
            })
            .collect();
        assert_eq!(
            names,
            [
                (
                    "time-5ms".into(),
                    "model:path=m.st,ms=5,device=cuda".into(),
                    "alphabeta:ms=5".into(),
                    1
                ),
                (
                    "time-20ms".into(),
                    "model:path=m.st,ms=20,device=cuda".into(),
                    "alphabeta:ms=20".into(),
                    1
                ),
                (
                    "depth-1".into(),
                    "model:path=m.st,sims=16,device=cuda".into(),
                    "alphabeta:depth=1".into(),
                    2
                ),
            ]
        );
    }

    #[test]
    fn ubfm_pairings_limit_its_iterations_or_its_time() {
        let p = config("ubfm:path=m.st,nodes=400").pairings().unwrap();
        let names: Vec<String> = p.iter().map(|p| p.player.name()).collect();
        assert_eq!(
            names,
            [
                "ubfm:path=m.st,ms=5",
                "ubfm:path=m.st,ms=20",
                "ubfm:path=m.st,nodes=16"
            ]
        );
    }

    #[test]
    fn bad_configs_are_refused() {
        let mut c = config("mcts");
        c.games = 3;
        assert!(c.pairings().unwrap_err().to_string().contains("even"));
        let mut c = config("mcts");
        c.times_ms = vec![0];
        assert!(c.pairings().unwrap_err().to_string().contains("--times"));
        let mut c = config("mcts");
        c.depths = vec![0];
        assert!(c.pairings().unwrap_err().to_string().contains("--depths"));
        let mut c = config("mcts");
        c.times_ms.clear();
        c.depths.clear();
        assert!(c.pairings().unwrap_err().to_string().contains("nothing"));
        let c = config("random");
        assert!(c.pairings().unwrap_err().to_string().contains("random"));
    }

    /// The learned alpha-beta meets the baseline at its time, and at its depth (the same
    /// search, another evaluation).
    #[test]
    fn learned_alphabeta_pairings_set_its_time_or_its_depth() {
        let c = config("alphabeta:depth=1,eval=/x/nnue-0001.safetensors");
        let p = c.pairings().unwrap();
        assert_eq!(p.len(), c.times_ms.len() + c.depths.len());
        for (pairing, ms) in p.iter().zip(&c.times_ms) {
            let name = pairing.player.name();
            assert!(
                name.contains(&format!("ms={ms}")) && !name.contains("depth="),
                "{name}"
            );
            assert!(name.contains("eval=/x/nnue-0001.safetensors"), "{name}");
        }
        for (pairing, d) in p[c.times_ms.len()..].iter().zip(&c.depths) {
            let name = pairing.player.name();
            assert!(
                name.contains(&format!("depth={d}")) && !name.contains("ms="),
                "{name}"
            );
            assert_eq!(pairing.baseline.name(), format!("alphabeta:depth={d}"));
        }
    }

    #[test]
    fn tables_align_and_quote() {
        let rows = [
            vec!["a".to_string(), "1".to_string()],
            vec!["longer".to_string(), "-12.5".to_string()],
        ];
        assert_eq!(
            text_table(&["name", "x"], &rows),
            "name        x\na           1\nlonger  -12.5\n"
        );
        assert_eq!(
            markdown_table(&["name", "x"], &rows),
            "| name | x |\n|---|---|\n| a | 1 |\n| longer | -12.5 |\n"
        );
        assert_eq!(csv_field("a,b \"c\""), "\"a,b \"\"c\"\"\"");
        assert_eq!(csv_field("plain"), "plain");
    }

    #[test]
    fn a_benchmark_writes_tables_and_resumes() {
        let dir = tempfile::tempdir().unwrap();
        let c = config("mcts:evaluator=heuristic");
        let f = PlayerFactory::new();
        let mut seen = Vec::new();
        let results = run(&f, &c, dir.path(), &|_, _, _| {}, &mut |p, all, reused| {
            seen.push((p.level.label(), all.len(), reused));
            Ok(())
        })
        .unwrap();
        assert_eq!(
            seen,
            [
                ("time-5ms".to_string(), 1, false),
                ("time-20ms".to_string(), 2, false),
                ("depth-1".to_string(), 3, false)
            ]
        );
        assert!(results.iter().all(|r| r.tally.games() == 2));
        // A clean sweep has an infinite estimate; done.json keeps it.
        let mut sweep = results[0].clone();
        (sweep.elo, sweep.elo_lower, sweep.elo_upper) = (f64::INFINITY, 100.0, f64::INFINITY);
        let text = serde_json::to_string(&sweep).unwrap();
        let back = serde_json::from_str::<PairingResult>(&text).unwrap();
        assert_eq!(
            (back.elo, back.elo_lower, back.elo_upper),
            (f64::INFINITY, 100.0, f64::INFINITY)
        );
        sweep.elo = f64::NEG_INFINITY;
        let text = serde_json::to_string(&sweep).unwrap();
        assert!(text.contains("\"-inf\""), "{text}");
        let back = serde_json::from_str::<PairingResult>(&text).unwrap();
        assert_eq!(back.elo, f64::NEG_INFINITY);
        let csv_text = std::fs::read_to_string(dir.path().join("results.csv")).unwrap();
        assert_eq!(csv_text, csv(&results));
        let lines: Vec<&str> = csv_text.lines().collect();
        assert_eq!(lines[0], CSV_HEADER);
        assert_eq!(lines.len(), 4);
        assert!(
            lines[1]
                .starts_with("time-5ms,time,5,\"mcts:evaluator=heuristic,ms=5\",alphabeta:ms=5,2,"),
            "{}",
            lines[1]
        );
        let md = std::fs::read_to_string(dir.path().join("results.md")).unwrap();
        assert!(md.contains("| 16 sims vs alphabeta:depth=1 |"), "{md}");
        assert!(table(&results).contains("5 ms vs alphabeta:ms=5"));
        // A rerun reuses the finished pairings; a changed one is replayed.
        seen.clear();
        let mut c2 = c.clone();
        c2.sims = 8;
        let again = run(&f, &c2, dir.path(), &|_, _, _| {}, &mut |p, _, reused| {
            seen.push((p.level.label(), 0, reused));
            Ok(())
        })
        .unwrap();
        // (JSON may change a float's last digit.)
        for (a, r) in again[..2].iter().zip(&results[..2]) {
            assert_eq!(
                (&a.player, &a.baseline, a.tally),
                (&r.player, &r.baseline, r.tally)
            );
            assert!((a.player_ms_per_move - r.player_ms_per_move).abs() < 1e-9);
        }
        assert_eq!(
            seen.iter().map(|s| s.2).collect::<Vec<_>>(),
            [true, true, false]
        );
        assert!(again[2].player.contains("sims=8"));
    }

    /// A pairing cut short (no `done.json`; its results file holding one whole game and
    /// half of another, as a kill leaves it) goes on: the recorded game counts and is not
    /// played again. An unfinished folder of another player's games is replayed whole.
    #[test]
    fn an_unfinished_pairing_goes_on_from_the_games_it_holds() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = config("mcts:evaluator=heuristic");
        c.times_ms = vec![];
        c.games = 4;
        let f = PlayerFactory::new();
        let first = run(&f, &c, dir.path(), &|_, _, _| {}, &mut |_, _, _| Ok(())).unwrap();
        assert_eq!(first[0].tally.games(), 4);
        let pairing = dir.path().join("depth-1");
        let results = pairing.join("results.jsonl");
        let text = std::fs::read_to_string(&results).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let kept = lines[2];
        let kept_game = serde_json::from_str::<GameResult>(kept).unwrap().game;
        let cut = format!("{kept}\n{}", &lines[0][..lines[0].len() / 2]);
        std::fs::write(&results, cut).unwrap();
        std::fs::remove_file(pairing.join(DONE)).unwrap();

        let played = std::sync::Mutex::new(Vec::new());
        let on_game = |_: &Pairing, g: &GameResult, t: &Tally| {
            played.lock().unwrap().push((g.game, t.games()));
        };
        let mut reused = Vec::new();
        let again = run(&f, &c, dir.path(), &on_game, &mut |_, _, r| {
            reused.push(r);
            Ok(())
        })
        .unwrap();
        assert_eq!(reused, [false]);
        let seen = std::mem::take(&mut *played.lock().unwrap());
        assert_eq!(seen.len(), 3, "{seen:?}");
        assert!(seen.iter().all(|&(g, _)| g != kept_game), "{seen:?}");
        // The running tally counts the recorded game.
        assert_eq!(seen.iter().map(|&(_, n)| n).max(), Some(4), "{seen:?}");
        assert_eq!(again[0].tally.games(), 4);
        let after = std::fs::read_to_string(&results).unwrap();
        assert!(after.starts_with(&format!("{kept}\n")), "{after}");
        let read = crate::arena::read_results(&results).unwrap();
        assert!(read.skipped.is_empty(), "{:?}", read.skipped);
        let mut numbers: Vec<usize> = read.games.iter().map(|g| g.game).collect();
        numbers.sort();
        assert_eq!(numbers, [0, 1, 2, 3]);

        // Games of another player (8 simulations, not 16) are not this pairing's.
        std::fs::remove_file(pairing.join(DONE)).unwrap();
        std::fs::write(&results, format!("{kept}\n")).unwrap();
        let mut other = c.clone();
        other.sims = 8;
        let replayed = run(&f, &other, dir.path(), &on_game, &mut |_, _, _| Ok(())).unwrap();
        assert_eq!(played.lock().unwrap().len(), 4);
        assert_eq!(replayed[0].tally.games(), 4);
        let read = crate::arena::read_results(&results).unwrap();
        assert_eq!(read.games.len(), 4);
        assert!(read.games.iter().all(|g| g.a.contains("sims=8")));
    }

    /// The player's wins are its wins: a weak player (uniform MCTS at one simulation)
    /// against alpha-beta at depth 2 loses, and `done.json`, `results.csv` and the table
    /// say so the right way round.
    #[test]
    fn a_weak_players_losses_are_its_losses_in_every_table() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = config("mcts:evaluator=uniform");
        c.times_ms = vec![];
        c.depths = vec![2];
        c.sims = 1;
        c.games = 6;
        let results = run(
            &PlayerFactory::new(),
            &c,
            dir.path(),
            &|_, _, _| {},
            &mut |_, _, _| Ok(()),
        )
        .unwrap();
        let t = results[0].tally;
        assert!(t.losses >= 4 && t.losses > t.wins, "{t:?}");
        assert!(results[0].elo < 0.0, "{}", results[0].elo);
        let done = std::fs::read_to_string(dir.path().join("depth-2").join(DONE)).unwrap();
        let done: PairingResult = serde_json::from_str(&done).unwrap();
        assert_eq!(done.tally, t);
        let csv_text = std::fs::read_to_string(dir.path().join("results.csv")).unwrap();
        let row = csv_text.lines().nth(1).unwrap();
        let columns = format!(",{},{},{},{},", t.games(), t.wins, t.draws, t.losses);
        assert!(row.contains(&columns), "{row} lacks {columns}");
        let cell = format!("{}-{}-{}", t.wins, t.draws, t.losses);
        assert!(table(&results).contains(&cell), "{}", table(&results));
    }
}
