//! `loazero ratings`: Bradley–Terry Elo over every game in results files, or over the
//! rating games of runs (in directories, or kept in a store: `--store`).

use crate::args::StoreViewArgs;
use anyhow::{bail, Result};
use eval::ratings::{fit, RatedGame};
use rundir::layout::RunDir;
use rundir::rated_games::{rated_games, read_games};
use std::path::{Path, PathBuf};

/// Arguments of `loazero ratings`.
#[derive(clap::Args)]
pub struct Args {
    /// Directories searched recursively for results files (*.jsonl written by
    /// `loazero match`), such files, or run directories (`runs/default`: its finished
    /// rating and anchor matches, models named as in its `ratings.csv`). Several are
    /// fitted together (models of several runs are named RUN/gen-NNNN, those of a --store
    /// run by the store's last path segment; the anchors they share join their scales).
    #[arg(required_unless_present_any = ["store", "dir_flags"])]
    pub dirs: Vec<PathBuf>,
    /// A run directory (or results directory or file), as every command spells it;
    /// repeatable, joined to the ones given without the flag.
    #[arg(long = "dir", value_name = "RUN_DIR")]
    pub dir_flags: Vec<PathBuf>,
    /// `--store` and `--cache`: a run kept in a store.
    #[command(flatten)]
    pub view: StoreViewArgs,
    /// Where to write the table as CSV (default: DIR/ratings.csv, or beside the file, for
    /// one results directory or file; none for run directories, whose loop writes their
    /// own `ratings.csv`, or for several).
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Virtual draws added per pair of players that met (keeps ratings finite after a
    /// clean sweep).
    #[arg(long, default_value_t = 0.5)]
    pub prior_draws: f64,
}

/// Whether `dir` is a run directory (`loazero run --dir`): it has the run's metrics log
/// and its match directory or loop state (a copy that kept only the models and the
/// ratings, as `data/shipped`, has no match directory; its `metrics.jsonl` is no results
/// file).
pub fn is_run_dir(dir: &Path) -> bool {
    let run = RunDir::new(dir);
    run.metrics().is_file() && (run.matches().is_dir() || run.state().is_file())
}

/// The games of one argument: a run's rating games (`run`), or every result under a
/// directory or in a file. With `prefix`, model players of a run are named
/// `PREFIX/gen-NNNN`.
fn games_of(path: &Path, run: bool, prefix: Option<&str>) -> Result<Vec<RatedGame>> {
    if run {
        let run_models: Vec<String> = {
            let run = RunDir::new(path);
            rundir::layout::list_names(&run.models())?
                .into_iter()
                .filter_map(|n| n.strip_suffix(".safetensors").map(str::to_string))
                .collect()
        };
        let mut games = rated_games(&RunDir::new(path))?;
        if let Some(prefix) = prefix {
            let rename = |name: &mut String| {
                if run_models.contains(name) {
                    *name = format!("{prefix}/{name}");
                }
            };
            for g in &mut games {
                rename(&mut g.first);
                rename(&mut g.second);
            }
        }
        return Ok(games);
    }
    Ok(read_games(path)?
        .iter()
        .map(|r| {
            let (first, second) = r.first_and_second();
            RatedGame {
                first: first.to_string(),
                second: second.to_string(),
                score_first: r.score_first(),
            }
        })
        .collect())
}

/// The prefix of each directory's model players when several are rated together: its
/// last path component, or as many trailing components as it takes to tell it from the
/// others (`a/runs/x` and `b/runs/x` are `a/runs/x` and `b/runs/x`, not `x` twice).
fn run_labels(dirs: &[PathBuf]) -> Vec<String> {
    let parts: Vec<Vec<String>> = dirs
        .iter()
        .map(|d| {
            let mut p: Vec<String> = d
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .filter(|c| c != ".")
                .collect();
            if p.is_empty() {
                p.push(d.display().to_string());
            }
            p
        })
        .collect();
    let tail = |p: &[String], n: usize| p[p.len() - n.min(p.len())..].join("/");
    let longest = parts.iter().map(Vec::len).max().unwrap_or(1);
    (1..=longest)
        .map(|n| parts.iter().map(|p| tail(p, n)).collect::<Vec<_>>())
        .find(|labels| {
            let mut seen = std::collections::HashSet::new();
            labels.iter().all(|l| seen.insert(l))
        })
        .unwrap_or_else(|| dirs.iter().map(|d| d.display().to_string()).collect())
}

/// One argument to rate: a directory or file, or the view of a store's run.
struct Source {
    /// Where its files are.
    path: PathBuf,
    /// Whether it is a run.
    run: bool,
    /// What names it when several are rated together ([`run_labels`]).
    label: PathBuf,
    /// What names it in messages.
    shown: String,
}

/// Prints the table (anchor `random` = 0 when present) and writes the CSV.
pub fn run(mut args: Args) -> Result<()> {
    let flagged = std::mem::take(&mut args.dir_flags);
    args.dirs.extend(flagged);
    let mut sources: Vec<Source> = Vec::new();
    for dir in &args.dirs {
        if !dir.exists() {
            bail!("{} does not exist", dir.display());
        }
        sources.push(Source {
            path: dir.clone(),
            run: is_run_dir(dir),
            label: dir.clone(),
            shown: dir.display().to_string(),
        });
    }
    if let Some(spec) = &args.view.store {
        let view = rundir::store_view::materialise(spec, args.view.cache.as_deref())?;
        let label = spec
            .split_once("://")
            .map_or(spec.as_str(), |(_, rest)| rest);
        sources.push(Source {
            path: view.root().to_path_buf(),
            run: true,
            label: PathBuf::from(label),
            shown: format!("--store {spec}"),
        });
    }
    let several = sources.len() > 1;
    let labels = run_labels(&sources.iter().map(|s| s.label.clone()).collect::<Vec<_>>());
    let mut games = Vec::new();
    for (source, name) in sources.iter().zip(&labels) {
        let found = games_of(&source.path, source.run, several.then_some(name.as_str()))?;
        let run = RunDir::new(&source.path);
        if found.is_empty() && source.run && !several && !run.matches().is_dir() {
            // A copy of a run without its games (data/shipped): its loop's own table.
            let saved = run.root().join("ratings.csv");
            let table = std::fs::read_to_string(&saved).map_err(|e| {
                anyhow::anyhow!(
                    "{} is a run directory without its rating games (no matches/ folder) \
                     and without a ratings.csv: {e}",
                    source.shown
                )
            })?;
            println!(
                "{} keeps no rating games (no matches/ folder), only its ratings as the run \
                 wrote them ({}):",
                source.shown,
                saved.display()
            );
            print!("{table}");
            return Ok(());
        }
        if found.is_empty() {
            bail!(
                "no game results found under {}{}",
                source.shown,
                if source.run {
                    " (a run directory: its rating matches have not finished yet)"
                } else {
                    ""
                }
            );
        }
        games.extend(found);
    }
    let table = fit(&games, args.prior_draws)?;
    println!("{} games", games.len());
    println!("{table}");
    let csv = args.csv.clone().or_else(|| match sources.as_slice() {
        [Source {
            path: dir,
            run: false,
            ..
        }] => Some(if dir.is_dir() {
            dir.join("ratings.csv")
        } else {
            dir.with_file_name("ratings.csv")
        }),
        _ => None,
    });
    if let Some(csv) = csv {
        selfplay::data::write_atomically(&csv, table.to_csv().as_bytes())?;
        println!("written: {}", csv.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::run_labels;
    use std::path::PathBuf;

    fn labels(dirs: &[&str]) -> Vec<String> {
        run_labels(&dirs.iter().map(PathBuf::from).collect::<Vec<_>>())
    }

    #[test]
    fn run_labels_are_last_components_when_those_differ() {
        assert_eq!(labels(&["runs/a", "other/b/"]), ["a", "b"]);
        assert_eq!(labels(&["./runs/default"]), ["default"]);
    }

    #[test]
    fn run_labels_grow_until_they_tell_runs_apart() {
        assert_eq!(
            labels(&["x/runs/default", "y/runs/default", "runs/long"]),
            ["x/runs/default", "y/runs/default", "runs/long"]
        );
        assert_eq!(
            labels(&["/m1/default", "/m2/default"]),
            ["m1/default", "m2/default"]
        );
    }
}
