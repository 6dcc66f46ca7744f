//! `loazero bench`: speed measurements (the figures quoted in issues and notes): move
//! generation, MCTS (with built-in evaluators, and with a network against its raw forward
//! speed), the alpha-beta baseline, and the network's forward and training throughput.

use anyhow::{anyhow, Result};
use clap::Subcommand;
use eval::player::mcts::BuiltinEvaluator;
use loa::{Position, Rules, Variant};
use selfplay::{Evaluator, SelfplayConfig};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use train::auto_precision::{inference_decision, inference_precision};
use train::config::{NetConfig, Precision};
use train::device::{device_name, resolve_device, PrecisionOn};

/// Arguments of `loazero bench`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub what: What,
}

/// What to measure the speed of.
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
        /// Threads of each search, comma-separated (Lazy SMP; default: 1 and every core).
        #[arg(long, value_delimiter = ',')]
        threads: Vec<usize>,
        /// A learned evaluation (nnue-NNNN.safetensors): measured against the hand-written
        /// evaluation on the positions it covers, both in this sitting (LOAZERO_SIMD picks
        /// its instruction set).
        #[arg(long, value_name = "FILE")]
        eval: Option<std::path::PathBuf>,
    },
    /// MCTS simulations per second and thread (uniform and heuristic evaluators).
    Mcts(BenchArgs),
    /// Network forward positions/s per batch size and training samples/s (both presets).
    Net(NetBenchArgs),
}

