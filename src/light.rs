//! `loazero`: the command line users run. It never links libtorch (whose static
//! initialisers alone cost ~0.65 s), so the torch-free subcommands start at once.
//!
//! Dispatch rule: the first argument names a subcommand of
//! [`commands::torch_free::Command`] and no later argument may name a network
//! ([`eval::player::mentions_network`]: it mentions `model` or `path=`, as every player
//! spec that loads a network does: `model:…`, `ubfm:path=…`) → parsed and run here;
//! anything else (`run`, `info`, `export`, `bench`, `selfplay`, `plot`, `--help`, a
//! `model:` or `ubfm:path=` player, …) → this process is replaced by `loazero-torch` from
//! the same directory, with the same arguments.
//! Both binaries parse with the same clap definitions (`src/commands/`).

use clap::Parser;
use std::ffi::OsString;
use std::os::unix::process::CommandExt;

#[allow(dead_code)] // loazero-torch uses every item, this binary only some
mod interrupt;
mod progress;

/// The torch-free part of `src/commands/`; `net` (model loading) is a stub here.
#[allow(dead_code)] // the shared files carry items only loazero-torch uses
mod commands {
    pub mod bestmove;
    pub mod common;
    pub mod engine;
    pub mod match_cmd;
    pub mod moves;
    pub mod perft;
    pub mod ratings;
    pub mod replay;
    pub mod show;
    pub mod torch_free;

    /// Stand-in for `src/commands/net.rs`: this binary cannot load networks.
    pub mod net {
        use anyhow::{bail, Result};

        /// Always an error. Reached only when a model player is asked for after start
        /// (the `player` command of `loazero engine`): command lines naming a model are
        /// run by loazero-torch.
        pub fn net_evaluator(
            path: &std::path::Path,
            _device: selfplay::Device,
            _variant: Option<loa::Variant>,
        ) -> Result<std::sync::Arc<dyn selfplay::Evaluator>> {
            bail!(
                "cannot load model {}: this process runs without torch; start it with a \
                 model player on its command line (e.g. `loazero engine --player model:…`) \
                 or run loazero-torch",
                path.display()
            )
        }

        /// A factory whose model players fail to load, as [`net_evaluator`].
        pub fn eval_player_factory(_timed: bool) -> eval::PlayerFactory {
            eval::PlayerFactory::new().with_model_loader(std::sync::Arc::new(|path, net| {
                net_evaluator(path, net.device, None)
            }))
        }
    }
}

/// The torch-free part of `src/run/`: a run's layout, the games that rate it
/// (`loazero ratings RUN`), and read-only views of runs kept in a store (`--store`).
#[allow(dead_code)] // the shared files carry items only loazero-torch uses
mod run {
    pub mod bundle;
    pub mod layout;
    pub mod rated_games;
    pub mod store_copy;
    pub mod store_view;
}

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
    command: commands::torch_free::Command,
}

/// True if the command line `args` (without the program name) is run by this binary.
fn runs_here(args: &[OsString]) -> bool {
    let Some(sub) = args.first().and_then(|a| a.to_str()) else {
        return false;
    };
    commands::torch_free::is_torch_free(sub)
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
         from {FULL_BINARY} beside it; build both with `cargo build --release --bins`)",
        full.display()
    )
}

fn main() {
    let mut argv = std::env::args_os();
    let argv0 = argv.next();
    let args: Vec<OsString> = argv.collect();
    let result = if runs_here(&args) {
        let cli =
            Cli::parse_from(std::iter::once(argv0.unwrap_or_else(|| "loazero".into())).chain(args));
        commands::torch_free::run(cli.command)
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
