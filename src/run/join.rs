//! Extra self-play processes for a running loop (`loazero selfplay --dir RUN_DIR`): they
//! play with the run's newest promoted model under the run's self-play config and write
//! `ext-…` shards into its `shards/`, which the loop's replay window reads like its own.
//! Between rounds of games they re-read `state.json` and switch to a newly promoted model.
//! Any number may run, on this machine or others sharing the directory; none of them
//! takes the run's lock or changes anything but `shards/` and `games/`.

use super::config::RunConfig;
use super::layout::{model_name, RunDir};
use super::state::LoopState;
use anyhow::{anyhow, bail, Result};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use train::NetEvaluator;

/// The name prefix of joined shards made with the model of generation `best`.
fn prefix(best: u32) -> String {
    let host = selfplay::output::host_tag();
    let host = if host.is_empty() { "host".into() } else { host };
    format!("ext-g{best:04}-{host}")
}

/// Plays `games` games (`None`: until killed) for the run in `dir`; `threads` overrides
/// the run's `selfplay.threads`. Prints a line per round. SIGINT/SIGTERM stop it after
/// the finished games are written ([`crate::interrupt`]).
pub fn join(dir: &Path, games: Option<u64>, threads: Option<usize>) -> Result<()> {
    crate::interrupt::install();
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
    train::device::set_threads(config.train.threads);
    let mut sp = config.selfplay.clone();
    if let Some(t) = threads {
        sp.threads = t;
    }
    sp.seed = None;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let round = (sp.games_per_worker * if sp.threads == 0 { cores } else { sp.threads }) as u64;
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
        &prefix(best),
        sp.shard_samples,
        Some(Duration::from_secs(30)),
    )
    .with_sgf(sp.write_sgf);
    let mut played = 0u64;
    loop {
        let n = match games {
            Some(total) if played >= total => break,
            Some(total) => round.min(total - played),
            None => round,
        };
        let ev: Arc<dyn selfplay::Evaluator> = evaluator.clone();
        let result = selfplay::run_selfplay(
            &sp,
            ev,
            n,
            |g| {
                writer.add(g).map_err(|e| e.to_string())?;
                if crate::interrupt::requested() {
                    return Err("interrupted".to_string());
                }
                Ok(())
            },
            |_| {},
        );
        let flushed = writer.flush();
        if crate::interrupt::requested() {
            flushed.map_err(|e| anyhow!("cannot write self-play games: {e}"))?;
            eprintln!(
                "selfplay --dir {}: stopped after {} games; every finished game is in {} \
                 (games in progress are dropped); run the same command again to go on",
                dir.display(),
                writer.games_written,
                run.shards().display()
            );
            return Err(crate::interrupt::Interrupted.into());
        }
        let p = result.map_err(|e| anyhow!("self-play: {e}"))?;
        flushed.map_err(|e| anyhow!("cannot write self-play games: {e}"))?;
        played += p.games;
        println!(
            "selfplay --dir {}: {played} games with {} ({:.0} positions/s, {:.0} evals/s)",
            dir.display(),
            model_name(best),
            p.positions_per_second(),
            p.evaluations_per_second()
        );
        let newest = LoopState::load(&run.state())?.best;
        if newest != best {
            evaluator = Arc::new(load(newest)?);
            best = newest;
            writer
                .set_prefix(&prefix(best))
                .map_err(|e| anyhow!("cannot write self-play games: {e}"))?;
            println!("switched to {}", model_name(best));
        }
    }
    Ok(())
}
