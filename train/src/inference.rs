//! [`NetEvaluator`]: the network behind the [`Evaluator`] trait of the selfplay crate.
//!
//! [`InferenceConfig::forward_threads`] inference threads (1 by default) each own a
//! frozen copy of the model (CPU or CUDA) and its own evaluation cache, and serve every
//! caller from one request queue: requests (whole [`EvalBatch`]es, moved in and out
//! without copying) arrive over a channel that all the threads read; a thread gathers
//! requests until `max_batch` positions are waiting or `deadline_us` has passed since
//! the first, runs one forward pass under `no_grad`, and replies to each caller. So with
//! several threads (and one torch thread each) several callers' batches are evaluated at
//! the same time on several cores. New weights reach each thread over its own channel
//! and are swapped in between its passes; the counters ([`InferenceStats`]) are shared.
//!
//! The same queue answers [`NetEvaluator::evaluate_with_wdl`]: priors and values as
//! [`Evaluator::evaluate`] gives them, with each position's win/draw/loss probabilities
//! from the same forward pass (serve's analysis), never from the cache.

use crate::auto_threads::AutoThreads;
use crate::config::InferenceConfig;
use crate::device::{device_name, resolve_device, PrecisionOn};
use crate::encoding::{encode_into, input_len, same_layout};
use crate::folded::FoldedNet;
use crate::input_tensor;
use crate::model::{read_model_file, Model, ModelInfo};
use crate::net::wdl_to_value;
use crate::policy::PolicyIndex;
use crossbeam_channel::{bounded, select_biased, unbounded, Receiver, Sender};
use loa::{Move, Position};
use selfplay::{EvalBatch, Evaluator};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tch::{Device, Kind, Tensor};

enum Message {
    Eval(Request),
    SetWeights {
        tensors: Vec<(String, Tensor)>,
        reply: Sender<Result<(), String>>,
    },
}

/// A caller's positions waiting for a forward pass.
struct Request {
    batch: EvalBatch,
    /// Whether the caller asks for each position's win/draw/loss probabilities too
    /// ([`NetEvaluator::evaluate_with_wdl`]); such a request bypasses the cache, which
    /// keeps values only.
    wants_wdl: bool,
    reply: Sender<Result<Answer, selfplay::Error>>,
}

/// What a request gets back: its batch with priors and values, and (when it asked) the
/// win/draw/loss probabilities of each of its positions for the side to move.
struct Answer {
    batch: EvalBatch,
    wdl: Vec<[f32; 3]>,
}

/// Counters of the inference threads, summed over all of them (for benchmarks and
/// progress displays).
#[derive(Debug, Default)]
pub struct InferenceStats {
    /// Forward passes run.
    pub batches: AtomicU64,
    /// Positions evaluated.
    pub positions: AtomicU64,
    /// Requests served.
    pub requests: AtomicU64,
    /// Positions looked up in the evaluation cache (every position asked for while the
    /// cache is on).
    pub cache_lookups: AtomicU64,
    /// Positions answered from the cache (not in `positions`).
    pub cache_hits: AtomicU64,
}

impl InferenceStats {
    /// Mean positions per forward pass so far.
    pub fn mean_batch(&self) -> f64 {
        let b = self.batches.load(Ordering::Relaxed);
        self.positions.load(Ordering::Relaxed) as f64 / b.max(1) as f64
    }

    /// Fraction of cache lookups answered from the cache; None when the cache is off or
    /// nothing was asked.
    pub fn cache_hit_rate(&self) -> Option<f64> {
        let lookups = self.cache_lookups.load(Ordering::Relaxed);
        (lookups > 0).then(|| self.cache_hits.load(Ordering::Relaxed) as f64 / lookups as f64)
    }
}

/// One cached evaluation: the position, the moves it was asked with, and the answer.
struct CachedEval {
    position: Position,
    moves: Box<[Move]>,
    priors: Box<[f32]>,
    value: f32,
}

