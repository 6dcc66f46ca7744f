//! `loazero serve`: the web app (play, analyse, replay, dashboard) and its JSON API.

use anyhow::Result;
use std::net::IpAddr;
use std::path::PathBuf;

/// Arguments of `loazero serve`.
#[derive(clap::Args)]
pub struct Args {
    /// A run directory to serve (its games, metrics and promoted models); repeat for
    /// several. Model files outside the served directories cannot be loaded.
    #[arg(long = "dir", value_name = "RUN_DIR")]
    pub dirs: Vec<PathBuf>,
    /// Address to listen on. The default serves this machine only; another address makes
    /// the app (and every served directory) reachable from the network.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: IpAddr,
    /// Port to listen on (0: any free port; the URL printed names it).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// Searches (moves, analyses) that run at the same time; more wait their turn
    /// (default: the number of cores).
    #[arg(long)]
    pub searches: Option<usize>,
}

/// Serves until interrupted (Ctrl-C): prints `loazero serve: http://ADDR:PORT/` on its
/// first line of standard output once it listens.
pub fn run(args: Args) -> Result<()> {
    let searches = args.searches.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
    });
    crate::serve::serve(crate::serve::ServeConfig {
        dirs: args.dirs,
        bind: args.bind,
        port: args.port,
        searches: searches.max(1),
    })
}
