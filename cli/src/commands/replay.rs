//! `loazero replay`: replays a game record or an SGF file, checking every move.

use crate::args::StoreViewArgs;
use anyhow::{anyhow, bail, Context, Result};
use loa::sgf::SgfGame;
use loa::{Game, GameRecord, Position, Rules, Variant};
use std::path::PathBuf;

/// Arguments of `loazero replay`.
#[derive(clap::Args)]
pub struct Args {
    /// The game: a loazero record (numbered move pairs, e.g. "1. c8-c6 h4-f2 2. g8-g6
    /// h2-e2", with optional `# variant`, `# rules` and `# start` header lines) or an SGF
    /// file (`FF[4] GM[9]`; recognised by its leading `(`). With --store: the record's path
    /// inside the run, as in a run directory (`games/NAME.txt`, `matches/MATCH/games/…`).
    pub file: PathBuf,
    /// `--store` and `--cache`: a run kept in a store.
    #[command(flatten)]
    pub view: StoreViewArgs,
    /// Variant: standard, scrambled-eggs, 6x6, parachute, gemma, ambiloa or alveole
    /// (default: the record's `# variant` line, else standard). Not for SGF files, which
    /// say their own.
    #[arg(long)]
    pub variant: Option<Variant>,
    /// Rules, as for `match` (default: the record's `# rules` line, else classic). Not for
    /// SGF files.
    #[arg(long)]
    pub rules: Option<Rules>,
    /// Start from this position (position text; default: the record's `# start` line,
    /// else the variant's start). Not for SGF files.
    #[arg(long)]
    pub position: Option<String>,
    /// Print the position after every ply.
    #[arg(long)]
    pub verbose: bool,
}

/// Whether `text` is an SGF file: its first character after white space (and a byte-order
/// mark) is `(`.
fn is_sgf(text: &str) -> bool {
    text.trim_start_matches('\u{feff}')
        .trim_start()
        .starts_with('(')
}

/// Prints `result: black|white|draw|none` as the last line: the outcome of the moves, or
/// for a game they do not end, the resignation of an SGF file or the `# end` line of a
/// record (`# end white (black resigned)`), whose reason is printed the line before
/// (`black resigned`). An illegal move is an error naming its ply and the position.
pub fn run(mut args: Args) -> Result<()> {
    if let Some(spec) = &args.view.store {
        let view = rundir::store_view::materialise(spec, args.view.cache.as_deref())?;
        args.file = rundir::store_view::file_in(&view, &args.file)?;
    }
    let file = args.file.display();
    let text = std::fs::read_to_string(&args.file)
        .with_context(|| format!("cannot read game record {file}"))?;
    if is_sgf(&text) {
        if args.variant.is_some() || args.rules.is_some() || args.position.is_some() {
            bail!(
                "{file} is an SGF file, which names its own variant, rules and start \
                 (LZ, SZ and setup properties): leave out --variant, --rules and --position"
            );
        }
        let sgf = SgfGame::parse(&text).map_err(|e| anyhow!("{file}: {e}"))?;
        let moves: Vec<String> = sgf.game.moves().iter().map(|m| m.to_string()).collect();
        let game = replay(&args, *sgf.game.start(), *sgf.game.rules(), &moves)?;
        if let Some(c) = sgf.resigned {
            println!("{} resigned", c.name());
        }
        debug_assert_eq!(game.position(), sgf.game.position());
        println!("result: {}", sgf.result().map_or("none", |o| o.name()));
        return Ok(());
    }
    let record = GameRecord::parse(&text).map_err(|e| anyhow!("{file}: {e}"))?;
    let header = &record.header;
    let variant = match (args.variant, &header.variant) {
        (Some(v), _) => v,
        (None, Some(v)) => v
            .parse()
            .map_err(|e| anyhow!("{file}: '# variant {v}': {e}"))?,
        (None, None) => Variant::Standard,
    };
    let rules = match (args.rules, &header.rules) {
        (Some(r), _) => r,
        (None, Some(r)) => Rules::parse(r).map_err(|e| anyhow!("{file}: '# rules {r}': {e}"))?,
        (None, None) => Rules::classic(),
    };
    let start = match (&args.position, &header.start) {
        (Some(p), _) => Position::from_text(p, variant).map_err(|e| anyhow!("--position: {e}"))?,
        (None, Some(p)) => Position::from_text(p, variant)
            .map_err(|e| anyhow!("{file}: '# start {p}' (variant {variant}): {e}"))?,
        (None, None) => Position::start(variant, &rules),
    };
    let game = replay(&args, start, rules, &record.moves)?;
    let end = header.end_outcome().map_err(|e| anyhow!("{file}: {e}"))?;
    let outcome = match (game.outcome(), end) {
        (Some(o), _) => Some(o),
        (None, Some((o, how))) => {
            if !how.is_empty() {
                println!("{how}");
            }
            Some(o)
        }
        (None, None) => None,
    };
    println!("result: {}", outcome.map_or("none", |o| o.name()));
    Ok(())
}

/// Plays `moves` from `start`, printing positions with `--verbose`.
fn replay(args: &Args, start: Position, rules: Rules, moves: &[String]) -> Result<Game> {
    let mut game = Game::from_position(start, rules);
    if args.verbose {
        println!("ply 0: {}", game.position().to_text());
    }
    for (i, token) in moves.iter().enumerate() {
        let ply = i + 1;
        let before = game.position().to_text();
        if let Err(e) = game.play_text(token) {
            bail!(
                "{}: ply {ply} ({} {token}): {e}\nposition before ply {ply}: {before}",
                args.file.display(),
                game.position().to_move()
            );
        }
        if args.verbose {
            println!("ply {ply}: {token} -> {}", game.position().to_text());
        }
    }
    Ok(game)
}
