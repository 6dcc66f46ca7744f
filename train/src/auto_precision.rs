//! `auto` precision on the CPU, chosen by measuring: which arithmetic is fastest is a
//! property of the CPU, the torch build, the network and the thread count, not of a CPU
//! flag (the same `avx512_bf16` made bf16 faster on one CPU and slower on another:
//! `docs/experiments.md`, batch 26).
//!
//! The first time a network shape is used on a machine, [`inference_decision`] times a
//! few forward passes of the folded network the inference service runs
//! ([`crate::folded::FoldedNet`]) at the batch sizes the search sends
//! ([`INFERENCE_BATCHES`]), with the torch thread count inference will use, in each
//! precision the CPU computes natively: fp32 always, bf16 only where
//! [`crate::cpu_peak::has_bf16_hardware`] says the CPU has bf16 arithmetic (elsewhere
//! bf16 is converted to fp32 and is no candidate). [`choose`] picks the precision with
//! the smaller total time over the batch sizes (fp32 on a tie). Training
//! ([`training_decision`]) does the same with a few training steps, fp32 against bf16
//! mixed precision, where `auto` allows bf16 training at all (AMX bf16 tiles; see
//! [`training_precision`]).
//!
//! Each choice is kept in an in-process memo (one process measures a key once) and in a
//! small JSON file ([`default_cache_file`]: `$LOAZERO_PRECISION_CACHE`, else
//! `$XDG_CACHE_HOME/loazero/precision.json`, else `$HOME/.cache/loazero/precision.json`),
//! keyed by [`ProbeKey`]: the CPU (model name, the flags that decide its vector and
//! matrix units, and the environment's caps on them), the torch version, the network's
//! shape and the thread count; any of them changing measures again. The file is written
//! atomically (a temporary file renamed over it); an unreadable or corrupt one is
//! ignored with a warning and measured again.
//!
//! A measurement takes about 0.2–0.3 s for inference and 0.4–0.6 s for training of the
//! 4×32 network on 2 cores (`loazero info` measuring both: about 1.2 s in all, most of
//! it starting torch; more for bigger networks and on a loaded machine). With `threads =
//! 0` it runs with the threads the work would get now ([`measuring_threads`]); times
//! taken while other processes held cores it needs are used but not cached.
//! It draws the random initial weights of its throw-away networks from torch's global
//! RNG; so that what follows does not depend on whether a choice was measured or read,
//! the resolvers draw one seed from that RNG before and re-seed it with that seed after
//! ([`keeping_the_rng_stream`]), measured or not.

use crate::config::{NetConfig, Precision, TrainConfig};
use crate::encoding::{encode, num_planes};
use crate::folded::FoldedNet;
use crate::model::{Model, ModelInfo};
use loa::Variant;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};
use tch::{Device, Kind, Tensor};

/// The batch sizes of the inference measurement: what the search's requests add up to
/// (16 leaves a call from one searching thread, 64 from several).
pub const INFERENCE_BATCHES: [usize; 2] = [16, 64];

/// The environment variable that names the cache file (`off` or empty: no file, the
/// in-process memo only).
pub const CACHE_ENV: &str = "LOAZERO_PRECISION_CACHE";

/// The times of one measurement: the best (smallest) of several timed forward passes
/// (or training steps) at each batch size, in milliseconds per pass.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Timings {
    /// The batch sizes, in the order of the times.
    pub batches: Vec<usize>,
    /// fp32's milliseconds per pass (or step) at each batch size.
    pub float_ms: Vec<f64>,
    /// bf16's, where bf16 was a candidate; `None` where the CPU has no bf16 hardware (it
    /// was not measured).
    pub bfloat16_ms: Option<Vec<f64>>,
    /// Cores that other processes kept busy, on average, while the times were taken
    /// (`None`: not known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_busy: Option<f64>,
    /// Whether those processes took cores the measurement's threads needed
    /// ([`contended`]): such times serve the process that took them but are not cached.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub contended: bool,
}

impl Timings {
    /// Whether the times are usable: one positive finite time per batch size in each
    /// arm measured (a cache entry that is not is measured again).
    pub fn is_complete(&self) -> bool {
        let good = |ms: &[f64]| {
            ms.len() == self.batches.len() && ms.iter().all(|t| t.is_finite() && *t > 0.0)
        };
        !self.batches.is_empty()
            && good(&self.float_ms)
            && self.bfloat16_ms.as_deref().is_none_or(good)
    }

    /// `fp32 0.41/1.20 ms, bf16 0.55/1.52 ms at batch 16/64` (bf16 left out where it was
    /// no candidate).
    pub fn describe(&self) -> String {
        let list = |ms: &[f64]| {
            ms.iter()
                .map(|t| format!("{t:.2}"))
                .collect::<Vec<_>>()
                .join("/")
        };
        let batches: Vec<String> = self.batches.iter().map(|b| b.to_string()).collect();
        let bf16 = self
            .bfloat16_ms
            .as_deref()
            .map_or(String::new(), |ms| format!(", bf16 {} ms", list(ms)));
        format!(
            "fp32 {} ms{bf16} at batch {}",
            list(&self.float_ms),
            batches.join("/")
        )
    }
}

/// The rule: bf16 when it was measured and its total time over the batch sizes (one pass
/// of each) is smaller than fp32's; fp32 otherwise (no bf16 hardware, a tie, or times
/// that do not compare).
pub fn choose(timings: &Timings) -> Precision {
    let total = |ms: &[f64]| ms.iter().sum::<f64>();
    match &timings.bfloat16_ms {
        Some(bf16) if total(bf16) < total(&timings.float_ms) => Precision::Bfloat16,
        _ => Precision::Float,
    }
}

