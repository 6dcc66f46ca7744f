//! The `loazero engine` line protocol (specified in eval/PROTOCOL.md): a [`Session`] holds
//! the game and the engine player and answers one command line at a time. Never panics on
//! input: every problem is an `error …` line. An analysis (`go infinite`) searches on a
//! thread of its own while the session goes on reading commands; its `info` lines go to
//! the session's [`Printer`] as they come, and `stop` ends it.

use crate::player::{Analysis, Player, PlayerFactory, PlayerSpec, SearchInfo};
use anyhow::{anyhow, bail, Result};
use loa::{Game, Move, Position, Rules, Variant};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Default engine player.
pub const DEFAULT_PLAYER: &str = "alphabeta:ms=1000";

/// Longest time between two `info` lines of an analysis: when no depth completes for this
/// long, a progress line repeats the last one with the nodes and time so far.
pub const PROGRESS_PERIOD: Duration = Duration::from_secs(1);

/// Writes one output line as it comes (the analysis's `info` lines), flushed: shared by
/// the session and its analysis thread, so it writes whole lines.
pub type Printer = Arc<dyn Fn(&str) + Send + Sync>;

/// A strength level the `level` command offers: a player rated in a run's last rating
/// round, playing as it was rated (`rundir::levels` makes the table from a run).
#[derive(Clone, Debug, PartialEq)]
pub struct Level {
    /// Its name in the run's ratings (`gen-0080`, `alphabeta:depth=3`, `nnue-0001`).
    pub name: String,
    /// The player spec that plays it as it was rated.
    pub spec: String,
    /// Its Bradley–Terry Elo in the run's ratings (random = 0).
    pub elo: f64,
    /// The half-width of its 95% interval, where known.
    pub interval: Option<f64>,
}

/// Where a session's levels come from, asked on the first `level` command: the table,
/// weakest first, or why there is none.
pub type LevelSource<'f> = Box<dyn FnMut() -> Result<Vec<Level>> + 'f>;

/// An analysis running on its own thread (`go infinite` until `stop`).
struct Running {
    analysis: Analysis,
    /// Gives back the player and its answer.
    search: JoinHandle<(Box<dyn Player>, Result<Move>)>,
    /// Writes the progress lines until the search ends.
    progress: JoinHandle<()>,
}

