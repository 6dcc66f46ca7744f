//! `loazero info`: versions, the torch library in use, threads and CUDA availability.
//! Also home of `loazero bench net` (network forward and training throughput).

use anyhow::Result;
use std::path::PathBuf;
use train::config::{NetConfig, Precision};
use train::device::{device_name, resolve_device};

/// Arguments of `loazero info`.
#[derive(clap::Args)]
pub struct Args {
    /// Also check that this device (`cpu`, `cuda`, `cuda:N`) is usable; an unavailable
    /// CUDA device is an error.
    #[arg(long)]
    pub device: Option<String>,
}

/// Prints the facts; fails if `--device` names a device that is not available.
pub fn run(args: Args) -> Result<()> {
    let loaded = train::device::loaded_torch_lib_dir();
    let build_lib = env!("LOAZERO_TORCH_LIB_BUILD");
    println!("loazero          {}", env!("CARGO_PKG_VERSION"));
    println!("tch              0.24 (torch-sys 0.24.0)");
    println!(
        "torch            {}",
        train::device::torch_version().unwrap_or_else(|| "unknown".into())
    );
    println!(
        "torch library    {}",
        loaded
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "not found in /proc/self/maps".into())
    );
    if !build_lib.is_empty() && loaded.as_ref().map(PathBuf::from) != Some(build_lib.into()) {
        println!("built against    {build_lib} (rpath)");
    }
    let planes: Vec<String> = loa::Variant::ALL
        .iter()
        .map(|&v| format!("{v} {}", train::encoding::num_planes(v)))
        .collect();
    println!(
        "encoding         version {} (input planes: {})",
        train::encoding::ENCODING_VERSION,
        planes.join(", ")
    );
    println!(
        "cpu              {} logical cores; torch threads {} (intra-op), {} (inter-op); \
         openmp {}, mkl {}, mkldnn {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        tch::get_num_threads(),
        tch::get_num_interop_threads(),
        tch::utils::has_openmp(),
        tch::utils::has_mkl(),
        tch::utils::has_mkldnn()
    );
    let cuda = tch::Cuda::is_available();
    println!(
        "cuda             {}",
        if cuda {
            format!(
                "available: {} device(s), cuDNN {} (version {}), CUDA runtime {}",
                tch::Cuda::device_count(),
                if tch::Cuda::cudnn_is_available() {
                    "available"
                } else {
                    "unavailable"
                },
                tch::utils::version_cudnn(),
                tch::utils::version_cudart()
            )
        } else {
            format!(
                "not available (no CUDA device or driver found; torch CUDA library {})",
                if train::device::cuda_library_loaded() {
                    "loaded"
                } else {
                    "NOT loaded: torch without CUDA, or the binary lacks --no-as-needed -ltorch"
                }
            )
        }
    );
    if let Some(d) = args.device {
        let device = resolve_device(&d)?;
        println!("device           {} ok", device_name(device));
    }
    Ok(())
}

/// Arguments of `loazero bench net`.
#[derive(clap::Args)]
pub struct NetBenchArgs {
    /// Device: cpu, cuda or cuda:N (CUDA must be available).
    #[arg(long, default_value = "cpu")]
    pub device: String,
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
    /// Inference precision on CUDA: float, half or bfloat16.
    #[arg(long, default_value = "float")]
    pub precision: String,
    /// Minimum seconds per measurement.
    #[arg(long, default_value_t = 1.0)]
    pub seconds: f64,
    /// torch intra-op threads (0 = torch's default).
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
    let device = resolve_device(&args.device)?;
    train::device::set_threads(args.threads);
    let precision: Precision =
        serde_json::from_value(serde_json::Value::String(args.precision.clone()))
            .map_err(|_| anyhow::anyhow!("--precision: expected float, half or bfloat16"))?;
    let kind = match precision {
        Precision::Float => tch::Kind::Float,
        Precision::Half => tch::Kind::Half,
        Precision::Bfloat16 => tch::Kind::BFloat16,
    };
    if kind != tch::Kind::Float && !device.is_cuda() {
        anyhow::bail!("--precision {} needs a CUDA device", args.precision);
    }
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
        let net = NetConfig::preset(name).map_err(anyhow::Error::msg)?;
        let label = format!("{name} {}x{}", net.blocks, net.channels);
        let mflop = 2.0 * train::net::macs_per_position(&net, args.variant) as f64 / 1e6;
        println!("{label:<12} {mflop:.2} MFLOP per position (2 x multiply-accumulates)");
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
                );
                let of_peak = peak.as_ref().map_or(String::new(), |p| {
                    format!(
                        "  {:>5.1}% of peak",
                        100.0 * t.per_sec * mflop / 1e3 / p.gflops()
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
                device: args.device.clone(),
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
        let t = train::bench::training(&net, args.variant, device, args.train_batch, args.seconds)?;
        println!(
            "{label:<12} training batch {:>5}: {:>10.0} samples/s    ({} steps in {:.2} s)",
            args.train_batch, t.per_sec, t.iterations, t.seconds
        );
    }
    Ok(())
}
