//! The learned evaluation's stage of a run (`[learned_eval]`): after the run's last
//! generation, alpha-beta plays itself at a fixed depth, its searches score the positions,
//! and the learned evaluation of [`eval::learned`] is trained on those scores, the games'
//! results (blended, with `learned_eval.teacher_weight`, with the run's best MCTS network's
//! value of each position) and, for a generation trained from random weights, the run's
//! own self-play positions (valued by the MCTS network's searches; [`learns_from_shards`]).
//!
//! Learned generation `k` plays its games with the best learned evaluation before it (the
//! hand-written one for `k = 1`), starts from its weights, is written to
//! `candidates/nnue-k.safetensors`, and plays a promotion match at `learned_eval.depth`
//! against that best one (`matches/promote-nnue-k`): it is promoted (copied to
//! `models/nnue-k.safetensors`) when it scores more than half. The verdicts are the
//! finished matches' files, so a restart continues from them: an unfinished promotion
//! match is replayed, a generation cut before its candidate was written is played again.
//!
//! Time: in a run with a time budget the stage has `learned_eval.share` of it (less when
//! the budget is nearly spent); a generation starts only when its games, training,
//! promotion match and the final rating are expected to fit, and its games stop early
//! when the time runs short (a generation with fewer than `learned_eval.min_games` games
//! is not trained). The estimates are the last generation's measured times, or
//! [`PRIOR_S`] before one was measured. A run without a time limit plays
//! `learned_eval.generations` whole generations.

use super::config::{derive_seed, RunConfig, SeedUse};
use super::display::LoopDisplay;
use super::rating::{match_threads, resumable_match};
use anyhow::{Context, Result};
use eval::learned::games::{fit_score_scale, play_scored_games, ScoredGames};
use eval::learned::{LearnedEval, Simd, Weights};
use eval::player::spec_builders::learned_alphabeta_spec;
use eval::{PlayerFactory, PlayerSpec};
use rundir::layout::{copy_atomically, learned_name, RunDir};
use rundir::rated_games::read_done;
use selfplay::Cancel;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use train::learned_eval::{
    blend_teacher_values, labels_from_scored_games, labels_from_shards, train_learned_eval,
    LabelledPosition, LearnedEvalTraining,
};

/// Seconds each of training, the promotion match and the final rating is expected to take
/// before the stage measured it (2-core figures of the default settings, rounded up).
pub const PRIOR_S: f64 = 60.0;

/// A learned generation's state, read from the run's files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LearnedGeneration {
    /// Its number `k` (`nnue-k`).
    pub k: u32,
    /// Whether it was promoted; `None` while its promotion match has not finished.
    pub promoted: Option<bool>,
}

/// The learned generations of a run, in order: `1, 2, …` as long as their candidates
/// exist.
pub fn learned_generations(run: &RunDir) -> Result<Vec<LearnedGeneration>> {
    let mut out = Vec::new();
    for k in 1.. {
        if !run.learned_candidate(k).exists() {
            break;
        }
        let promoted = read_done(&run.learned_promotion_match(k))?.map(|d| d.tally.score() > 0.5);
        out.push(LearnedGeneration { k, promoted });
    }
    Ok(out)
}

/// The best learned generation: the last one promoted.
pub fn best_learned(generations: &[LearnedGeneration]) -> Option<u32> {
    generations
        .iter()
        .rfind(|g| g.promoted == Some(true))
        .map(|g| g.k)
}

/// Whether a learned generation learns from the run's shards too (`shard_positions` of
/// them at most). The shards teach what the MCTS network knows: only a generation from
/// random weights learns from them. A later one starts from weights that hold it and
/// learns from its own searched games alone (with the shards beside them it learned nearly
/// the same function again: docs/experiments.md, batch 32).
pub fn learns_from_shards(from_random_weights: bool, shard_positions: usize) -> bool {
    from_random_weights && shard_positions > 0
}

/// A learned generation's training positions: the shards' (read when
/// [`learns_from_shards`] says so) first, then its games', last so that the held-out part
/// is games.
pub fn training_data(
    best: Option<u32>,
    shards: Option<&[LabelledPosition]>,
    games: Vec<LabelledPosition>,
) -> Vec<LabelledPosition> {
    let mut data = match shards {
        Some(shards) if best.is_none() => shards.to_vec(),
        _ => Vec::new(),
    };
    data.extend(games);
    data
}