/// How long a measurement goes on: at least `min_rounds` rounds (each one pass of every
/// candidate at every batch size), then more until `budget` has passed or `max_rounds`
/// are done.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rounds {
    /// Rounds always timed.
    pub min_rounds: usize,
    /// Rounds at most.
    pub max_rounds: usize,
    /// Time after which no round starts beyond `min_rounds`.
    pub budget: Duration,
}

/// The rounds of the inference measurement.
pub const INFERENCE_ROUNDS: Rounds = Rounds {
    min_rounds: 2,
    max_rounds: 10,
    budget: Duration::from_millis(250),
};

/// The rounds of the training measurement.
pub const TRAINING_ROUNDS: Rounds = Rounds {
    min_rounds: 1,
    max_rounds: 4,
    budget: Duration::from_millis(400),
};

/// Times `pass(precision, batch)` (seconds of one pass) in fp32 and, when `bf16` (the CPU
/// computes bf16 in hardware), in bf16, at every batch size: one untimed warm-up round,
/// then [`Rounds`] alternating the order of the precisions, keeping the best time of each.
/// Without `bf16`, bf16 is never passed to `pass`.
pub fn measure(
    batches: &[usize],
    bf16: bool,
    rounds: Rounds,
    mut pass: impl FnMut(Precision, usize) -> f64,
) -> Timings {
    let mut candidates = vec![Precision::Float];
    if bf16 {
        candidates.push(Precision::Bfloat16);
    }
    for &p in &candidates {
        for &b in batches {
            pass(p, b);
        }
    }
    let mut best = vec![vec![f64::INFINITY; batches.len()]; candidates.len()];
    let start = Instant::now();
    let mut round = 0;
    while round < rounds.min_rounds
        || (round < rounds.max_rounds && start.elapsed() < rounds.budget)
    {
        for k in 0..candidates.len() {
            let c = if round % 2 == 0 {
                k
            } else {
                candidates.len() - 1 - k
            };
            for (i, &b) in batches.iter().enumerate() {
                let secs = pass(candidates[c], b);
                best[c][i] = best[c][i].min(secs * 1e3);
            }
        }
        round += 1;
    }
    let mut best = best.into_iter();
    Timings {
        batches: batches.to_vec(),
        float_ms: best.next().unwrap_or_default(),
        bfloat16_ms: best.next(),
        others_busy: None,
        contended: false,
    }
}

/// What a choice is keyed by: the work, the CPU, torch, the network and the threads. Two
/// keys with the same [`ProbeKey::text`] share a cache entry.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProbeKey {
    /// `inference`, or `training batch N`.
    pub work: String,
    /// [`cpu_identity`].
    pub cpu: String,
    /// The torch version ([`crate::device::torch_version`]).
    pub torch: String,
    /// [`net_identity`].
    pub net: String,
    /// torch intra-op threads of the work.
    pub threads: usize,
}

impl ProbeKey {
    /// The key of inference with `net` on `variant`'s board with `threads` torch threads
    /// on this machine.
    pub fn inference(net: &NetConfig, variant: Variant, threads: usize) -> ProbeKey {
        ProbeKey {
            work: "inference".into(),
            cpu: this_cpu(),
            torch: this_torch(),
            net: net_identity(net, variant),
            threads,
        }
    }

    /// The key of training steps of `batch` samples.
    pub fn training(net: &NetConfig, variant: Variant, threads: usize, batch: usize) -> ProbeKey {
        ProbeKey {
            work: format!("training batch {batch}"),
            ..ProbeKey::inference(net, variant, threads)
        }
    }

    /// The key as one line (the cache file's key).
    pub fn text(&self) -> String {
        format!(
            "{} | cpu {} | torch {} | net {} | threads {}",
            self.work, self.cpu, self.torch, self.net, self.threads
        )
    }
}

/// The CPU as far as arithmetic speed goes, from the text of a `/proc/cpuinfo` and the
/// caps of oneDNN (`ONEDNN_MAX_CPU_ISA`) and ATen (`ATEN_CPU_CAPABILITY`): the model name,
/// the flags of its vector and matrix units that are present, and the caps that are set.
pub fn cpu_identity(cpuinfo: &str, onednn_cap: Option<&str>, aten_cap: Option<&str>) -> String {
    const FLAGS: [&str; 12] = [
        "avx2",
        "fma",
        "avx512f",
        "avx512bw",
        "avx512_vnni",
        "avx512_bf16",
        "avx512_fp16",
        "avx_vnni",
        "amx_tile",
        "amx_bf16",
        "amx_int8",
        "amx_fp16",
    ];
    let field = |name: &str| {
        cpuinfo
            .lines()
            .find(|l| l.split(':').next().is_some_and(|k| k.trim() == name))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    };
    let flags = field("flags").unwrap_or_default();
    let present: Vec<&str> = FLAGS
        .into_iter()
        .filter(|f| flags.split_whitespace().any(|x| x == *f))
        .collect();
    let mut id = format!(
        "{} [{}]",
        field("model name").unwrap_or_else(|| "unknown".into()),
        present.join(" ")
    );
    if let Some(cap) = onednn_cap {
        id += &format!(" ONEDNN_MAX_CPU_ISA={cap}");
    }
    if let Some(cap) = aten_cap {
        id += &format!(" ATEN_CPU_CAPABILITY={cap}");
    }
    id
}

