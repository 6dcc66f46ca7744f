//! The trainer: samples batches from a [`ReplayWindow`] (with symmetry augmentation),
//! minimises policy cross-entropy + value cross-entropy (+ weight decay in the optimizer),
//! and saves exact checkpoints.
//!
//! A checkpoint is one safetensors file: the network (`net.*`), the optimizer state
//! (`opt.*`), and a JSON description with the step, the sampling RNG state and the
//! config. Resuming from it continues exactly as if never stopped (same device and
//! thread count). A checkpoint is also a valid model file.

use crate::auto_threads::AutoThreads;
use crate::batch::{make_batch, mask_logits, Batch};
use crate::config::{NetConfig, TrainConfig};
use crate::device::{device_name, resolve_device, set_threads, PrecisionOn};
use crate::metrics::{unix_time, MetricsLog, Record, StepStats, TrainRecord};
use crate::model::{Model, ModelInfo, NET_PREFIX};
use crate::net::wdl_to_value;
use crate::optimizer::{Optimizer, OPT_PREFIX};
use crate::replay::ReplayWindow;
use crate::tensor_file;
use anyhow::{bail, Context, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use selfplay::data::Sample;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Instant;
use tch::{Device, Kind, Tensor};

/// What [`Trainer::train`] did.
#[derive(Debug, Clone, Serialize)]
pub struct TrainSummary {
    /// Steps run.
    pub steps: u64,
    /// Averages over those steps.
    pub stats: StepStats,
    /// Samples per second.
    pub samples_per_sec: f64,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TrainerState {
    config: TrainConfig,
    rng: ChaCha8Rng,
}

/// Prefix of the weight-average tensors in a checkpoint (`ema.` + variable name).
const EMA_PREFIX: &str = "ema.";

/// The exponential moving average of a network's weights ([`TrainConfig::ema_decay`]).
struct WeightAverage {
    /// The averaged network (its `info` follows the trained one's).
    model: Model,
    /// (trained variable, averaged variable): shallow handles on both var stores.
    pairs: Vec<(Tensor, Tensor)>,
}

impl WeightAverage {
    /// An average that starts at `model`'s current weights.
    fn start(model: &Model, device: Device) -> Result<WeightAverage> {
        let mut averaged = Model::new(model.info.clone(), device);
        averaged.set_weights(&model.weights())?;
        Ok(WeightAverage::pair(model, averaged))
    }

    fn pair(model: &Model, averaged: Model) -> WeightAverage {
        let trained = model.vs.variables();
        let mut pairs: Vec<(String, Tensor, Tensor)> = averaged
            .vs
            .variables()
            .into_iter()
            .map(|(name, avg)| {
                let src = trained[&name].shallow_clone();
                (name, src, avg)
            })
            .collect();
        pairs.sort_by(|a, b| a.0.cmp(&b.0));
        WeightAverage {
            model: averaged,
            pairs: pairs.into_iter().map(|(_, s, a)| (s, a)).collect(),
        }
    }

    /// Moves every averaged weight `1 − decay` of the way to the trained one.
    fn update(&mut self, decay: f64, info: &ModelInfo) -> Result<()> {
        tch::no_grad(|| -> Result<()> {
            for (src, avg) in &mut self.pairs {
                let _ = avg.f_lerp_(src, 1.0 - decay)?;
            }
            Ok(())
        })?;
        self.model.info = info.clone();
        Ok(())
    }
}

/// A network being trained, with its optimizer, sampling RNG and (optionally) the moving
/// average of its weights. Owned by one thread.
pub struct Trainer {
    config: TrainConfig,
    model: Model,
    average: Option<WeightAverage>,
    optimizer: Optimizer,
    rng: ChaCha8Rng,
    device: Device,
    /// The run's progress for [`crate::config::LrSchedule::CosineRun`].
    run_progress: Option<f64>,
    /// The thread count that follows the machine's load, on the CPU with `threads = 0`.
    auto_threads: Option<AutoThreads>,
    /// The tensor kind of the training steps below fp32 (`None`: fp32): `config.precision`
    /// with `auto` resolved once ([`crate::auto_precision::training_precision`]).
    training_kind: Option<Kind>,
}

impl Trainer {
    /// A fresh network for `variant`'s layout (weights seeded by `config.seed`).
    pub fn new(config: TrainConfig, variant: loa::Variant) -> Result<Trainer> {
        config.validate()?;
        let device = resolve_device(config.device)?;
        set_threads(config.threads);
        let _rng = crate::device::torch_rng_lock();
        tch::manual_seed(config.seed as i64);
        let model = Model::new(ModelInfo::new(&config.net, variant), device);
        Trainer::assemble(config, model, device)
    }

    /// Continues training a model file (or a checkpoint's weights) with a fresh
    /// optimizer; the step count is the model's. The model's net shape must be
    /// `config.net`.
    pub fn from_model(path: &Path, config: TrainConfig) -> Result<Trainer> {
        config.validate()?;
        let device = resolve_device(config.device)?;
        set_threads(config.threads);
        let model = Model::load(path, device)?;
        if model.info.net != config.net {
            bail!(
                "{}: network {:?} differs from the configured {:?}",
                path.display(),
                model.info.net,
                config.net
            );
        }
        Trainer::assemble(config, model, device)
    }

    /// The trainer of `model` under `config` (`auto` precision resolved here, by
    /// measuring on the first use of the shape; see [`crate::auto_precision`]).
    pub(crate) fn assemble(config: TrainConfig, model: Model, device: Device) -> Result<Trainer> {
        let config_threads = config.threads;
        let training_kind = crate::auto_precision::training_precision(
            config.precision,
            device,
            &model.info.net,
            model.info.variant,
            config.threads,
            config.batch_size,
        )
        .lower_kind(device);
        let optimizer = Optimizer::new(&model.vs, config.optimizer);
        let rng = ChaCha8Rng::seed_from_u64(config.seed ^ 0x5eed_0000_7a1e);
        let average = if config.ema_decay > 0.0 {
            Some(WeightAverage::start(&model, device)?)
        } else {
            None
        };
        Ok(Trainer {
            config,
            model,
            average,
            optimizer,
            rng,
            device,
            run_progress: None,
            auto_threads: (config_threads == 0 && !device.is_cuda()).then(AutoThreads::from_torch),
            training_kind,
        })
    }

    /// Resumes from a checkpoint written by [`Trainer::save_checkpoint`], with the
    /// checkpoint's config or `config` (which must keep the net shape and optimizer; the
    /// other keys, e.g. the learning rate, may change).
    pub fn resume(path: &Path, config: Option<TrainConfig>) -> Result<Trainer> {
        Trainer::resume_with(path, |_, saved| Ok(config.unwrap_or_else(|| saved.clone())))
    }

    /// [`Trainer::resume`] with the config `choose` gives for the checkpoint's network
    /// shape and its saved config: a run whose network grows has one config per shape
    /// (the config must keep that shape and the optimizer). `choose`'s error is reported
    /// with the file's name.
    pub fn resume_with(
        path: &Path,
        choose: impl FnOnce(&NetConfig, &TrainConfig) -> Result<TrainConfig>,
    ) -> Result<Trainer> {
        let mut file = tensor_file::read(path)?;
        let mut info = ModelInfo::parse(&file.description, path)?;
        let state: TrainerState = match info.trainer.take() {
            Some(v) => serde_json::from_value(v)
                .with_context(|| format!("{}: bad trainer state", path.display()))?,
            None => bail!(
                "{}: a model file, not a checkpoint (no optimizer state)",
                path.display()
            ),
        };
        let config =
            choose(&info.net, &state.config).with_context(|| path.display().to_string())?;
        config.validate()?;
        if config.net != info.net || config.optimizer != state.config.optimizer {
            bail!(
                "{}: the checkpoint's network or optimizer differs from the config",
                path.display()
            );
        }
        let device = resolve_device(config.device)?;
        set_threads(config.threads);
        let (net, opt): (Vec<_>, Vec<_>) = std::mem::take(&mut file.tensors)
            .into_iter()
            .partition(|(n, _)| n.starts_with(NET_PREFIX));
        let net: Vec<(String, Tensor)> = net
            .into_iter()
            .map(|(n, t)| (n[NET_PREFIX.len()..].to_string(), t))
            .collect();
        info.check_weight_count(crate::model::element_count(&net), path)?;
        let mut model = Model::new(info, device);
        model
            .set_weights(&net)
            .with_context(|| path.display().to_string())?;
        let mut trainer = Trainer::assemble(config, model, device)?;
        let (ema, opt): (Vec<_>, Vec<_>) = opt
            .into_iter()
            .filter(|(n, _)| n.starts_with(OPT_PREFIX) || n.starts_with(EMA_PREFIX))
            .partition(|(n, _)| n.starts_with(EMA_PREFIX));
        // A checkpoint written without averaging starts the average at its weights.
        if let (Some(average), false) = (trainer.average.as_mut(), ema.is_empty()) {
            let ema: Vec<(String, Tensor)> = ema
                .into_iter()
                .map(|(n, t)| (n[EMA_PREFIX.len()..].to_string(), t))
                .collect();
            average
                .model
                .set_weights(&ema)
                .with_context(|| format!("{}: the weight average", path.display()))?;
        }
        trainer
            .optimizer
            .load_state(&opt)
            .with_context(|| path.display().to_string())?;
        trainer.rng = state.rng;
        Ok(trainer)
    }

    /// A trainer of `config.net`'s shape whose network is this one grown
    /// ([`crate::grow`]): it computes what this network computes and has its step count
    /// and sampling RNG; its optimizer starts afresh under `config`. When this trainer
    /// and `config` both average the weights ([`TrainConfig::ema_decay`]), the average is
    /// grown too, so the model handed out computes what this trainer's did; when only
    /// `config` averages, the average starts at the grown weights.
    /// The weights of the new channels and units are drawn from torch's RNG seeded with
    /// `config.seed` and the step. Errors: a shape this network cannot grow into.
    pub fn grown(&self, config: TrainConfig) -> Result<Trainer> {
        config.validate()?;
        crate::grow::check(&self.model.info.net, &config.net)?;
        let device = resolve_device(config.device)?;
        set_threads(config.threads);
        let _rng = crate::device::torch_rng_lock();
        tch::manual_seed((config.seed ^ self.model.info.step) as i64);
        let mut info = ModelInfo::new(&config.net, self.model.info.variant);
        info.step = self.model.info.step;
        let mut model = Model::new(info, device);
        let weights = crate::grow::grow_weights(
            &self.model.weights(),
            &self.model.info.net,
            model.weights(),
            &config.net,
        )?;
        model.set_weights(&weights)?;
        let mut trainer = Trainer::assemble(config, model, device)?;
        // The weight average grows as well, so the models handed out after the switch
        // compute what the old average did (new channels start at the grown network's
        // values, which the old average never saw).
        if let (Some(average), Some(old)) = (trainer.average.as_mut(), &self.average) {
            let grown = crate::grow::grow_weights(
                &old.model.weights(),
                &self.model.info.net,
                trainer.model.weights(),
                &trainer.config.net,
            )?;
            average.model.set_weights(&grown)?;
        }
        trainer.rng = self.rng.clone();
        Ok(trainer)
    }

    /// Writes a checkpoint atomically (temp file, fsync, rename).
    pub fn save_checkpoint(&self, path: &Path) -> Result<()> {
        let mut tensors: Vec<(String, Tensor)> = self
            .model
            .weights()
            .into_iter()
            .map(|(n, t)| (format!("{NET_PREFIX}{n}"), t))
            .collect();
        tensors.extend(self.optimizer.state_tensors());
        if let Some(average) = &self.average {
            tensors.extend(
                average
                    .model
                    .weights()
                    .into_iter()
                    .map(|(n, t)| (format!("{EMA_PREFIX}{n}"), t)),
            );
        }
        let mut info = self.model.info.clone();
        info.trainer = Some(serde_json::to_value(TrainerState {
            config: self.config.clone(),
            rng: self.rng.clone(),
        })?);
        tensor_file::write(path, &tensors, &serde_json::to_string(&info)?)
    }

    /// Writes the network a user gets (the [`Trainer::output_model`]) as a model file,
    /// atomically.
    pub fn save_model(&self, path: &Path) -> Result<()> {
        self.output_model().save(path)
    }

    /// The network being trained (raw weights).
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The network the trainer hands out: the moving average of the weights when
    /// [`TrainConfig::ema_decay`] is on, else the trained network.
    pub fn output_model(&self) -> &Model {
        self.average.as_ref().map_or(&self.model, |a| &a.model)
    }

    /// The config in use.
    pub fn config(&self) -> &TrainConfig {
        &self.config
    }

    /// Steps done so far (over the model's whole life).
    pub fn step(&self) -> u64 {
        self.model.info.step
    }

    /// Sets the progress of the run in [0, 1] (the fraction of its budget used) that the
    /// `cosine-run` schedule follows; not saved in checkpoints (the run sets it before
    /// every training phase).
    pub fn set_run_progress(&mut self, progress: Option<f64>) {
        self.run_progress = progress;
    }

    /// The training device.
    pub fn device(&self) -> Device {
        self.device
    }

    /// Deep CPU copies of the [`Trainer::output_model`]'s weights, for
    /// [`crate::NetEvaluator::set_weights`].
    pub fn weights(&self) -> Vec<(String, Tensor)> {
        self.output_model().weights()
    }

    /// One optimisation step on a batch sampled uniformly (with replacement) from
    /// `window`, each sample under a random board symmetry (of the variant's
    /// `num_symmetries`) when augmentation is on. The window's variant must have the
    /// network's layout.
    pub fn train_step(&mut self, window: &ReplayWindow) -> Result<StepStats> {
        if window.is_empty() {
            bail!("the replay window is empty: no training data");
        }
        self.model
            .info
            .check_variant(window.variant())
            .context("the replay window")?;
        let symmetries = self.model.info.variant.geometry().num_symmetries as usize;
        let b = self.config.batch_size;
        let mut samples = Vec::with_capacity(b);
        let mut syms = Vec::with_capacity(b);
        for _ in 0..b {
            samples.push(window.get(self.rng.random_range(0..window.len())));
            syms.push(if self.config.augment_symmetries {
                self.rng.random_range(0..symmetries)
            } else {
                0
            });
        }
        self.train_on(&samples, &syms)
    }

    /// One optimisation step on exactly these samples and symmetries (errors as
    /// [`make_batch`]).
    pub fn train_on(&mut self, samples: &[&Sample], symmetries: &[usize]) -> Result<StepStats> {
        if let Some(auto) = &mut self.auto_threads {
            auto.update();
        }
        let batch = make_batch(
            samples,
            symmetries,
            self.model.info.variant,
            self.model.info.net.plane_set,
            self.config.search_value_weight as f32,
        )?
        .to_device(self.device);
        let out = self.forward(&batch.input, true);
        let (loss, stats) = self.losses(&out, &batch);
        let lr = self.config.lr_at(self.model.info.step, self.run_progress);
        self.optimizer.zero_grad();
        loss.f_backward()?;
        self.optimizer
            .step(&self.config, lr, self.model.info.step + 1);
        if let Some(average) = &mut self.average {
            let decay = self.config.ema_decay_at(self.model.info.step);
            let mut info = self.model.info.clone();
            info.step += 1;
            average.update(decay, &info)?;
        }
        self.model.info.step += 1;
        Ok(stats)
    }

    /// Losses and accuracies on these samples (identity symmetry) without training:
    /// batch norm in inference mode, no gradients. Errors as [`make_batch`].
    pub fn evaluate(&self, samples: &[&Sample]) -> Result<StepStats> {
        let _guard = tch::no_grad_guard();
        let syms = vec![0; samples.len()];
        let batch = make_batch(
            samples,
            &syms,
            self.model.info.variant,
            self.model.info.net.plane_set,
            self.config.search_value_weight as f32,
        )?
        .to_device(self.device);
        let out = self.forward(&batch.input, false);
        Ok(self.losses(&out, &batch).1)
    }

    /// The network's forward pass in the configured training precision.
    fn forward(&self, input: &Tensor, train: bool) -> crate::net::NetOutput {
        match self.training_kind {
            Some(kind) => self.model.net.forward_mixed(input, train, kind),
            None => self.model.net.forward(input, train),
        }
    }

    fn losses(&self, out: &crate::net::NetOutput, batch: &Batch) -> (Tensor, StepStats) {
        let masked = mask_logits(&out.policy, &batch.legal);
        let logp = masked.log_softmax(-1, Kind::Float);
        let per_sample = -(&batch.policy_target * &logp).sum_dim_intlist(-1, false, Kind::Float);
        let n_policy = batch.policy_weight.sum(Kind::Float).clamp_min(1.0);
        let policy_loss = (&per_sample * &batch.policy_weight).sum(Kind::Float) / &n_policy;
        let wdl = out.wdl.to_kind(Kind::Float);
        let value_loss = -(&batch.wdl_target * wdl.log_softmax(-1, Kind::Float))
            .sum_dim_intlist(-1, false, Kind::Float)
            .mean(Kind::Float);
        let loss = &policy_loss + &value_loss * self.config.value_loss_weight;
        // Occupancy: cross-entropy summed over the cells with a target, per such cell.
        let occupancy_loss = out.occupancy.as_ref().map(|logits| {
            let logp = logits.to_kind(Kind::Float).log_softmax(1, Kind::Float);
            let cells = batch.occupancy_target.sum(Kind::Float).clamp_min(1.0);
            -(&batch.occupancy_target * logp).sum(Kind::Float) / cells
        });
        let loss = match &occupancy_loss {
            Some(o) => loss + o * self.config.occupancy_loss_weight,
            None => loss,
        };

        let _guard = tch::no_grad_guard();
        // H(target) = −Σ t·log t over the targets' support (0·log 0 = 0).
        let t = &batch.policy_target;
        let t_log_t = (t * t.clamp_min(1e-12).log()).sum_dim_intlist(-1, false, Kind::Float);
        let entropy = -(&t_log_t * &batch.policy_weight).sum(Kind::Float) / &n_policy;
        let entropy = entropy.double_value(&[]);
        let best = masked.argmax(-1, true);
        let at_best = batch.policy_target.gather(-1, &best, false).squeeze_dim(-1);
        let target_max = batch.policy_target.amax(&[-1i64][..], false);
        let hit = at_best.ge_tensor(&target_max).to_kind(Kind::Float) * &batch.policy_weight;
        let accuracy = hit.sum(Kind::Float) / &n_policy;
        let value = wdl_to_value(&wdl);
        let mse = (value - &batch.value_target).square().mean(Kind::Float);
        let stats = StepStats {
            loss: loss.double_value(&[]),
            policy_loss: policy_loss.double_value(&[]),
            policy_kl: policy_loss.double_value(&[]) - entropy,
            target_entropy: entropy,
            value_loss: value_loss.double_value(&[]),
            policy_accuracy: accuracy.double_value(&[]),
            value_mse: mse.double_value(&[]),
            occupancy_loss: occupancy_loss.map_or(f64::NAN, |o| o.double_value(&[])),
            samples: batch.policy_weight.size()[0] as usize,
            policy_samples: batch.policy_weight.sum(Kind::Float).double_value(&[]) as usize,
        };
        (loss, stats)
    }

    /// Runs `steps` steps on `window`, appending a [`TrainRecord`] to `log` every
    /// `log_every` steps (and after the last).
    pub fn train(
        &mut self,
        window: &ReplayWindow,
        steps: u64,
        mut log: Option<&mut MetricsLog>,
    ) -> Result<TrainSummary> {
        let start = Instant::now();
        let mut total = StepStats::default();
        let mut interval = StepStats::default();
        let mut interval_steps = 0usize;
        let mut interval_start = Instant::now();
        for i in 0..steps {
            let lr = self.config.lr_at(self.model.info.step, self.run_progress);
            let s = self.train_step(window)?;
            total.accumulate(&s);
            interval.accumulate(&s);
            interval_steps += 1;
            if (i + 1) % self.config.log_every == 0 || i + 1 == steps {
                let secs = interval_start.elapsed().as_secs_f64().max(1e-9);
                let record = TrainRecord {
                    time: unix_time(),
                    step: self.model.info.step,
                    lr,
                    stats: interval.divided(interval_steps),
                    samples_per_sec: interval.samples as f64 / secs,
                    window: window.len(),
                };
                if let Some(log) = log.as_deref_mut() {
                    log.write(&Record::Train(record))?;
                }
                interval = StepStats::default();
                interval_steps = 0;
                interval_start = Instant::now();
            }
        }
        let secs = start.elapsed().as_secs_f64().max(1e-9);
        Ok(TrainSummary {
            steps,
            samples_per_sec: total.samples as f64 / secs,
            stats: total.divided(steps as usize),
        })
    }

    /// A one-line description for logs.
    pub fn describe(&self) -> String {
        format!(
            "{}x{} net for {} at step {} ({:?}, lr {}), {}",
            self.config.net.blocks,
            self.config.net.channels,
            self.model.info.variant,
            self.model.info.step,
            self.config.optimizer,
            self.config.lr,
            device_name(self.device)
        )
    }
}

#[cfg(test)]
#[path = "trainer_tests.rs"]
pub(crate) mod tests;
