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
mod tests {
    use super::*;
    use crate::config::NetConfig;
    use crate::config::Precision;
    use loa::{Move, Position, Rules, Variant};

    fn tiny_model() -> Model {
        tiny_model_for(Variant::Standard)
    }

    fn tiny_model_for(variant: Variant) -> Model {
        tch::manual_seed(7);
        let net = NetConfig::tiny();
        Model::new(ModelInfo::new(&net, variant), Device::Cpu)
    }

    /// Inference in fp32, whatever `auto` picks on this CPU: these tests compare with
    /// the reference forward pass to 1e-5.
    fn fp32() -> InferenceConfig {
        InferenceConfig {
            precision: Precision::Float,
            ..InferenceConfig::default()
        }
    }

    /// bf16 inference (folded or not) answers within bf16's rounding of fp32: priors and
    /// values within a few hundredths.
    #[test]
    fn bfloat16_inference_stays_close_to_fp32() {
        crate::test_threads();
        let model = tiny_model();
        let ps = positions(12);
        let (priors, values) = reference(&model, &batch_of(&ps));
        for fold_batch_norm in [true, false] {
            let config = InferenceConfig {
                precision: Precision::Bfloat16,
                fold_batch_norm,
                ..InferenceConfig::default()
            };
            let eval =
                NetEvaluator::from_weights(model.info.clone(), model.weights(), &config, "b")
                    .unwrap();
            let mut b = batch_of(&ps);
            eval.evaluate(&mut b).unwrap();
            let max_diff = |a: &[f32], b: &[f32]| {
                a.iter()
                    .zip(b)
                    .map(|(x, y)| (x - y).abs())
                    .fold(0f32, f32::max)
            };
            let (dp, dv) = (max_diff(&b.priors, &priors), max_diff(&b.values, &values));
            assert!(
                dp < 0.03 && dv < 0.05,
                "fold {fold_batch_norm}: priors {dp}, values {dv}"
            );
            assert!(
                dp > 0.0,
                "bf16 rounding shows: the test compares bf16 outputs"
            );
        }
    }

    fn positions(n: usize) -> Vec<Position> {
        let rules = Rules::classic();
        let mut p = Position::start(Variant::Standard, &rules);
        let mut out = vec![];
        for k in 0..n {
            out.push(p);
            let moves = p.legal_moves(&rules);
            p.play(moves[(k * 11) % moves.len()]);
            if p.outcome(&rules).is_some() {
                p = Position::start(Variant::Standard, &rules);
            }
        }
        out
    }

    /// `model`'s weights, every one zero.
    fn zeroed_weights(model: &Model) -> Vec<(String, Tensor)> {
        model
            .weights()
            .into_iter()
            .map(|(n, t)| (n, t.zeros_like()))
            .collect()
    }

    fn batch_of(ps: &[Position]) -> EvalBatch {
        let rules = Rules::classic();
        let mut b = EvalBatch::new();
        for p in ps {
            let moves: Vec<Move> = p.legal_moves(&rules).to_vec();
            b.push(*p, &moves);
        }
        b
    }

    /// Direct computation of the expected outputs with the model itself.
    fn reference(model: &Model, b: &EvalBatch) -> (Vec<f32>, Vec<f32>) {
        let _g = tch::no_grad_guard();
        let x = input_tensor::of_positions(
            &b.positions,
            model.info.variant,
            crate::encoding::PlaneSet::Board,
        )
        .unwrap();
        let out = model.net.forward(&x, false);
        let values = Vec::<f32>::try_from(wdl_to_value(&out.wdl)).unwrap();
        let mut priors = vec![];
        for i in 0..b.len() {
            let row = out.policy.get(i as i64);
            let idx: Vec<i64> = b.moves[b.range(i)]
                .iter()
                .map(|m| b.positions[i].policy_index(*m).unwrap() as i64)
                .collect();
            let l = row
                .index_select(0, &Tensor::from_slice(&idx))
                .softmax(0, Kind::Float);
            priors.extend(Vec::<f32>::try_from(l).unwrap());
        }
        (priors, values)
    }

