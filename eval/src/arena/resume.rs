//! Going on with a match whose output folder already holds some of its games
//! ([`MatchConfig::resume`]): the games in `results.jsonl` count and are not played again,
//! once each is checked to be a game of this match.

use super::{read_results, GameResult, MatchConfig};
use anyhow::{bail, Context, Result};
use loa::Move;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;

/// The games of this match that `dir/results.jsonl` already holds, in game order.
///
/// Without [`MatchConfig::resume`] there must be none: a folder that holds results is
/// refused (appending another match's games to them would mix two matches). With it, each
/// recorded game must be a game of this match: the same players A and B (by name), variant
/// and rules, a game number below `config.games` and not seen before, and the opening of
/// its number (which the openings and the seed decide). Then a truncated last line (a kill
/// while appending) is cut off the file, so that the games appended next start on a line
/// of their own. Errors name the file and the game, and change nothing.
pub(super) fn earlier_games(
    dir: &Path,
    a: &str,
    b: &str,
    config: &MatchConfig,
    openings: &[Vec<Move>],
) -> Result<Vec<GameResult>> {
    let Some(earlier) = recorded_games(dir, a, b, config, openings)? else {
        return Ok(Vec::new());
    };
    end_on_a_whole_line(&dir.join("results.jsonl"), earlier.truncated)?;
    Ok(earlier.games)
}

/// Whether `dir` holds games that [`earlier_games`] would go on from: at least one, each a
/// game of this match (as if [`MatchConfig::resume`] were set). Changes nothing.
pub(super) fn holds_games_of(
    dir: &Path,
    a: &str,
    b: &str,
    config: &MatchConfig,
    openings: &[Vec<Move>],
) -> bool {
    let probe = MatchConfig {
        resume: true,
        ..config.clone()
    };
    matches!(recorded_games(dir, a, b, &probe, openings), Ok(Some(e)) if !e.games.is_empty())
}

/// The games a results file holds, checked to be this match's.
struct Recorded {
    /// In game order.
    games: Vec<GameResult>,
    /// Whether the file's last line was cut (a kill while appending).
    truncated: bool,
}

