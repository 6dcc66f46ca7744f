//! Training metrics: a JSON-lines file (one object per record, flushed at once, so a
//! crash loses at most the line being written) and its one schema, [`Record`]: the
//! trainer and the run loop write it, `loazero plot` (and anything else) reads it back
//! with the same types. Progress for people is the binary's business: it reads the same
//! records.
//!
//! Reading is lenient where files age: fields added later are optional (absent in older
//! files), and a float written as `null` (JSON has no NaN) reads back as NaN.

use crate::heldout::HeldoutScore;
use anyhow::{Context, Result};
use serde::{Deserialize, Deserializer, Serialize};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Appends JSON records to a file, one per line.
pub struct MetricsLog {
    file: File,
    path: PathBuf,
}

impl MetricsLog {
    /// Opens `path` for appending (creating it and its directory).
    pub fn open(path: &Path) -> Result<MetricsLog> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        Ok(MetricsLog {
            file,
            path: path.to_path_buf(),
        })
    }

    /// Appends one record as a line (a [`Record`]; tests may write any JSON).
    pub fn write<T: Serialize>(&mut self, record: &T) -> Result<()> {
        let mut line = serde_json::to_string(record)?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|_| self.file.flush())
            .with_context(|| format!("writing {}", self.path.display()))
    }
}

/// One line of `metrics.jsonl`, tagged by its `"kind"`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Record {
    /// Training progress, every `train.log_every` steps.
    Train(TrainRecord),
    /// What one generation of the run loop did.
    Generation(Box<GenerationRecord>),
    /// A rating round of the run loop.
    Rating(RatingRecord),
    /// The run loop stopped: it reached a limit of the run, or was interrupted. A later
    /// record (a resumed run) supersedes it.
    Stop(StopRecord),
}

/// Why the run loop stopped ([`StopRecord::reason`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// `run.minutes` is used up: the next generation would not fit, or a phase ran into
    /// the end of the budget and was cut short (the run is finished; a larger budget goes
    /// on from where it stopped).
    TimeBudget,
    /// `run.generations` generations are done (the run is finished).
    Generations,
    /// SIGINT or SIGTERM: the run stopped at a safe point and resumes when started again.
    Interrupted,
}

impl StopReason {
    /// Whether the run reached one of its limits (rather than being interrupted).
    pub fn is_finished(self) -> bool {
        self != StopReason::Interrupted
    }
}

/// The run loop stopped ([`Record::Stop`]).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StopRecord {
    /// Unix time in seconds.
    #[serde(default = "nan", deserialize_with = "f64_or_nan")]
    pub time: f64,
    /// Active seconds of the run when it stopped.
    #[serde(default = "nan", deserialize_with = "f64_or_nan")]
    pub elapsed_s: f64,
    /// The last generation that completed (its model gated and, if due, rated).
    pub generation: u32,
    /// Why it stopped.
    pub reason: StopReason,
}

/// A float that reads `null` (how serde_json writes NaN) or absence as NaN.
pub(crate) fn f64_or_nan<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// NaN, the value of a float field a record does not have.
pub(crate) fn nan() -> f64 {
    f64::NAN
}

/// Losses and accuracies of one step (or averaged over several). In the metrics file a
/// missing or `null` float reads as NaN (module doc).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct StepStats {
    /// Total loss: policy + `value_loss_weight` · value (+ `occupancy_loss_weight` ·
    /// occupancy, for a network with an occupancy head).
    #[serde(default = "nan", deserialize_with = "f64_or_nan")]
    pub loss: f64,
    /// Policy cross-entropy over the samples with a policy target.
    #[serde(default = "nan", deserialize_with = "f64_or_nan")]
    pub policy_loss: f64,
    /// KL divergence of the policy from its targets (cross-entropy minus the targets'
    /// entropy): 0 when the policy equals the targets, whatever their entropy.
    #[serde(default = "nan", deserialize_with = "f64_or_nan")]
    pub policy_kl: f64,
    /// Mean entropy of the policy targets (nats): the floor of the cross-entropy.
    #[serde(default = "nan", deserialize_with = "f64_or_nan")]
    pub target_entropy: f64,
    /// Win/draw/loss cross-entropy.
    #[serde(default = "nan", deserialize_with = "f64_or_nan")]
    pub value_loss: f64,
    /// Fraction of policy samples whose most likely legal move has the target's highest
    /// probability.
    #[serde(default = "nan", deserialize_with = "f64_or_nan")]
    pub policy_accuracy: f64,
    /// Mean squared error of the scalar value against its target.
    #[serde(default = "nan", deserialize_with = "f64_or_nan")]
    pub value_mse: f64,
    /// Occupancy cross-entropy (empty/own/opponent when the game ends) per board cell of
    /// the samples with final pieces; NaN for a network without an occupancy head.
    #[serde(default = "nan", deserialize_with = "f64_or_nan")]
    pub occupancy_loss: f64,
    /// Samples in the batch.
    #[serde(default)]
    pub samples: usize,
    /// Samples with a policy target.
    #[serde(default)]
    pub policy_samples: usize,
}