    #[test]
    fn matches_direct_forward_from_many_threads() {
        crate::test_threads();
        let model = tiny_model();
        let config = InferenceConfig {
            max_batch: 64,
            ..fp32()
        };
        let eval = Arc::new(
            NetEvaluator::from_weights(model.info.clone(), model.weights(), &config, "tiny")
                .unwrap(),
        );
        assert_eq!(eval.name(), "net:tiny@cpu");
        let ps = positions(40);
        let expected = {
            let b = batch_of(&ps);
            reference(&model, &b)
        };
        std::thread::scope(|s| {
            for t in 0..4 {
                let eval = eval.clone();
                let ps = &ps;
                let expected = &expected;
                s.spawn(move || {
                    for round in 0..5 {
                        let lo = (t * 7 + round * 3) % 30;
                        let mut b = batch_of(&ps[lo..lo + 10]);
                        eval.evaluate(&mut b).unwrap();
                        let b_full = batch_of(ps);
                        for i in 0..10 {
                            let r = b_full.range(lo + i);
                            let got = &b.priors[b.range(i)];
                            let want = &expected.0[r];
                            for (g, w) in got.iter().zip(want) {
                                assert!((g - w).abs() < 1e-5, "{g} vs {w}");
                            }
                            let s: f32 = got.iter().sum();
                            assert!((s - 1.0).abs() < 1e-4);
                            assert!((b.values[i] - expected.1[lo + i]).abs() < 1e-5);
                        }
                    }
                });
            }
        });
        assert!(eval.stats().batches.load(Ordering::Relaxed) >= 1);
        assert_eq!(eval.stats().requests.load(Ordering::Relaxed), 20);
    }

    /// Two inference threads (two model copies) answer exactly as one does, for one
    /// caller and for several concurrent callers (each compared with the reference
    /// forward pass).
    #[test]
    fn two_forward_threads_answer_as_one() {
        crate::test_threads();
        let model = tiny_model();
        let ps = positions(40);
        let one =
            NetEvaluator::from_weights(model.info.clone(), model.weights(), &fp32(), "1").unwrap();
        let config = InferenceConfig {
            forward_threads: 2,
            max_batch: 8,
            ..fp32()
        };
        let two = Arc::new(
            NetEvaluator::from_weights(model.info.clone(), model.weights(), &config, "2").unwrap(),
        );
        let mut a = batch_of(&ps[..12]);
        let mut b = batch_of(&ps[..12]);
        one.evaluate(&mut a).unwrap();
        two.evaluate(&mut b).unwrap();
        assert_eq!(a.values, b.values);
        assert_eq!(a.priors, b.priors);
        let expected = reference(&model, &batch_of(&ps));
        let full = batch_of(&ps);
        std::thread::scope(|s| {
            for t in 0..4 {
                let two = two.clone();
                let (ps, expected, full) = (&ps, &expected, &full);
                s.spawn(move || {
                    for round in 0..6 {
                        let lo = (t * 7 + round * 5) % 32;
                        let mut b = batch_of(&ps[lo..lo + 8]);
                        two.evaluate(&mut b).unwrap();
                        for i in 0..8 {
                            let want = &expected.0[full.range(lo + i)];
                            for (g, w) in b.priors[b.range(i)].iter().zip(want) {
                                assert!((g - w).abs() < 1e-5, "{g} vs {w}");
                            }
                            assert!((b.values[i] - expected.1[lo + i]).abs() < 1e-5);
                        }
                    }
                });
            }
        });
        assert_eq!(two.stats().requests.load(Ordering::Relaxed), 1 + 24);
        let bad = InferenceConfig {
            forward_threads: 0,
            ..fp32()
        };
        assert!(
            NetEvaluator::from_weights(model.info.clone(), model.weights(), &bad, "0").is_err()
        );
    }

