//! `loazero heldout`: make the held-out move-matching set (`--out`), or score a model on
//! it (`--score`). See `train::heldout`.

use anyhow::{bail, Context, Result};
use eval::{AlphaBeta, AlphaBetaConfig, SearchLimits};
use loa::{Game, GameRecord, Position, Rules, Variant};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::path::{Path, PathBuf};
use train::heldout::{HeldoutPosition, HeldoutSet};

/// The game records a new set takes its recorded positions from by default (in the
/// repository, relative to its root; `data/README.md`).
pub const DEFAULT_RECORDS: &str = "data/winands-thesis-games";

/// Arguments of `loazero heldout`.
#[derive(clap::Args)]
pub struct Args {
    /// Score this model (or checkpoint) on the set and print top-1/top-3 move matching.
    #[arg(long, conflicts_with = "out")]
    pub score: Option<PathBuf>,
    /// The held-out positions file to score on (default: the shipped standard set).
    #[arg(long, alias = "set", value_name = "FILE", requires = "score")]
    pub positions: Option<PathBuf>,
    /// Make a new set into this file (standard variant, classic rules).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Directory of game records whose positions go into a new set (the default is
    /// relative to the repository's root).
    #[arg(long, alias = "games", value_name = "DIR", default_value = DEFAULT_RECORDS)]
    pub records: PathBuf,
    /// Take every this many plies of each recorded game.
    #[arg(long, default_value_t = 4)]
    pub every: usize,
    /// Positions from games of mixed random and alpha-beta depth-1 moves (one per game).
    #[arg(long, default_value_t = 200)]
    pub mixed: usize,
    /// Depth of the alpha-beta search that labels each position.
    #[arg(long, default_value_t = 5)]
    pub depth: u32,
    /// Seed of the mixed games.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Runs `loazero heldout`.
pub fn run(args: Args) -> Result<()> {
    match (&args.score, &args.out) {
        (Some(model), _) => score(model, args.positions.as_deref()),
        (None, Some(out)) => make(&args, out),
        (None, None) => bail!("give --score MODEL or --out FILE"),
    }
}

fn score(model_path: &Path, set: Option<&Path>) -> Result<()> {
    let set = match set {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read {}", p.display()))?;
            HeldoutSet::parse(&text, Variant::Standard)
                .with_context(|| format!("{}", p.display()))?
        }
        None => HeldoutSet::shipped(Variant::Standard).expect("a standard set ships"),
    };
    let model = train::Model::load(model_path, tch::Device::Cpu)?;
    let s = set.score(&model)?;
    println!(
        "{}: {} positions: top-1 {:.1}%  top-3 {:.1}%  log-likelihood {:.3}  value sign {:.1}%  (chance top-1 {:.1}%)",
        model_path.display(),
        s.positions,
        100.0 * s.top1,
        100.0 * s.top3,
        s.log_likelihood,
        100.0 * s.value_sign_agreement,
        100.0 * s.chance_top1
    );
    Ok(())
}

/// Positions of the recorded games in `dir`, every `every` plies (not over).
fn recorded_positions(dir: &Path, every: usize, rules: &Rules) -> Result<Vec<Position>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let record = GameRecord::parse(&text).with_context(|| format!("{}", path.display()))?;
        let mut game = Game::new(Variant::Standard, *rules);
        for (ply, token) in record.moves.iter().enumerate() {
            if ply % every.max(1) == every.max(1) / 2 && game.outcome().is_none() {
                out.push(*game.position());
            }
            game.play_text(token)
                .with_context(|| format!("{}: ply {}", path.display(), ply + 1))?;
        }
    }
    Ok(out)
}

/// One position from each of `count` games of moves that are random half of the time and
/// alpha-beta depth 1 otherwise, taken at a random ply between 6 and 50.
fn mixed_positions(count: usize, seed: u64, rules: &Rules) -> Vec<Position> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut searcher = AlphaBeta::new(AlphaBetaConfig::default());
    let mut out = Vec::new();
    while out.len() < count {
        let target = rng.random_range(6..=50);
        let mut game = Game::new(Variant::Standard, *rules);
        while game.outcome().is_none() && (game.position().ply() as usize) < target {
            let pos = *game.position();
            let mv = if rng.random_bool(0.5) {
                let moves = pos.legal_moves(rules);
                moves[rng.random_range(0..moves.len())]
            } else {
                match searcher.search_position(&pos, *rules, &[], SearchLimits::depth(1)) {
                    Ok(r) => r.best_move,
                    Err(_) => break,
                }
            };
            game.play(mv).expect("legal");
        }
        if game.outcome().is_none() && game.position().ply() as usize == target {
            out.push(*game.position());
        }
    }
    out
}

fn make(args: &Args, out: &Path) -> Result<()> {
    let rules = Rules::classic();
    if !args.records.is_dir() {
        bail!(
            "{}: no directory of game records{}",
            args.records.display(),
            if args.records == Path::new(DEFAULT_RECORDS) {
                " (the default is relative to the repository's root: run from there, or give \
                 --records DIR)"
            } else {
                ""
            }
        );
    }
    let mut positions = recorded_positions(&args.records, args.every, &rules)?;
    let recorded = positions.len();
    positions.extend(mixed_positions(args.mixed, args.seed, &rules));
    eprintln!(
        "labelling {} positions ({recorded} recorded, {} mixed) with alphabeta:depth={}",
        positions.len(),
        positions.len() - recorded,
        args.depth
    );
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = positions.len().div_ceil(threads).max(1);
    let labelled: Vec<HeldoutPosition> = std::thread::scope(|scope| {
        let handles: Vec<_> = positions
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || -> Result<Vec<HeldoutPosition>> {
                    let mut searcher = AlphaBeta::new(AlphaBetaConfig::default());
                    part.iter()
                        .map(|pos| {
                            let r = searcher.search_position(
                                pos,
                                rules,
                                &[],
                                SearchLimits::depth(args.depth),
                            )?;
                            Ok(HeldoutPosition {
                                position: *pos,
                                best: r.best_move,
                                score: r.score,
                            })
                        })
                        .collect()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("labelling thread"))
            .collect::<Result<Vec<Vec<_>>>>()
    })?
    .into_iter()
    .flatten()
    .collect();
    let set = HeldoutSet {
        variant: Variant::Standard,
        positions: labelled,
    };
    let header = vec![
        "loazero held-out move-matching set (standard, classic rules).".to_string(),
        format!(
            "Made by: loazero heldout --out FILE --records {} --every {} --mixed {} --depth {} --seed {}",
            args.records.display(),
            args.every,
            args.mixed,
            args.depth,
            args.seed
        ),
        format!(
            "{recorded} positions from the recorded games (every {} plies), {} from games of mixed random and alphabeta:depth=1 moves;",
            args.every,
            set.positions.len() - recorded
        ),
        format!("each labelled with the best move and score of alphabeta:depth={}.", args.depth),
        "Line: POSITION TEXT ; MOVE ; SCORE (for the side to move).".to_string(),
    ];
    selfplay::data::write_atomically(out, set.to_text(&header).as_bytes())?;
    println!(
        "written: {} ({} positions)",
        out.display(),
        set.positions.len()
    );
    Ok(())
}