/// The evaluation cache ([`InferenceConfig::cache_positions`]): a direct-mapped table
/// indexed by position hash, a new entry replacing the one in its slot. A hit needs the
/// same position (everything but the ply counter) and the same move list, so an answer is
/// never served for another position. Each inference thread owns one (so with several
/// threads a position may be evaluated once per thread before every cache knows it).
struct EvalCache {
    slots: Vec<Option<CachedEval>>,
}

impl EvalCache {
    /// A cache of at least `capacity` slots (rounded up to a power of two).
    fn new(capacity: usize) -> EvalCache {
        let n = capacity.max(1).next_power_of_two();
        EvalCache {
            slots: (0..n).map(|_| None).collect(),
        }
    }

    fn slot(&self, position: &Position) -> usize {
        position.hash() as usize & (self.slots.len() - 1)
    }

    /// The cached answer for `position` asked with `moves`.
    fn get(&self, position: &Position, moves: &[Move]) -> Option<&CachedEval> {
        self.slots[self.slot(position)]
            .as_ref()
            .filter(|e| e.position == *position && *e.moves == *moves)
    }

    fn insert(&mut self, position: Position, moves: &[Move], priors: &[f32], value: f32) {
        let slot = self.slot(&position);
        self.slots[slot] = Some(CachedEval {
            position,
            moves: moves.into(),
            priors: priors.into(),
            value,
        });
    }

    fn clear(&mut self) {
        self.slots.iter_mut().for_each(|s| *s = None);
    }
}

/// A network evaluator for search: `Send + Sync`, cheap to share (`Arc`); every
/// [`Evaluator::evaluate`] call blocks until its positions are evaluated. Dropping it
/// stops the inference threads and waits for them.
pub struct NetEvaluator {
    /// The request queue every inference thread reads (evaluations only).
    tx: Option<Sender<Message>>,
    /// One channel per inference thread, for new weights.
    controls: Vec<Sender<Message>>,
    threads: Mutex<Vec<std::thread::JoinHandle<()>>>,
    info: ModelInfo,
    name: String,
    stats: Arc<InferenceStats>,
    precision: crate::config::Precision,
}

impl NetEvaluator {
    /// Loads a model (or checkpoint) file and starts the inference threads on
    /// `config.device`. Errors: unreadable or incompatible file, CUDA requested but
    /// unavailable.
    pub fn load(path: &Path, config: &InferenceConfig) -> anyhow::Result<NetEvaluator> {
        let (info, tensors) = read_model_file(path)?;
        let label = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        NetEvaluator::from_weights(info, tensors, config, &label)
    }

