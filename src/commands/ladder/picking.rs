//! The models a ladder plays: a run's promoted models with their training times, picked
//! by `--generations` or spread over the training time (`--points`), and its newest
//! learned alpha-beta.

use crate::metrics_view::GenerationPoint;
use anyhow::{bail, Result};
use rundir::layout::{
    generation_of, learned_generation_of, learned_name, list_names, model_name, RunDir,
};
use std::collections::BTreeMap;

/// What climbs a rung: a promoted MCTS model, or the run's learned alpha-beta.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Climber {
    /// The model of a generation (`models/gen-NNNN.safetensors`), searched as the run's
    /// algorithm searches.
    Model(u32),
    /// Learned generation k (`models/nnue-NNNN.safetensors`) inside alpha-beta.
    Learned(u32),
}

impl Climber {
    /// Its file's name without the extension (`gen-0003`, `nnue-0001`): the name of its
    /// output folder and of its row.
    pub fn name(&self) -> String {
        match *self {
            Climber::Model(g) => model_name(g),
            Climber::Learned(k) => learned_name(k),
        }
    }

    /// The generation of a model; `None` for the learned alpha-beta.
    pub fn generation(&self) -> Option<u32> {
        match *self {
            Climber::Model(g) => Some(g),
            Climber::Learned(_) => None,
        }
    }
}

/// The newest promoted learned evaluation of `run` (`models/nnue-NNNN.safetensors`, the
/// highest NNNN), if any.
pub fn newest_learned(run: &RunDir) -> Result<Option<u32>> {
    Ok(list_names(&run.models())?
        .iter()
        .filter_map(|name| learned_generation_of(name.strip_suffix(".safetensors")?))
        .max())
}

/// A promoted model of a run and its training time.
#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint {
    /// The generation that made it (`models/gen-NNNN.safetensors`).
    pub generation: u32,
    /// The run's active minutes at the end of that generation (0 for generation 0);
    /// `None` when `metrics.jsonl` has no time for it.
    pub minutes: Option<f64>,
}

/// The generations of the promoted models of `run` (`models/gen-NNNN.safetensors`),
/// ascending. Errors: a directory that does not exist, or one without models (not a run).
pub fn promoted_generations(run: &RunDir) -> Result<Vec<u32>> {
    let root = run.root();
    if !root.is_dir() {
        bail!(
            "run directory {} does not exist or is not a directory",
            root.display()
        );
    }
    let mut out: Vec<u32> = list_names(&run.models())?
        .iter()
        .filter_map(|name| generation_of(name.strip_suffix(".safetensors")?))
        .collect();
    if out.is_empty() {
        bail!(
            "{} is not a run directory: no models in {} (make one with `loazero run --dir {}`)",
            root.display(),
            run.models().display(),
            root.display()
        );
    }
    out.sort_unstable();
    Ok(out)
}

/// `generations` with their training times from the run's generation records
/// (`elapsed_s` of the record of the same generation; generation 0 is minute 0).
pub fn with_times(generations: &[u32], records: &[GenerationPoint]) -> Vec<Checkpoint> {
    let minutes: BTreeMap<u64, f64> = records
        .iter()
        .filter_map(|g| Some((g.generation(), g.elapsed_s()? / 60.0)))
        .chain(std::iter::once((0, 0.0)))
        .collect();
    generations
        .iter()
        .map(|&generation| Checkpoint {
            generation,
            minutes: minutes.get(&u64::from(generation)).copied(),
        })
        .collect()
}