/// The shape of `net` on `variant`'s board as far as the arithmetic goes: tower, pooling,
/// heads, input planes and board size (`4x32 pool 2 policy 16 value 16/64 planes 13
/// board 8`, `+occupancy` with that head).
pub fn net_identity(net: &NetConfig, variant: Variant) -> String {
    format!(
        "{}x{} pool {} policy {}>{} value {}/{} planes {} ({}) board {}{}",
        net.blocks,
        net.channels,
        net.global_pool_every,
        net.policy_channels,
        crate::policy::policy_planes(variant),
        net.value_channels,
        net.value_hidden,
        num_planes(variant, net.plane_set),
        net.plane_set.name(),
        variant.geometry().size,
        if net.occupancy_head {
            " +occupancy"
        } else {
            ""
        }
    )
}

fn this_cpu() -> String {
    static CPU: OnceLock<String> = OnceLock::new();
    CPU.get_or_init(|| {
        let text = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let (onednn, aten) = crate::cpu_peak::isa_caps();
        cpu_identity(&text, onednn.as_deref(), aten.as_deref())
    })
    .clone()
}

fn this_torch() -> String {
    static TORCH: OnceLock<String> = OnceLock::new();
    TORCH
        .get_or_init(|| crate::device::torch_version().unwrap_or_else(|| "unknown".into()))
        .clone()
}

/// A choice, its times and where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    /// The precision chosen ([`choose`] of the times).
    pub precision: Precision,
    /// The times it was chosen by.
    pub timings: Timings,
    /// Whether this process measured it (else it came from the memo or the file).
    pub measured_now: bool,
    /// The cache file it is kept in; `None` without one.
    pub file: Option<PathBuf>,
}

impl Decision {
    /// `measured: fp32 … ms, bf16 … ms at batch 16/64; cached in FILE` (`measured now`
    /// when this process measured it).
    pub fn describe(&self) -> String {
        let when = if self.measured_now {
            "measured now"
        } else {
            "measured"
        };
        let file = match (&self.file, self.timings.others_busy) {
            (Some(f), _) => format!("cached in {}", f.display()),
            (None, Some(busy)) if self.timings.contended => {
                format!("not cached: other processes kept {busy:.1} cores busy while it measured")
            }
            (None, _) => "not cached on disk".into(),
        };
        format!("{when}: {}; {file}", self.timings.describe())
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct CacheFile {
    /// [`ProbeKey::text`] → the entry.
    entries: BTreeMap<String, CacheEntry>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct CacheEntry {
    /// For a reader of the file; the choice is [`choose`] of the times.
    precision: Precision,
    timings: Timings,
}

/// Choices by key: an in-process memo over an optional cache file.
pub struct PrecisionCache {
    file: Option<PathBuf>,
    memo: Mutex<HashMap<String, Decision>>,
}

impl PrecisionCache {
    /// A cache kept in `file` (`None`: the memo only).
    pub fn new(file: Option<PathBuf>) -> PrecisionCache {
        PrecisionCache {
            file,
            memo: Mutex::new(HashMap::new()),
        }
    }

    /// The process's cache, in [`default_cache_file`] (this crate's unit tests: none, so
    /// that they never write into the user's cache).
    pub fn global() -> &'static PrecisionCache {
        static GLOBAL: OnceLock<PrecisionCache> = OnceLock::new();
        GLOBAL.get_or_init(|| {
            PrecisionCache::new(if cfg!(test) {
                None
            } else {
                default_cache_file()
            })
        })
    }

    /// The cache file, if any.
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// The choice for `key`: from the memo, else from the file, else `measure()`d (then
    /// remembered and written to the file). One caller measures at a time (the others
    /// wait), so that measurements do not slow each other down.
    pub fn decide(&self, key: &ProbeKey, measure: impl FnOnce() -> Timings) -> Decision {
        let text = key.text();
        let mut memo = self.memo.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(d) = memo.get(&text) {
            return d.clone();
        }
        let stored = self
            .file
            .as_deref()
            .and_then(|f| read_cache(f).entries.remove(&text))
            .filter(|e| e.timings.is_complete());
        let decision = match stored {
            Some(entry) => Decision {
                precision: choose(&entry.timings),
                timings: entry.timings,
                measured_now: false,
                file: self.file.clone(),
            },
            None => {
                let timings = measure();
                let precision = choose(&timings);
                // Times taken on a busy machine serve this process only.
                let file = self.file.clone().filter(|_| !timings.contended);
                if let Some(f) = &file {
                    let entry = CacheEntry {
                        precision,
                        timings: timings.clone(),
                    };
                    if let Err(e) = write_entry(f, &text, entry) {
                        eprintln!(
                            "warning: cannot write the precision cache {}: {e:#}",
                            f.display()
                        );
                    }
                }
                Decision {
                    precision,
                    timings,
                    measured_now: true,
                    file,
                }
            }
        };
        memo.insert(text, decision.clone());
        decision
    }
}

/// The cache file: `$LOAZERO_PRECISION_CACHE` ([`CACHE_ENV`]; `off` or empty: none), else
/// `$XDG_CACHE_HOME/loazero/precision.json`, else `$HOME/.cache/loazero/precision.json`;
/// `None` without any of them.
pub fn default_cache_file() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name);
    cache_file_from(
        var(CACHE_ENV).as_deref(),
        var("XDG_CACHE_HOME").as_deref(),
        var("HOME").as_deref(),
    )
}

