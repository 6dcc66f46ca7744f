//! `loazero train-eval`: trains the learned alpha-beta evaluation (`alphabeta:eval=FILE`)
//! from a run directory's self-play shards, into the run's `models/nnue-NNNN.safetensors`
//! (the next free number) or `--out`. See `train::learned_eval`.

use crate::run::config::LearnedEvalConfig;
use crate::run::learned_stage::learns_from_shards;
use anyhow::{Context, Result};
use eval::learned::{LearnedEval, Simd, Weights};
use eval::scored_file::{self, ScoredRecord};
use eval::scored_games::{fit_score_scale, play_scored_games, rescore, Rescore, ScoredGames};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use train::learned_eval::{
    blend_teacher_values, labels_from_scored_games, labels_from_shards, train_learned_eval,
    LabelledPosition, LearnedEvalTraining,
};

/// Arguments of `loazero train-eval`.
#[derive(clap::Args)]
pub struct Args {
    /// The run directory whose `shards/` are the positions.
    #[arg(long, default_value = "runs/default")]
    pub dir: PathBuf,
    /// The weights file to write (default: the run's models/nnue-NNNN.safetensors, the
    /// next free number).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Start from these weights (a learned evaluation file) instead of random ones.
    #[arg(long)]
    pub init: Option<PathBuf>,
    /// Passes over the positions (`--epochs`, its former name, is still taken); 0 trains
    /// nothing and writes no weights (the games are only played, for --save-scored).
    #[arg(long, alias = "epochs", default_value_t = LearnedEvalTraining::default().passes)]
    pub passes: usize,
    /// Stop training after this many minutes even if passes remain.
    #[arg(long)]
    pub minutes: Option<f64>,
    /// Weight λ of the search value in the target `λ·search + (1 − λ)·outcome`.
    #[arg(long, default_value_t = 0.75)]
    pub search_weight: f32,
    /// The newest positions of the shards used at most (0: none). Default: as the run's
    /// stage, `learned_eval.shard_positions` (2 000 000) from random weights, none with
    /// --init (a generation from learned weights learns from its own games alone).
    #[arg(long)]
    pub max_positions: Option<usize>,
    /// Alpha-beta self-play games whose positions, scored by their searches, are added
    /// (played with the --init evaluation, else the hand-written one).
    #[arg(long, default_value_t = 0)]
    pub games: usize,
    /// Depth of those games' searches.
    #[arg(long, default_value_t = 3)]
    pub depth: u32,
    /// Random plies at the start of each of those games.
    #[arg(long, default_value_t = ScoredGames::default().opening_plies)]
    pub opening_plies: usize,
    /// Chance of a random move at each later ply of those games (0: randomness in the
    /// opening only).
    #[arg(long, default_value_t = ScoredGames::default().random_move)]
    pub random_move: f64,
    /// Scored positions read from a file written by --save-scored and trained on before
    /// the games (repeatable; each file's score scale is fitted on its own, so files scored
    /// by different evaluations mix).
    #[arg(long = "scored", value_name = "FILE")]
    pub scored: Vec<PathBuf>,
    /// Scores a share (--label-share) of the --scored files' and the games' positions
    /// again with a search of this depth (the --init evaluation, else the hand-written
    /// one): labels deeper than play.
    #[arg(long)]
    pub label_depth: Option<u32>,
    /// Scores them again with a search of this many nodes (with --label-depth: whichever
    /// comes first).
    #[arg(long)]
    pub label_nodes: Option<u64>,
    /// The share of the positions that --label-depth or --label-nodes scores again.
    #[arg(long, default_value_t = 1.0)]
    pub label_share: f64,
    /// Writes the --scored files' and the games' positions (after --label-depth) to this
    /// file, for later trainings' --scored.
    #[arg(long, value_name = "FILE")]
    pub save_scored: Option<PathBuf>,
    /// A policy-value model (e.g. the run's models/gen-NNNN.safetensors) whose value blends
    /// into the scored positions' labels (the games' and the --scored files') with
    /// --teacher-weight.
    #[arg(long)]
    pub teacher: Option<PathBuf>,
    /// Weight τ of the --teacher's value in the games' labels, `(1 − τ)·label + τ·value`.
    #[arg(long, default_value_t = 0.25)]
    pub teacher_weight: f32,
    /// Threads playing those games.
    #[arg(long, default_value_t = 2)]
    pub game_threads: usize,
    /// torch threads (0: torch's default).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Seed of the initial weights and the batch order.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// `dir/nnue-NNNN.safetensors` with the first number not taken.
pub fn next_eval_path(models: &Path) -> PathBuf {
    (1..)
        .map(|k| models.join(format!("nnue-{k:04}.safetensors")))
        .find(|p| !p.exists())
        .expect("a free name")
}

/// The shard positions `train-eval` reads at most: `--max-positions` if given, else the
/// run's stage's rule ([`learns_from_shards`]): its default for training from random
/// weights, none from `--init` weights.
pub fn shard_positions(max_positions: Option<usize>, from_init: bool) -> usize {
    let default = LearnedEvalConfig::default().shard_positions;
    max_positions.unwrap_or(if learns_from_shards(!from_init, default) {
        default
    } else {
        0
    })
}

/// Runs `loazero train-eval`.
pub fn run(args: Args) -> Result<()> {
    train::device::set_threads(args.threads);
    let shards = args.dir.join("shards");
    let max_positions = shard_positions(args.max_positions, args.init.is_some());
    let mut data = if max_positions > 0 {
        labels_from_shards(&shards, args.search_weight, max_positions)?
    } else {
        Vec::new()
    };
    println!("{} positions from {}", data.len(), shards.display());
    let init = match &args.init {
        Some(p) => Some(Weights::load(p)?),
        None => None,
    };
    // The --init weights, already read, play the games and rescore.
    let learned = match (&init, &args.init) {
        (Some(w), Some(p)) => Some(Arc::new(
            LearnedEval::new(w.clone(), Simd::from_env()?)
                .with_context(|| format!("learned evaluation {}", p.display()))?,
        )),
        _ => None,
    };
    // Each source of scored positions (a file, this call's games) is labelled with the
    // score scale fitted on it alone.
    let mut sources: Vec<(String, Vec<ScoredRecord>)> = Vec::new();
    for path in &args.scored {
        let records = scored_file::read(path)?;
        println!("{} scored positions from {}", records.len(), path.display());
        sources.push((path.display().to_string(), records));
    }
    if args.games > 0 {
        anyhow::ensure!(
            (0.0..=1.0).contains(&args.random_move),
            "--random-move {} is not within 0 and 1",
            args.random_move
        );
        let started = std::time::Instant::now();
        let config = ScoredGames {
            games: args.games,
            depth: args.depth,
            opening_plies: args.opening_plies,
            random_move: args.random_move,
            threads: args.game_threads,
            seed: args.seed,
            ..Default::default()
        };
        let (scored, finished) = play_scored_games(learned.clone(), &config);
        println!(
            "{} positions from {finished} alpha-beta games at depth {} ({:.0} s)",
            scored.len(),
            args.depth,
            started.elapsed().as_secs_f64()
        );
        let records = scored
            .into_iter()
            .map(|scored| ScoredRecord {
                scored,
                depth: args.depth as u16,
            })
            .collect();
        sources.push((format!("{} games", args.games), records));
    }
    if args.label_depth.is_some() || args.label_nodes.is_some() {
        let limits = eval::SearchLimits {
            depth: args.label_depth,
            nodes: args.label_nodes,
            time: None,
        };
        let what = match (args.label_depth, args.label_nodes) {
            (Some(d), Some(n)) => format!("depth {d} or {n} nodes"),
            (Some(d), None) => format!("depth {d}"),
            (None, n) => format!("{} nodes", n.unwrap_or(0)),
        };
        anyhow::ensure!(
            (0.0..=1.0).contains(&args.label_share),
            "--label-share {} is not within 0 and 1",
            args.label_share
        );
        for (i, (name, records)) in sources.iter_mut().enumerate() {
            let started = std::time::Instant::now();
            let mut positions: Vec<_> = records.iter().map(|r| r.scored.clone()).collect();
            let config = Rescore {
                limits,
                share: args.label_share,
                threads: args.game_threads,
                seed: args.seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                stop: selfplay::Cancel::when(loazero::interrupt::requested),
            };
            let rescored = rescore(learned.clone(), &mut positions, &config);
            for &(i, depth) in &rescored {
                records[i].depth = depth as u16;
            }
            for (r, p) in records.iter_mut().zip(positions) {
                r.scored = p;
            }
            let n = rescored.len();
            println!(
                "{name}: {n} positions scored again at {what} ({:.0} s)",
                started.elapsed().as_secs_f64()
            );
        }
    }
    if let Some(path) = &args.save_scored {
        let all: Vec<ScoredRecord> = sources
            .iter()
            .flat_map(|(_, r)| r.iter().cloned())
            .collect();
        scored_file::write(path, &all)?;
        println!("wrote {} scored positions to {}", all.len(), path.display());
    }
    let teacher = match &args.teacher {
        Some(path) => Some((
            path,
            train::NetEvaluator::load(path, &train::InferenceConfig::default())
                .with_context(|| format!("--teacher {}", path.display()))?,
        )),
        None => None,
    };
    for (name, records) in &sources {
        let positions: Vec<_> = records.iter().map(|r| r.scored.clone()).collect();
        let scale = fit_score_scale(&positions);
        let mut labelled: Vec<LabelledPosition> =
            labels_from_scored_games(&positions, scale, args.search_weight);
        if let Some((path, evaluator)) = &teacher {
            blend_teacher_values(&mut labelled, evaluator, args.teacher_weight)?;
            println!(
                "{name}: labels blended with {}'s value (weight {})",
                path.display(),
                args.teacher_weight
            );
        }
        println!(
            "{name}: {} positions, {scale:.0} units a logit",
            labelled.len()
        );
        // Shards first (oldest to newest), then the files, the games last: the held-out
        // part is the last source.
        data.extend(labelled);
    }
    if args.passes == 0 {
        println!("--passes 0: nothing trained");
        return Ok(());
    }
    let config = LearnedEvalTraining {
        passes: args.passes,
        time_limit: args.minutes.map(|m| Duration::from_secs_f64(m * 60.0)),
        seed: args.seed,
        ..Default::default()
    };
    let (mut weights, report) =
        train_learned_eval(&data, init.as_ref(), &config, |line| println!("{line}"))?;
    let out = match args.out {
        Some(p) => p,
        None => {
            let models = args.dir.join("models");
            std::fs::create_dir_all(&models)
                .with_context(|| format!("cannot create {}", models.display()))?;
            next_eval_path(&models)
        }
    };
    weights
        .notes
        .insert("trained_from".into(), args.dir.display().to_string());
    weights
        .notes
        .insert("positions".into(), report.train_positions.to_string());
    weights
        .notes
        .insert("search_weight".into(), args.search_weight.to_string());
    if let Some(p) = &args.init {
        weights.notes.insert("init".into(), p.display().to_string());
    }
    weights.save(&out)?;
    println!(
        "wrote {} ({} passes, {} steps, held-out loss {:.4} → {:.4}, target entropy {:.4}, {:.0} s)",
        out.display(),
        report.passes,
        report.steps,
        report.heldout_loss_before,
        report.heldout_loss,
        report.heldout_target_entropy,
        report.elapsed.as_secs_f64()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As the run's stage: the shards for training from random weights, none from --init
    /// weights; an explicit --max-positions wins either way.
    #[test]
    fn shards_only_from_random_weights_unless_asked() {
        assert_eq!(shard_positions(None, false), 2_000_000);
        assert_eq!(shard_positions(None, true), 0);
        assert_eq!(shard_positions(Some(0), false), 0);
        assert_eq!(shard_positions(Some(250_000), true), 250_000);
    }
}