    /// Starts an evaluator for a network described by `info` with the given weights
    /// (names as in [`Model::weights`]); `label` names it in [`Evaluator::name`].
    pub fn from_weights(
        info: ModelInfo,
        tensors: Vec<(String, Tensor)>,
        config: &InferenceConfig,
        label: &str,
    ) -> anyhow::Result<NetEvaluator> {
        let device = resolve_device(config.device)?;
        crate::device::set_threads(config.threads);
        if config.max_batch == 0 {
            anyhow::bail!("inference.max_batch must be positive");
        }
        if config.forward_threads == 0 {
            anyhow::bail!("inference.forward_threads must be at least 1");
        }
        let count = config.forward_threads;
        let (tx, rx) = unbounded::<Message>();
        let (ready_tx, ready_rx) = bounded::<Result<(), String>>(count);
        // `auto` resolved once, for this network and these threads (measured on the first
        // use of the shape on this machine), before the inference threads start.
        let mut config = config.clone();
        config.precision = {
            let _no_grad = tch::no_grad_guard();
            crate::auto_precision::inference_precision(
                config.precision,
                device,
                &info.net,
                info.variant,
                config.threads,
            )
        };
        let precision = config.precision;
        let stats = Arc::new(InferenceStats::default());
        let mut controls = Vec::with_capacity(count);
        let mut threads = Vec::with_capacity(count);
        let mut tensors = Some(tensors);
        let mut spawned = Ok(());
        for k in 0..count {
            let (control_tx, control_rx) = unbounded::<Message>();
            let thread_tensors = if k + 1 == count {
                tensors.take().unwrap_or_default()
            } else {
                shallow_copies(tensors.as_deref().unwrap_or_default())
            };
            let name = if count == 1 {
                "loazero-inference".to_string()
            } else {
                format!("loazero-inference-{k}")
            };
            let spawn = std::thread::Builder::new().name(name).spawn({
                let rx = rx.clone();
                let ready_tx = ready_tx.clone();
                let thread_stats = stats.clone();
                let thread_info = info.clone();
                let config = config.clone();
                move || {
                    inference_thread(
                        thread_info,
                        thread_tensors,
                        config,
                        device,
                        thread_stats,
                        ready_tx,
                        rx,
                        control_rx,
                    )
                }
            });
            match spawn {
                Ok(t) => {
                    threads.push(t);
                    controls.push(control_tx);
                }
                Err(e) => {
                    spawned = Err(anyhow::anyhow!(
                        "{label}: cannot start an inference thread: {e}"
                    ));
                    break;
                }
            }
        }
        drop(ready_tx);
        drop(rx);
        let mut failure = spawned.err();
        for _ in 0..threads.len() {
            match ready_rx.recv() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    failure.get_or_insert_with(|| anyhow::anyhow!("{label}: {e}"));
                }
                Err(_) => {
                    failure.get_or_insert_with(|| {
                        anyhow::anyhow!("{label}: an inference thread died while loading the model")
                    });
                    break;
                }
            }
        }
        if let Some(e) = failure {
            // Disconnect the survivors' channels so that they return, then wait for them.
            drop(tx);
            drop(controls);
            for t in threads {
                let _ = t.join();
            }
            return Err(e);
        }
        Ok(NetEvaluator {
            tx: Some(tx),
            controls,
            threads: Mutex::new(threads),
            name: format!("net:{label}@{}", device_name(device)),
            info,
            stats,
            precision,
        })
    }

    /// The precision inference runs in: the configured one, with `auto` resolved for this
    /// network ([`crate::auto_precision::inference_precision`]).
    pub fn precision(&self) -> crate::config::Precision {
        self.precision
    }

    /// The loaded model's description.
    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    /// The inference threads' counters (summed over all of them).
    pub fn stats(&self) -> &InferenceStats {
        &self.stats
    }

    /// Replaces the weights (names as in [`Model::weights`], any device) of every
    /// inference thread's copy of the model; each takes them before its next forward
    /// pass, and this returns once every copy has them (and every cache is cleared).
    /// Shapes must match.
    pub fn set_weights(&self, tensors: Vec<(String, Tensor)>) -> Result<(), selfplay::Error> {
        let count = self.controls.len();
        if count == 0 {
            return Err(dead());
        }
        let (reply, rx) = bounded(count);
        let mut tensors = Some(tensors);
        for (k, control) in self.controls.iter().enumerate() {
            let tensors = if k + 1 == count {
                tensors.take().unwrap_or_default()
            } else {
                shallow_copies(tensors.as_deref().unwrap_or_default())
            };
            control
                .send(Message::SetWeights {
                    tensors,
                    reply: reply.clone(),
                })
                .map_err(|_| dead())?;
        }
        drop(reply);
        let mut result = Ok(());
        for _ in 0..count {
            match rx.recv().map_err(|_| dead())? {
                Ok(()) => {}
                Err(e) => {
                    if result.is_ok() {
                        result = Err(selfplay::Error::Eval(e));
                    }
                }
            }
        }
        result
    }

    /// Replaces the weights with those of a model or checkpoint file of the same shape
    /// and layout (variant, or a variant with the same layout).
    pub fn load_weights(&self, path: &Path) -> anyhow::Result<()> {
        let (info, tensors) = read_model_file(path)?;
        if info.net != self.info.net || !same_layout(info.variant, self.info.variant) {
            anyhow::bail!(
                "{}: a {} network {:?} does not match the loaded {} network {:?}",
                path.display(),
                info.variant,
                info.net,
                self.info.variant,
                self.info.net
            );
        }
        self.set_weights(tensors)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    }

    /// Evaluates `batch` as [`Evaluator::evaluate`] does (priors and values, from the same
    /// forward pass) and returns each position's win/draw/loss probabilities for the side
    /// to move, in the batch's order (the value is win − loss).
    pub fn evaluate_with_wdl(
        &self,
        batch: &mut EvalBatch,
    ) -> Result<Vec<[f32; 3]>, selfplay::Error> {
        self.request(batch, true)
    }

    /// Sends `batch` to the inference threads and waits for its answer, which replaces
    /// it; returns the W/D/L rows (empty unless `wants_wdl`).
    fn request(
        &self,
        batch: &mut EvalBatch,
        wants_wdl: bool,
    ) -> Result<Vec<[f32; 3]>, selfplay::Error> {
        if batch.is_empty() {
            batch.prepare_outputs();
            return Ok(Vec::new());
        }
        let (reply, rx) = bounded(1);
        let taken = std::mem::take(batch);
        self.sender()?
            .send(Message::Eval(Request {
                batch: taken,
                wants_wdl,
                reply,
            }))
            .map_err(|_| dead())?;
        let answer = rx.recv().map_err(|_| dead())??;
        *batch = answer.batch;
        Ok(answer.wdl)
    }

    fn sender(&self) -> Result<&Sender<Message>, selfplay::Error> {
        self.tx.as_ref().ok_or_else(dead)
    }
}