impl Running {
    /// Stops the analysis and waits for it: the player back (`None` if its thread
    /// panicked) and its best move.
    fn stop(self) -> (Option<Box<dyn Player>>, Result<Move>) {
        self.analysis.stop.store(true, Ordering::Relaxed);
        let joined = self.search.join();
        let _ = self.progress.join();
        match joined {
            Ok((player, mv)) => (Some(player), mv),
            Err(_) => (None, Err(anyhow!("the analysis thread failed"))),
        }
    }
}

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
    /// Principal variations an analysis reports (`multipv N`).
    multipv: u32,
    /// Where an analysis writes its `info` lines.
    printer: Printer,
    /// The analysis running, if any.
    running: Option<Running>,
    /// Whether a player that loads a network is handed over ([`Reply::HandOver`]) instead
    /// of built here.
    hand_over_networks: bool,
    /// Where the `level` command's table comes from, and the table once asked for.
    level_source: Option<LevelSource<'f>>,
    levels: Option<Vec<Level>>,
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
    /// This process cannot load the network of the player asked for
    /// ([`Session::hand_over_networks`]): start an engine that can, with `player` as its
    /// player, send it `commands` (the session's state, then the `player` command asked
    /// for), read one line for each, print the last, and from then on pass it every input
    /// line and print everything it writes.
    HandOver {
        /// The player so far (kept by the new engine if the new one fails to build).
        player: String,
        /// The commands that rebuild the session's state and then ask for the new player.
        commands: Vec<String>,
    },
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
            multipv: 1,
            printer: Arc::new(|_| {}),
            running: None,
            hand_over_networks: false,
            level_source: None,
            levels: None,
        }
    }

    /// The session with the `level` command's table from `source` (asked once, on the
    /// first `level` command; without a source `level` is an error saying so).
    pub fn with_levels(mut self, source: LevelSource<'f>) -> Session<'f> {
        self.level_source = Some(source);
        self
    }

    /// The session with `printer` writing its analyses' `info` lines (by default they are
    /// dropped).
    pub fn with_printer(mut self, printer: Printer) -> Session<'f> {
        self.printer = printer;
        self
    }

    /// The session of a process that cannot load networks (`loazero`, without torch): a
    /// `player` command whose spec loads one is answered [`Reply::HandOver`].
    pub fn hand_over_networks(mut self) -> Session<'f> {
        self.hand_over_networks = true;
        self
    }

    /// The commands that rebuild this session's state in a new engine: the variant, the
    /// rules, the position with the moves since, the clock and `multipv`.
    pub fn state_commands(&self) -> Vec<String> {
        let moves: Vec<String> = self.game.moves().iter().map(|m| m.to_string()).collect();
        let mut position = format!("position {}", self.game.start().to_text());
        if !moves.is_empty() {
            position += &format!(" moves {}", moves.join(" "));
        }
        let mut commands = vec![
            format!("variant {}", self.variant),
            format!("rules {}", self.rules),
            position,
        ];
        if let Some(c) = self.clock {
            commands.push(format!("time {} {} {}", c.my_ms, c.opp_ms, c.inc_ms));
        }
        if self.multipv != 1 {
            commands.push(format!("multipv {}", self.multipv));
        }
        commands
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
        let mut rest = rest.trim().to_string();
        let mut cmd = cmd.to_ascii_lowercase();
        if cmd == "quit" {
            if let Some(running) = self.running.take() {
                let _ = running.stop();
            }
            return Reply::Quit(vec!["ok bye".into()]);
        }
        if self.running.is_some() && !matches!(cmd.as_str(), "stop" | "isready") {
            return Reply::Lines(vec![format!(
                "error {cmd}: an analysis is running; only stop, isready and quit until stop"
            )]);
        }
        // `level K` and `level elo E` are `player` with the level's spec.
        if cmd == "level" && !rest.is_empty() && self.running.is_none() {
            match self.level_spec(&rest) {
                Ok(spec) => (cmd, rest) = ("player".into(), spec),
                Err(e) => {
                    return Reply::Lines(vec![format!("error {}", one_line(&format!("{e:#}")))])
                }
            }
        }
        let rest = rest.as_str();
        if cmd == "player" && self.hand_over_networks {
            if let Ok(spec) = PlayerSpec::parse(rest) {
                if spec.network().is_some() {
                    let mut commands = self.state_commands();
                    commands.push(format!("player {rest}"));
                    return Reply::HandOver {
                        player: self.spec.name(),
                        commands,
                    };
                }
            }
        }
        match self.command(&cmd, rest) {
            Ok(lines) => Reply::Lines(lines),
            Err(e) => Reply::Lines(vec![format!("error {}", one_line(&format!("{e:#}")))]),
        }
    }

    fn command(&mut self, cmd: &str, rest: &str) -> Result<Vec<String>> {
        let ok = || Ok(vec!["ok".to_string()]);
        match cmd {
            "protocol" => Ok(vec!["protocol loazero-engine 1".into()]),
            "isready" => {
                // The player is built now, so that a file it cannot load is reported here.
                if self.running.is_none() {
                    self.built_player()?;
                }
                Ok(vec!["readyok".into()])
            }
            "multipv" => {
                self.multipv = rest.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                    anyhow!("multipv takes a positive number of principal variations, not '{rest}'")
                })?;
                ok()
            }
            "stop" => {
                let running = self.running.take().ok_or_else(|| {
                    anyhow!("stop: no analysis is running (go infinite starts one)")
                })?;
                let (player, mv) = running.stop();
                self.player = player;
                Ok(vec![format!("bestmove {}", mv?)])
            }
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
            "go" if rest.eq_ignore_ascii_case("infinite") => {
                self.start_analysis()?;
                Ok(Vec::new())
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
                    _ => bail!("{cmd} takes nothing, 'movetime T' or (go) 'infinite', not '{rest}'"),
                };
                if let Some(o) = self.game.outcome() {
                    bail!("the game is over ({})", o.name());
                }
                self.built_player()?;
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
            "level" => {
                let mut lines: Vec<String> = self
                    .level_table()?
                    .iter()
                    .enumerate()
                    .map(|(i, l)| match l.interval {
                        Some(ci) => format!("level {} {} elo {:.0} ±{:.0} {}", i + 1, l.name, l.elo, ci, l.spec),
                        None => format!("level {} {} elo {:.0} {}", i + 1, l.name, l.elo, l.spec),
                    })
                    .collect();
                lines.push("end".into());
                Ok(lines)
            }
            "help" => Ok(vec![
                "commands: protocol isready variant rules new position play undo player level time multipv genmove go stop legal show board help quit".into(),
            ]),
            other => bail!("unknown command '{other}' (try help)"),
        }
    }

    /// The levels, weakest first, asked from the source on first use.
    fn level_table(&mut self) -> Result<&[Level]> {
        if self.levels.is_none() {
            let source = self.level_source.as_mut().ok_or_else(|| {
                anyhow!("level: this engine has no levels (loazero engine offers a run's rated players)")
            })?;
            let table = source()?;
            if table.is_empty() {
                bail!("level: the run has no rated player to offer");
            }
            self.levels = Some(table);
        }
        Ok(self.levels.as_deref().expect("just set"))
    }

    /// The spec of `level K` (1 = the weakest) or `level elo E` (the level nearest E).
    fn level_spec(&mut self, rest: &str) -> Result<String> {
        let table = self.level_table()?;
        let words: Vec<&str> = rest.split_whitespace().collect();
        let level = match words[..] {
            [k] => {
                let k: usize = k
                    .parse()
                    .ok()
                    .filter(|&k| (1..=table.len()).contains(&k))
                    .ok_or_else(|| {
                        anyhow!(
                            "level '{k}': expected 1 (the weakest) to {} (the strongest), or elo E",
                            table.len()
                        )
                    })?;
                &table[k - 1]
            }
            [kw, e] if kw.eq_ignore_ascii_case("elo") => {
                let e: f64 = e
                    .parse()
                    .ok()
                    .filter(|e: &f64| e.is_finite())
                    .ok_or_else(|| anyhow!("level elo '{e}': not a number"))?;
                table
                    .iter()
                    .min_by(|a, b| (a.elo - e).abs().total_cmp(&(b.elo - e).abs()))
                    .expect("a table is not empty")
            }
            _ => bail!(
                "level takes K (1 to {}) or elo E, not '{rest}'",
                table.len()
            ),
        };
        Ok(level.spec.clone())
    }

    /// The engine player, built from its spec if it is not yet.
    fn built_player(&mut self) -> Result<&mut Box<dyn Player>> {
        if self.player.is_none() {
            self.player = Some(self.factory.build(&self.spec, self.seed)?);
        }
        Ok(self.player.as_mut().expect("built"))
    }

    /// `go infinite`: the player analyses the position on a thread of its own, its reports
    /// printed as `info` lines, and a progress line printed whenever no report came for
    /// [`PROGRESS_PERIOD`], until `stop`.
    fn start_analysis(&mut self) -> Result<()> {
        if let Some(o) = self.game.outcome() {
            bail!("the game is over ({})", o.name());
        }
        self.built_player()?;
        let mut player = self.player.take().expect("built");
        let game = self.game.clone();
        let analysis = Analysis::new(self.multipv);
        let started = Instant::now();
        // The last report of the best move, for the progress lines.
        let last: Arc<Mutex<Option<SearchInfo>>> = Arc::default();
        let (done, wait) = mpsc::channel::<()>();
        let search = {
            let (analysis, printer, last) = (analysis.clone(), self.printer.clone(), last.clone());
            std::thread::spawn(move || {
                let mv = player.analyse(&game, &analysis, &mut |info: SearchInfo| {
                    printer(&info.line());
                    if info.multipv.unwrap_or(1) == 1 {
                        *last.lock().expect("last report lock") = Some(info);
                    }
                });
                drop(done);
                (player, mv)
            })
        };
        let progress = {
            let (nodes, printer) = (analysis.nodes.clone(), self.printer.clone());
            std::thread::spawn(move || {
                while let Err(RecvTimeoutError::Timeout) = wait.recv_timeout(PROGRESS_PERIOD) {
                    let report = last.lock().expect("last report lock").clone();
                    if let Some(info) = report {
                        let nodes = nodes.load(Ordering::Relaxed).max(info.nodes);
                        printer(&info.progressed(nodes, started.elapsed()).line());
                    }
                }
            })
        };
        self.running = Some(Running {
            analysis,
            search,
            progress,
        });
        Ok(())
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

impl Drop for Session<'_> {
    /// An analysis still running is stopped and waited for.
    fn drop(&mut self) {
        if let Some(running) = self.running.take() {
            let _ = running.stop();
        }
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
            Reply::HandOver { commands, .. } => panic!("handed over: {commands:?}"),
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

    /// `isready` builds the player: a file it cannot load is an error line naming the file
    /// and why, not `readyok` (and not only at `genmove`).
    #[test]
    fn isready_reports_a_player_that_cannot_be_built() {
        let f = PlayerFactory::new();
        let gone = "alphabeta:depth=2,eval=gone/nnue-0009.safetensors";
        let mut s = Session::new(&f, PlayerSpec::parse(gone).unwrap());
        let out = lines(s.handle("isready"));
        assert_eq!(out.len(), 1, "{out:?}");
        assert!(
            out[0].starts_with("error player '") && out[0].contains("gone/nnue-0009.safetensors"),
            "{out:?}"
        );
        assert!(out[0].to_lowercase().contains("no such file"), "{out:?}");
        assert_eq!(lines(s.handle("player alphabeta:depth=1")), ["ok"]);
        assert_eq!(lines(s.handle("isready")), ["readyok"]);
    }

    /// A session that cannot load networks hands a network player over with its state as
    /// commands, which rebuild the same session in another engine.
    #[test]
    fn a_network_player_is_handed_over_with_the_state() {
        let f = PlayerFactory::new();
        let mut s =
            Session::new(&f, PlayerSpec::parse("alphabeta:depth=2").unwrap()).hand_over_networks();
        for command in [
            "variant 6x6",
            "rules classic,ply-limit=300",
            "play b1-b3 a2-c2",
            "time 60000 50000 1000",
            "multipv 2",
        ] {
            assert_eq!(lines(s.handle(command)), ["ok"], "{command}");
        }
        // A player without a network is built here, as before.
        assert_eq!(lines(s.handle("player alphabeta:depth=1")), ["ok"]);
        let Reply::HandOver { player, commands } =
            s.handle("player model:path=m.safetensors,sims=4")
        else {
            panic!("not handed over");
        };
        assert_eq!(player, "alphabeta:depth=1");
        let (ask, state) = commands.split_last().unwrap();
        assert_eq!(ask, "player model:path=m.safetensors,sims=4");
        let mut other = Session::new(&f, PlayerSpec::parse(&player).unwrap());
        for command in state {
            assert_eq!(lines(other.handle(command)), ["ok"], "{command}");
        }
        assert_eq!(lines(other.handle("show")), lines(s.handle("show")));
        assert_eq!(other.clock(), s.clock());
        assert_eq!(other.state_commands(), state);
        // A spec that does not parse is this session's error.
        assert!(lines(s.handle("player model:path=m.st,bogus=1"))[0].starts_with("error "));
    }

    /// `level` lists the session's levels weakest first (asking its source once), `level
    /// K` and `level elo E` make a level's spec the player (a network one handed over like
    /// `player`), and a bad level or a session without levels is an error saying so.
    #[test]
    fn levels_are_listed_and_played() {
        let f = PlayerFactory::new();
        let mut s = Session::new(&f, PlayerSpec::parse("random").unwrap());
        let e = lines(s.handle("level 1"));
        assert!(
            e[0].starts_with("error level: this engine has no levels"),
            "{e:?}"
        );
        let level = |name: &str, spec: &str, elo: f64, interval| Level {
            name: name.into(),
            spec: spec.into(),
            elo,
            interval,
        };
        let table = vec![
            level("random", "random", 0.0, Some(0.0)),
            level("alphabeta:depth=1", "alphabeta:depth=1", 745.1, Some(200.9)),
            level(
                "gen-0080",
                "model:path=run/models/gen-0080.safetensors,sims=64",
                1303.8,
                None,
            ),
        ];
        let asked = std::rc::Rc::new(std::cell::Cell::new(0));
        let counter = asked.clone();
        let mut s = Session::new(&f, PlayerSpec::parse("random").unwrap())
            .with_levels(Box::new(move || {
                counter.set(counter.get() + 1);
                Ok(table.clone())
            }))
            .hand_over_networks();
        assert_eq!(
            lines(s.handle("level")),
            [
                "level 1 random elo 0 ±0 random",
                "level 2 alphabeta:depth=1 elo 745 ±201 alphabeta:depth=1",
                "level 3 gen-0080 elo 1304 model:path=run/models/gen-0080.safetensors,sims=64",
                "end"
            ]
        );
        assert_eq!(lines(s.handle("level 2")), ["ok"]);
        assert_eq!(s.spec.name(), "alphabeta:depth=1");
        assert_eq!(lines(s.handle("level elo 100")), ["ok"]);
        assert_eq!(s.spec.name(), "random");
        assert_eq!(lines(s.handle("level ELO 900")), ["ok"]);
        assert_eq!(s.spec.name(), "alphabeta:depth=1");
        let Reply::HandOver { commands, .. } = s.handle("level 3") else {
            panic!("a network level is not handed over");
        };
        assert_eq!(
            commands.last().unwrap(),
            "player model:path=run/models/gen-0080.safetensors,sims=64"
        );
        for bad in ["level 0", "level 4", "level x", "level elo x", "level 1 2"] {
            let e = lines(s.handle(bad));
            assert!(e[0].starts_with("error level"), "{bad}: {e:?}");
        }
        assert_eq!(asked.get(), 1);
    }

    /// The lines a session's printer wrote.
    fn printed() -> (Printer, Arc<Mutex<Vec<String>>>) {
        let lines: Arc<Mutex<Vec<String>>> = Arc::default();
        let sink = lines.clone();
        let printer: Printer = Arc::new(move |l: &str| sink.lock().unwrap().push(l.to_string()));
        (printer, lines)
    }

    /// `go infinite` deepens until `stop`, printing the `multipv` best moves of every depth
    /// as `info` lines; the session reads commands meanwhile; `stop` answers the best move
    /// of the last completed depth and leaves the position as it was.
    #[test]
    fn analysis_runs_until_stop() {
        let f = PlayerFactory::new();
        let (printer, out) = printed();
        let mut s = Session::new(&f, PlayerSpec::parse("alphabeta:threads=1").unwrap())
            .with_printer(printer);
        assert_eq!(lines(s.handle("stop"))[0].split(' ').next(), Some("error"));
        assert_eq!(lines(s.handle("multipv 3")), ["ok"]);
        assert!(lines(s.handle("multipv 0"))[0].starts_with("error multipv"));
        assert_eq!(lines(s.handle("go infinite")), Vec::<String>::new());
        assert_eq!(lines(s.handle("isready")), ["readyok"]);
        assert!(lines(s.handle("play b1-b3"))[0].starts_with("error play: an analysis"));
        // Wait for depth 3's third line (no time limit: the analysis goes on until stopped).
        let infos = |out: &Arc<Mutex<Vec<String>>>| -> Vec<SearchInfo> {
            let lines = out.lock().unwrap().clone();
            lines
                .iter()
                .map(|l| SearchInfo::parse(l).unwrap())
                .collect()
        };
        while !infos(&out)
            .iter()
            .any(|i| i.depth >= Some(3) && i.multipv == Some(3))
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        let answer = lines(s.handle("stop"));
        let infos = infos(&out);
        for depth in 1..=3 {
            let firsts: Vec<&str> = (1..=3)
                .map(|rank| {
                    let info = infos
                        .iter()
                        .find(|i| i.depth == Some(depth) && i.multipv == Some(rank))
                        .unwrap_or_else(|| panic!("depth {depth} rank {rank}: {infos:?}"));
                    info.pv[0].as_str()
                })
                .collect();
            assert!(
                firsts[0] != firsts[1] && firsts[1] != firsts[2] && firsts[0] != firsts[2],
                "{firsts:?}"
            );
        }
        let best = infos.iter().rev().find(|i| i.multipv == Some(1)).unwrap();
        assert_eq!(answer, [format!("bestmove {}", best.pv[0])]);
        assert_eq!(s.game().moves().len(), 0);
        // The player is back: the session goes on.
        assert!(lines(s.handle("go movetime 20"))
            .last()
            .unwrap()
            .starts_with("move "));
        assert_eq!(lines(s.handle("go infinite")), Vec::<String>::new());
        assert_eq!(s.handle("quit"), Reply::Quit(vec!["ok bye".into()]));
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