impl StepStats {
    pub(crate) fn accumulate(&mut self, s: &StepStats) {
        self.loss += s.loss;
        self.policy_loss += s.policy_loss;
        self.policy_kl += s.policy_kl;
        self.target_entropy += s.target_entropy;
        self.value_loss += s.value_loss;
        self.policy_accuracy += s.policy_accuracy;
        self.value_mse += s.value_mse;
        self.occupancy_loss += s.occupancy_loss;
        self.samples += s.samples;
        self.policy_samples += s.policy_samples;
    }

    pub(crate) fn divided(&self, n: usize) -> StepStats {
        let d = n.max(1) as f64;
        StepStats {
            loss: self.loss / d,
            policy_loss: self.policy_loss / d,
            policy_kl: self.policy_kl / d,
            target_entropy: self.target_entropy / d,
            value_loss: self.value_loss / d,
            policy_accuracy: self.policy_accuracy / d,
            value_mse: self.value_mse / d,
            occupancy_loss: self.occupancy_loss / d,
            samples: self.samples,
            policy_samples: self.policy_samples,
        }
    }
}

/// Training progress: averages over the steps since the previous record.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TrainRecord {
    /// Unix time in seconds.
    #[serde(default = "nan", deserialize_with = "f64_or_nan")]
    pub time: f64,
    /// Steps done.
    pub step: u64,
    /// Learning rate of the last step.
    #[serde(default = "nan", deserialize_with = "f64_or_nan")]
    pub lr: f64,
    /// Averages over the steps since the previous record.
    #[serde(flatten)]
    pub stats: StepStats,
    /// Training throughput since the previous record.
    #[serde(default = "nan", deserialize_with = "f64_or_nan")]
    pub samples_per_sec: f64,
    /// Positions in the replay window.
    #[serde(default)]
    pub window: usize,
}

