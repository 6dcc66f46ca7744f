//! `loazero serve`: the web app (play, analyse, replay, dashboard) and its JSON API.

use anyhow::{bail, Result};
use std::net::IpAddr;
use std::path::{Path, PathBuf};

pub use rundir::shipped::SHIPPED_RUN;

/// Arguments of `loazero serve`.
#[derive(clap::Args)]
pub struct Args {
    /// A run directory to serve (its games, metrics and promoted models); repeat for
    /// several. Model files outside the served directories cannot be loaded. Without
    /// --dir and --store: runs/default once it has a promoted model, else the small
    /// trained model that ships with loazero (data/shipped).
    #[arg(long = "dir", value_name = "RUN_DIR")]
    pub dirs: Vec<PathBuf>,
    /// Run directories named without `--dir` (`serve RUN_DIR`, as `plot` and `ladder`
    /// still read them): served as if given with `--dir`, with a note of the spelling.
    #[arg(value_name = "RUN_DIR", hide = true)]
    pub dirs_positional: Vec<PathBuf>,
    #[arg(
        long = "store",
        value_name = "URL",
        help = concat!(
            "A run kept in a store to serve, read-only (", loazero::store_forms!(),
            "); repeat for several. It is served from a local view (--cache) brought up to \
             date every --refresh seconds, so the dashboard follows a live run"
        )
    )]
    pub stores: Vec<String>,
    #[arg(
        long,
        value_name = "DIR",
        requires = "stores",
        help = concat!(
            "With one --store: the local cache of its view (CACHE/view). ",
            loazero::cache_default!()
        )
    )]
    pub cache: Option<PathBuf>,
    /// With --store: seconds between two refreshes of the views (each lists the store and
    /// downloads what changed).
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 10.0,
        requires = "stores"
    )]
    pub refresh: f64,
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
pub fn run(mut args: Args) -> Result<()> {
    if !args.dirs_positional.is_empty() {
        loazero::args::note_older_spelling("serve RUN_DIR", "serve --dir RUN_DIR");
        args.dirs.append(&mut args.dirs_positional);
    }
    let searches = args.searches.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
    });
    if args.cache.is_some() && args.stores.len() > 1 {
        bail!("--cache names the view of one store; leave it out to serve several --store");
    }
    if !(args.refresh.is_finite() && args.refresh >= 0.5) {
        bail!("--refresh {}: expected at least 0.5 seconds", args.refresh);
    }
    let mut views = Vec::new();
    for spec in &args.stores {
        views.push(rundir::store_view::materialise(
            spec,
            args.cache.as_deref(),
        )?);
    }
    let dirs = if args.dirs.is_empty() && args.stores.is_empty() {
        let run = default_run();
        match &run {
            Some(d) => eprintln!("serving {} (no --dir given)", d.display()),
            None => eprintln!(
                "no --dir given, and neither runs/default nor {SHIPPED_RUN} has a model: \
                 serving the app without a run"
            ),
        }
        run.into_iter().collect()
    } else {
        args.dirs
    };
    crate::serve::serve(crate::serve::ServeConfig {
        dirs,
        views,
        refresh: std::time::Duration::from_secs_f64(args.refresh),
        bind: args.bind,
        port: args.port,
        searches: searches.max(1),
    })
}

/// The run `serve` shows when given none: `runs/default` once `make run` has promoted a
/// model there, else the model that ships with loazero ([`SHIPPED_RUN`] in the working
/// directory, else the copy compiled into the binary: [`rundir::shipped`]).
fn default_run() -> Option<PathBuf> {
    let has_model = |dir: &Path| {
        std::fs::read_dir(dir.join("models")).is_ok_and(|entries| {
            entries.filter_map(|e| e.ok()).any(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name.starts_with("gen-") && name.ends_with(".safetensors")
            })
        })
    };
    [PathBuf::from("runs/default"), PathBuf::from(SHIPPED_RUN)]
        .into_iter()
        .find(|dir| has_model(dir))
        .or_else(|| match rundir::shipped::unpacked() {
            Ok(dir) => Some(dir),
            Err(e) => {
                eprintln!("cannot unpack the shipped model: {e:#}");
                None
            }
        })
}