fn dead() -> selfplay::Error {
    selfplay::Error::Eval("the inference thread has stopped".into())
}

/// Handles to the same tensors (no data copied), for another inference thread to copy
/// into its own model.
fn shallow_copies(tensors: &[(String, Tensor)]) -> Vec<(String, Tensor)> {
    tensors
        .iter()
        .map(|(n, t)| (n.clone(), t.shallow_clone()))
        .collect()
}

/// The body of one inference thread: builds its copy of the model from `tensors`,
/// reports on `ready`, then serves `requests` (shared by every inference thread) and its
/// own `control` channel until they disconnect.
#[allow(clippy::too_many_arguments)]
fn inference_thread(
    info: ModelInfo,
    tensors: Vec<(String, Tensor)>,
    config: InferenceConfig,
    device: Device,
    stats: Arc<InferenceStats>,
    ready: Sender<Result<(), String>>,
    requests: Receiver<Message>,
    control: Receiver<Message>,
) {
    let _no_grad = tch::no_grad_guard();
    let setup = |tensors: Vec<(String, Tensor)>| -> anyhow::Result<Model> {
        let mut model = {
            // Its initial weights (overwritten next) are drawn from torch's RNG.
            let _rng = crate::device::torch_rng_lock();
            Model::new(info, device)
        };
        model.set_weights(&tensors)?;
        if device.is_cuda() {
            tch::Cuda::cudnn_set_benchmark(true);
        }
        // The folded network is folded in fp32 and converted afterwards (InferenceLoop);
        // the reference network runs in the precision itself.
        if !config.fold_batch_norm {
            if let Some(kind) = config.precision.lower_kind(device) {
                model.vs.set_kind(kind);
                model.net.set_input_kind(kind);
            }
        }
        model.vs.freeze();
        Ok(model)
    };
    match setup(tensors) {
        Ok(model) => {
            let _ = ready.send(Ok(()));
            drop(ready);
            InferenceLoop::new(model, config, device, stats).run(requests, control);
        }
        Err(e) => {
            let _ = ready.send(Err(format!("{e:#}")));
        }
    }
}

