//! `loazero bench`: speed benchmarks (the figures quoted in issues and notes).

use anyhow::Result;
use clap::Subcommand;
use loa::{Position, Rules, Variant};
use std::time::Instant;

/// Arguments of `loazero bench`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub what: What,
}

/// What to benchmark.
#[derive(Subcommand)]
pub enum What {
    /// Single-threaded perft from the start positions: leaves per second.
    Movegen {
        /// Perft depth for the standard, ambiloa and alveole starts (scrambled-eggs, 6x6,
        /// parachute and gemma use one ply less).
        #[arg(long, default_value_t = 6)]
        depth: u32,
    },
    /// Alpha-beta baseline: nodes/s and depth reached in fixed time on a set of positions.
    Alphabeta {
        /// Milliseconds per position.
        #[arg(long, default_value_t = 1000)]
        ms: u64,
    },
    /// MCTS simulations per second and thread (uniform and heuristic evaluators).
    Mcts(super::selfplay::BenchArgs),
    /// Network forward positions/s per batch size and training samples/s (both presets).
    Net(super::info::NetBenchArgs),
}

/// Runs the chosen benchmark and prints its figures.
pub fn run(args: Args) -> Result<()> {
    match args.what {
        What::Movegen { depth } => movegen(depth),
        What::Mcts(a) => super::selfplay::bench(a),
        What::Net(a) => super::info::bench_net(a),
        What::Alphabeta { ms } => {
            let rows =
                eval::benchmark::run(ms, &eval::AlphaBetaConfig::default(), |r| println!("{r}"));
            let (nodes, secs) = rows
                .iter()
                .fold((0, 0.0), |(n, s), r| (n + r.nodes, s + r.seconds));
            let depth = rows.iter().map(|r| r.depth as f64).sum::<f64>() / rows.len() as f64;
            println!(
                "total: {nodes} nodes in {secs:.2} s, {:.2} M nodes/s, mean depth {depth:.1} (one thread)",
                nodes as f64 / secs.max(1e-9) / 1e6
            );
            Ok(())
        }
    }
}

fn movegen(depth: u32) -> Result<()> {
    let rules = Rules::classic();
    let mut total_leaves = 0u64;
    let mut total_secs = 0.0;
    for (variant, d) in [
        (Variant::Standard, depth),
        (Variant::ScrambledEggs, depth.saturating_sub(1)),
        (Variant::Six, depth.saturating_sub(1)),
        (Variant::Parachute, depth.saturating_sub(1)),
        (Variant::Gemma, depth.saturating_sub(1)),
        (Variant::Ambiloa, depth),
        (Variant::Alveole, depth),
    ] {
        let pos = Position::start(variant, &rules);
        let start = Instant::now();
        let leaves = loa::perft::perft(&pos, &rules, d);
        let secs = start.elapsed().as_secs_f64();
        total_leaves += leaves;
        total_secs += secs;
        println!(
            "{:<15} perft({d}) = {leaves:>14} in {secs:>7.3} s  {:>8.1} M leaves/s",
            variant.name(),
            leaves as f64 / secs.max(1e-9) / 1e6
        );
    }
    println!(
        "total: {total_leaves} leaves in {total_secs:.3} s, {:.1} M leaves/s (one thread)",
        total_leaves as f64 / total_secs.max(1e-9) / 1e6
    );
    Ok(())
}
