//! A run's calibrated strength levels: every player of its last rating round that plays as
//! it was rated — an anchor (its name is its spec), a model at the run's rating
//! simulations, a learned alpha-beta at its rating depth — weakest first, each with its
//! Bradley–Terry Elo (random = 0) and the half-width of its 95% interval. The web app's
//! Play screen offers them (`serve`), and so does the engine's `level` command (`loazero
//! engine`, from the run's `ratings.csv`). Models whose file is gone and anchors a client
//! may not ask for are left out.

use crate::layout::{generation_of, learned_generation_of};
use anyhow::{anyhow, bail, Context, Result};
use eval::protocol::Level;
use std::path::Path;

/// One player of a rating round: its name and its Elo with the standard error.
#[derive(Clone, Debug, PartialEq)]
pub struct Rated {
    /// `gen-0080`, `nnue-0001`, or an anchor's spec.
    pub name: String,
    /// Bradley–Terry Elo (random = 0).
    pub elo: f64,
    /// Its standard error (not finite: unknown).
    pub stderr: f64,
}

/// How the run rated its players: the settings its level specs play with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RatedAs {
    /// MCTS simulations of its models (`rating.simulations`).
    pub simulations: u32,
    /// Alpha-beta depth of its learned evaluations (`learned_eval.rating_depth`).
    pub learned_depth: u32,
}

/// The levels of the run in `run_root` from its rating round `rated`, weakest first.
pub fn levels(run_root: &Path, rated: &[Rated], rated_as: RatedAs) -> Vec<Level> {
    let models = run_root.join("models");
    let mut levels: Vec<Level> = rated
        .iter()
        .filter(|row| row.elo.is_finite())
        .filter_map(|row| {
            let file = models.join(format!("{}.safetensors", row.name));
            let spec = if generation_of(&row.name).is_some() {
                let sims = rated_as.simulations;
                file.is_file()
                    .then(|| format!("model:path={},sims={sims}", file.display()))?
            } else if learned_generation_of(&row.name).is_some() {
                let depth = rated_as.learned_depth;
                file.is_file()
                    .then(|| format!("alphabeta:eval={},depth={depth}", file.display()))?
            } else {
                eval::PlayerSpec::parse_for_client(&row.name).ok()?;
                row.name.clone()
            };
            Some(Level {
                name: row.name.clone(),
                spec,
                elo: row.elo,
                interval: row.stderr.is_finite().then_some(1.96 * row.stderr),
            })
        })
        .collect();
    levels.sort_by(|a, b| a.elo.total_cmp(&b.elo));
    levels
}

/// The levels of the run in `run_root` from its files: `ratings.csv` (the latest rating
/// round) and the two settings of its `config.toml` that say how it rated
/// ([`rated_as_of`]).
pub fn of_run(run_root: &Path) -> Result<Vec<Level>> {
    let csv = run_root.join("ratings.csv");
    let text = std::fs::read_to_string(&csv).with_context(|| {
        format!(
            "cannot read {} (a run's levels are its rated players)",
            csv.display()
        )
    })?;
    let rated = parse_ratings_csv(&text).with_context(|| format!("{}", csv.display()))?;
    let config = run_root.join("config.toml");
    let text = std::fs::read_to_string(&config)
        .with_context(|| format!("cannot read {}", config.display()))?;
    let rated_as = rated_as_of(&text).with_context(|| format!("{}", config.display()))?;
    Ok(levels(run_root, &rated, rated_as))
}

/// `rating.simulations` and `learned_eval.rating_depth` of a run's saved `config.toml`
/// (a run saves its whole config, every key written out).
pub fn rated_as_of(config_toml: &str) -> Result<RatedAs> {
    let mut section = "";
    let (mut simulations, mut learned_depth) = (None, None);
    for line in config_toml.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name.trim();
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let count = || -> Result<u32> {
            let (key, value) = (key.trim(), value.trim());
            value
                .parse()
                .map_err(|_| anyhow!("{section}.{key}: '{value}' is not a count"))
        };
        match (section, key.trim()) {
            ("rating", "simulations") => simulations = Some(count()?),
            ("learned_eval", "rating_depth") => learned_depth = Some(count()?),
            _ => {}
        }
    }
    Ok(RatedAs {
        simulations: simulations.ok_or_else(|| anyhow!("no rating.simulations"))?,
        learned_depth: learned_depth.ok_or_else(|| anyhow!("no learned_eval.rating_depth"))?,
    })
}