impl Evaluator for NetEvaluator {
    fn evaluate(&self, batch: &mut EvalBatch) -> Result<(), selfplay::Error> {
        self.request(batch, false).map(|_| ())
    }

    fn name(&self) -> String {
        self.name.clone()
    }
}

impl Drop for NetEvaluator {
    fn drop(&mut self) {
        self.tx = None;
        self.controls.clear();
        let threads = match self.threads.lock() {
            Ok(mut t) => std::mem::take(&mut *t),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        };
        for t in threads {
            let _ = t.join();
        }
    }
}

struct InferenceLoop {
    model: Model,
    config: InferenceConfig,
    device: Device,
    stats: Arc<InferenceStats>,
    input: Vec<u8>,
    variant: loa::Variant,
    /// The folded form of `model.net` when `config.fold_batch_norm` (rebuilt whenever
    /// the weights change).
    folded: Option<FoldedNet>,
    /// The evaluation cache when `config.cache_positions > 0`.
    cache: Option<EvalCache>,
    /// The thread count that follows the machine's load, on the CPU with `threads = 0`.
    auto_threads: Option<AutoThreads>,
}

impl InferenceLoop {
    fn new(
        model: Model,
        config: InferenceConfig,
        device: Device,
        stats: Arc<InferenceStats>,
    ) -> Self {
        let variant = model.info.variant;
        let folded = config
            .fold_batch_norm
            .then(|| FoldedNet::with_kind(&model.net, config.precision.kind_on(device)));
        let cache = (config.cache_positions > 0).then(|| EvalCache::new(config.cache_positions));
        let auto_threads = (config.threads == 0 && !device.is_cuda()).then(AutoThreads::from_torch);
        InferenceLoop {
            model,
            config,
            device,
            stats,
            input: Vec::new(),
            variant,
            folded,
            cache,
            auto_threads,
        }
    }

    /// Serves evaluation requests from `requests` (shared with the other inference
    /// threads) and new weights from `control` (this thread's own), new weights first,
    /// until either channel disconnects.
    fn run(mut self, requests: Receiver<Message>, control: Receiver<Message>) {
        let deadline = Duration::from_micros(self.config.deadline_us);
        let mut pending: Vec<Request> = Vec::new();
        let mut deferred: Option<Message> = None;
        loop {
            let first = match deferred.take() {
                Some(m) => m,
                None => {
                    let received = select_biased! {
                        recv(control) -> m => m,
                        recv(requests) -> m => m,
                    };
                    match received {
                        Ok(m) => m,
                        Err(_) => return,
                    }
                }
            };
            let mut positions = match first {
                Message::SetWeights { tensors, reply } => {
                    let r = self
                        .model
                        .set_weights(&tensors)
                        .map_err(|e| format!("{e:#}"));
                    if self.config.fold_batch_norm {
                        let kind = self.config.precision.kind_on(self.device);
                        self.folded = Some(FoldedNet::with_kind(&self.model.net, kind));
                    }
                    if let Some(cache) = &mut self.cache {
                        cache.clear();
                    }
                    let _ = reply.send(r);
                    continue;
                }
                Message::Eval(request) => {
                    let n = request.batch.len();
                    pending.push(request);
                    n
                }
            };
            let until = Instant::now() + deadline;
            while positions < self.config.max_batch {
                let wait = until.saturating_duration_since(Instant::now());
                let received = select_biased! {
                    recv(control) -> m => m,
                    recv(requests) -> m => m,
                    default(wait) => break,
                };
                match received {
                    Ok(Message::Eval(request)) => {
                        positions += request.batch.len();
                        pending.push(request);
                    }
                    Ok(m @ Message::SetWeights { .. }) => {
                        // Applied after this batch.
                        deferred = Some(m);
                        break;
                    }
                    Err(_) => break,
                }
            }
            self.serve(&mut pending);
        }
    }