/// `points` models spread evenly over the training time: for k = 1 … `points`, the model
/// whose time is nearest k/`points` of the newest model's (ties: the later model), each
/// once, in generation order; so the newest is always last and generation 0 is chosen
/// only when no model is nearer the first mark. Models without a time are passed over.
/// Errors: `points` is 0, or no model has a time.
pub fn spread(checkpoints: &[Checkpoint], points: usize) -> Result<Vec<Checkpoint>> {
    if points == 0 {
        bail!("--points must be at least 1");
    }
    let timed: Vec<(&Checkpoint, f64)> = checkpoints
        .iter()
        .filter_map(|c| Some((c, c.minutes?)))
        .collect();
    let Some(&(_, newest)) = timed.iter().max_by_key(|(c, _)| c.generation) else {
        bail!("no model has a training time (no generation records in metrics.jsonl)");
    };
    let mut chosen: Vec<Checkpoint> = Vec::new();
    for k in 1..=points {
        let mark = newest * k as f64 / points as f64;
        // The last of the nearest: later models win ties.
        let (best, _) = timed
            .iter()
            .rev()
            .min_by(|a, b| (a.1 - mark).abs().total_cmp(&(b.1 - mark).abs()))
            .expect("at least one timed model");
        if !chosen.iter().any(|c| c.generation == best.generation) {
            chosen.push((*best).clone());
        }
    }
    chosen.sort_by_key(|c| c.generation);
    Ok(chosen)
}

