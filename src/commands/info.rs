//! `loazero info`: versions, the torch library in use, threads and CUDA availability.

use anyhow::Result;
use std::path::PathBuf;
use train::device::{device_name, resolve_device};

/// Arguments of `loazero info`.
#[derive(clap::Args)]
pub struct Args {
    /// Also check that this device (`cpu`, `cuda`, `cuda:N`) is usable; an unavailable
    /// CUDA device is an error.
    #[arg(long)]
    pub device: Option<selfplay::Device>,
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
    use train::encoding::{num_planes, PlaneSet};
    let planes: Vec<String> = loa::Variant::ALL
        .iter()
        .map(|&v| {
            let counts: Vec<String> = PlaneSet::ALL
                .iter()
                .map(|&f| num_planes(v, f).to_string())
                .collect();
            format!("{v} {}", counts.join("/"))
        })
        .collect();
    let sets: Vec<&str> = PlaneSet::ALL.iter().map(|f| f.name()).collect();
    println!(
        "encoding         version {} (input planes of the plane sets {}: {})",
        train::encoding::ENCODING_VERSION,
        sets.join("/"),
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
    // `auto` precision for the run's default network on the default board, with the
    // threads a run uses by default (torch's count), measured if not cached.
    let net = train::NetConfig::default();
    let variant = loa::Variant::Standard;
    // A run's `threads = 0`: torch's count, fewer while other processes keep cores busy.
    let inference = train::auto_precision::inference_decision(&net, variant, 0);
    let threads = train::auto_precision::effective_threads(0);
    println!(
        "precision        auto = {} for inference on this cpu with the {} network and {threads} \
         threads ({}; {})",
        inference.precision,
        net.shape(),
        inference.describe(),
        if train::cpu_peak::has_bf16_hardware() {
            "bf16 hardware: the faster one is taken"
        } else {
            "no bf16 hardware: fp32"
        }
    );
    let batch = train::TrainConfig::default().batch_size;
    if train::cpu_peak::has_amx_bf16() {
        let training = train::auto_precision::training_decision(&net, variant, 0, batch);
        println!(
            "                 auto = {} for training (steps of {batch}; {})",
            training.precision,
            training.describe()
        );
    } else {
        println!(
            "                 auto = float for training (bfloat16 training only with AMX bf16)"
        );
    }
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
        let device = resolve_device(d)?;
        println!("device           {} ok", device_name(device));
    }
    Ok(())
}