    /// Evaluates every pending request in one forward pass and replies to each.
    fn serve(&mut self, pending: &mut Vec<Request>) {
        // Reject malformed requests individually.
        let mut good = Vec::with_capacity(pending.len());
        for request in pending.drain(..) {
            match self.check(&request.batch) {
                Ok(()) => good.push(request),
                Err(e) => {
                    let _ = request.reply.send(Err(e));
                }
            }
        }
        // The W/D/L rows of the requests that ask for them (every position of such a
        // request goes through the network).
        let mut wdl: Vec<Vec<[f32; 3]>> = good
            .iter()
            .map(|r| {
                let rows = if r.wants_wdl { r.batch.len() } else { 0 };
                vec![[0.0; 3]; rows]
            })
            .collect();
        if good.is_empty() {
            return;
        }
        // Answer what the cache knows; the rest goes through the network.
        let mut misses: Vec<(usize, usize)> = Vec::new();
        let (mut lookups, mut hits) = (0u64, 0u64);
        for (k, request) in good.iter_mut().enumerate() {
            let batch = &mut request.batch;
            batch.prepare_outputs();
            let cache = self.cache.as_ref().filter(|_| !request.wants_wdl);
            for i in 0..batch.len() {
                let range = batch.range(i);
                let hit = cache.and_then(|c| {
                    lookups += 1;
                    c.get(&batch.positions[i], &batch.moves[range.clone()])
                });
                match hit {
                    Some(e) => {
                        batch.priors[range].copy_from_slice(&e.priors);
                        batch.values[i] = e.value;
                        hits += 1;
                    }
                    None => misses.push((k, i)),
                }
            }
        }
        if self.cache.is_some() {
            self.stats
                .cache_lookups
                .fetch_add(lookups, Ordering::Relaxed);
            self.stats.cache_hits.fetch_add(hits, Ordering::Relaxed);
        }
        self.stats
            .requests
            .fetch_add(good.len() as u64, Ordering::Relaxed);
        if !misses.is_empty() {
            if let Some(auto) = &mut self.auto_threads {
                auto.update();
            }
            let total = misses.len();
            let wants_wdl = good.iter().any(|r| r.wants_wdl);
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let positions = misses.iter().map(|&(k, i)| &good[k].batch.positions[i]);
                self.forward(positions, total, wants_wdl)
            }));
            let (policy, values, probabilities, policy_len) = match result {
                Ok(Ok(out)) => out,
                Ok(Err(e)) => return reply_all(good, &format!("forward pass: {e}")),
                Err(_) => return reply_all(good, "forward pass panicked"),
            };
            self.stats.batches.fetch_add(1, Ordering::Relaxed);
            self.stats
                .positions
                .fetch_add(total as u64, Ordering::Relaxed);
            for (row, &(k, i)) in misses.iter().enumerate() {
                if good[k].wants_wdl {
                    wdl[k][i].copy_from_slice(&probabilities[row * 3..row * 3 + 3]);
                }
                let batch = &mut good[k].batch;
                let logits = &policy[row * policy_len..(row + 1) * policy_len];
                write_priors(batch, i, logits);
                batch.values[i] = values[row].clamp(-1.0, 1.0);
                if let Some(cache) = &mut self.cache {
                    let range = batch.range(i);
                    cache.insert(
                        batch.positions[i],
                        &batch.moves[range.clone()],
                        &batch.priors[range],
                        batch.values[i],
                    );
                }
            }
        }
        for (request, wdl) in good.into_iter().zip(wdl) {
            let answer = Answer {
                batch: request.batch,
                wdl,
            };
            let _ = request.reply.send(Ok(answer));
        }
    }

    fn check(&self, batch: &EvalBatch) -> Result<(), selfplay::Error> {
        if batch.move_start.len() != batch.positions.len() + 1
            || *batch.move_start.last().unwrap_or(&0) as usize != batch.moves.len()
        {
            return Err(selfplay::Error::Eval(
                "malformed batch: move offsets do not match".into(),
            ));
        }
        for (i, p) in batch.positions.iter().enumerate() {
            let v = p.variant();
            if !same_layout(v, self.variant) {
                let n = p.geometry().size;
                return Err(selfplay::Error::Eval(format!(
                    "position {i} is a {v} position ({n}x{n}); the network is for {} and \
                     their layouts differ",
                    self.variant
                )));
            }
            if batch.range(i).is_empty() {
                return Err(selfplay::Error::Eval(format!("position {i} has no moves")));
            }
        }
        Ok(())
    }

    /// Encodes and runs the `total` positions; returns the policy logits (row-major,
    /// `policy_len` per position), the values and, when `wants_wdl`, the win/draw/loss
    /// probabilities (row-major, 3 per position; else empty), on the CPU.
    #[allow(clippy::type_complexity)]
    fn forward<'a>(
        &mut self,
        positions: impl Iterator<Item = &'a Position>,
        total: usize,
        wants_wdl: bool,
    ) -> Result<(Vec<f32>, Vec<f32>, Vec<f32>, usize), tch::TchError> {
        let plane_set = self.model.info.net.plane_set;
        let len = input_len(self.variant, plane_set);
        // On CUDA, pad to a few batch sizes so cuDNN's autotuner sees few shapes.
        let rows = if self.device.is_cuda() {
            total.next_power_of_two().max(8)
        } else {
            total
        };
        self.input.clear();
        self.input.resize(rows * len, 0);
        for (r, p) in positions.enumerate() {
            encode_into(p, plane_set, &mut self.input[r * len..(r + 1) * len]);
        }
        let x = input_tensor::from_encoded(&self.input, self.variant, plane_set)?;
        let out = match &self.folded {
            Some(folded) => folded.forward(&x),
            None => self.model.net.forward(&x, false),
        };
        let policy = out
            .policy
            .f_narrow(0, 0, total as i64)?
            .f_to_kind(Kind::Float)?
            .f_to_device(Device::Cpu)?
            .f_contiguous()?;
        let wdl = out
            .wdl
            .f_narrow(0, 0, total as i64)?
            .f_to_kind(Kind::Float)?;
        let values = wdl_to_value(&wdl).f_to_device(Device::Cpu)?;
        let probabilities = if wants_wdl {
            let p = wdl.f_softmax(-1, Kind::Float)?.f_to_device(Device::Cpu)?;
            Vec::<f32>::try_from(p.f_contiguous()?.f_flatten(0, -1)?)?
        } else {
            Vec::new()
        };
        let policy_len = self.model.net.policy_len();
        Ok((
            Vec::<f32>::try_from(policy.f_flatten(0, -1)?)?,
            Vec::<f32>::try_from(values)?,
            probabilities,
            policy_len,
        ))
    }
}

/// Sends every waiting caller the same failure (`message`, as [`selfplay::Error::Eval`]).
fn reply_all(good: Vec<Request>, message: &str) {
    for request in good {
        let _ = request
            .reply
            .send(Err(selfplay::Error::Eval(message.to_string())));
    }
}

/// Softmax of the logits of position `i`'s legal moves into `batch.priors` (the policy
/// masked to legal moves). A pass (no policy index) gets logit 0; it is only legal alone.
fn write_priors(batch: &mut EvalBatch, i: usize, logits: &[f32]) {
    let range = batch.range(i);
    let pos = batch.positions[i];
    let mut max = f32::NEG_INFINITY;
    for j in range.clone() {
        let l = pos.policy_index(batch.moves[j]).map_or(0.0, |k| logits[k]);
        batch.priors[j] = l;
        max = max.max(l);
    }
    let mut sum = 0.0;
    for j in range.clone() {
        let e = (batch.priors[j] - max).exp();
        batch.priors[j] = e;
        sum += e;
    }
    for j in range {
        batch.priors[j] /= sum;
    }
}

#[cfg(test)]
#[path = "inference_tests.rs"]
mod tests;