/// The models of `generations` (sorted, each once). Errors name the generation and
/// `run`: no such model, or no training time for it in `metrics.jsonl`.
pub fn pick(
    run: &RunDir,
    checkpoints: &[Checkpoint],
    generations: &[u32],
) -> Result<Vec<Checkpoint>> {
    if generations.is_empty() {
        bail!("--generations: no generation given");
    }
    let mut wanted = generations.to_vec();
    wanted.sort_unstable();
    wanted.dedup();
    let range = match (checkpoints.first(), checkpoints.last()) {
        (Some(a), Some(b)) => format!(
            "{} models, {} … {}",
            checkpoints.len(),
            model_name(a.generation),
            model_name(b.generation)
        ),
        _ => "no models".to_string(),
    };
    wanted
        .into_iter()
        .map(|g| {
            let Some(c) = checkpoints.iter().find(|c| c.generation == g) else {
                bail!(
                    "--generations: generation {g} has no promoted model {} (the run has {range})",
                    run.model(g).display()
                );
            };
            if c.minutes.is_none() {
                bail!(
                    "--generations: generation {g} has no training time in {} (no generation \
                     record with elapsed_s)",
                    run.metrics().display()
                );
            }
            Ok(c.clone())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(generation: u32, minutes: f64) -> Checkpoint {
        Checkpoint {
            generation,
            minutes: Some(minutes),
        }
    }

    fn generations(chosen: &[Checkpoint]) -> Vec<u32> {
        chosen.iter().map(|c| c.generation).collect()
    }

    #[test]
    fn spread_is_even_over_training_time_and_ends_at_the_newest() {
        // 31 models one minute apart: the marks 6, 12, … 30 minutes hit them exactly.
        let all: Vec<Checkpoint> = (0..=30).map(|g| at(g, g as f64)).collect();
        assert_eq!(generations(&spread(&all, 5).unwrap()), [6, 12, 18, 24, 30]);
        assert_eq!(generations(&spread(&all, 1).unwrap()), [30]);
        // Spread over time, not over generations: fast early generations, slow late ones.
        let all: Vec<Checkpoint> = [0.0, 1.0, 2.0, 3.0, 4.0, 10.0, 20.0, 30.0, 40.0]
            .iter()
            .enumerate()
            .map(|(g, &m)| at(g as u32, m))
            .collect();
        // Marks 10, 20, 30, 40 minutes.
        assert_eq!(generations(&spread(&all, 4).unwrap()), [5, 6, 7, 8]);
        // The newest is always last, whatever the marks.
        let all = [at(0, 0.0), at(3, 2.9), at(7, 7.4), at(9, 30.0)];
        let chosen = spread(&all, 3).unwrap();
        assert_eq!(generations(&chosen).last(), Some(&9));
        // Marks 10 and 20: 7 (7.4) is nearest both, chosen once; then 9.
        assert_eq!(generations(&chosen), [7, 9]);
        assert_eq!(chosen[0], at(7, 7.4));
    }

    #[test]
    fn spread_with_few_models_takes_each_once_and_ties_go_to_the_later() {
        let all = [at(0, 0.0), at(1, 1.0), at(2, 2.0)];
        // Marks 0.4, 0.8, 1.2, 1.6, 2.0: gen 0 is nearest 0.4, gen 1 0.8 and 1.2, …
        assert_eq!(generations(&spread(&all, 5).unwrap()), [0, 1, 2]);
        // Marks 1.0 and 2.0 with models at 0.5 and 1.5: 1.0 is as near both; the later wins.
        let all = [at(0, 0.0), at(1, 0.5), at(2, 1.5), at(3, 2.0)];
        assert_eq!(generations(&spread(&all, 2).unwrap()), [2, 3]);
        // Only the untrained network.
        assert_eq!(generations(&spread(&[at(0, 0.0)], 5).unwrap()), [0]);
    }

    #[test]
    fn spread_passes_over_models_without_a_time() {
        let all = [
            at(0, 0.0),
            at(1, 5.0),
            Checkpoint {
                generation: 2,
                minutes: None,
            },
            at(3, 10.0),
            Checkpoint {
                generation: 4,
                minutes: None,
            },
        ];
        assert_eq!(generations(&spread(&all, 2).unwrap()), [1, 3]);
        let untimed = [Checkpoint {
            generation: 4,
            minutes: None,
        }];
        assert!(spread(&untimed, 2)
            .unwrap_err()
            .to_string()
            .contains("training time"));
        assert!(spread(&all, 0)
            .unwrap_err()
            .to_string()
            .contains("--points"));
    }

    #[test]
    fn explicit_generations_are_sorted_checked_and_named_in_errors() {
        let run = RunDir::new("runs/x");
        let all = [
            at(0, 0.0),
            at(4, 2.0),
            at(8, 4.0),
            Checkpoint {
                generation: 9,
                minutes: None,
            },
        ];
        let chosen = pick(&run, &all, &[8, 0, 8]).unwrap();
        assert_eq!(chosen, [at(0, 0.0), at(8, 4.0)]);
        let e = pick(&run, &all, &[4, 7]).unwrap_err().to_string();
        assert!(
            e.contains("generation 7") && e.contains("runs/x/models/gen-0007.safetensors"),
            "{e}"
        );
        assert!(e.contains("4 models, gen-0000 … gen-0009"), "{e}");
        let e = pick(&run, &all, &[9]).unwrap_err().to_string();
        assert!(
            e.contains("generation 9") && e.contains("runs/x/metrics.jsonl"),
            "{e}"
        );
        assert!(pick(&run, &all, &[])
            .unwrap_err()
            .to_string()
            .contains("--generations"));
    }

    #[test]
    fn checkpoints_are_the_promoted_models_with_their_times() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path());
        let e = promoted_generations(&run).unwrap_err().to_string();
        assert!(
            e.contains("not a run directory") && e.contains("models"),
            "{e}"
        );
        std::fs::create_dir_all(run.models()).unwrap();
        for name in [
            "gen-0000.safetensors",
            "gen-0002.safetensors",
            "gen-0001.safetensors",
            "gen-0005.safetensors",
            "notes.txt",
            ".gen-0003.safetensors.tmp",
        ] {
            std::fs::write(run.models().join(name), b"").unwrap();
        }
        assert_eq!(promoted_generations(&run).unwrap(), [0, 1, 2, 5]);
        let metrics = crate::metrics_view::parse_metrics(
            r#"{"kind":"generation","generation":1,"elapsed_s":30.0}
{"kind":"generation","generation":2,"elapsed_s":90.0}
{"kind":"generation","generation":3,"elapsed_s":120.0}
"#,
            "metrics.jsonl",
        );
        let all = with_times(&[0, 1, 2, 5], &metrics.generations);
        let five = Checkpoint {
            generation: 5,
            minutes: None,
        };
        assert_eq!(all, [at(0, 0.0), at(1, 0.5), at(2, 1.5), five]);
        let e = promoted_generations(&RunDir::new(dir.path().join("nope")))
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not exist"), "{e}");
    }
}