/// The rows of a `ratings.csv` (`name,elo,stderr,…`, a header line first; a name with a
/// comma in double quotes, as the ratings writer quotes it).
pub fn parse_ratings_csv(text: &str) -> Result<Vec<Rated>> {
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, header)) if header.starts_with("name,elo,stderr") => {}
        _ => bail!("not a ratings table (its first line is not 'name,elo,stderr,…')"),
    }
    let mut out = Vec::new();
    for (i, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let (name, rest) = if let Some(quoted) = line.strip_prefix('"') {
            let (name, rest) = quoted
                .split_once('"')
                .ok_or_else(|| anyhow!("line {}: an unclosed quote", i + 1))?;
            (name, rest.strip_prefix(',').unwrap_or(rest))
        } else {
            line.split_once(',')
                .ok_or_else(|| anyhow!("line {}: expected name,elo,stderr", i + 1))?
        };
        let mut fields = rest.split(',');
        let mut number = |what: &str| -> Result<f64> {
            let field = fields.next().unwrap_or("").trim();
            field
                .parse()
                .map_err(|_| anyhow!("line {}: {what} '{field}' is not a number", i + 1))
        };
        let elo = number("elo")?;
        let stderr = number("stderr")?;
        out.push(Rated {
            name: name.to_string(),
            elo,
            stderr,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: &str = "name,elo,stderr,games,score
alphabeta:depth=2,1048.2,104.4,340,0.3794
nnue-0001,1415.7,115.5,120,0.8583
gen-0008,898.9,110.0,120,0.5250
gen-0009,950.0,110.0,120,0.5250
\"mcts:evaluator=uniform,sims=64\",315.6,86.6,340,0.0721
random,0.0,0.0,320,0.0031
(first move advantage),49.8,12.1,,
";

    /// The table's rows with their quoted names; a run's levels weakest first, models at
    /// the rating simulations, learned files at the rating depth, anchors as themselves;
    /// a model whose file is gone and a row that is no player are left out.
    #[test]
    fn a_runs_levels_are_its_rated_players_weakest_first() {
        let rows = parse_ratings_csv(CSV).unwrap();
        assert_eq!(rows.len(), 7);
        assert_eq!(rows[4].name, "mcts:evaluator=uniform,sims=64");
        assert_eq!(rows[4].stderr, 86.6);
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("models")).unwrap();
        for name in ["gen-0008", "nnue-0001"] {
            std::fs::write(dir.path().join(format!("models/{name}.safetensors")), b"").unwrap();
        }
        let rated_as = RatedAs {
            simulations: 64,
            learned_depth: 3,
        };
        let levels = levels(dir.path(), &rows, rated_as);
        let names: Vec<&str> = levels.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "random",
                "mcts:evaluator=uniform,sims=64",
                "gen-0008",
                "alphabeta:depth=2",
                "nnue-0001"
            ]
        );
        let model = dir.path().join("models/gen-0008.safetensors");
        assert_eq!(
            levels[2].spec,
            format!("model:path={},sims=64", model.display())
        );
        let learned = dir.path().join("models/nnue-0001.safetensors");
        assert_eq!(
            levels[4].spec,
            format!("alphabeta:eval={},depth=3", learned.display())
        );
        assert_eq!(levels[3].spec, "alphabeta:depth=2");
        assert!((levels[3].interval.unwrap() - 1.96 * 104.4).abs() < 1e-9);
    }

    /// The shipped run's own files give its levels, and broken
    /// files are errors naming the file and the line.
    #[test]
    fn the_shipped_runs_levels_and_broken_files() {
        let shipped = std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap())
            .join("..")
            .join(crate::shipped::SHIPPED_RUN);
        let levels = of_run(&shipped).unwrap();
        assert!(levels.len() >= 5, "{levels:?}");
        assert_eq!(levels[0].name, "random");
        assert!(levels
            .iter()
            .any(|l| l.name == "gen-0099" && l.spec.ends_with(",sims=64")));
        assert!(levels
            .iter()
            .any(|l| l.name == "nnue-0001" && l.spec.ends_with(",depth=3")));
        assert!(levels.windows(2).all(|w| w[0].elo <= w[1].elo));

        let e = parse_ratings_csv("name,elo\nx,1").unwrap_err().to_string();
        assert!(e.contains("not a ratings table"), "{e}");
        let e = parse_ratings_csv("name,elo,stderr\nx,1,y\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2: stderr 'y'"), "{e}");
        let e = rated_as_of("[rating]\nsimulations = 64\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("learned_eval.rating_depth"), "{e}");
        let e = rated_as_of("[rating]\nsimulations = many\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("rating.simulations: 'many'"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let e = format!("{:#}", of_run(dir.path()).unwrap_err());
        assert!(
            e.contains("ratings.csv") && e.contains("rated players"),
            "{e}"
        );
    }
}
