//! `loazero ratings`: Bradley–Terry Elo over every game in results files, or over the
//! rating games of runs.

use crate::run::layout::RunDir;
use crate::run::rated_games::{rated_games, read_games};
use anyhow::{bail, Result};
use eval::ratings::{fit, RatedGame};
use std::path::{Path, PathBuf};

/// Arguments of `loazero ratings`.
#[derive(clap::Args)]
pub struct Args {
    /// Directories searched recursively for results files (*.jsonl written by
    /// `loazero match`), such files, or run directories (`runs/default`: its finished
    /// rating and anchor matches, models named as in its `ratings.csv`). Several are
    /// fitted together (models of several runs are named RUN/gen-NNNN; the anchors they
    /// share join their scales).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
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
/// and match directory.
pub fn is_run_dir(dir: &Path) -> bool {
    let run = RunDir::new(dir);
    run.metrics().is_file() && run.matches().is_dir()
}

/// The games of one argument: a run's rating games, or every result under a directory
/// or in a file. With `prefix`, model players of a run are named `PREFIX/gen-NNNN`.
fn games_of(path: &Path, prefix: Option<&str>) -> Result<Vec<RatedGame>> {
    if is_run_dir(path) {
        let run_models: Vec<String> = {
            let run = RunDir::new(path);
            crate::run::layout::list_names(&run.models())?
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

/// Prints the table (anchor `random` = 0 when present) and writes the CSV.
pub fn run(args: Args) -> Result<()> {
    let several = args.dirs.len() > 1;
    let labels = run_labels(&args.dirs);
    let mut games = Vec::new();
    for (dir, name) in args.dirs.iter().zip(&labels) {
        if !dir.exists() {
            bail!("{} does not exist", dir.display());
        }
        let found = games_of(dir, several.then_some(name.as_str()))?;
        if found.is_empty() {
            bail!(
                "no game results found under {}{}",
                dir.display(),
                if is_run_dir(dir) {
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
    let csv = args.csv.clone().or_else(|| match args.dirs.as_slice() {
        [dir] if !is_run_dir(dir) => Some(if dir.is_dir() {
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