/// [`default_cache_file`] from the values of its three variables.
pub fn cache_file_from(
    explicit: Option<&std::ffi::OsStr>,
    xdg_cache_home: Option<&std::ffi::OsStr>,
    home: Option<&std::ffi::OsStr>,
) -> Option<PathBuf> {
    if let Some(path) = explicit {
        return (!path.is_empty() && path != "off").then(|| PathBuf::from(path));
    }
    let dir = match (xdg_cache_home, home) {
        (Some(x), _) if !x.is_empty() => PathBuf::from(x),
        (_, Some(h)) if !h.is_empty() => Path::new(h).join(".cache"),
        _ => return None,
    };
    Some(dir.join("loazero").join("precision.json"))
}

/// The entries of `file`: none when it does not exist; none, with a warning, when it
/// cannot be read or parsed.
fn read_cache(file: &Path) -> CacheFile {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return CacheFile::default(),
        Err(e) => {
            eprintln!(
                "warning: cannot read the precision cache {}: {e}; measuring again",
                file.display()
            );
            return CacheFile::default();
        }
    };
    serde_json::from_str(&text).unwrap_or_else(|e| {
        eprintln!(
            "warning: the precision cache {} is corrupt ({e}); measuring again",
            file.display()
        );
        CacheFile::default()
    })
}

/// Adds `entry` under `key` to `file` (re-read just before, so entries other processes
/// wrote meanwhile stay), atomically: a temporary file beside it, renamed over it.
fn write_entry(file: &Path, key: &str, entry: CacheEntry) -> anyhow::Result<()> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut cache = read_cache(file);
    cache.entries.insert(key.to_string(), entry);
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp.{}", std::process::id()));
    let tmp = file.with_file_name(name);
    std::fs::write(&tmp, serde_json::to_string_pretty(&cache)? + "\n")?;
    std::fs::rename(&tmp, file).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })?;
    Ok(())
}

/// The thread count work with the setting `threads` runs with: `threads`, or torch's
/// current count for 0.
pub fn effective_threads(threads: usize) -> usize {
    if threads > 0 {
        threads
    } else {
        tch::get_num_threads().max(1) as usize
    }
}

/// Whether other processes that keep `others_busy` cores of `cores` busy take cores a
/// measurement with `threads` threads needs: when they hold more than the cores it leaves
/// idle, and a third of a core (the noise of a quiet machine).
pub fn contended(others_busy: f64, threads: usize, cores: usize) -> bool {
    others_busy > cores.saturating_sub(threads) as f64 + 0.3
}

/// Runs the measurement `f` with torch's intra-op thread count at `threads` (then restores
/// it), noting the load of the machine's other processes meanwhile
/// ([`crate::auto_threads::CpuLoad`]).
fn with_threads(threads: usize, f: impl FnOnce() -> Timings) -> Timings {
    let before = tch::get_num_threads();
    tch::set_num_threads(threads as i32);
    let mut load = crate::auto_threads::CpuLoad::new();
    load.others();
    let mut timings = f();
    timings.others_busy = load.others();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    timings.contended = timings
        .others_busy
        .is_some_and(|busy| contended(busy, threads, cores));
    tch::set_num_threads(before);
    timings
}

/// Runs `f`, then re-seeds torch's global RNG with a seed drawn from it before: the
/// stream after it is the same whatever `f` drew.
/// Holds [`crate::device::torch_rng_lock`] meanwhile, so that no other thread seeds or
/// draws in between.
pub fn keeping_the_rng_stream<T>(f: impl FnOnce() -> T) -> T {
    let _rng = crate::device::torch_rng_lock();
    let seed = Tensor::randint(1 << 62, [1], (Kind::Int64, Device::Cpu)).int64_value(&[0]);
    let out = f();
    tch::manual_seed(seed);
    out
}

/// What `auto`'s rules need to know of the CPU (injected in tests: a rule is a function of
/// it, not of the machine the tests run on).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hardware {
    /// bf16 arithmetic in hardware that torch may use ([`crate::cpu_peak::has_bf16_hardware`]):
    /// bf16 is a candidate of the inference measurement.
    pub bf16: bool,
    /// AMX bf16 tiles ([`crate::cpu_peak::has_amx_bf16`]): bf16 training is allowed.
    pub amx_bf16: bool,
}

impl Hardware {
    /// This machine's.
    pub fn this_cpu() -> Hardware {
        Hardware {
            bf16: crate::cpu_peak::has_bf16_hardware(),
            amx_bf16: crate::cpu_peak::has_amx_bf16(),
        }
    }
}

/// The rule of inference precision: `auto` on the CPU is what `measured` (the measurement
/// of fp32 against bf16, or its cached result) chooses, `auto` on CUDA is `float`; the
/// others are themselves.
pub fn inference_rule(
    precision: Precision,
    device: Device,
    measured: impl FnOnce() -> Precision,
) -> Precision {
    match precision {
        Precision::Auto if device == Device::Cpu => measured(),
        Precision::Auto => Precision::Float,
        p => p,
    }
}

/// The rule of training precision: `auto` on the CPU is `float` without AMX bf16 tiles
/// (see [`training_precision`] for why) and what `measured` chooses with them; `auto` on
/// CUDA is `float`; the others are themselves.
pub fn training_rule(
    precision: Precision,
    device: Device,
    hardware: Hardware,
    measured: impl FnOnce() -> Precision,
) -> Precision {
    match precision {
        Precision::Auto if device == Device::Cpu && hardware.amx_bf16 => measured(),
        Precision::Auto => Precision::Float,
        p => p,
    }
}

