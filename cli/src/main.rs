//! `loazero`: the command line users run. It never links libtorch (whose static
//! initialisers alone cost ~0.65 s), so the torch-free subcommands start at once.
//!
//! Dispatch rule: the first argument names a subcommand of
//! [`loazero::commands::Command`], the command line parses, and none of the player specs it
//! gives loads a network ([`loazero::commands::Command::loads_network`]: a `model:` or
//! `ubfm:path=` player; a learned alpha-beta evaluation, `alphabeta:eval=FILE`, does not)
//! → run here; a command line of such a subcommand that does not parse (or asks for its
//! `--help`) → clap's answer, from here; anything else (`run`, `info`, `export`, `bench`,
//! `selfplay`, `plot`, `--help`, a network player, …) → this process is replaced by
//! `loazero-torch` from the same directory, with the same arguments.
//! Both binaries parse with the same clap definitions (this package's `src/commands/`).

use clap::Parser;
use loazero::commands;
use loazero::interrupt;
use loazero::players::Players;
use loazero::torch_binary;
use std::ffi::OsString;
use std::os::unix::process::CommandExt;

#[derive(Parser)]
#[command(
    name = "loazero",
    version,
    about = "AlphaZero-style self-play trainer for Lines of Action"
)]
struct Cli {
    #[command(subcommand)]
    command: commands::Command,
}

/// The command line `args` (without the program name), parsed, if this binary runs it
/// (module doc); `None` for `loazero-torch`. Exits with clap's message (or
/// [`loazero::usage`]'s advice) when the command line of a torch-free subcommand does not parse.
fn parse_here(argv0: &Option<OsString>, args: &[OsString]) -> Option<Cli> {
    let sub = args.first().and_then(|a| a.to_str())?;
    if !commands::is_torch_free(sub) {
        return None;
    }
    let program = argv0.clone().unwrap_or_else(|| "loazero".into());
    let cli: Cli = loazero::usage::parse_or_exit(
        std::iter::once(program)
            .chain(args.iter().cloned())
            .collect(),
    );
    (!cli.command.loads_network()).then_some(cli)
}

/// Replaces this process by `loazero-torch` with the same arguments; returns only on
/// failure, with an error naming the path tried.
fn exec_full(argv0: Option<OsString>, args: &[OsString]) -> anyhow::Error {
    let full = match torch_binary::path() {
        Ok(path) => path,
        Err(e) => return e,
    };
    let mut command = std::process::Command::new(&full);
    if let Some(a) = argv0 {
        command.arg0(a);
    }
    torch_binary::cannot_run(&full, command.args(args).exec())
}

fn main() {
    let mut argv = std::env::args_os();
    let argv0 = argv.next();
    let args: Vec<OsString> = argv.collect();
    let result = match parse_here(&argv0, &args) {
        Some(cli) => commands::run(cli.command, Players::torch_free()),
        None => Err(exec_full(argv0, &args)),
    };
    if let Err(err) = result {
        if interrupt::is_interrupted(&err) {
            eprintln!("{err:#}");
            std::process::exit(130);
        }
        eprintln!("error: {err:#}");
        std::process::exit(1);
    }
}