/// Runs the chosen speed measurement and prints its figures.
pub fn run(args: Args) -> Result<()> {
    match args.what {
        What::Movegen { depth } => movegen(depth),
        What::Mcts(a) => bench(a),
        What::Net(a) => bench_net(a),
        What::Alphabeta { ms, threads, eval } => {
            let learned = match &eval {
                Some(path) => Some(std::sync::Arc::new(eval::learned::LearnedEval::load(path)?)),
                None => None,
            };
            let mut totals = Vec::new();
            let arms: Vec<Option<&std::sync::Arc<eval::learned::LearnedEval>>> = match &learned {
                Some(net) => vec![None, Some(net)],
                None => vec![None],
            };
            for arm in arms {
                for n in thread_counts(&threads) {
                    match (arm, &learned) {
                        (Some(net), _) => println!(
                            "threads {n}, learned evaluation {} ({} path):",
                            net.source(),
                            net.simd().name()
                        ),
                        (None, Some(_)) => println!("threads {n}, hand-written evaluation:"),
                        (None, None) => println!("threads {n}:"),
                    }
                    let config = eval::AlphaBetaConfig {
                        threads: n,
                        ..Default::default()
                    };
                    let rows = eval::bench::run_with(ms, &config, arm, learned.is_some(), |r| {
                        println!("{r}")
                    });
                    let (nodes, secs) = rows
                        .iter()
                        .fold((0, 0.0), |(n, s), r| (n + r.nodes, s + r.seconds));
                    let depth =
                        rows.iter().map(|r| r.depth as f64).sum::<f64>() / rows.len() as f64;
                    let rate = nodes as f64 / secs.max(1e-9);
                    println!(
                    "total: {nodes} nodes in {secs:.2} s, {:.2} M nodes/s, mean depth {depth:.1} ({n} thread{})",
                    rate / 1e6,
                    if n == 1 { "" } else { "s" }
                );
                    totals.push((n, rate, depth));
                }
            }
            if let Some(net) = &learned {
                let c = eval::bench::evaluation_costs(net, 20);
                println!(
                    "one evaluation ({} positions, {} path): hand-written {:.0} ns; learned {:.0} ns refreshed, {:.0} ns updated (global terms {:.0} ns, refresh {:.0} ns, update {:.0} ns)",
                    c.positions,
                    net.simd().name(),
                    c.hand_written,
                    c.learned_refreshed,
                    c.learned_updated,
                    c.global_terms,
                    c.refresh,
                    c.update
                );
                let half = totals.len() / 2;
                for (hand, net) in totals[..half].iter().zip(&totals[half..]) {
                    println!(
                        "learned / hand-written nodes a second on {} thread(s): {:.2}x (mean depth {:.1} against {:.1})",
                        hand.0,
                        net.1 / hand.1.max(1e-9),
                        net.2,
                        hand.2
                    );
                }
                return Ok(());
            }
            print_speedups("alphabeta", &totals);
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

/// Arguments of `loazero bench mcts`.
#[derive(clap::Args)]
pub struct BenchArgs {
    /// Built-in evaluators to measure, heuristic or uniform (default: uniform, then
    /// heuristic).
    #[arg(long, value_name = "heuristic|uniform")]
    pub evaluator: Vec<BuiltinEvaluator>,
    /// Simulations per searched move (as a player spec's `sims=`).
    #[arg(long = "sims", alias = "simulations", default_value_t = 1000)]
    pub simulations: u32,
    /// Seconds per evaluator (0 skips the simulations/s measurement).
    #[arg(long, default_value_t = 5.0)]
    pub seconds: f64,
    /// Threads searching in parallel (the figure is per thread).
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Leaves per evaluator call (overrides the default search config).
    #[arg(long)]
    pub leaves: Option<u32>,
    /// TOML config whose `[selfplay.mcts]` (or `[mcts]`) settings are used.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Also measure self-play with this network model: self-play evaluations/s next to
    /// the raw forward throughput of the same net at the same mean batch size, as a ratio.
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Self-play games for the `--model` measurement (2 threads, default self-play config;
    /// 0 skips it).
    #[arg(long, default_value_t = 16)]
    pub games: u64,
    /// Evaluation-cache entries for the `--model` measurement (0: no cache; the hit rate
    /// is printed when on).
    #[arg(long, default_value_t = 0)]
    pub cache: usize,
    /// torch intra-op threads of the `--model` measurement's inference thread
    /// (`train.inference.threads`: 0 = torch's count, fewer while other processes keep
    /// cores busy).
    #[arg(long, default_value_t = 0)]
    pub inference_threads: usize,
    /// Threads of one search (a player's `threads=`), comma-separated: one timed search of
    /// each bench position per count, with each evaluator (and the `--model` as a `model:`
    /// player on the bench positions of its variant); default: 1 and every core.
    #[arg(long, value_delimiter = ',')]
    pub search_threads: Vec<usize>,
    /// Milliseconds of each search of the `--search-threads` measurement (0 skips it).
    #[arg(long, default_value_t = 1000)]
    pub ms: u64,
}

/// The thread counts to measure: those given, else 1 and every core.
fn thread_counts(given: &[usize]) -> Vec<usize> {
    let mut counts: Vec<usize> = if given.is_empty() {
        vec![1, eval::player::threads::all_cores()]
    } else {
        given.iter().map(|&n| n.max(1)).collect()
    };
    counts.dedup();
    counts
}

/// One line per thread count: nodes a second and the ratio to the first count's.
fn print_speedups(what: &str, totals: &[(usize, f64, f64)]) {
    let Some(&(first, base, _)) = totals.first() else {
        return;
    };
    for &(n, rate, depth) in totals {
        println!(
            "{what} threads {n:>3}: {rate:>12.0} nodes/s  mean depth {depth:>5.1}  {:.2}x of {first} thread{}",
            rate / base.max(1e-9),
            if first == 1 { "" } else { "s" }
        );
    }
}

/// `loazero bench mcts`: simulations/s per thread, playing games from the standard start
/// (best move, tree reuse) with each evaluator.
pub fn bench(args: BenchArgs) -> Result<()> {
    let mut mcts = match &args.config {
        Some(path) => SelfplayConfig::from_file(path)?.mcts,
        None => selfplay::MctsConfig::default(),
    };
    if let Some(l) = args.leaves {
        mcts.leaves_per_batch = l;
    }
    mcts.validate()?;
    let kinds = if args.evaluator.is_empty() {
        vec![BuiltinEvaluator::Uniform, BuiltinEvaluator::Heuristic]
    } else {
        args.evaluator.clone()
    };
    for &kind in kinds.iter().filter(|_| args.seconds > 0.0) {
        let evaluator = kind.evaluator();
        let name = evaluator.name();
        let r = selfplay::bench::bench_search(
            evaluator,
            &mcts,
            args.simulations,
            args.seconds,
            args.threads,
        );
        println!(
            "mcts {name:<9} {:>10.0} sims/s/thread  ({:.0} sims per CPU second; {} threads, {} \
             sims, {} moves of {} sims, mean batch {:.1}, {:.1} s)",
            r.sims_per_second_per_thread(),
            r.sims_per_cpu_second(),
            r.threads,
            r.simulations,
            r.moves,
            args.simulations,
            r.evaluations as f64 / r.batches.max(1) as f64,
            r.seconds
        );
    }
    if let Some(path) = args.model.as_ref().filter(|_| args.games > 0) {
        bench_network_selfplay(path, &args)?;
    }
    if args.ms > 0 {
        bench_search_threads(&args, &kinds)?;
    }
    Ok(())
}

/// Nodes (simulations) a second of one timed MCTS search on 1, 2, … threads, from the
/// bench positions ([`eval::bench::threads`]): with each built-in evaluator, and with the
/// `--model` network as a `model:` player (its default timed settings: 16 leaves a call,
/// one inference thread of one torch thread per search thread).
fn bench_search_threads(args: &BenchArgs, kinds: &[BuiltinEvaluator]) -> Result<()> {
    let counts = thread_counts(&args.search_threads);
    let mut players: Vec<(String, eval::PlayerFactory, Vec<Variant>)> = kinds
        .iter()
        .map(|k| {
            (
                format!("mcts:evaluator={k},ms={}", args.ms),
                eval::PlayerFactory::new(),
                Variant::ALL.to_vec(),
            )
        })
        .collect();
    if let Some(path) = &args.model {
        let (info, _) = train::model::read_model_file(path)?;
        players.push((
            format!("model:path={},ms={}", path.display(), args.ms),
            train::players::eval_player_factory(true),
            vec![info.variant],
        ));
    }
    for (text, factory, variants) in players {
        let spec = eval::PlayerSpec::parse(&text)?;
        println!("one search on 1, 2, … threads: {spec}");
        let rows = eval::bench::threads(&spec, &factory, &counts, &variants, |r| {
            println!(
                "  threads {:>3}: {} nodes in {:.2} s over {} positions",
                r.threads, r.nodes, r.seconds, r.positions
            )
        })?;
        let totals: Vec<(usize, f64, f64)> = rows
            .iter()
            .map(|r| (r.threads, r.nodes_per_second(), r.depth))
            .collect();
        print_speedups("mcts", &totals);
    }
    Ok(())
}

/// Self-play evaluations/s with the network against the raw batched forward throughput of
/// the same net on the same device at the self-play mean batch size.
fn bench_network_selfplay(path: &Path, args: &BenchArgs) -> Result<()> {
    let inference = train::InferenceConfig {
        cache_positions: args.cache,
        threads: args.inference_threads,
        ..train::InferenceConfig::default()
    };
    let evaluator = train::NetEvaluator::load(path, &inference)
        .map_err(|e| anyhow!("cannot load model {}: {e:#}", path.display()))?;
    let info = evaluator.info().clone();
    let variant = info.variant;
    let evaluator = Arc::new(evaluator);
    let mut config = SelfplayConfig {
        variant,
        threads: args.threads.max(2),
        write_game_records: false,
        ..SelfplayConfig::default()
    };
    config.simulations = args.simulations.min(config.simulations);
    let dyn_eval: Arc<dyn Evaluator> = evaluator.clone();
    let progress = selfplay::run_selfplay(
        &config,
        dyn_eval,
        args.games,
        selfplay::Schedule::RunOut,
        &selfplay::Cancel::never(),
        |_| Ok(()),
        |_| {},
    )
    .map_err(|e| anyhow!("self-play failed: {e}"))?;
    let selfplay_rate = progress.evaluations as f64 / progress.seconds.max(1e-9);
    let mean_batch = evaluator.stats().mean_batch().max(1.0);
    let raw = train::bench::forward(
        &info.net,
        variant,
        tch::Device::Cpu,
        evaluator.precision().kind_on(tch::Device::Cpu),
        mean_batch.round() as usize,
        args.seconds.min(3.0),
        train::InferenceConfig::default().fold_batch_norm,
        inference.threads,
    );
    let cache = match evaluator.stats().cache_hit_rate() {
        Some(rate) => format!(", cache of {} hit {:.1}%", args.cache, 100.0 * rate),
        None => String::new(),
    };
    println!(
        "mcts network   {selfplay_rate:>10.0} evaluations/s in self-play ({} games, {} sims, \
         {} threads, mean forward batch {mean_batch:.0}{cache}); raw forward {:.0} positions/s \
         at batch {:.0}: ratio {:.0}%",
        args.games,
        config.simulations,
        config.threads,
        raw.per_sec,
        mean_batch.round(),
        100.0 * selfplay_rate / raw.per_sec.max(1e-9)
    );
    Ok(())
}

/// Arguments of `loazero bench net`.
#[derive(clap::Args)]
pub struct NetBenchArgs {
    /// Device: cpu, cuda or cuda:N (CUDA must be available).
    #[arg(long, default_value = "cpu")]
    pub device: selfplay::Device,
    /// Batch sizes of the forward measurements, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,16,64,256")]
    pub batch: Vec<usize>,
    /// Batch size of the training measurement.
    #[arg(long, default_value_t = 256)]
    pub train_batch: usize,
    /// Network presets to measure, comma-separated (small = 4×32, the run default;
    /// cpu = 6×64; gpu = 10×128).
    #[arg(long, value_delimiter = ',', default_value = "small,cpu")]
    pub preset: Vec<String>,
    /// Variant (board size) of the inputs.
    #[arg(long, default_value = "standard")]
    pub variant: loa::Variant,
    /// Inference precision: auto, float, half or bfloat16. auto, on the CPU, is the faster of
    /// float and bfloat16 (bfloat16 only where the CPU has bf16 hardware, avx512_bf16 or
    /// AMX) in forward passes of each preset timed at batch 16 and 64 on first use and
    /// cached (`loazero info` shows the file); float on CUDA. See
    /// `train.inference.precision`.
    #[arg(long, default_value = "auto")]
    pub precision: Precision,
    /// Minimum seconds per measurement.
    #[arg(long, default_value_t = 1.0)]
    pub seconds: f64,
    /// torch intra-op threads (0 = torch's default count, fewer while other processes keep
    /// cores busy, as in a run; see `train::auto_threads`).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Client threads of the inference-service measurement (0 skips it).
    #[arg(long, default_value_t = 2)]
    pub clients: usize,
    /// Positions per request in the inference-service measurement.
    #[arg(long, default_value_t = 64)]
    pub per_request: usize,
}

/// `loazero bench net`: forward positions/s per batch size and training samples/s for
/// each preset.
pub fn bench_net(args: NetBenchArgs) -> Result<()> {
    let device = resolve_device(args.device)?;
    train::device::set_threads(args.threads);
    if args.batch.contains(&0) || args.train_batch == 0 {
        anyhow::bail!("batch sizes must be positive");
    }
    let n = args.variant.geometry().size;
    println!(
        "device {}, {} threads, {} ({n}x{n}), precision {}",
        device_name(device),
        tch::get_num_threads(),
        args.variant,
        args.precision
    );
    let peak = (!device.is_cuda())
        .then(|| train::cpu_peak::CpuPeak::detect(tch::get_num_threads().max(1) as usize))
        .flatten();
    if let Some(p) = &peak {
        println!("CPU peak: {}", p.describe());
    }
    for name in &args.preset {
        let net = NetConfig::preset(name)?;
        let label = format!("{name} {}x{}", net.blocks, net.channels);
        let mflop = 2.0 * train::net::macs_per_position(&net, args.variant) as f64 / 1e6;
        println!("{label:<12} {mflop:.2} MFLOP per position (2 x multiply-accumulates)");
        let precision =
            inference_precision(args.precision, device, &net, args.variant, args.threads);
        if args.precision == Precision::Auto && !device.is_cuda() {
            let d = inference_decision(&net, args.variant, args.threads);
            println!("{label:<12} auto = {precision} ({})", d.describe());
        }
        let kind = precision.kind_on(device);
        for &b in &args.batch {
            for (form, folded) in [("reference", false), ("folded", true)] {
                let t = train::bench::forward(
                    &net,
                    args.variant,
                    device,
                    kind,
                    b,
                    args.seconds,
                    folded,
                    args.threads,
                );
                let of_peak = peak.as_ref().map_or(String::new(), |p| {
                    let gflops = match precision {
                        Precision::Bfloat16 => p.bf16_gflops(),
                        Precision::Auto | Precision::Float | Precision::Half => p.gflops(),
                    };
                    format!(
                        "  {:>5.1}% of peak",
                        100.0 * t.per_sec * mflop / 1e3 / gflops
                    )
                });
                println!(
                    "{label:<12} forward {form:<9} batch {b:>5}: {:>10.0} positions/s {:>7.1} GFLOP/s{of_peak}  ({} passes in {:.2} s)",
                    t.per_sec,
                    t.per_sec * mflop / 1e3,
                    t.iterations,
                    t.seconds
                );
            }
        }
        if args.clients > 0 && args.per_request > 0 {
            let config = train::InferenceConfig {
                device: args.device,
                precision,
                max_batch: (args.clients * args.per_request).min(1024),
                ..Default::default()
            };
            let (t, mean_batch) = train::bench::evaluator(
                &net,
                args.variant,
                &config,
                args.clients,
                args.per_request,
                args.seconds,
            )?;
            println!(
                "{label:<12} evaluator {} clients x {}: {:>8.0} positions/s  (mean batch {mean_batch:.0})",
                args.clients, args.per_request, t.per_sec
            );
        }
        // Training in fp32, and in bf16 mixed precision when that is the precision asked.
        let mut train_precisions = vec![Precision::Float];
        if precision == Precision::Bfloat16 {
            train_precisions.push(Precision::Bfloat16);
        }
        for p in train_precisions {
            let t = train::bench::training(
                &net,
                args.variant,
                args.device,
                args.train_batch,
                p,
                args.seconds,
                args.threads,
            )?;
            println!(
                "{label:<12} training {:<8} batch {:>5}: {:>10.0} samples/s    ({} steps in {:.2} s)",
                p.to_string(),
                args.train_batch,
                t.per_sec,
                t.iterations,
                t.seconds
            );
        }
    }
    Ok(())
}
