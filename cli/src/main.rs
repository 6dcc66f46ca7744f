//! `loazero`: the command line users run. It never links libtorch (whose static
//! initialisers alone cost ~0.65 s), so the torch-free subcommands start at once.
//!
//! Dispatch rule: the first argument names a subcommand of
//! [`loazero::commands::Command`] and no later argument may name a network
//! ([`eval::player::mentions_network`]: it mentions `model` or `path=`, as every player
//! spec that loads a network does: `model:…`, `ubfm:path=…`) → parsed and run here;
//! anything else (`run`, `info`, `export`, `bench`, `selfplay`, `plot`, `--help`, a
//! `model:` or `ubfm:path=` player, …) → this process is replaced by `loazero-torch` from
//! the same directory, with the same arguments.
//! Both binaries parse with the same clap definitions (this package's `src/commands/`).

use clap::Parser;
use loazero::commands;
use loazero::interrupt;
use loazero::players::Players;
use std::ffi::OsString;
use std::os::unix::process::CommandExt;

/// The name of the binary with torch, looked for beside this one.
const FULL_BINARY: &str = "loazero-torch";

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

/// True if the command line `args` (without the program name) is run by this binary.
fn runs_here(args: &[OsString]) -> bool {
    let Some(sub) = args.first().and_then(|a| a.to_str()) else {
        return false;
    };
    commands::is_torch_free(sub)
        && !args[1..]
            .iter()
            .any(|a| eval::player::mentions_network(&a.to_string_lossy()))
}

/// Replaces this process by `loazero-torch` with the same arguments; returns only on
/// failure, with an error naming the path tried.
fn exec_full(argv0: Option<OsString>, args: &[OsString]) -> anyhow::Error {
    let full = match std::env::current_exe() {
        Ok(exe) => exe.with_file_name(FULL_BINARY),
        Err(e) => return anyhow::anyhow!("cannot locate the loazero binary itself: {e}"),
    };
    let mut command = std::process::Command::new(&full);
    if let Some(a) = argv0 {
        command.arg0(a);
    }
    let err = command.args(args).exec();
    anyhow::anyhow!(
        "cannot run {}: {err} (this command needs torch, which the loazero binary runs \
         from {FULL_BINARY} beside it; build both with `make build`)",
        full.display()
    )
}

fn main() {
    let mut argv = std::env::args_os();
    let argv0 = argv.next();
    let args: Vec<OsString> = argv.collect();
    let result = if runs_here(&args) {
        let cli: Cli = loazero::usage::parse_or_exit(
            std::iter::once(argv0.unwrap_or_else(|| "loazero".into()))
                .chain(args)
                .collect(),
        );
        commands::run(cli.command, Players::torch_free())
    } else {
        Err(exec_full(argv0, &args))
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