/// What one generation of the run loop did. Fields are `None` when that phase ran in an
/// earlier process (before a restart), or when the file predates them.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct GenerationRecord {
    /// Unix time in seconds.
    #[serde(default = "nan", deserialize_with = "f64_or_nan")]
    pub time: f64,
    /// Active seconds of the run when the generation ended.
    #[serde(default, deserialize_with = "option_f64")]
    pub elapsed_s: Option<f64>,
    /// The generation.
    pub generation: u32,
    /// Self-play games finished in this generation.
    #[serde(default)]
    pub selfplay_games: Option<u64>,
    /// Self-play positions of those games.
    #[serde(default)]
    pub selfplay_positions: Option<u64>,
    /// Seconds of self-play.
    #[serde(default, deserialize_with = "option_f64")]
    pub selfplay_seconds: Option<f64>,
    /// Self-play positions per second.
    #[serde(default, deserialize_with = "option_f64")]
    pub positions_per_sec: Option<f64>,
    /// Network evaluations per second during self-play.
    #[serde(default, deserialize_with = "option_f64")]
    pub evals_per_sec: Option<f64>,
    /// Mean positions per evaluator request of the self-play workers.
    #[serde(default, deserialize_with = "option_f64")]
    pub mean_batch: Option<f64>,
    /// Raw forward positions/s of the network alone at `mean_batch` (rounded to a
    /// multiple of 8 from 16 on; measured for half a second after the first self-play of
    /// the process that saw that batch size).
    #[serde(default, deserialize_with = "option_f64")]
    pub raw_forward_per_sec: Option<f64>,
    /// Self-play evals/s over `raw_forward_per_sec`.
    #[serde(default, deserialize_with = "option_f64")]
    pub forward_efficiency: Option<f64>,
    /// Self-play games parked in flight at the end of the phase (continuous self-play).
    #[serde(default)]
    pub selfplay_in_flight: Option<usize>,
    /// Fraction of self-play evaluations answered by the evaluation cache
    /// (`train.inference.cache_positions`; absent when it is off).
    #[serde(default, deserialize_with = "option_f64")]
    pub eval_cache_hit_rate: Option<f64>,
    /// Positions of the games the loop's background self-play
    /// (`run.background_selfplay_threads`) finished since the previous generation record
    /// of this process (since the loop started, for its first); absent when off.
    #[serde(default)]
    pub background_positions: Option<u64>,
    /// Games the background self-play finished between the previous self-play phase of
    /// this process and this one's start: they count toward `run.games_per_generation`,
    /// and the loop played only the rest (`selfplay_games`); absent when off.
    #[serde(default)]
    pub background_games: Option<u64>,
    /// Training steps of the generation.
    #[serde(default)]
    pub train_steps: Option<u64>,
    /// Seconds of training.
    #[serde(default, deserialize_with = "option_f64")]
    pub train_seconds: Option<f64>,
    /// Training samples per second.
    #[serde(default, deserialize_with = "option_f64")]
    pub train_samples_per_sec: Option<f64>,
    /// Mean total loss over the generation's steps.
    #[serde(default, deserialize_with = "option_f64")]
    pub loss: Option<f64>,
    /// Mean policy cross-entropy.
    #[serde(default, deserialize_with = "option_f64")]
    pub policy_loss: Option<f64>,
    /// Mean policy KL to the targets over the generation's steps.
    #[serde(default, deserialize_with = "option_f64")]
    pub policy_kl: Option<f64>,
    /// Mean value loss.
    #[serde(default, deserialize_with = "option_f64")]
    pub value_loss: Option<f64>,
    /// Mean occupancy loss (a network with an occupancy head only).
    #[serde(default, deserialize_with = "option_f64")]
    pub occupancy_loss: Option<f64>,
    /// Move matching of the generation's candidate on the held-out set (`run.heldout`).
    #[serde(default)]
    pub heldout: Option<HeldoutScore>,
    /// Positions in the replay window.
    #[serde(default)]
    pub window: Option<usize>,
    /// The shape of the network trained in the generation (`4x32`: blocks × channels,
    /// `4x32+occupancy` with an occupancy head, [`crate::NetConfig::shape`]); it changes
    /// where `run.net_schedule` grew it.
    #[serde(default)]
    pub net: Option<String>,
    /// Games of the gate match.
    #[serde(default)]
    pub gate_games: Option<u32>,
    /// The candidate's score in the gate match.
    #[serde(default, deserialize_with = "option_f64")]
    pub gate_score: Option<f64>,
    /// The candidate's Elo over the best model in the gate match.
    #[serde(default, deserialize_with = "option_f64")]
    pub gate_elo: Option<f64>,
    /// Whether the candidate became the best model.
    #[serde(default)]
    pub promoted: bool,
    /// The best model after the generation (`gen-NNNN`).
    #[serde(default)]
    pub best: String,
    /// With `run --store`: seconds the trainer spent pulling workers' shards from the store
    /// since the previous generation record of this process (since it started, for its
    /// first; the rebuild of the working copy at a start is not counted), so that every
    /// second of store work is in one record. The publication of generation g-1 and the
    /// mirror of its rating fall into generation g's record. Absent without a store.
    #[serde(default, deserialize_with = "option_f64")]
    pub store_pull_seconds: Option<f64>,
    /// With `run --store`: seconds spent mirroring the working copy to the store, counted as
    /// `store_pull_seconds`.
    #[serde(default, deserialize_with = "option_f64")]
    pub store_mirror_seconds: Option<f64>,
    /// With `run --store`: seconds spent publishing generations (model, then log entry),
    /// counted as `store_pull_seconds`.
    #[serde(default, deserialize_with = "option_f64")]
    pub store_publish_seconds: Option<f64>,
    /// Resident memory of the loop's process at the end of the generation, in MiB
    /// (`VmRSS` of `/proc/self/status`; absent where there is no procfs).
    #[serde(default, deserialize_with = "option_f64")]
    pub rss_mib: Option<f64>,
    /// Open file descriptors of the loop's process at the end of the generation.
    #[serde(default)]
    pub open_files: Option<u64>,
}

/// Resident memory of this process in MiB (`VmRSS` of `/proc/self/status`), if known.
pub fn resident_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(kb / 1024.0)
}

/// Open file descriptors of this process (entries of `/proc/self/fd`), if known.
pub fn open_files() -> Option<u64> {
    // The listing itself holds one descriptor while it reads: not counted.
    Some(
        std::fs::read_dir("/proc/self/fd")
            .ok()?
            .count()
            .saturating_sub(1) as u64,
    )
}

/// An optional float; `null` and absence are `None`.
fn option_f64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Option::<f64>::deserialize(d)
}

/// A rating round of the run loop: the Bradley–Terry fit after rating `generation`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RatingRecord {
    /// Unix time in seconds.
    #[serde(default = "nan", deserialize_with = "f64_or_nan")]
    pub time: f64,
    /// Active seconds of the run when the round ended.
    #[serde(default = "nan", deserialize_with = "f64_or_nan")]
    pub elapsed_s: f64,
    /// The generation rated in this round.
    #[serde(default)]
    pub generation: u32,
    /// Every rated player of the run so far.
    pub ratings: Vec<RatingRow>,
}

