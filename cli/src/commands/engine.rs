//! `loazero engine`: the line protocol of eval/PROTOCOL.md on stdin/stdout. In the
//! torch-free binary, a `player` command that asks for a network player hands the session
//! over to `loazero-torch engine`, started as a child with the session's state replayed
//! ([`Reply::HandOver`]); from then on every input line goes to it and every line it writes
//! comes out here. If it cannot start, the command is answered with an `error` line and the
//! session goes on here.

use crate::players::Players;
use crate::torch_binary;
use anyhow::{bail, Context, Result};
use eval::protocol::{Printer, Reply, Session};
use eval::PlayerSpec;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;

/// Arguments of `loazero engine`.
#[derive(clap::Args)]
#[command(after_help = eval::player::kind::spec_help())]
pub struct Args {
    /// The engine's player (a player spec: every kind and key below) until a `player`
    /// command changes it.
    #[arg(long, default_value = eval::protocol::DEFAULT_PLAYER)]
    pub player: String,
    /// The run whose rated players the `level` command offers (its ratings.csv and
    /// models). Default: runs/default once it has been rated, else the model that ships
    /// with loazero (data/shipped, or the binary's own copy of it).
    #[arg(long, value_name = "RUN_DIR")]
    pub levels: Option<std::path::PathBuf>,
}

/// The run of the `level` command's table: `given`, else `runs/default` once rated, else
/// the shipped run (the working directory's, else the binary's copy unpacked).
fn levels_run(given: Option<&std::path::Path>) -> Result<std::path::PathBuf> {
    if let Some(dir) = given {
        return Ok(dir.to_path_buf());
    }
    let default = std::path::Path::new("runs/default");
    if default.join("ratings.csv").is_file() {
        return Ok(default.to_path_buf());
    }
    let shipped = std::path::Path::new(rundir::shipped::SHIPPED_RUN);
    if shipped.join("ratings.csv").is_file() {
        return Ok(shipped.to_path_buf());
    }
    rundir::shipped::unpacked()
}

/// Writes `lines` to stdout as one block, flushed.
fn print(lines: &[String]) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    for l in lines {
        writeln!(out, "{l}")?;
    }
    out.flush()
}

/// Reads commands until `quit` or end of input; answers every command (errors as
/// `error …` lines), flushing after each.
pub fn run(args: Args, players: Players) -> Result<()> {
    let spec = PlayerSpec::parse(&args.player)?;
    let factory = players.whole_machine_factory();
    // An analysis's `info` lines; a closed output shows at the next answer's write.
    let printer: Printer = Arc::new(|line: &str| {
        let _ = print(&[line.to_string()]);
    });
    let levels = args.levels.clone();
    let mut session = Session::new(&factory, spec)
        .with_printer(printer)
        .with_levels(Box::new(move || {
            rundir::levels::of_run(&levels_run(levels.as_deref())?)
        }));
    if !players.loads_networks {
        session = session.hand_over_networks();
    }
    let mut input = std::io::stdin().lock().lines();
    while let Some(line) = input.next() {
        let line = match line {
            Ok(l) => l,
            Err(e) => {
                print(&[format!("error cannot read input: {e}")])?;
                continue;
            }
        };
        match session.handle(&line) {
            Reply::Lines(l) => print(&l)?,
            Reply::Quit(l) => {
                print(&l)?;
                break;
            }
            Reply::HandOver { player, commands } => {
                match TorchEngine::start(&player, args.levels.as_deref(), &commands) {
                    Ok(engine) => {
                        drop(session);
                        return engine.relay(input);
                    }
                    // The session goes on here, its player unchanged.
                    Err(e) => print(&[format!("error {}", format!("{e:#}").replace('\n', "; "))])?,
                }
            }
        }
    }
    Ok(())
}

/// Whether an input line is the `quit` command.
fn is_quit(line: &str) -> bool {
    line.split_whitespace()
        .next()
        .is_some_and(|w| w.eq_ignore_ascii_case("quit"))
}

/// `loazero-torch engine`, started as this engine's child to take its session over.
struct TorchEngine {
    child: Child,
    to: ChildStdin,
    from: BufReader<ChildStdout>,
    /// Its path and subcommand, for errors.
    name: String,
}

impl TorchEngine {
    /// Starts `loazero-torch engine --player PLAYER [--levels RUN_DIR]` and sends it `commands`: the session's
    /// state, each to be answered `ok`, then the `player` command asked for, whose answer
    /// [`TorchEngine::relay`] prints. Fails (the child killed) if it cannot start or does
    /// not take the state.
    fn start(
        player: &str,
        levels: Option<&std::path::Path>,
        commands: &[String],
    ) -> Result<TorchEngine> {
        let path = torch_binary::path()?;
        let mut command = Command::new(&path);
        command.args(["engine", "--player", player]);
        if let Some(levels) = levels {
            command.arg("--levels").arg(levels);
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| torch_binary::cannot_run(&path, e))?;
        let mut engine = TorchEngine {
            to: child.stdin.take().expect("a piped stdin"),
            from: BufReader::new(child.stdout.take().expect("a piped stdout")),
            child,
            name: format!("{} engine", path.display()),
        };
        match engine.send_state(commands) {
            Ok(()) => Ok(engine),
            Err(e) => {
                let _ = engine.child.kill();
                let _ = engine.child.wait();
                Err(e)
            }
        }
    }

    /// Sends `commands`, all but the last answered `ok` (see [`TorchEngine::start`]).
    fn send_state(&mut self, commands: &[String]) -> Result<()> {
        let (ask, state) = commands
            .split_last()
            .expect("a player command to hand over");
        for command in state {
            self.send(command)?;
            let mut answer = String::new();
            self.from
                .read_line(&mut answer)
                .with_context(|| format!("{}: no answer to '{command}'", self.name))?;
            if answer.trim_end() != "ok" {
                bail!(
                    "{} did not take the session's state: '{command}' answered '{}'",
                    self.name,
                    answer.trim_end()
                );
            }
        }
        self.send(ask)
    }

    /// Sends one line.
    fn send(&mut self, line: &str) -> Result<()> {
        writeln!(self.to, "{line}")
            .and_then(|()| self.to.flush())
            .with_context(|| format!("{}: cannot send '{line}'", self.name))
    }

    /// Passes it every line of `input` up to `quit` (or until it ends) and prints every line
    /// it writes, until it ends.
    fn relay(self, input: impl Iterator<Item = std::io::Result<String>>) -> Result<()> {
        let TorchEngine {
            mut child,
            mut to,
            from,
            name,
        } = self;
        let copy = std::thread::spawn(move || -> std::io::Result<()> {
            for line in from.lines() {
                print(&[line?])?;
            }
            Ok(())
        });
        for line in input {
            let line = line.context("cannot read input")?;
            // A failed write: the engine has ended; its exit status tells.
            if writeln!(to, "{line}").and_then(|()| to.flush()).is_err() || is_quit(&line) {
                break;
            }
        }
        drop(to);
        let status = child
            .wait()
            .with_context(|| format!("{name}: cannot wait for it"))?;
        copy.join()
            .map_err(|_| anyhow::anyhow!("{name}: the thread copying its output failed"))?
            .context("cannot write the engine's output")?;
        if !status.success() {
            bail!("{name} ended with {status}");
        }
        Ok(())
    }
}
