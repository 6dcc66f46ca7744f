//! Extra self-play for a running loop: `loazero selfplay --dir RUN_DIR` processes, and the
//! loop's own background self-play (`run.background_selfplay_threads`). Both play with the
//! run's newest promoted model under the run's self-play config and write `ext-…` shards
//! into its `shards/`, which the loop's replay window reads like its own, with the run's
//! algorithm (`run.algorithm`: AlphaZero or Descent). Between rounds of games they
//! re-read `state.json` and switch to a newly promoted model (with
//! `run.continuous_selfplay`, AlphaZero's games in flight carry over and continue with it
//! from their next move). Any number may run, on this machine or others sharing the directory; none
//! of them takes the run's lock or changes anything but `shards/` and `games/`.

use super::algorithm;
use super::config::RunConfig;
use anyhow::{anyhow, bail, Result};
use rundir::layout::{model_name, RunDir};
use rundir::state::LoopState;
use selfplay::SelfplayConfig;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;
use train::NetEvaluator;

/// The name prefix of joined shards made with the model of generation `best` by a writer
/// tagged `tag` (this host's name, or a store worker's writer id).
fn prefix(best: u32, tag: &str) -> String {
    format!("ext-g{best:04}-{tag}")
}

/// This host's tag in joined shard names (`host` when it has no name).
fn host() -> String {
    let host = selfplay::output::host_tag();
    if host.is_empty() {
        "host".into()
    } else {
        host
    }
}

/// What a round of joined self-play did.
pub(super) struct Round {
    /// Games played so far, this round included.
    pub(super) played: u64,
    /// The model of the round.
    pub(super) model: u32,
    /// Positions per second and evaluations per second of the round.
    pub(super) positions_per_sec: f64,
    pub(super) evals_per_sec: f64,
    /// The model switched to after the round, if a newer one was promoted.
    pub(super) switched_to: Option<u32>,
}

impl Round {
    /// Prints the round's line for the user, `source` naming the command (`selfplay --dir
    /// …`, `selfplay --store …`), and the model switched to, if any.
    pub(super) fn print(&self, source: &str) {
        println!(
            "{source}: {} games with {} ({:.0} positions/s, {:.0} evals/s)",
            self.played,
            model_name(self.model),
            self.positions_per_sec,
            self.evals_per_sec
        );
        if let Some(g) = self.switched_to {
            println!("switched to {}", model_name(g));
        }
    }
}

/// How joined self-play ended.
pub(super) enum Ended {
    /// It played the games asked for.
    Done,
    /// `stop` (or Ctrl-C) ended it; the finished games are written.
    Stopped {
        /// Games written.
        games: u64,
    },
}

/// Games and positions finished by joined self-play, counted as each game is handed to
/// the shard writer (it is in a shard file within 30 s, or at the stop). Thread-safe.
#[derive(Default)]
pub(super) struct Finished {
    games: AtomicU64,
    positions: AtomicU64,
}

/// The self-play settings of a joined process (`selfplay --dir` or `--store`): the run's,
/// with `threads` when given and no fixed seed (each process plays its own games); sets
/// torch's thread count from the run's `train.threads`.
pub(super) fn selfplay_config(config: &RunConfig, threads: Option<usize>) -> SelfplayConfig {
    train::device::set_threads(config.train.threads);
    let mut sp = config.selfplay.clone();
    if let Some(t) = threads {
        sp.threads = t;
    }
    sp.seed = None;
    sp
}

/// Plays rounds of self-play for the run in `run` with `sp` (`games`: in all; `None`:
/// until stopped) until `stop` is set or Ctrl-C/SIGTERM is requested (within about half a
/// second, even in the middle of a Descent game; the games under way are dropped),
/// counting each finished game in `finished`, naming shards with `tag`. Calls `on_round`
/// after every round.
#[allow(clippy::too_many_arguments)]
pub(super) fn play_rounds(
    run: &RunDir,
    tag: &str,
    config: &RunConfig,
    sp: SelfplayConfig,
    games: Option<u64>,
    stop: &Arc<AtomicBool>,
    finished: &Finished,
    mut on_round: impl FnMut(&Round),
) -> Result<Ended> {
    let stopping = || stop.load(Ordering::Relaxed) || loazero::interrupt::requested();
    let cancel = selfplay::Cancel::when({
        let stop = stop.clone();
        move || stop.load(Ordering::Relaxed) || loazero::interrupt::requested()
    });
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let algorithm = config.run.algorithm;
    let per_worker = algorithm::games_per_worker(algorithm, &sp);
    let round = (per_worker * if sp.threads == 0 { cores } else { sp.threads }) as u64;
    let mut best = LoopState::load(&run.state())?.best;
    let load = |g: u32| {
        let path = run.model(g);
        NetEvaluator::load(&path, &config.train.inference)
            .map_err(|e| anyhow!("cannot load model {}: {e:#}", path.display()))
    };
    let mut evaluator = Arc::new(load(best)?);
    let mut writer = selfplay::GameWriter::with_names(
        &run.shards(),
        sp.write_game_records.then(|| run.games()).as_deref(),
        &prefix(best, tag),
        sp.shard_samples,
        Some(Duration::from_secs(30)),
    )
    .with_sgf(sp.write_sgf);
    // With `run.continuous_selfplay`, games in flight at the end of a round go on in the
    // next one (with the newest model from their next move), so that no round ends with
    // its last games running nearly alone.
    let mut parked = selfplay::ParkedGames::default();
    let mut played = 0u64;
    loop {
        let n = match games {
            Some(total) if played >= total => return Ok(Ended::Done),
            Some(total) => round.min(total - played),
            None => round,
        };
        let ev: Arc<dyn selfplay::Evaluator> = evaluator.clone();
        let sink = |g: selfplay::FinishedGame| {
            let plies = g.moves.len() as u64;
            writer.add(g).map_err(|e| e.to_string())?;
            finished.positions.fetch_add(plies, Ordering::Relaxed);
            finished.games.fetch_add(1, Ordering::Relaxed);
            if stopping() {
                return Err("stopped".to_string());
            }
            Ok(())
        };
        let result = algorithm::play(
            algorithm,
            &sp,
            ev,
            n,
            false,
            config.run.continuous_selfplay.then_some(&mut parked),
            &cancel,
            sink,
            |_| {},
        );
        let flushed = writer.flush();
        if stopping() {
            flushed.map_err(|e| anyhow!("cannot write self-play games: {e}"))?;
            return Ok(Ended::Stopped {
                games: writer.games_written,
            });
        }
        let p = result.map_err(|e| anyhow!("self-play: {e}"))?;
        flushed.map_err(|e| anyhow!("cannot write self-play games: {e}"))?;
        played += p.games;
        let newest = LoopState::load(&run.state())?.best;
        let switched_to = (newest != best).then_some(newest);
        on_round(&Round {
            played,
            model: best,
            positions_per_sec: p.positions_per_second(),
            evals_per_sec: p.evaluations_per_second(),
            switched_to,
        });
        if let Some(newest) = switched_to {
            evaluator = Arc::new(load(newest)?);
            best = newest;
            writer
                .set_prefix(&prefix(best, tag))
                .map_err(|e| anyhow!("cannot write self-play games: {e}"))?;
        }
    }
}

