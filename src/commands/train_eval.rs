//! `loazero train-eval`: trains the learned alpha-beta evaluation (`alphabeta:eval=FILE`)
//! from a run directory's self-play shards, into the run's `models/nnue-NNNN.safetensors`
//! (the next free number) or `--out`. See `train::learned_eval`.

use crate::run::config::LearnedEvalConfig;
use crate::run::learned_stage::learns_from_shards;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::time::Duration;
use train::learned_eval::{labels_from_shards, train_learned_eval, LearnedEvalTraining};

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
    /// Passes over the positions (`--epochs`, its former name, is still taken).
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
    /// A policy-value model (e.g. the run's models/gen-NNNN.safetensors) whose value blends
    /// into those games' labels with --teacher-weight.
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
        Some(p) => Some(eval::learned::Weights::load(p)?),
        None => None,
    };
    if args.games > 0 {
        // The --init weights, already read, play the games.
        let learned = match (&init, &args.init) {
            (Some(w), Some(p)) => Some(std::sync::Arc::new(
                eval::learned::LearnedEval::new(w.clone(), eval::learned::Simd::from_env()?)
                    .with_context(|| format!("learned evaluation {}", p.display()))?,
            )),
            _ => None,
        };
        let started = std::time::Instant::now();
        let config = eval::learned::games::ScoredGames {
            games: args.games,
            depth: args.depth,
            threads: args.game_threads,
            seed: args.seed,
            ..Default::default()
        };
        let (scored, _) = eval::learned::games::play_scored_games(learned, &config);
        let scale = eval::learned::games::fit_score_scale(&scored);
        let mut labelled =
            train::learned_eval::labels_from_scored_games(&scored, scale, args.search_weight);
        if let Some(teacher) = &args.teacher {
            let evaluator = train::NetEvaluator::load(teacher, &train::InferenceConfig::default())
                .with_context(|| format!("--teacher {}", teacher.display()))?;
            train::learned_eval::blend_teacher_values(
                &mut labelled,
                &evaluator,
                args.teacher_weight,
            )?;
            println!(
                "the games' labels blended with {}'s value (weight {})",
                teacher.display(),
                args.teacher_weight
            );
        }
        println!(
            "{} positions from {} alpha-beta games at depth {} ({:.0} s; {:.0} units a logit)",
            labelled.len(),
            args.games,
            args.depth,
            started.elapsed().as_secs_f64(),
            scale
        );
        // Shards first (oldest to newest), the games last: the held-out part is games.
        data.extend(labelled);
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