/// The inference precision of `precision` on `device` for `net` on `variant` with the
/// inference threads setting `threads` (0: torch's count) by [`inference_rule`], with
/// [`inference_decision`]'s choice.
pub fn inference_precision(
    precision: Precision,
    device: Device,
    net: &NetConfig,
    variant: Variant,
    threads: usize,
) -> Precision {
    inference_rule(precision, device, || {
        keeping_the_rng_stream(|| inference_decision(net, variant, threads).precision)
    })
}

/// `auto`'s inference precision on this CPU for `net` on `variant` with `threads` (0:
/// torch's count): cached, or measured ([`measure_inference`]) and cached.
pub fn inference_decision(net: &NetConfig, variant: Variant, threads: usize) -> Decision {
    let key = ProbeKey::inference(net, variant, effective_threads(threads));
    PrecisionCache::global().decide(&key, || {
        let bf16 = Hardware::this_cpu().bf16;
        let n = measuring_threads(threads);
        let mut timings = measure_inference(net, variant, n, bf16);
        // Fewer threads than the key's: the load took cores (not cached).
        timings.contended |= n < key.threads;
        timings
    })
}

/// The threads a measurement for the setting `threads` runs with: `threads`, or for 0 the
/// count the work itself would run with now ([`crate::auto_threads`]: torch's count less
/// the cores other processes keep busy, read over 50 ms). On a loaded machine a
/// measurement with more threads than free cores times OpenMP waiting for descheduled
/// threads (100× slower passes), not the arithmetic. Times taken with fewer threads than
/// the setting's count are not cached.
pub fn measuring_threads(threads: usize) -> usize {
    if threads > 0 {
        return threads;
    }
    let max = effective_threads(0);
    let mut load = crate::auto_threads::CpuLoad::new();
    load.others();
    std::thread::sleep(Duration::from_millis(50));
    load.others().map_or(max, |others| {
        crate::auto_threads::threads_beside(max, others)
    })
}

/// Times forward passes of the folded form of a fresh `net` on `variant`'s positions at
/// [`INFERENCE_BATCHES`] with `threads` torch threads, in fp32 and (when `bf16`) in bf16,
/// as the inference service runs them (`u8` planes in, float outputs out).
pub fn measure_inference(net: &NetConfig, variant: Variant, threads: usize, bf16: bool) -> Timings {
    let _guard = tch::no_grad_guard();
    let model = Model::new(ModelInfo::new(net, variant), Device::Cpu);
    let float = FoldedNet::with_kind(&model.net, Kind::Float);
    let bfloat16 = bf16.then(|| float.to_kind(Kind::BFloat16));
    let largest = INFERENCE_BATCHES.iter().copied().max().unwrap_or(1);
    let data: Vec<u8> = crate::bench::sample_positions(variant, largest)
        .iter()
        .flat_map(|s| encode(&s.position, net.plane_set))
        .collect();
    let (planes, n) = (
        num_planes(variant, net.plane_set) as i64,
        variant.geometry().size as i64,
    );
    let inputs: HashMap<usize, Tensor> = INFERENCE_BATCHES
        .iter()
        .map(|&b| {
            let len = b * (planes * n * n) as usize;
            (
                b,
                Tensor::from_slice(&data[..len]).view([b as i64, planes, n, n]),
            )
        })
        .collect();
    with_threads(threads, || {
        measure(&INFERENCE_BATCHES, bf16, INFERENCE_ROUNDS, |p, b| {
            let folded = match p {
                Precision::Bfloat16 => bfloat16.as_ref().unwrap_or(&float),
                _ => &float,
            };
            let start = Instant::now();
            let out = folded.forward(&inputs[&b]);
            let _ = out.policy.to_kind(Kind::Float);
            let _ = out.wdl.to_kind(Kind::Float);
            start.elapsed().as_secs_f64()
        })
    })
}

/// The training precision of `precision` on `device` for `net` on `variant` with the
/// training threads setting `threads` (0: torch's count) and `batch` samples a step, by
/// [`training_rule`] on this CPU: `auto` on the CPU is `float` without AMX bf16 tiles
/// ([`crate::cpu_peak::has_amx_bf16`]: with `avx512_bf16` alone bf16 training bought no
/// strength at equal time in `docs/experiments.md` batch 26, and it is not reproducible
/// bit for bit) and [`training_decision`]'s choice with them.
pub fn training_precision(
    precision: Precision,
    device: Device,
    net: &NetConfig,
    variant: Variant,
    threads: usize,
    batch: usize,
) -> Precision {
    training_rule(precision, device, Hardware::this_cpu(), || {
        keeping_the_rng_stream(|| training_decision(net, variant, threads, batch).precision)
    })
}

/// `auto`'s training precision on this CPU where bf16 training is allowed: cached, or
/// measured ([`measure_training`]) and cached.
pub fn training_decision(
    net: &NetConfig,
    variant: Variant,
    threads: usize,
    batch: usize,
) -> Decision {
    let key = ProbeKey::training(net, variant, effective_threads(threads), batch);
    PrecisionCache::global().decide(&key, || {
        let n = measuring_threads(threads);
        let mut timings = measure_training(net, variant, n, batch);
        timings.contended |= n < key.threads;
        timings
    })
}