/// [`earlier_games`]' checks, without mending the file: `None` when the folder holds no
/// results.
fn recorded_games(
    dir: &Path,
    a: &str,
    b: &str,
    config: &MatchConfig,
    openings: &[Vec<Move>],
) -> Result<Option<Recorded>> {
    let path = dir.join("results.jsonl");
    let len = match std::fs::metadata(&path) {
        Ok(m) => m.len(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    if len == 0 {
        return Ok(None);
    }
    if !config.resume {
        bail!(
            "{} already holds the results of a match: resume that match (`loazero match \
             --resume`), or write this one to another folder",
            path.display()
        );
    }
    let read = read_results(&path)?;
    let mut games = read.games;
    let mut seen = BTreeSet::new();
    for g in &games {
        let game = g.game;
        let wrong = |what: &str, recorded: &str, now: &str| {
            anyhow::anyhow!(
                "{} game {game}: not a game of this match: its {what} is {recorded:?}, this \
                 match's {now:?} (resume with the same players, --variant, --rules, \
                 --openings and --seed, or write to another folder)",
                path.display()
            )
        };
        if game >= config.games {
            bail!(
                "{} game {game}: not a game of this match, which has {} games",
                path.display(),
                config.games
            );
        }
        if !seen.insert(game) {
            bail!("{} holds game {game} twice", path.display());
        }
        if g.a != a {
            return Err(wrong("player A", &g.a, a));
        }
        if g.b != b {
            return Err(wrong("player B", &g.b, b));
        }
        if g.variant != config.variant {
            return Err(wrong(
                "variant",
                &g.variant.to_string(),
                &config.variant.to_string(),
            ));
        }
        if g.rules != config.rules {
            return Err(wrong(
                "rules",
                &g.rules.to_string(),
                &config.rules.to_string(),
            ));
        }
        let opening = loa::notation::moves_text(&openings[game / 2]);
        if g.opening != opening {
            return Err(wrong("opening", &g.opening, &opening));
        }
    }
    games.sort_by_key(|g| g.game);
    Ok(Some(Recorded {
        games,
        truncated: !read.skipped.is_empty(),
    }))
}

/// Makes the file end with a newline, so that the next game appended starts a line of its
/// own: a last line cut by a kill while appending (`truncated`, which [`read_results`]
/// skipped) is cut off; a whole one that only lacks its newline gets it.
fn end_on_a_whole_line(path: &Path, truncated: bool) -> Result<()> {
    let text = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    if text.is_empty() || text.last() == Some(&b'\n') {
        return Ok(());
    }
    let keep = text.iter().rposition(|&c| c == b'\n').map_or(0, |i| i + 1);
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    let mended = if truncated {
        file.set_len(keep as u64)
    } else {
        file.write_all(b"\n")
    };
    mended
        .and_then(|_| file.sync_all())
        .with_context(|| format!("cannot mend the last line of {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::super::{play_match, read_results, Control, MatchConfig, Openings};
    use crate::player::{PlayerFactory, PlayerSpec};
    use loa::Variant;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn go_on(_: &super::GameResult, _: &crate::elo::Tally) -> Control {
        Control::Continue
    }

    fn config(dir: &std::path::Path, seed: u64, resume: bool) -> MatchConfig {
        MatchConfig {
            games: 8,
            threads: 2,
            variant: Variant::Six,
            openings: Openings::Random {
                plies: 2,
                max_eval: 1000,
            },
            seed,
            out_dir: Some(dir.to_path_buf()),
            resume,
            ..Default::default()
        }
    }

    /// A match cut after some games (here: its results file cut to three lines and half a
    /// fourth, as a kill leaves it) goes on with `resume`: only the missing games are
    /// played, the figures count all of them, and the file holds each game once.
    #[test]
    fn a_resumed_match_plays_only_the_games_its_folder_lacks() {
        let dir = tempfile::tempdir().unwrap();
        let factory = PlayerFactory::new();
        let a = PlayerSpec::parse("alphabeta:depth=1").unwrap();
        let b = PlayerSpec::parse("random").unwrap();
        let whole = play_match(&factory, &a, &b, &config(dir.path(), 5, false), &go_on).unwrap();
        assert_eq!((whole.games.len(), whole.resumed), (8, 0));

        let results = dir.path().join("results.jsonl");
        let text = std::fs::read_to_string(&results).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let kept: Vec<&str> = [lines[5], lines[1], lines[6]].to_vec();
        let cut = kept.join("\n") + "\n" + &lines[0][..lines[0].len() / 2];
        std::fs::write(&results, &cut).unwrap();
        let kept_games: Vec<usize> = kept
            .iter()
            .map(|l| serde_json::from_str::<super::GameResult>(l).unwrap().game)
            .collect();

        // Without resume the folder is refused, and left as it was.
        let e = play_match(&factory, &a, &b, &config(dir.path(), 5, false), &go_on).unwrap_err();
        assert!(
            format!("{e:#}").contains("already holds the results"),
            "{e:#}"
        );
        assert_eq!(std::fs::read_to_string(&results).unwrap(), cut);

        let played = AtomicUsize::new(0);
        let on_game = |g: &super::GameResult, t: &crate::elo::Tally| {
            assert!(
                !kept_games.contains(&g.game),
                "game {} played again",
                g.game
            );
            played.fetch_add(1, Ordering::SeqCst);
            assert!(t.games() as usize > 3, "the tally counts the earlier games");
            Control::Continue
        };
        let resumed = play_match(&factory, &a, &b, &config(dir.path(), 5, true), &on_game).unwrap();
        assert_eq!(played.load(Ordering::SeqCst), 5);
        assert_eq!(resumed.resumed, 3);
        assert_eq!(resumed.tally.games(), 8);
        assert_eq!(
            resumed.games.iter().map(|g| g.game).collect::<Vec<_>>(),
            (0..8).collect::<Vec<_>>()
        );
        let read = read_results(&results).unwrap();
        assert!(read.skipped.is_empty(), "{:?}", read.skipped);
        let mut numbers: Vec<usize> = read.games.iter().map(|g| g.game).collect();
        numbers.sort();
        assert_eq!(numbers, (0..8).collect::<Vec<_>>());
        let expected = whole.games.iter().map(|g| &g.opening).collect::<Vec<_>>();
        assert_eq!(
            resumed.games.iter().map(|g| &g.opening).collect::<Vec<_>>(),
            expected
        );

        // A finished match resumed plays nothing and reads the same figures.
        let again = play_match(&factory, &a, &b, &config(dir.path(), 5, true), &|_, _| {
            panic!("nothing is left to play")
        })
        .unwrap();
        assert_eq!((again.resumed, again.tally), (8, resumed.tally));
    }

    /// Games of another match are refused, naming the file, the game and what differs.
    #[test]
    fn another_matchs_games_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let factory = PlayerFactory::new();
        let a = PlayerSpec::parse("alphabeta:depth=1").unwrap();
        let b = PlayerSpec::parse("random").unwrap();
        play_match(&factory, &a, &b, &config(dir.path(), 5, false), &go_on).unwrap();
        let refused = |a: &PlayerSpec, b: &PlayerSpec, config: MatchConfig| {
            format!(
                "{:#}",
                play_match(&factory, a, b, &config, &go_on).unwrap_err()
            )
        };
        let results = dir.path().join("results.jsonl");
        let text = std::fs::read_to_string(&results).unwrap();
        let first = text.lines().next().unwrap().to_string();
        let first_game = serde_json::from_str::<super::GameResult>(&first)
            .unwrap()
            .game;
        let other_b = PlayerSpec::parse("first-legal").unwrap();
        // `can_resume` tells the same without an error (and with or without `resume`).
        assert!(super::super::can_resume(
            &a,
            &b,
            &config(dir.path(), 5, false)
        ));
        assert!(!super::super::can_resume(
            &a,
            &other_b,
            &config(dir.path(), 5, true)
        ));
        assert!(!super::super::can_resume(
            &a,
            &b,
            &config(dir.path(), 6, true)
        ));
        let empty = tempfile::tempdir().unwrap();
        assert!(!super::super::can_resume(
            &a,
            &b,
            &config(empty.path(), 5, true)
        ));
        assert_eq!(std::fs::read_to_string(&results).unwrap(), text);
        let e = refused(&a, &other_b, config(dir.path(), 5, true));
        assert!(
            e.contains(&format!(
                "results.jsonl game {first_game}: not a game of this match"
            )) && e.contains("player B is \"random\", this match's \"first-legal\""),
            "{e}"
        );
        let e = refused(&a, &b, config(dir.path(), 6, true));
        assert!(e.contains("its opening is"), "{e}");
        let fewer = MatchConfig {
            games: 4,
            ..config(dir.path(), 5, true)
        };
        let e = refused(&a, &b, fewer);
        assert!(e.contains("which has 4 games"), "{e}");
        std::fs::write(&results, format!("{text}{first}\n")).unwrap();
        let e = refused(&a, &b, config(dir.path(), 5, true));
        assert!(e.contains(&format!("holds game {first_game} twice")), "{e}");
    }

    /// The next game appended starts a line of its own: a cut last line goes, a whole one
    /// gets its newline.
    #[test]
    fn the_file_ends_on_a_whole_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.jsonl");
        for (text, truncated, after) in [
            ("{\"a\"}\n{\"b", true, "{\"a\"}\n"),
            ("{\"a\"}\n{\"b\"}", false, "{\"a\"}\n{\"b\"}\n"),
            ("{\"a\"}\n", false, "{\"a\"}\n"),
            ("{\"b", true, ""),
        ] {
            std::fs::write(&path, text).unwrap();
            super::end_on_a_whole_line(&path, truncated).unwrap();
            assert_eq!(std::fs::read_to_string(&path).unwrap(), after, "{text}");
        }
    }
}