    /// After `set_weights` every inference thread's copy answers with the new weights:
    /// concurrent calls (more than threads, with the cache on, which is cleared too) get
    /// what an evaluator made from the new weights gives; a wrong shape is refused by all.
    #[test]
    fn new_weights_reach_every_forward_thread() {
        crate::test_threads();
        let model = tiny_model();
        let config = InferenceConfig {
            forward_threads: 3,
            max_batch: 4,
            cache_positions: 64,
            ..fp32()
        };
        let eval = Arc::new(
            NetEvaluator::from_weights(model.info.clone(), model.weights(), &config, "w").unwrap(),
        );
        let ps = positions(24);
        let call_all = |eval: &Arc<NetEvaluator>| {
            std::thread::scope(|s| {
                let handles: Vec<_> = (0..6)
                    .map(|t| {
                        let eval = eval.clone();
                        let ps = &ps;
                        s.spawn(move || {
                            (0..4)
                                .map(|round| {
                                    let lo = (t * 4 + round) % 20;
                                    let mut b = batch_of(&ps[lo..lo + 4]);
                                    eval.evaluate(&mut b).unwrap();
                                    (lo, b)
                                })
                                .collect::<Vec<_>>()
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .flat_map(|h| h.join().unwrap())
                    .collect::<Vec<_>>()
            })
        };
        // Warm every copy (and cache) with the old weights.
        call_all(&eval);
        tch::manual_seed(99);
        let other = Model::new(model.info.clone(), Device::Cpu);
        eval.set_weights(other.weights()).unwrap();
        let fresh =
            NetEvaluator::from_weights(other.info.clone(), other.weights(), &fp32(), "fresh")
                .unwrap();
        let answers = call_all(&eval);
        assert_eq!(answers.len(), 24);
        for (lo, b) in answers {
            let mut want = batch_of(&ps[lo..lo + 4]);
            fresh.evaluate(&mut want).unwrap();
            for (g, w) in b.priors.iter().zip(&want.priors) {
                assert!((g - w).abs() < 1e-5, "{g} vs {w}");
            }
            for (g, w) in b.values.iter().zip(&want.values) {
                assert!((g - w).abs() < 1e-5, "{g} vs {w}");
            }
        }
        let bad = vec![(
            "value.fc2.bias".to_string(),
            Tensor::zeros([5], (Kind::Float, Device::Cpu)),
        )];
        assert!(eval.set_weights(bad).is_err());
    }

    /// Not a test: positions per second of two concurrent callers (16 positions a call,
    /// as a timed model player sends) with one and two inference threads, one torch
    /// thread each, on the small network (`cargo test --release -p train --lib --
    /// --ignored --nocapture forward_threads_speed_probe`). A probe on a shared machine,
    /// not a benchmark.
    #[test]
    #[ignore]
    fn forward_threads_speed_probe() {
        tch::manual_seed(3);
        let model = Model::new(
            ModelInfo::new(&NetConfig::small(), Variant::Standard),
            Device::Cpu,
        );
        let ps = positions(64);
        for forward_threads in [1, 2] {
            let config = InferenceConfig {
                forward_threads,
                threads: 1,
                deadline_us: 0,
                ..InferenceConfig::default()
            };
            let eval = Arc::new(
                NetEvaluator::from_weights(model.info.clone(), model.weights(), &config, "s")
                    .unwrap(),
            );
            let t = Instant::now();
            let until = t + Duration::from_secs(3);
            let done: usize = std::thread::scope(|s| {
                let handles: Vec<_> = (0..2)
                    .map(|c| {
                        let (eval, ps) = (eval.clone(), &ps);
                        s.spawn(move || {
                            let mut n = 0;
                            let mut k = c * 16;
                            while Instant::now() < until {
                                let mut b = batch_of(&ps[k % 48..k % 48 + 16]);
                                eval.evaluate(&mut b).unwrap();
                                n += b.len();
                                k += 16;
                            }
                            n
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).sum()
            });
            let secs = t.elapsed().as_secs_f64();
            println!(
                "forward_threads {forward_threads}: {:>7.0} positions/s, mean batch {:.1}",
                done as f64 / secs,
                eval.stats().mean_batch()
            );
            // One MCTS player with as many search threads as inference threads.
            let mcts = selfplay::MctsConfig {
                leaves_per_batch: 16,
                ..selfplay::MctsConfig::default()
            };
            let mut player = selfplay::MctsPlayer::new(mcts, 1, eval.clone());
            player.set_threads(forward_threads);
            let game = loa::Game::new(Variant::Standard, Rules::classic());
            let t = Instant::now();
            player
                .choose_move_until(&game, t + Duration::from_secs(3), u32::MAX)
                .unwrap();
            println!(
                "forward_threads {forward_threads}, {forward_threads} search threads: {:>7.0} \
                 simulations/s",
                player.last_stats().simulations as f64 / t.elapsed().as_secs_f64()
            );
        }
    }

    /// With the cache on: a repeated position is answered from the cache with the same
    /// outputs, a different move list is a miss, and new weights clear the cache.
    #[test]
    fn cache_answers_repeats_and_forgets_old_weights() {
        crate::test_threads();
        let model = tiny_model();
        let config = InferenceConfig {
            cache_positions: 64,
            ..fp32()
        };
        let eval =
            NetEvaluator::from_weights(model.info.clone(), model.weights(), &config, "c").unwrap();
        let plain =
            NetEvaluator::from_weights(model.info.clone(), model.weights(), &fp32(), "p").unwrap();
        let ps = positions(5);
        let mut first = batch_of(&ps);
        eval.evaluate(&mut first).unwrap();
        let stats = eval.stats();
        assert_eq!(stats.cache_lookups.load(Ordering::Relaxed), 5);
        assert_eq!(stats.cache_hits.load(Ordering::Relaxed), 0);
        // The same positions again, in another order and with a duplicate.
        let again: Vec<Position> = vec![ps[3], ps[0], ps[3]];
        let mut second = batch_of(&again);
        eval.evaluate(&mut second).unwrap();
        assert_eq!(stats.cache_hits.load(Ordering::Relaxed), 3);
        assert_eq!(stats.positions.load(Ordering::Relaxed), 5);
        let mut reference = batch_of(&again);
        plain.evaluate(&mut reference).unwrap();
        for (a, b) in second.priors.iter().zip(&reference.priors) {
            assert!((a - b).abs() < 1e-5, "{a} {b}");
        }
        for (a, b) in second.values.iter().zip(&reference.values) {
            assert!((a - b).abs() < 1e-5, "{a} {b}");
        }
        assert_eq!(plain.stats().cache_hit_rate(), None);
        assert_eq!(stats.cache_hit_rate(), Some(3.0 / 8.0));
        // The same position asked with fewer moves is not answered from the cache.
        let mut fewer = EvalBatch::new();
        let moves = ps[1].legal_moves(&Rules::classic()).to_vec();
        fewer.push(ps[1], &moves[..moves.len() - 1]);
        eval.evaluate(&mut fewer).unwrap();
        assert_eq!(stats.cache_hits.load(Ordering::Relaxed), 3);
        // New weights: nothing is answered from the old ones.
        eval.set_weights(zeroed_weights(&model)).unwrap();
        let mut after = batch_of(&ps);
        eval.evaluate(&mut after).unwrap();
        assert_eq!(stats.cache_hits.load(Ordering::Relaxed), 3);
        assert!(after.values.iter().all(|v| v.abs() < 1e-6));
    }

    /// W/D/L through the evaluator: the network's probabilities, from the pass that gives
    /// the values (win − loss), never answered by the cache.
    #[test]
    fn wdl_comes_from_the_same_forward_pass() {
        crate::test_threads();
        let model = tiny_model();
        let config = InferenceConfig {
            cache_positions: 64,
            ..fp32()
        };
        let eval =
            NetEvaluator::from_weights(model.info.clone(), model.weights(), &config, "w").unwrap();
        let ps = positions(6);
        let mut plain = batch_of(&ps);
        eval.evaluate(&mut plain).unwrap();
        let mut asked = batch_of(&ps);
        let wdl = eval.evaluate_with_wdl(&mut asked).unwrap();
        assert_eq!(wdl.len(), ps.len());
        let stats = eval.stats();
        assert_eq!(stats.positions.load(Ordering::Relaxed), 12);
        assert_eq!(stats.cache_lookups.load(Ordering::Relaxed), 6);
        assert_eq!(stats.cache_hits.load(Ordering::Relaxed), 0);
        let expected = {
            let _g = tch::no_grad_guard();
            let x = input_tensor::of_positions(&ps, model.info.variant, model.info.net.plane_set)
                .unwrap();
            let p = model.net.forward(&x, false).wdl.softmax(-1, Kind::Float);
            Vec::<f32>::try_from(p.flatten(0, -1)).unwrap()
        };
        for (i, row) in wdl.iter().enumerate() {
            for (j, &p) in row.iter().enumerate() {
                assert!((p - expected[i * 3 + j]).abs() < 1e-5, "{i} {j}: {p}");
            }
            assert!((row[0] - row[2] - asked.values[i]).abs() < 1e-5, "{i}");
            assert!((asked.values[i] - plain.values[i]).abs() < 1e-5, "{i}");
        }
        for (a, b) in asked.priors.iter().zip(&plain.priors) {
            assert!((a - b).abs() < 1e-5, "{a} {b}");
        }
        let mut empty = EvalBatch::new();
        assert!(eval.evaluate_with_wdl(&mut empty).unwrap().is_empty());
    }

    #[test]
    fn weights_swap_and_bad_inputs() {
        crate::test_threads();
        let model = tiny_model();
        let eval = NetEvaluator::from_weights(model.info.clone(), model.weights(), &fp32(), "tiny")
            .unwrap();
        let ps = positions(3);
        let mut b1 = batch_of(&ps);
        eval.evaluate(&mut b1).unwrap();
        // Zero every weight: values become exactly 0 and priors uniform.
        eval.set_weights(zeroed_weights(&model)).unwrap();
        let mut b2 = batch_of(&ps);
        eval.evaluate(&mut b2).unwrap();
        assert_ne!(b1.priors, b2.priors);
        let r = b2.range(0);
        let k = r.len() as f32;
        assert!(b2.priors[r].iter().all(|p| (p - 1.0 / k).abs() < 1e-6));
        assert!(b2.values.iter().all(|v| v.abs() < 1e-6));
        // A wrong shape is refused and the old weights stay.
        let bad = vec![(
            "value.fc2.bias".to_string(),
            Tensor::zeros([5], (Kind::Float, Device::Cpu)),
        )];
        assert!(eval.set_weights(bad).is_err());
        // Positions of another layout are refused with a clear message.
        for (other, word) in [(Variant::Six, "6x6"), (Variant::Gemma, "gemma")] {
            let pos = Position::start(other, &Rules::classic());
            let mut b3 = batch_of(&[pos]);
            let err = eval.evaluate(&mut b3).unwrap_err().to_string();
            assert!(err.contains(word) && err.contains("standard"), "{err}");
        }
        // The same layout is fine.
        let mut b4 = batch_of(&[Position::start(Variant::ScrambledEggs, &Rules::classic())]);
        eval.evaluate(&mut b4).unwrap();
        // A model file of another layout is refused.
        let dir = tempfile::tempdir().unwrap();
        let gemma = dir.path().join("gemma.safetensors");
        tiny_model_for(Variant::Gemma).save(&gemma).unwrap();
        let err = eval.load_weights(&gemma).unwrap_err().to_string();
        assert!(err.contains("gemma.safetensors"), "{err}");
        // An empty batch is fine.
        let mut empty = EvalBatch::new();
        eval.evaluate(&mut empty).unwrap();
    }

    /// Pseudo-random game positions of `variant` for which `keep` holds (no forced passes).
    fn positions_where(
        variant: Variant,
        count: usize,
        keep: impl Fn(&Position) -> bool,
    ) -> Vec<Position> {
        let rules = Rules::classic();
        let mut out = vec![];
        let mut p = Position::start(variant, &rules);
        let mut k = 1usize;
        for _ in 0..20_000 {
            if out.len() == count {
                break;
            }
            let moves = p.legal_moves(&rules);
            if keep(&p) && !moves[0].is_pass() {
                out.push(p);
            }
            k = k
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            p.play(moves[(k >> 33) % moves.len()]);
            if p.outcome(&rules).is_some() || p.ply() > 200 {
                p = Position::start(variant, &rules);
            }
        }
        assert_eq!(out.len(), count, "{variant}: too few positions found");
        out
    }

    /// Priors of drops (parachute), removals (gemma), the players of ambiloa and the hex
    /// board come from the network's extra policy planes, exactly as a direct forward pass
    /// gives them.
    #[test]
    fn priors_cover_drops_removals_and_every_layout() {
        crate::test_threads();
        let has_remove = |p: &Position| {
            let mut list = loa::MoveList::new();
            p.generate_moves(&mut list);
            list.iter().any(|m| m.is_remove())
        };
        let cases: Vec<(Variant, Vec<Position>)> = vec![
            (
                Variant::Parachute,
                positions_where(Variant::Parachute, 6, |p| p.drop_pending()),
            ),
            (
                Variant::Gemma,
                positions_where(Variant::Gemma, 3, has_remove),
            ),
            (
                Variant::Ambiloa,
                positions_where(Variant::Ambiloa, 8, |_| true),
            ),
            (
                Variant::Alveole,
                positions_where(Variant::Alveole, 5, |_| true),
            ),
        ];
        for (variant, ps) in cases {
            let model = tiny_model_for(variant);
            let eval =
                NetEvaluator::from_weights(model.info.clone(), model.weights(), &fp32(), "tiny")
                    .unwrap();
            let mut b = batch_of(&ps);
            eval.evaluate(&mut b).unwrap();
            let (priors, values) = reference(&model, &b);
            for (g, w) in b.priors.iter().zip(&priors) {
                assert!((g - w).abs() < 1e-5, "{variant}: {g} vs {w}");
            }
            for (g, w) in b.values.iter().zip(&values) {
                assert!((g - w).abs() < 1e-5, "{variant}: {g} vs {w}");
            }
            let special = b
                .moves
                .iter()
                .zip(&b.priors)
                .filter(|(m, _)| m.is_drop() || m.is_remove())
                .collect::<Vec<_>>();
            match variant {
                Variant::Parachute | Variant::Gemma => {
                    assert!(!special.is_empty(), "{variant}");
                    assert!(special.iter().all(|(_, &p)| p > 0.0));
                }
                _ => assert!(special.is_empty()),
            }
            for i in 0..b.len() {
                let s: f32 = b.priors[b.range(i)].iter().sum();
                assert!((s - 1.0).abs() < 1e-4, "{variant}: priors sum {s}");
            }
        }
    }

    /// A CUDA evaluator where there is no CUDA is an error that says so; where there is,
    /// it is made.
    #[test]
    fn cuda_request_fails_without_cuda_and_works_with_it() {
        crate::test_threads();
        let model = tiny_model();
        let config = InferenceConfig {
            device: selfplay::Device::Cuda(None),
            ..Default::default()
        };
        let made = NetEvaluator::from_weights(model.info.clone(), model.weights(), &config, "t");
        if tch::Cuda::is_available() {
            assert!(made.is_ok(), "{:?}", made.err().map(|e| e.to_string()));
            return;
        }
        let err = made.err().unwrap().to_string();
        assert!(err.contains("CUDA is not available"), "{err}");
    }
}