/// What the stage works with; see the module docs.
pub struct LearnedStage<'a> {
    /// The run.
    pub run: &'a RunDir,
    /// Its config (`learned_eval` and the run's variant, seed and match threads).
    pub config: &'a RunConfig,
    /// Makes the match players.
    pub factory: &'a PlayerFactory,
    /// The run's best MCTS model: the teacher whose value `learned_eval.teacher_weight`
    /// blends into the games' labels.
    pub teacher: &'a Path,
    /// A signal or the run's budget: asked between games, training steps and match moves;
    /// the stage then fails with [`selfplay::Error::Cancelled`].
    pub cancel: &'a Cancel,
    /// Seconds the stage may still use; `None` without a time limit.
    pub seconds_left: &'a dyn Fn() -> Option<f64>,
    /// Where its lines go.
    pub display: &'a LoopDisplay,
}

impl LearnedStage<'_> {
    /// Plays learned generations until `learned_eval.generations` or the time says stop
    /// (finishing first a generation whose promotion match a restart cut); returns the
    /// best learned generation, if any was promoted.
    pub fn run(&self) -> Result<Option<u32>> {
        let l = &self.config.learned_eval;
        let mut generations = learned_generations(self.run)?;
        let mut shards: Option<Vec<LabelledPosition>> = None;
        let (mut train_s, mut promotion_s) = (PRIOR_S, PRIOR_S);
        let mut made = 0;
        loop {
            let best = best_learned(&generations);
            if let Some(last) = generations.last().filter(|g| g.promoted.is_none()) {
                self.promote(last.k, best)?;
                generations = learned_generations(self.run)?;
                continue;
            }
            // Without a time limit the count holds across restarts (a killed stage goes on
            // to it); with one, each stage (a resumed run with more minutes) makes its own.
            let timed = (self.seconds_left)().is_some();
            if made >= l.generations || (!timed && generations.len() >= l.generations as usize) {
                break;
            }
            let k = generations.len() as u32 + 1;
            // Games until the training, the promotion match and the rating still fit.
            let reserve = train_s + promotion_s + PRIOR_S;
            let games_s = (self.seconds_left)().map(|left| left - reserve);
            if games_s.is_some_and(|s| s < PRIOR_S) {
                self.display.line(&format!(
                    "learned evaluation: no time left for {} ({:.0} s of the stage left, \
                     {reserve:.0} s needed besides its games)",
                    learned_name(k),
                    (self.seconds_left)().unwrap_or(0.0)
                ));
                break;
            }
            let Some(data) = self.positions(k, best, games_s, &mut shards)? else {
                break;
            };
            let started = Instant::now();
            self.train(k, best, &data)?;
            train_s = started.elapsed().as_secs_f64();
            let started = Instant::now();
            self.promote(k, best)?;
            promotion_s = started.elapsed().as_secs_f64();
            generations = learned_generations(self.run)?;
            made += 1;
        }
        Ok(best_learned(&generations))
    }

    fn best_path(&self, best: Option<u32>) -> Option<std::path::PathBuf> {
        best.map(|b| self.run.learned_model(b))
    }

    /// Learned generation `k`'s positions: the scored games played in `games_s` seconds
    /// (at most) with the best evaluation, after the shards' positions when it trains from
    /// random weights (`best` is `None`). `None` when too few games finished in time.
    fn positions(
        &self,
        k: u32,
        best: Option<u32>,
        games_s: Option<f64>,
        shards: &mut Option<Vec<LabelledPosition>>,
    ) -> Result<Option<Vec<LabelledPosition>>> {
        let l = &self.config.learned_eval;
        let learned = match self.best_path(best) {
            Some(p) => Some(Arc::new(LearnedEval::load(&p).with_context(|| {
                format!("the best learned evaluation {}", p.display())
            })?)),
            None => None,
        };
        let by_whom = best.map_or("the hand-written evaluation".into(), learned_name);
        self.display.line(&format!(
            "learned evaluation {}: up to {} alpha-beta games at depth {} with {by_whom}{}",
            learned_name(k),
            l.games,
            l.depth,
            games_s.map_or(String::new(), |s| format!(" (at most {s:.0} s)"))
        ));
        let deadline = games_s.map(|s| Instant::now() + Duration::from_secs_f64(s));
        let cancel = self.cancel.clone();
        let config = ScoredGames {
            games: l.games,
            depth: l.depth,
            threads: match_threads(self.config),
            seed: derive_seed(self.config.run.seed, SeedUse::LearnedGames, k, 0),
            variant: self.config.variant(),
            stop: Cancel::when(move || {
                cancel.requested() || deadline.is_some_and(|d| Instant::now() >= d)
            }),
            ..ScoredGames::default()
        };
        let started = Instant::now();
        let (scored, finished) = play_scored_games(learned, &config);
        if self.cancel.requested() {
            return Err(selfplay::Error::Cancelled.into());
        }
        let scale = fit_score_scale(&scored);
        self.display.line(&format!(
            "learned evaluation {}: {finished} games, {} positions in {:.0} s ({scale:.0} \
             units a logit)",
            learned_name(k),
            scored.len(),
            started.elapsed().as_secs_f64()
        ));
        if finished < l.min_games {
            self.display.line(&format!(
                "learned evaluation {}: not trained: {finished} games finished in time, \
                 learned_eval.min_games is {}",
                learned_name(k),
                l.min_games
            ));
            return Ok(None);
        }
        if learns_from_shards(best.is_none(), l.shard_positions) && shards.is_none() {
            let read = labels_from_shards(&self.run.shards(), l.search_weight, l.shard_positions)?;
            self.display.line(&format!(
                "learned evaluation: {} self-play positions of the run, valued by its \
                 MCTS network",
                read.len()
            ));
            *shards = Some(read);
        }
        let mut games = labels_from_scored_games(&scored, scale, l.search_weight);
        if l.teacher_weight > 0.0 {
            let evaluator = train::NetEvaluator::load(self.teacher, &self.config.train.inference)
                .with_context(|| format!("the teacher {}", self.teacher.display()))?;
            blend_teacher_values(&mut games, &evaluator, l.teacher_weight)?;
        }
        Ok(Some(training_data(best, shards.as_deref(), games)))
    }

    /// Trains learned generation `k` on `data` from the best one's weights and writes its
    /// candidate.
    fn train(&self, k: u32, best: Option<u32>, data: &[LabelledPosition]) -> Result<()> {
        let l = &self.config.learned_eval;
        let init = match self.best_path(best) {
            Some(p) => Some(Weights::load(&p)?),
            None => None,
        };
        // Whatever time is left after the promotion match and the rating.
        let time_limit = (self.seconds_left)()
            .map(|left| Duration::from_secs_f64((left - 2.0 * PRIOR_S).max(PRIOR_S / 2.0)));
        let config = LearnedEvalTraining {
            passes: l.passes,
            time_limit,
            seed: derive_seed(self.config.run.seed, SeedUse::LearnedGames, k, 1),
            stop: self.cancel.clone(),
            ..LearnedEvalTraining::default()
        };
        let (mut weights, report) = train_learned_eval(data, init.as_ref(), &config, |_| {})?;
        let notes = [
            ("trained_from", self.run.root().display().to_string()),
            ("learned_generation", k.to_string()),
            ("positions", report.train_positions.to_string()),
            ("search_weight", l.search_weight.to_string()),
            ("depth", l.depth.to_string()),
            ("init", best.map_or("random".into(), learned_name)),
        ];
        for (key, value) in notes {
            weights.notes.insert(key.into(), value);
        }
        std::fs::create_dir_all(self.run.candidates())?;
        weights.save(&self.run.learned_candidate(k))?;
        self.display.line(&format!(
            "learned evaluation {}: trained on {} positions, {} passes, held-out loss {:.4} \
             → {:.4} (target entropy {:.4}), {:.0} s",
            learned_name(k),
            report.train_positions,
            report.passes,
            report.heldout_loss_before,
            report.heldout_loss,
            report.heldout_target_entropy,
            report.elapsed.as_secs_f64()
        ));
        // The weights must play: load them as the search will.
        LearnedEval::new(weights, Simd::from_env()?)?;
        Ok(())
    }

    /// Plays (or replays, or reads) learned generation `k`'s promotion match against `best`
    /// (the hand-written evaluation when `None`) and promotes it if it scored over half.
    fn promote(&self, k: u32, best: Option<u32>) -> Result<()> {
        let l = &self.config.learned_eval;
        let candidate = learned_alphabeta_spec(&self.run.learned_candidate(k), Some(l.depth))?;
        let incumbent = match self.best_path(best) {
            Some(p) => learned_alphabeta_spec(&p, Some(l.depth))?,
            None => PlayerSpec::parse(&format!("alphabeta:depth={}", l.depth))?,
        };
        let tally = resumable_match(
            self.factory,
            &candidate,
            &incumbent,
            l.promotion_games,
            self.config,
            self.config.rating.opening_plies,
            derive_seed(self.config.run.seed, SeedUse::LearnedPromotion, k, 0),
            &self.run.learned_promotion_match(k),
            self.cancel,
            &|_, _| {},
        )?;
        let promoted = tally.score() > 0.5;
        if promoted {
            copy_atomically(&self.run.learned_candidate(k), &self.run.learned_model(k))?;
        }
        let e = tally.elo();
        self.display.line(&format!(
            "learned evaluation {}: {}-{}-{} against {} at depth {} ({:.1}%, Elo {:+.0} \
             [{:+.0}, {:+.0}]): {}",
            learned_name(k),
            tally.wins,
            tally.draws,
            tally.losses,
            best.map_or("the hand-written evaluation".into(), learned_name),
            l.depth,
            100.0 * tally.score(),
            e.elo.clamp(-999.0, 999.0),
            e.lower.clamp(-999.0, 999.0),
            e.upper.clamp(-999.0, 999.0),
            if promoted { "promoted" } else { "rejected" }
        ));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use eval::elo::Tally;
    use rundir::rated_games::{MatchDone, DONE};

    /// The first learned generation (from random weights) trains on the shards and its
    /// games, the shards first; a later one (from the best one's weights) on its games
    /// alone, even with the shards already read.
    #[test]
    fn only_a_generation_from_random_weights_learns_from_the_shards() {
        let labelled = |plies: usize, target: f32| {
            let rules = loa::Rules::default();
            let mut position = loa::Position::start(loa::Variant::Standard, &rules);
            for _ in 0..plies {
                let m = position.legal_moves(&rules)[0];
                position.play(m);
            }
            LabelledPosition { position, target }
        };
        let shards = vec![labelled(0, 0.1), labelled(1, 0.2)];
        let games = vec![labelled(2, 0.8), labelled(3, 0.9)];
        let targets = |d: &[LabelledPosition]| d.iter().map(|p| p.target).collect::<Vec<_>>();

        assert!(learns_from_shards(true, 2_000_000));
        assert!(!learns_from_shards(true, 0));
        assert!(!learns_from_shards(false, 2_000_000));

        let first = training_data(None, Some(&shards), games.clone());
        assert_eq!(targets(&first), [0.1, 0.2, 0.8, 0.9]);
        assert_eq!(first[1].position, shards[1].position);
        assert_eq!(first[3].position, games[1].position);
        for best in [1, 4] {
            let later = training_data(Some(best), Some(&shards), games.clone());
            assert_eq!(targets(&later), [0.8, 0.9], "from nnue-{best}");
            assert!(later
                .iter()
                .all(|p| shards.iter().all(|s| s.position != p.position)));
        }
        assert_eq!(
            targets(&training_data(None, None, games.clone())),
            [0.8, 0.9]
        );
    }

    /// The verdicts are the files: candidates in order, a finished promotion match's score.
    #[test]
    fn learned_generations_are_read_from_the_files() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path());
        run.create().unwrap();
        std::fs::create_dir_all(run.candidates()).unwrap();
        assert_eq!(learned_generations(&run).unwrap(), []);
        let done = |k: u32, wins: u32, losses: u32| {
            let m = run.learned_promotion_match(k);
            std::fs::create_dir_all(&m).unwrap();
            let d = MatchDone {
                a: "a".into(),
                b: "b".into(),
                tally: Tally {
                    wins,
                    draws: 0,
                    losses,
                },
            };
            std::fs::write(m.join(DONE), serde_json::to_string(&d).unwrap()).unwrap();
        };
        for k in [1, 2, 3, 5] {
            std::fs::write(run.learned_candidate(k), b"x").unwrap();
        }
        done(1, 3, 1);
        done(2, 2, 2);
        let gens = learned_generations(&run).unwrap();
        let expect = [
            LearnedGeneration {
                k: 1,
                promoted: Some(true),
            },
            LearnedGeneration {
                k: 2,
                promoted: Some(false),
            },
            LearnedGeneration {
                k: 3,
                promoted: None,
            },
        ];
        assert_eq!(gens, expect);
        assert_eq!(best_learned(&gens), Some(1));
        done(3, 4, 0);
        assert_eq!(best_learned(&learned_generations(&run).unwrap()), Some(3));
    }
}
