//! The `loazero engine` line protocol (specified in eval/PROTOCOL.md): a [`Session`] holds
//! the game and the engine player and answers one command line at a time. Never panics on
//! input: every problem is an `error …` line.

use crate::player::{Player, PlayerFactory, PlayerSpec};
use anyhow::{anyhow, bail, Result};
use loa::{Game, Position, Rules, Variant};

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
        }
    }

    /// The current game.
    pub fn game(&self) -> &Game {
        &self.game
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
                self.variant = rest.parse().map_err(|e: String| anyhow!(e))?;
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
            "genmove" | "go" => {
                if let Some(o) = self.game.outcome() {
                    bail!("the game is over ({})", o.name());
                }
                if self.player.is_none() {
                    self.player = Some(self.factory.build(&self.spec, self.seed)?);
                }
                let player = self.player.as_mut().expect("built");
                let mv = player.choose_move(&self.game)?;
                let mut lines = Vec::new();
                if let Some(info) = player.last_info() {
                    lines.push(format!("info {info}"));
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
                "commands: protocol isready variant rules new position play undo player genmove legal show board help quit".into(),
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