/// One player of a rating round.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RatingRow {
    /// `gen-NNNN` or the anchor's spec.
    pub name: String,
    /// The generation of a model, `None` for anchors.
    #[serde(default)]
    pub generation: Option<u32>,
    /// Elo (random = 0); NaN when not finite.
    #[serde(default = "nan", deserialize_with = "f64_or_nan")]
    pub elo: f64,
    /// Standard error of the Elo; NaN when unknown.
    #[serde(default = "nan", deserialize_with = "f64_or_nan")]
    pub stderr: f64,
    /// Games played.
    #[serde(default)]
    pub games: u32,
    /// Score fraction.
    #[serde(default = "nan", deserialize_with = "f64_or_nan")]
    pub score: f64,
}

/// Seconds since the Unix epoch.
pub fn unix_time() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind round-trips through a line; `null` floats read back as NaN, older
    /// lines without the later fields read with defaults, and unknown kinds are errors.
    #[test]
    fn this_process_has_memory_and_files() {
        let rss = resident_mib().unwrap();
        assert!(rss > 1.0 && rss < 1e6, "{rss}");
        // Standard input, output and error at least (other tests open files meanwhile).
        assert!(open_files().unwrap() >= 3);
    }

    #[test]
    fn records_round_trip_and_read_leniently() {
        let train = Record::Train(TrainRecord {
            time: 1.5,
            step: 100,
            lr: f64::NAN,
            stats: StepStats {
                loss: 3.0,
                ..StepStats::default()
            },
            samples_per_sec: 900.0,
            window: 40,
        });
        let line = serde_json::to_string(&train).unwrap();
        assert!(line.starts_with(r#"{"kind":"train""#), "{line}");
        assert!(
            line.contains(r#""lr":null"#) && line.contains(r#""loss":3.0"#),
            "{line}"
        );
        let Record::Train(back) = serde_json::from_str(&line).unwrap() else {
            panic!("{line}")
        };
        assert_eq!((back.step, back.stats.loss, back.window), (100, 3.0, 40));
        assert!(back.lr.is_nan());
        let old = r#"{"kind":"train","step":7,"loss":2.0,"policy_loss":1.5,"value_loss":0.5}"#;
        let Record::Train(t) = serde_json::from_str(old).unwrap() else {
            panic!()
        };
        assert_eq!((t.step, t.stats.policy_loss), (7, 1.5));
        assert!(t.stats.policy_kl.is_nan() && t.samples_per_sec.is_nan());
        let generation = Record::Generation(Box::new(GenerationRecord {
            generation: 3,
            evals_per_sec: Some(9000.0),
            promoted: true,
            best: "gen-0003".into(),
            ..GenerationRecord::default()
        }));
        let line = serde_json::to_string(&generation).unwrap();
        let Record::Generation(g) = serde_json::from_str(&line).unwrap() else {
            panic!("{line}")
        };
        assert_eq!(
            (g.generation, g.evals_per_sec, g.heldout),
            (3, Some(9000.0), None)
        );
        let rating = r#"{"kind":"rating","ratings":[{"name":"random","elo":0.0,"stderr":null}]}"#;
        let Record::Rating(r) = serde_json::from_str(rating).unwrap() else {
            panic!()
        };
        assert_eq!(r.ratings[0].name, "random");
        assert!(r.ratings[0].stderr.is_nan());
        let stop = Record::Stop(StopRecord {
            time: 2.0,
            elapsed_s: 1790.5,
            generation: 48,
            reason: StopReason::TimeBudget,
        });
        let line = serde_json::to_string(&stop).unwrap();
        assert!(
            line.starts_with(r#"{"kind":"stop""#) && line.contains(r#""reason":"time-budget""#),
            "{line}"
        );
        let Record::Stop(s) = serde_json::from_str(&line).unwrap() else {
            panic!("{line}")
        };
        assert_eq!((s.generation, s.reason), (48, StopReason::TimeBudget));
        assert!(s.reason.is_finished() && !StopReason::Interrupted.is_finished());
        assert!(serde_json::from_str::<Record>(r#"{"kind":"stop","generation":1}"#).is_err());
        assert!(serde_json::from_str::<Record>(r#"{"kind":"other"}"#).is_err());
        assert!(serde_json::from_str::<Record>(r#"{"kind":"train"}"#).is_err());
    }

    #[test]
    fn json_lines_append() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/metrics.jsonl");
        let mut log = MetricsLog::open(&path).unwrap();
        log.write(&serde_json::json!({"step": 1})).unwrap();
        drop(log);
        let mut log = MetricsLog::open(&path).unwrap();
        log.write(&serde_json::json!({"step": 2})).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let steps: Vec<u64> = text
            .lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["step"]
                    .as_u64()
                    .unwrap()
            })
            .collect();
        assert_eq!(steps, vec![1, 2]);
    }
}
