//! The `loazero engine` line protocol (specified in eval/PROTOCOL.md): a [`Session`] holds
//! the game and the engine player and answers one command line at a time. Never panics on
//! input: every problem is an `error …` line.

use crate::player::{Player, PlayerFactory, PlayerSpec};
use anyhow::{anyhow, bail, Result};
use loa::{Game, Position, Rules, Variant};
use std::time::{Duration, Instant};

/// Default engine player.
pub const DEFAULT_PLAYER: &str = "alphabeta:ms=1000";

/// One protocol session.
pub struct Session<'f> {
    factory: &'f PlayerFactory,
    variant: Variant,
    rules: Rules,
    game: Game,
    spec: PlayerSpec,
    player: Option<Box<dyn Player>>,
    seed: u64,
    clock: Option<Clock>,
}

/// The engine's game clock, set by `time MY_MS OPP_MS [INC_MS]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    /// The engine's remaining time in milliseconds (0 once it is used up).
    pub my_ms: u64,
    /// The opponent's remaining time (informative; not used by the time management).
    pub opp_ms: u64,
    /// Increment added after each of the engine's moves.
    pub inc_ms: u64,
}

/// The thinking time for one move on a clock with `my_ms` left and `inc_ms` increment, at
/// `ply` plies into the game: `min(my / max(10, 30 − ply/2) + 0.8·inc, my/2)`, at least
/// 1 ms. Early moves get about a thirtieth of the time left; from ply 40 on, a tenth; the
/// increment is mostly spent, and no move takes more than half of what is left.
pub fn move_budget(my_ms: u64, inc_ms: u64, ply: u32) -> Duration {
    let moves_left = 30u64.saturating_sub(ply as u64 / 2).max(10);
    let my = my_ms as f64;
    let ms = (my / moves_left as f64 + 0.8 * inc_ms as f64).min(my / 2.0);
    Duration::from_millis((ms as u64).max(1))
}

fn clock_number(text: &str, what: &str) -> Result<u64> {
    // Negative times (a flag that fell) count as zero.
    text.parse::<i64>()
        .map(|v| v.max(0) as u64)
        .map_err(|_| anyhow!("time: {what} '{text}' is not a number of milliseconds"))
}

/// What the caller does after a command.
#[derive(Debug, PartialEq, Eq)]
pub enum Reply {
    /// Print these lines and read the next command.
    Lines(Vec<String>),
    /// Print these lines and end the session.
    Quit(Vec<String>),
}