/// Plays `games` games (`None`: until killed) for the run in `dir`; `threads` overrides
/// the run's `selfplay.threads`. Prints a line per round. SIGINT/SIGTERM stop it after
/// the finished games are written ([`loazero::interrupt`]).
pub fn play_for_run_dir(dir: &Path, games: Option<u64>, threads: Option<usize>) -> Result<()> {
    loazero::interrupt::install();
    let run = RunDir::new(dir);
    if !run.config().exists() || !run.state().exists() {
        bail!(
            "{} is not a run directory (no config.toml and state.json; start it with \
             `loazero run --dir {}`)",
            dir.display(),
            dir.display()
        );
    }
    let config = RunConfig::load(Some(&run.config()), &[])?;
    let removed = run.clean_dead_joiners()?;
    if removed > 0 {
        println!("removed {removed} files left by killed joined self-play processes");
    }
    let sp = selfplay_config(&config, threads);
    let never = Arc::new(AtomicBool::new(false));
    let ended = play_rounds(
        &run,
        &host(),
        &config,
        sp,
        games,
        &never,
        &Finished::default(),
        |r| r.print(&format!("selfplay --dir {}", dir.display())),
    )?;
    match ended {
        Ended::Done => Ok(()),
        Ended::Stopped { games } => {
            eprintln!(
                "selfplay --dir {}: stopped after {games} games; every finished game is in {} \
                 (games in progress are dropped); run the same command again to go on",
                dir.display(),
                run.shards().display()
            );
            Err(loazero::interrupt::Interrupted.into())
        }
    }
}

/// The loop's background self-play (`run.background_selfplay_threads`): a thread playing
/// joined games (`ext-…` shards, like `selfplay --dir`) from the loop's start until
/// [`Background::stop`], while the loop plays, trains, gates and rates. Owned by the
/// loop's thread.
pub struct Background {
    stop: Arc<AtomicBool>,
    finished: Arc<Finished>,
    handle: Option<JoinHandle<Result<()>>>,
}

impl Background {
    /// Starts `threads` self-play worker threads for the run in `run` (with their own
    /// inference thread). The caller has removed dead joiners' files.
    pub fn start(run: &RunDir, config: &RunConfig, threads: usize) -> Result<Background> {
        let stop = Arc::new(AtomicBool::new(false));
        let finished = Arc::new(Finished::default());
        let (run, config) = (run.clone(), config.clone());
        let (flag, count) = (stop.clone(), finished.clone());
        let handle = std::thread::Builder::new()
            .name("background-selfplay".into())
            .spawn(move || {
                let mut sp = config.selfplay.clone();
                sp.threads = threads;
                sp.seed = None;
                play_rounds(&run, &host(), &config, sp, None, &flag, &count, |_| {})
                    .map(|_| ())
                    .map_err(|e| e.context("background self-play"))
            })
            .map_err(|e| anyhow!("cannot start the background self-play thread: {e}"))?;
        Ok(Background {
            stop,
            finished,
            handle: Some(handle),
        })
    }

    /// Positions of the games finished so far (in the shards within 30 s, or at the stop).
    pub fn positions(&self) -> u64 {
        self.finished.positions.load(Ordering::Relaxed)
    }

    /// Games finished so far (counted like [`Background::positions`]).
    pub fn games(&self) -> u64 {
        self.finished.games.load(Ordering::Relaxed)
    }

    /// The thread's error if it ended with one (it runs until stopped otherwise).
    pub fn check(&mut self) -> Result<()> {
        if self.handle.as_ref().is_some_and(|h| h.is_finished()) {
            return self.join();
        }
        Ok(())
    }

    /// Stops the thread after the game it is writing and waits for it: the finished
    /// games are in the shards, the games in progress are dropped.
    pub fn stop(&mut self) -> Result<()> {
        self.stop.store(true, Ordering::Relaxed);
        self.join()
    }

    fn join(&mut self) -> Result<()> {
        match self.handle.take().map(|h| h.join()) {
            None => Ok(()),
            Some(Ok(result)) => result,
            Some(Err(_)) => bail!("the background self-play thread panicked"),
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}