/// Times training steps (batch building, forward, backward, optimizer) of a fresh `net`
/// on `variant`'s positions at `batch` samples with `threads` torch threads, in fp32 and
/// in bf16 mixed precision. Returns fp32's times alone if a bf16 trainer cannot be made.
pub fn measure_training(
    net: &NetConfig,
    variant: Variant,
    threads: usize,
    batch: usize,
) -> Timings {
    let window = crate::replay::ReplayWindow::from_samples(
        crate::bench::sample_positions(variant, batch.max(64)),
        batch.max(64),
        variant,
    );
    let trainer = |precision| {
        let config = TrainConfig {
            net: net.clone(),
            batch_size: batch,
            precision,
            threads,
            ..TrainConfig::default()
        };
        let model = Model::new(ModelInfo::new(net, variant), Device::Cpu);
        crate::trainer::Trainer::assemble(config, model, Device::Cpu).ok()
    };
    let mut float = trainer(Precision::Float);
    let mut bfloat16 = trainer(Precision::Bfloat16);
    let bf16 = bfloat16.is_some();
    with_threads(threads, || {
        measure(&[batch], bf16, TRAINING_ROUNDS, |p, _| {
            let t = match p {
                Precision::Bfloat16 => bfloat16.as_mut(),
                _ => float.as_mut(),
            };
            let start = Instant::now();
            if let Some(t) = t {
                let _ = t.train_step(&window);
            }
            start.elapsed().as_secs_f64()
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rules of `auto`, on every kind of hardware whatever this machine is: training
    /// takes bf16 only with AMX (and then only as measured), inference on the CPU is
    /// what its measurement says, CUDA is fp32, explicit precisions are themselves; a
    /// rule that does not measure never runs the measurement.
    #[test]
    fn auto_rules_follow_the_hardware_not_this_machine() {
        let never = || -> Precision { panic!("no measurement expected") };
        let (none, avx512_bf16, amx) = (
            Hardware {
                bf16: false,
                amx_bf16: false,
            },
            Hardware {
                bf16: true,
                amx_bf16: false,
            },
            Hardware {
                bf16: true,
                amx_bf16: true,
            },
        );
        for hardware in [none, avx512_bf16] {
            assert_eq!(
                training_rule(Precision::Auto, Device::Cpu, hardware, never),
                Precision::Float,
                "{hardware:?}"
            );
        }
        for measured in [Precision::Float, Precision::Bfloat16] {
            assert_eq!(
                training_rule(Precision::Auto, Device::Cpu, amx, || measured),
                measured
            );
            assert_eq!(
                inference_rule(Precision::Auto, Device::Cpu, || measured),
                measured
            );
        }
        let cuda = Device::Cuda(0);
        assert_eq!(
            training_rule(Precision::Auto, cuda, amx, never),
            Precision::Float
        );
        assert_eq!(
            inference_rule(Precision::Auto, cuda, never),
            Precision::Float
        );
        for explicit in [Precision::Float, Precision::Bfloat16] {
            assert_eq!(training_rule(explicit, Device::Cpu, none, never), explicit);
            assert_eq!(inference_rule(explicit, cuda, never), explicit);
        }
    }
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn timings(float_ms: [f64; 2], bfloat16_ms: Option<[f64; 2]>) -> Timings {
        Timings {
            batches: vec![16, 64],
            float_ms: float_ms.to_vec(),
            bfloat16_ms: bfloat16_ms.map(|t| t.to_vec()),
            others_busy: None,
            contended: false,
        }
    }

    #[test]
    fn the_faster_total_wins() {
        // bf16 faster over both batch sizes: bf16.
        assert_eq!(
            choose(&timings([0.41, 1.20], Some([0.30, 0.80]))),
            Precision::Bfloat16
        );
        // fp32 faster (the 2-core Xeon without AMX of issue 48): fp32.
        assert_eq!(
            choose(&timings([0.41, 1.20], Some([0.55, 1.52]))),
            Precision::Float
        );
        // The total decides: bf16 slower at 16, faster at 64 by more.
        assert_eq!(
            choose(&timings([0.40, 1.60], Some([0.50, 1.20]))),
            Precision::Bfloat16
        );
        // A tie or times that do not compare keep fp32.
        assert_eq!(
            choose(&timings([0.5, 1.0], Some([1.0, 0.5]))),
            Precision::Float
        );
        assert_eq!(
            choose(&timings([0.5, 1.0], Some([f64::NAN, 0.5]))),
            Precision::Float
        );
        assert_eq!(choose(&timings([0.5, 1.0], None)), Precision::Float);
    }

    #[test]
    fn bf16_without_hardware_is_not_measured() {
        let calls = AtomicUsize::new(0);
        let t = measure(&[16, 64], false, INFERENCE_ROUNDS, |p, b| {
            assert_eq!(p, Precision::Float, "bf16 measured without bf16 hardware");
            calls.fetch_add(1, Ordering::Relaxed);
            b as f64 * 1e-6
        });
        assert!(calls.load(Ordering::Relaxed) >= 2 * (1 + INFERENCE_ROUNDS.min_rounds));
        assert_eq!(t.bfloat16_ms, None);
        assert_eq!(choose(&t), Precision::Float);
        // With the hardware both are measured, and the faster one (bf16 here) is chosen;
        // the best time of each is kept (the slow warm-up and a slow pass are not).
        let mut n = 0;
        let t = measure(&[16, 64], true, INFERENCE_ROUNDS, |p, b| {
            n += 1;
            let slow = if n <= 4 || n == 7 { 10.0 } else { 1.0 };
            let per = if p == Precision::Bfloat16 { 0.5 } else { 1.0 };
            slow * per * b as f64 * 1e-6
        });
        let close = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9);
        assert!(close(&t.float_ms, &[0.016, 0.064]), "{t:?}");
        assert!(
            close(t.bfloat16_ms.as_deref().unwrap(), &[0.008, 0.032]),
            "{t:?}"
        );
        assert!(t.is_complete());
        assert_eq!(choose(&t), Precision::Bfloat16);
        assert!(t.describe().contains("bf16 0.01/0.03 ms at batch 16/64"));
    }

    fn key() -> ProbeKey {
        ProbeKey {
            work: "inference".into(),
            cpu: "Test CPU [avx512f avx512_bf16]".into(),
            torch: "2.11.0".into(),
            net: net_identity(&NetConfig::small(), Variant::Standard),
            threads: 2,
        }
    }

    #[test]
    fn a_stored_choice_is_reused_and_another_key_is_measured_again() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("sub").join("precision.json");
        let calls = AtomicUsize::new(0);
        let measured = |t: Timings| {
            let calls = &calls;
            move || {
                calls.fetch_add(1, Ordering::Relaxed);
                t
            }
        };
        let bf16_faster = timings([0.41, 1.20], Some([0.30, 0.80]));
        let cache = PrecisionCache::new(Some(file.clone()));
        let d = cache.decide(&key(), measured(bf16_faster.clone()));
        assert_eq!((d.precision, d.measured_now), (Precision::Bfloat16, true));
        assert_eq!(calls.load(Ordering::Relaxed), 1);
        // The same process: the memo.
        let d = cache.decide(&key(), measured(timings([1.0, 1.0], None)));
        assert_eq!(d.precision, Precision::Bfloat16);
        assert_eq!(calls.load(Ordering::Relaxed), 1);
        // Another process (a fresh cache on the same file): the file.
        let again = PrecisionCache::new(Some(file.clone()));
        let d = again.decide(&key(), measured(timings([1.0, 1.0], None)));
        assert_eq!(
            (d.precision, d.measured_now, d.timings.clone()),
            (Precision::Bfloat16, false, bf16_faster.clone())
        );
        assert!(d.describe().contains("cached in"), "{}", d.describe());
        assert_eq!(calls.load(Ordering::Relaxed), 1);
        // Another torch, shape, CPU, thread count or work: measured again, each once.
        let others = [
            ProbeKey {
                torch: "2.12.0".into(),
                ..key()
            },
            ProbeKey {
                net: net_identity(&NetConfig::cpu(), Variant::Standard),
                ..key()
            },
            ProbeKey {
                net: net_identity(&NetConfig::small(), Variant::Six),
                ..key()
            },
            ProbeKey {
                cpu: "Other CPU [avx2 fma]".into(),
                ..key()
            },
            ProbeKey {
                threads: 1,
                ..key()
            },
            ProbeKey {
                work: "training batch 256".into(),
                ..key()
            },
        ];
        for (i, other) in others.iter().enumerate() {
            let d = again.decide(other, measured(timings([0.4, 1.2], Some([0.5, 1.5]))));
            assert_eq!((d.precision, d.measured_now), (Precision::Float, true));
            assert_eq!(calls.load(Ordering::Relaxed), 2 + i);
        }
        // All are in the file now, the first one unchanged.
        let third = PrecisionCache::new(Some(file.clone()));
        for k in std::iter::once(key()).chain(others) {
            let d = third.decide(&k, measured(timings([1.0, 1.0], None)));
            assert!(!d.measured_now, "{}", k.text());
        }
        assert_eq!(third.decide(&key(), || unreachable!()).timings, bf16_faster);
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(file.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("precision.json")]);
    }

    #[test]
    fn times_taken_on_a_busy_machine_are_not_cached() {
        assert!(!contended(0.1, 2, 2));
        assert!(contended(0.5, 2, 2));
        assert!(!contended(0.9, 1, 2));
        assert!(contended(1.4, 1, 2));
        assert!(!contended(3.0, 4, 64));
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("precision.json");
        let busy = Timings {
            others_busy: Some(1.7),
            contended: true,
            ..timings([180.0, 4.1], Some([185.0, 310.0]))
        };
        let cache = PrecisionCache::new(Some(file.clone()));
        let d = cache.decide(&key(), || busy.clone());
        assert_eq!((d.precision, &d.file), (Precision::Float, &None));
        assert!(
            d.describe()
                .contains("not cached: other processes kept 1.7 cores busy"),
            "{}",
            d.describe()
        );
        assert!(!file.exists());
        // The process keeps it; another measures again, and caches quiet times.
        assert_eq!(cache.decide(&key(), || unreachable!()).timings, busy);
        let quiet = Timings {
            others_busy: Some(0.1),
            ..timings([0.41, 1.20], Some([0.30, 0.80]))
        };
        let d = PrecisionCache::new(Some(file.clone())).decide(&key(), || quiet.clone());
        assert_eq!(
            (d.precision, d.file),
            (Precision::Bfloat16, Some(file.clone()))
        );
        let d = PrecisionCache::new(Some(file.clone())).decide(&key(), || unreachable!());
        assert_eq!(d.timings, quiet);
    }

    #[test]
    fn a_corrupt_or_unreadable_cache_is_measured_again() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("precision.json");
        let bf16_faster = timings([0.41, 1.20], Some([0.30, 0.80]));
        for corrupt in [
            "{ not json",
            "",
            "[1, 2]",
            r#"{"entries": {"x": 3}}"#,
            "\u{0}\u{1}garbage",
        ] {
            std::fs::write(&file, corrupt).unwrap();
            let d = PrecisionCache::new(Some(file.clone())).decide(&key(), || bf16_faster.clone());
            assert!(d.measured_now, "{corrupt:?}");
            // ...and replaced by a good file.
            let d = PrecisionCache::new(Some(file.clone())).decide(&key(), || unreachable!());
            assert_eq!(d.precision, Precision::Bfloat16);
        }
        // An entry with incomplete times is measured again.
        let text = std::fs::read_to_string(&file)
            .unwrap()
            .replace("0.41,", "")
            .replace("0.41", "");
        std::fs::write(&file, text).unwrap();
        let d = PrecisionCache::new(Some(file.clone())).decide(&key(), || bf16_faster.clone());
        assert!(d.measured_now);
        // A directory where the file should be: read and write fail, the choice stands.
        let blocked = dir.path().join("blocked");
        std::fs::create_dir(&blocked).unwrap();
        let d = PrecisionCache::new(Some(blocked)).decide(&key(), || bf16_faster.clone());
        assert_eq!((d.precision, d.measured_now), (Precision::Bfloat16, true));
        // No file at all: the memo only.
        let memo = PrecisionCache::new(None);
        assert!(memo.decide(&key(), || bf16_faster.clone()).measured_now);
        let d = memo.decide(&key(), || unreachable!());
        assert_eq!((d.precision, d.file), (Precision::Bfloat16, None));
    }

    #[test]
    fn the_cache_file_follows_the_environment() {
        use std::ffi::OsStr;
        let s = |t: &'static str| Some(OsStr::new(t));
        assert_eq!(
            cache_file_from(s("/t/p.json"), s("/x"), s("/h")),
            Some(PathBuf::from("/t/p.json"))
        );
        assert_eq!(cache_file_from(s("off"), s("/x"), s("/h")), None);
        assert_eq!(cache_file_from(s(""), s("/x"), s("/h")), None);
        assert_eq!(
            cache_file_from(None, s("/x"), s("/h")),
            Some(PathBuf::from("/x/loazero/precision.json"))
        );
        assert_eq!(
            cache_file_from(None, s(""), s("/h")),
            Some(PathBuf::from("/h/.cache/loazero/precision.json"))
        );
        assert_eq!(cache_file_from(None, None, None), None);
        // This crate's tests keep no file.
        assert_eq!(PrecisionCache::global().file(), None);
    }

    #[test]
    fn keys_name_the_cpu_and_the_shape() {
        let spr = "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Platinum 8581C\n\
                   flags\t\t: fpu avx2 fma avx512f avx512_bf16 amx_bf16 amx_tile\n";
        let id = cpu_identity(spr, None, None);
        assert_eq!(
            id,
            "Intel(R) Xeon(R) Platinum 8581C [avx2 fma avx512f avx512_bf16 amx_tile amx_bf16]"
        );
        assert_ne!(cpu_identity(spr, Some("AVX2"), None), id);
        assert_ne!(cpu_identity(spr, None, Some("avx2")), id);
        assert_ne!(cpu_identity(&spr.replace(" amx_bf16", ""), None, None), id);
        let small = net_identity(&NetConfig::small(), Variant::Standard);
        for other in [
            net_identity(&NetConfig::cpu(), Variant::Standard),
            net_identity(&NetConfig::small(), Variant::Six),
            net_identity(&NetConfig::small(), Variant::Parachute),
            net_identity(
                &NetConfig {
                    plane_set: crate::encoding::PlaneSet::Loa,
                    ..NetConfig::small()
                },
                Variant::Standard,
            ),
            net_identity(
                &NetConfig {
                    occupancy_head: true,
                    ..NetConfig::small()
                },
                Variant::Standard,
            ),
        ] {
            assert_ne!(other, small);
        }
        // Variants of one layout share a shape.
        assert_eq!(
            net_identity(&NetConfig::small(), Variant::ScrambledEggs),
            small
        );
    }

    /// The real measurements run (on a tiny net, one thread) and stay quick.
    #[test]
    fn measurements_run_quickly() {
        crate::test_threads();
        let net = NetConfig::tiny();
        let start = Instant::now();
        let t = measure_inference(&net, Variant::Standard, 1, true);
        assert!(t.is_complete(), "{t:?}");
        assert!(t.bfloat16_ms.is_some());
        let t = measure_inference(&net, Variant::Standard, 1, false);
        assert!(t.is_complete() && t.bfloat16_ms.is_none(), "{t:?}");
        let t = measure_training(&net, Variant::Standard, 1, 16);
        assert!(t.is_complete(), "{t:?}");
        assert_eq!(t.batches, vec![16]);
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
        // The resolvers: explicit precisions are kept, `auto` on CUDA is fp32.
        for p in [Precision::Float, Precision::Bfloat16, Precision::Half] {
            assert_eq!(
                inference_precision(p, Device::Cpu, &net, Variant::Standard, 1),
                p
            );
            assert_eq!(
                training_precision(p, Device::Cpu, &net, Variant::Standard, 1, 16),
                p
            );
        }
        let cuda = Device::Cuda(0);
        assert_eq!(
            inference_precision(Precision::Auto, cuda, &net, Variant::Standard, 1),
            Precision::Float
        );
        assert_eq!(
            training_precision(Precision::Auto, cuda, &net, Variant::Standard, 1, 16),
            Precision::Float
        );
        let auto = inference_precision(Precision::Auto, Device::Cpu, &net, Variant::Standard, 1);
        assert_ne!(auto, Precision::Auto);
        if !crate::cpu_peak::has_bf16_hardware() {
            assert_eq!(auto, Precision::Float);
        }
    }
}