impl<'f> Session<'f> {
    /// A session on the standard start under classic rules with `player` as the engine.
    pub fn new(factory: &'f PlayerFactory, player: PlayerSpec) -> Session<'f> {
        let rules = Rules::classic();
        Session {
            factory,
            variant: Variant::Standard,
            rules,
            game: Game::new(Variant::Standard, rules),
            spec: player,
            player: None,
            seed: 1,
            clock: None,
        }
    }

    /// The current game.
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// The game clock set by the last `time` command (updated after each engine move).
    pub fn clock(&self) -> Option<Clock> {
        self.clock
    }

    /// Handles one line. Blank lines and `#` comments give no reply.
    pub fn handle(&mut self, line: &str) -> Reply {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            return Reply::Lines(Vec::new());
        }
        let (cmd, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        if cmd.eq_ignore_ascii_case("quit") {
            return Reply::Quit(vec!["ok bye".into()]);
        }
        match self.command(&cmd.to_ascii_lowercase(), rest) {
            Ok(lines) => Reply::Lines(lines),
            Err(e) => Reply::Lines(vec![format!("error {}", one_line(&format!("{e:#}")))]),
        }
    }

    fn command(&mut self, cmd: &str, rest: &str) -> Result<Vec<String>> {
        let ok = || Ok(vec!["ok".to_string()]);
        match cmd {
            "protocol" => Ok(vec!["protocol loazero-engine 1".into()]),
            "isready" => Ok(vec!["readyok".into()]),
            "variant" => {
                self.variant = rest.parse::<Variant>()?;
                self.game = Game::new(self.variant, self.rules);
                ok()
            }
            "rules" => {
                self.rules = Rules::parse(rest).map_err(|e| anyhow!(e))?;
                self.game = Game::new(self.variant, self.rules);
                ok()
            }
            "new" => {
                self.game = Game::new(self.variant, self.rules);
                ok()
            }
            "position" => {
                self.set_position(rest)?;
                ok()
            }
            "play" => {
                if rest.is_empty() {
                    bail!("play needs a move, e.g. play b1-d3");
                }
                for m in rest.split_whitespace() {
                    self.game.play_text(m).map_err(|e| anyhow!("{e}"))?;
                }
                ok()
            }
            "undo" => {
                let n: usize = if rest.is_empty() {
                    1
                } else {
                    rest.parse().map_err(|_| anyhow!("undo takes a number of plies, not '{rest}'"))?
                };
                let moves = self.game.moves();
                if n > moves.len() {
                    bail!("cannot undo {n} plies: only {} played since the position was set", moves.len());
                }
                let keep = moves[..moves.len() - n].to_vec();
                let mut g = Game::from_position(*self.game.start(), self.rules);
                for m in keep {
                    g.play(m).map_err(|e| anyhow!("{e}"))?;
                }
                self.game = g;
                ok()
            }
            "player" => {
                let spec = PlayerSpec::parse(rest)?;
                // Build now so that a bad spec is reported here.
                self.player = Some(self.factory.build(&spec, self.seed)?);
                self.spec = spec;
                ok()
            }
            "time" => {
                let parts: Vec<&str> = rest.split_whitespace().collect();
                if parts.len() == 1 && parts[0].eq_ignore_ascii_case("off") {
                    self.clock = None;
                    return ok();
                }
                if !(2..=3).contains(&parts.len()) {
                    bail!("time needs MY_MS OPP_MS [INC_MS] (or 'time off'), got '{rest}'");
                }
                self.clock = Some(Clock {
                    my_ms: clock_number(parts[0], "MY_MS")?,
                    opp_ms: clock_number(parts[1], "OPP_MS")?,
                    inc_ms: match parts.get(2) {
                        Some(t) => clock_number(t, "INC_MS")?,
                        None => 0,
                    },
                });
                ok()
            }
            "genmove" | "go" => {
                let movetime = match rest.split_whitespace().collect::<Vec<_>>()[..] {
                    [] => None,
                    [kw, t] if kw.eq_ignore_ascii_case("movetime") => {
                        let ms: u64 = t.parse().ok().filter(|&ms| ms > 0).ok_or_else(|| {
                            anyhow!("{cmd} movetime: '{t}' is not a positive number of milliseconds")
                        })?;
                        Some(Duration::from_millis(ms))
                    }
                    _ => bail!("{cmd} takes nothing or 'movetime T', not '{rest}'"),
                };
                if let Some(o) = self.game.outcome() {
                    bail!("the game is over ({})", o.name());
                }
                if self.player.is_none() {
                    self.player = Some(self.factory.build(&self.spec, self.seed)?);
                }
                let budget = movetime.or_else(|| {
                    self.clock.map(|c| {
                        move_budget(c.my_ms, c.inc_ms, self.game.position().ply())
                    })
                });
                let player = self.player.as_mut().expect("built");
                let started = Instant::now();
                let mv = match budget {
                    Some(b) => player.choose_move_within(&self.game, b)?,
                    None => player.choose_move(&self.game)?,
                };
                if let Some(c) = &mut self.clock {
                    let used = started.elapsed().as_millis() as u64;
                    c.my_ms = c.my_ms.saturating_sub(used) + c.inc_ms;
                }
                let mut lines = Vec::new();
                if let Some(info) = player.last_info() {
                    lines.push(info.line());
                }
                self.game.play(mv).map_err(|e| anyhow!("engine chose an illegal move: {e}"))?;
                lines.push(format!("move {mv}"));
                Ok(lines)
            }
            "legal" => Ok(vec![format!(
                "legal {}",
                self.game.legal_moves().iter().map(|m| m.to_string()).collect::<Vec<_>>().join(" ")
            )]),
            "show" | "status" => {
                let p = self.game.position();
                Ok(vec![format!(
                    "position {} variant {} ply {} result {}",
                    p.to_text(),
                    self.variant,
                    self.game.moves().len(),
                    self.game.outcome().map_or("none", |o| o.name())
                )])
            }
            "board" => {
                let mut lines: Vec<String> = self.game.position().to_diagram().lines().map(String::from).collect();
                lines.push("end".into());
                Ok(lines)
            }
            "help" => Ok(vec![
                "commands: protocol isready variant rules new position play undo player time genmove go legal show board help quit".into(),
            ]),
            other => bail!("unknown command '{other}' (try help)"),
        }
    }

    /// `startpos [moves M...]` or `TEXT SIDE [moves M...]`.
    fn set_position(&mut self, rest: &str) -> Result<()> {
        let (pos_text, moves) = match rest.split_once(" moves") {
            Some((p, m)) => (p.trim(), m.trim()),
            None => (rest.trim(), ""),
        };
        let start = if pos_text.is_empty() || pos_text == "startpos" {
            Position::start(self.variant, &self.rules)
        } else {
            Position::from_text(pos_text, self.variant).map_err(|e| anyhow!("{e}"))?
        };
        let mut g = Game::from_position(start, self.rules);
        for m in moves.split_whitespace() {
            g.play_text(m).map_err(|e| anyhow!("{e}"))?;
        }
        self.game = g;
        Ok(())
    }
}

fn one_line(s: &str) -> String {
    s.split('\n').map(str::trim).collect::<Vec<_>>().join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(r: Reply) -> Vec<String> {
        match r {
            Reply::Lines(l) | Reply::Quit(l) => l,
        }
    }

    #[test]
    fn a_session() {
        let f = PlayerFactory::new();
        let mut s = Session::new(&f, PlayerSpec::parse("alphabeta:depth=2").unwrap());
        assert_eq!(lines(s.handle("isready")), ["readyok"]);
        assert_eq!(lines(s.handle("variant 6x6")), ["ok"]);
        assert_eq!(lines(s.handle("play b1-b3")), ["ok"]);
        let out = lines(s.handle("genmove"));
        assert!(out.last().unwrap().starts_with("move "), "{out:?}");
        assert_eq!(s.game().moves().len(), 2);
        assert_eq!(lines(s.handle("undo 2")), ["ok"]);
        assert_eq!(s.game().moves().len(), 0);
        for bad in [
            "play z9-z1",
            "undo 5",
            "variant chess",
            "rules nonsense",
            "frobnicate",
            "player minimax",
            "position 8/8 b",
        ] {
            let out = lines(s.handle(bad));
            assert!(
                out.len() == 1 && out[0].starts_with("error "),
                "{bad}: {out:?}"
            );
        }
        assert!(lines(s.handle("show"))[0].starts_with("position 1bbbb1/"));
        assert_eq!(s.handle("quit"), Reply::Quit(vec!["ok bye".into()]));
    }

    /// A bad player spec is one kind of error line however it fails (parse, key, build,
    /// network load): `error player 'SPEC': WHY`, with the loader's own words once.
    #[test]
    fn a_bad_player_is_named_one_way() {
        let f = PlayerFactory::new().with_model_loader(std::sync::Arc::new(|path, _| {
            anyhow::bail!("cannot load model {}: no such file", path.display())
        }));
        let mut s = Session::new(&f, PlayerSpec::parse("alphabeta:depth=2").unwrap());
        for (bad, spec) in [
            ("player minimax", "minimax"),
            ("player alphabeta:depth=zero", "alphabeta:depth=zero"),
            ("player alphabeta:colour=red", "alphabeta:colour=red"),
            (
                "player model:path=gone.safetensors,sims=8",
                "model:path=gone.safetensors",
            ),
        ] {
            let out = lines(s.handle(bad));
            assert_eq!(out.len(), 1, "{bad}: {out:?}");
            assert!(
                out[0].starts_with(&format!("error player '{spec}")),
                "{bad}: {out:?}"
            );
            assert!(out[0].matches("cannot load model").count() <= 1, "{out:?}");
        }
    }

    #[test]
    fn move_budget_follows_the_formula() {
        let ms = |my, inc, ply| move_budget(my, inc, ply).as_millis() as u64;
        // Early: a thirtieth of the time left plus 0.8 of the increment.
        assert_eq!(ms(60_000, 0, 0), 2_000);
        assert_eq!(ms(60_000, 1_000, 1), 2_800);
        // Later: the divisor shrinks by one every two plies down to 10.
        assert_eq!(ms(60_000, 0, 20), 3_000);
        assert_eq!(ms(60_000, 0, 40), 6_000);
        assert_eq!(ms(60_000, 0, 200), 6_000);
        // Never more than half of what is left; never zero.
        assert_eq!(ms(1_000, 5_000, 0), 500);
        assert_eq!(ms(0, 0, 10), 1);
    }

    #[test]
    fn time_controls() {
        let f = PlayerFactory::new();
        let mut s = Session::new(&f, PlayerSpec::parse("alphabeta:depth=2").unwrap());
        assert_eq!(lines(s.handle("variant 6x6")), ["ok"]);
        let out = lines(s.handle("go movetime 20"));
        assert!(out.last().unwrap().starts_with("move "), "{out:?}");
        assert_eq!(s.clock(), None);
        assert_eq!(lines(s.handle("time 60000 50000 1000")), ["ok"]);
        assert_eq!(
            s.clock(),
            Some(Clock {
                my_ms: 60_000,
                opp_ms: 50_000,
                inc_ms: 1_000
            })
        );
        let out = lines(s.handle("genmove"));
        assert!(out.last().unwrap().starts_with("move "), "{out:?}");
        // The engine's thinking time was deducted and the increment added.
        let c = s.clock().unwrap();
        assert!(c.my_ms <= 61_000 && c.my_ms > 55_000, "{c:?}");
        assert_eq!(lines(s.handle("time -5 10")), ["ok"]);
        assert_eq!(s.clock().unwrap().my_ms, 0);
        assert!(lines(s.handle("go")).last().unwrap().starts_with("move "));
        assert_eq!(lines(s.handle("time off")), ["ok"]);
        assert_eq!(s.clock(), None);
        assert_eq!(s.game().moves().len(), 3);
        for (bad, needle) in [
            ("time 100", "MY_MS OPP_MS"),
            ("time 1 2 3 4", "MY_MS OPP_MS"),
            ("time abc 100", "MY_MS 'abc'"),
            ("time 100 100 x", "INC_MS 'x'"),
            ("go movetime 0", "movetime"),
            ("go movetime soon", "'soon'"),
            ("genmove fast", "'fast'"),
        ] {
            let out = lines(s.handle(bad));
            assert!(
                out.len() == 1 && out[0].starts_with("error ") && out[0].contains(needle),
                "{bad}: {out:?}"
            );
        }
        assert_eq!(s.game().moves().len(), 3);
    }

    #[test]
    fn every_variant_is_played() {
        let f = PlayerFactory::new();
        let mut s = Session::new(&f, PlayerSpec::parse("alphabeta:depth=2").unwrap());
        for variant in Variant::ALL {
            assert_eq!(lines(s.handle(&format!("variant {variant}"))), ["ok"]);
            for _ in 0..6 {
                if s.game().is_over() {
                    break;
                }
                let out = lines(s.handle("genmove"));
                let mv = out
                    .last()
                    .unwrap()
                    .strip_prefix("move ")
                    .unwrap()
                    .to_string();
                // The move text names the move on the variant's board: undo and replay it.
                assert_eq!(lines(s.handle("undo")), ["ok"], "{variant}");
                assert!(
                    lines(s.handle("legal"))[0].split(' ').any(|m| m == mv),
                    "{variant}: {mv}"
                );
                assert_eq!(lines(s.handle(&format!("play {mv}"))), ["ok"], "{variant}");
            }
            let show = lines(s.handle("show"));
            assert!(show[0].contains(&format!("variant {variant} ")), "{show:?}");
        }
        // Parachute positions carry the reserves and the pending drop; drops are moves.
        assert_eq!(lines(s.handle("variant parachute")), ["ok"]);
        assert_eq!(
            lines(s.handle("position 7w/8/8/3b4/3b4/8/6b1/w7 b 1:1 moves g2-e4")),
            ["ok"]
        );
        assert!(lines(s.handle("show"))[0].contains(" b@ 1:1 "));
        let out = lines(s.handle("genmove"));
        assert!(out.last().unwrap().starts_with("move @"), "{out:?}");
        assert!(lines(s.handle("show"))[0].ends_with("result black"));
        // Gemma removals and ambiloa players.
        assert_eq!(lines(s.handle("variant gemma")), ["ok"]);
        assert_eq!(
            lines(s.handle("position 7w/5w2/8/3b4/3b4/8/xx6/bx6 b")),
            ["ok"]
        );
        assert_eq!(lines(s.handle("genmove")).last().unwrap(), "move ~a1");
        assert_eq!(lines(s.handle("variant ambiloa")), ["ok"]);
        assert_eq!(lines(s.handle("play b1-b3 a2-c2")), ["ok"]);
        assert!(lines(s.handle("show"))[0].contains(" n variant ambiloa"));
    }
}
