//! The one view of a run's metrics that `loazero plot`, the dashboard (`serve`'s
//! `/api/runs/RUN/metrics`) and `loazero ladder` read.
//!
//! `metrics.jsonl`'s lines are typed records ([`train::metrics::Record`], the type that
//! writes them); [`parse_metrics`] reads them once into points ([`MetricsView`]), and each
//! chart's lines are declared once, in [`CHARTS`]: a line is a key (its name in the
//! dashboard's JSON), a label, and the field of the record it shows. `plot` draws every
//! line of every chart into its PNGs and the dashboard draws every line of every chart it
//! is sent ([`charts_json`]), so a new metric is one field of its record plus one line in
//! its chart's table. The Elo chart (ratings with their intervals, anchors) is drawn from
//! [`MetricsView::ratings`] by both.

use anyhow::{Context, Result};
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;
use train::metrics::{GenerationRecord, Record, StepStats};

/// One training step (the last `"train"` record of the step).
#[derive(Debug, Clone)]
pub struct TrainPoint {
    /// Training step (x axis).
    pub step: u64,
    /// Its losses and accuracies (NaN where the record has none).
    pub stats: StepStats,
}

/// One loop generation (the last `"generation"` record of it).
#[derive(Debug, Clone)]
pub struct GenerationPoint {
    /// The record.
    pub record: GenerationRecord,
    /// All self-play positions per second of run time in this generation: the loop's own
    /// and the background's positions since the previous generation record, over the time
    /// since it; `None` for the first record, after a gap, or without times.
    pub all_selfplay_per_sec: Option<f64>,
}

impl GenerationPoint {
    /// The generation (x axis).
    pub fn generation(&self) -> u64 {
        u64::from(self.record.generation)
    }

    /// Active run seconds when the generation ended (finite), if recorded.
    pub fn elapsed_s(&self) -> Option<f64> {
        self.record.elapsed_s.filter(|s| s.is_finite())
    }
}

/// One rated player of the last `"rating"` record.
#[derive(Debug, Clone, PartialEq)]
pub struct RatedModel {
    /// Player name, e.g. `gen-0004` or `alphabeta:depth=1`.
    pub name: String,
    /// Generation of a trained model; `None` for a fixed anchor (or a learned evaluation).
    pub generation: Option<u64>,
    /// Elo (finite).
    pub elo: f64,
    /// Standard error of the Elo (finite, ≥ 0; 0 when unknown).
    pub stderr: f64,
}

impl RatedModel {
    /// Half the width of the Elo's 95% interval (1.96 standard errors): what ± means
    /// wherever a rating is shown.
    pub fn elo_95(&self) -> f64 {
        1.96 * self.stderr
    }
}

/// Everything the plots, the dashboard and the ladder take from `metrics.jsonl`.
#[derive(Debug, Clone, Default)]
pub struct MetricsView {
    /// One point per training step, sorted by step.
    pub train: Vec<TrainPoint>,
    /// One point per generation, sorted by generation.
    pub generations: Vec<GenerationPoint>,
    /// The players of the last `"rating"` record (entries without a finite Elo dropped);
    /// `None` when there is no rating record.
    pub ratings: Option<Vec<RatedModel>>,
    /// One message per skipped line, `"{file}:{line}: ..."` (lines count from 1).
    pub warnings: Vec<String>,
}

/// Which vertical axis a line is drawn against (a chart with lines of two scales).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    /// The chart's own axis.
    Left,
    /// A second axis on the right (the PNG); a chart of its own on the dashboard.
    Right,
}

/// One line of a chart: its key, its label, the axis it is drawn against, and its value in
/// a point of type `P` (`None` or non-finite: no point there).
pub struct Line<P: 'static> {
    /// Its name in the dashboard's JSON.
    pub key: &'static str,
    /// Its label in legends.
    pub label: &'static str,
    /// The axis it is drawn against.
    pub axis: Axis,
    /// Its value in a point.
    pub value: fn(&P) -> Option<f64>,
}

const fn line<P>(key: &'static str, label: &'static str, value: fn(&P) -> Option<f64>) -> Line<P> {
    Line {
        key,
        label,
        axis: Axis::Left,
        value,
    }
}

/// The lines of a chart, over the training steps or over the generations.
pub enum Lines {
    /// x = training step.
    Steps(&'static [Line<TrainPoint>]),
    /// x = generation.
    Generations(&'static [Line<GenerationPoint>]),
}

/// A chart of lines (every chart but the Elo one).
pub struct Chart {
    /// Its name: the PNG's file stem (`plot`) and its key in the dashboard's JSON.
    pub key: &'static str,
    /// Its title.
    pub title: &'static str,
    /// The x axis's label.
    pub x_label: &'static str,
    /// The (left) y axis's label.
    pub y_label: &'static str,
    /// The right y axis's label, for its [`Axis::Right`] lines.
    pub right_label: &'static str,
    /// What to say when no line has a point.
    pub empty: &'static str,
    /// Whether the y axes start at 0 (rates and percentages, whose small changes should
    /// not look large) rather than just below the lowest value (losses).
    pub from_zero: bool,
    /// The PNG `plot` draws it into (charts sharing one are stacked in it, in order).
    pub png: &'static str,
    /// Its lines.
    pub lines: Lines,
}

/// The loss chart: one line per loss of the training records.
pub const LOSS_LINES: &[Line<TrainPoint>] = &[
    line("loss", "total loss", |p| Some(p.stats.loss)),
    line("policy_loss", "policy loss", |p| Some(p.stats.policy_loss)),
    line("policy_kl", "policy KL", |p| Some(p.stats.policy_kl)),
    line("value_loss", "value loss", |p| Some(p.stats.value_loss)),
    line("occupancy_loss", "occupancy loss", |p| {
        Some(p.stats.occupancy_loss)
    }),
];

/// The self-play speed chart (per generation): the loop's self-play phase, all self-play
/// (with background and workers) over the generation's run time, and evaluations.
pub const SELFPLAY_LINES: &[Line<GenerationPoint>] = &[
    line("positions_per_sec", "self-play phase positions/s", |g| {
        g.record.positions_per_sec
    }),
    line("all_selfplay_per_sec", "all self-play positions/s", |g| {
        g.all_selfplay_per_sec
    }),
    Line {
        key: "evals_per_sec",
        label: "evaluations/s",
        axis: Axis::Right,
        value: |g| g.record.evals_per_sec,
    },
];

/// The training speed chart (per generation).
pub const TRAINING_SPEED_LINES: &[Line<GenerationPoint>] =
    &[line("train_samples_per_sec", "training samples/s", |g| {
        g.record.train_samples_per_sec
    })];

/// The held-out move matching chart (per generation, % of positions).
pub const HELDOUT_LINES: &[Line<GenerationPoint>] = &[
    line("heldout_top1", "top-1", |g| {
        g.record.heldout.as_ref().map(|h| 100.0 * h.top1)
    }),
    line("heldout_top3", "top-3", |g| {
        g.record.heldout.as_ref().map(|h| 100.0 * h.top3)
    }),
    line("heldout_chance", "chance (top-1)", |g| {
        g.record.heldout.as_ref().map(|h| 100.0 * h.chance_top1)
    }),
];

/// Every chart but the Elo one, in the order they are shown.
pub const CHARTS: &[Chart] = &[
    Chart {
        key: "losses",
        title: "Training loss vs step",
        x_label: "training step",
        y_label: "loss",
        right_label: "",
        empty: "no training records yet",
        from_zero: false,
        png: "losses.png",
        lines: Lines::Steps(LOSS_LINES),
    },
    Chart {
        key: "selfplay",
        title: "Self-play throughput per generation",
        x_label: "generation",
        y_label: "positions/s",
        right_label: "evaluations/s",
        empty: "no generation records yet",
        from_zero: true,
        png: "throughput.png",
        lines: Lines::Generations(SELFPLAY_LINES),
    },
    Chart {
        key: "training",
        title: "Training throughput per generation",
        x_label: "generation",
        y_label: "samples/s",
        right_label: "",
        empty: "no generation records yet",
        from_zero: true,
        png: "throughput.png",
        lines: Lines::Generations(TRAINING_SPEED_LINES),
    },
    Chart {
        key: "policy",
        title: "Held-out move matching vs alphabeta:depth=5",
        x_label: "generation",
        y_label: "% of positions",
        right_label: "",
        empty: "no held-out scores yet (run.heldout)",
        from_zero: true,
        png: "policy.png",
        lines: Lines::Generations(HELDOUT_LINES),
    },
];

/// One line's points: (label, axis, (x, y) for every point with a finite value).
pub struct Drawn {
    /// Its key.
    pub key: &'static str,
    /// Its label.
    pub label: &'static str,
    /// Its axis.
    pub axis: Axis,
    /// Its points, in x order.
    pub points: Vec<(f64, f64)>,
}

impl MetricsView {
    /// The lines of `chart` with their points; a line without any point (the occupancy
    /// loss of a network without that head, a metric older logs lack) is left out.
    pub fn lines(&self, chart: &Chart) -> Vec<Drawn> {
        fn drawn<P>(points: &[P], x: fn(&P) -> f64, line: &Line<P>) -> Drawn {
            Drawn {
                key: line.key,
                label: line.label,
                axis: line.axis,
                points: points
                    .iter()
                    .filter_map(|p| Some((x(p), (line.value)(p).filter(|v| v.is_finite())?)))
                    .collect(),
            }
        }
        let all: Vec<Drawn> = match chart.lines {
            Lines::Steps(lines) => lines
                .iter()
                .map(|l| drawn(&self.train, |p| p.step as f64, l))
                .collect(),
            Lines::Generations(lines) => lines
                .iter()
                .map(|l| drawn(&self.generations, |g| g.generation() as f64, l))
                .collect(),
        };
        all.into_iter().filter(|d| !d.points.is_empty()).collect()
    }
}

/// Every chart of [`CHARTS`] as the dashboard draws it: `[{key, title, x_label, y_label,
/// right_label, lines: [{key, label, axis: "left"|"right", points: [[x, y], …]}]}]`, with
/// at most `max_points` points a line (evenly thinned, the last kept).
pub fn charts_json(view: &MetricsView, max_points: usize) -> Value {
    let charts: Vec<Value> = CHARTS
        .iter()
        .map(|chart| {
            let lines: Vec<Value> = view
                .lines(chart)
                .into_iter()
                .map(|d| {
                    json!({
                        "key": d.key,
                        "label": d.label,
                        "axis": match d.axis { Axis::Left => "left", Axis::Right => "right" },
                        "points": thinned(&d.points, max_points),
                    })
                })
                .collect();
            json!({
                "key": chart.key,
                "title": chart.title,
                "x_label": chart.x_label,
                "y_label": chart.y_label,
                "right_label": chart.right_label,
                "lines": lines,
            })
        })
        .collect();
    Value::Array(charts)
}

/// At most `max` of `points` (at least 2), evenly spaced, the first and the last kept.
fn thinned(points: &[(f64, f64)], max: usize) -> Vec<[f64; 2]> {
    let n = points.len();
    let max = max.max(2);
    let pick = |i: usize| [points[i].0, points[i].1];
    if n <= max {
        return (0..n).map(pick).collect();
    }
    (0..max).map(|i| pick(i * (n - 1) / (max - 1))).collect()
}

/// Reads and parses `dir/metrics.jsonl` ([`parse_metrics`]), printing each skipped line's
/// warning on stderr. Errors: the file cannot be read (it names the file).
pub fn read_metrics(dir: &Path) -> Result<MetricsView> {
    let metrics_path = dir.join("metrics.jsonl");
    let bytes = std::fs::read(&metrics_path)
        .with_context(|| format!("cannot read {}", metrics_path.display()))?;
    // Lossy: a crash may leave a torn multi-byte character; that line is then malformed.
    let text = String::from_utf8_lossy(&bytes);
    let metrics = parse_metrics(&text, &metrics_path.display().to_string());
    for warning in &metrics.warnings {
        eprintln!("warning: {warning}");
    }
    Ok(metrics)
}

fn finite(x: Option<f64>) -> Option<f64> {
    x.filter(|v| v.is_finite())
}

/// Parses the text of a `metrics.jsonl`; never fails.
///
/// Each non-blank line must be a JSON object with a string `"kind"`. Kinds `train`,
/// `generation` and `rating` are read (unknown fields ignored); other kinds are ignored
/// silently. A line that is not JSON, has no `kind`, or whose known record lacks a
/// required field (`step`, `generation`, `ratings`) or has a field of the wrong type is
/// skipped and reported in [`MetricsView::warnings`], prefixed with `file:line`. The
/// records read make the view as [`MetricsView::of_records`] says.
pub fn parse_metrics(text: &str, file: &str) -> MetricsView {
    let mut records = Vec::new();
    let mut warnings = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let mut warn = |reason: String| {
            warnings.push(format!("{file}:{}: skipped line: {reason}", index + 1));
        };
        let value: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                warn(format!("not valid JSON ({e})"));
                continue;
            }
        };
        let Some(kind) = value.get("kind").and_then(|k| k.as_str()) else {
            warn("not a JSON object with a string \"kind\"".to_string());
            continue;
        };
        if !matches!(kind, "train" | "generation" | "rating") {
            continue;
        }
        match Record::deserialize(&value) {
            Ok(record) => records.push(record),
            Err(e) => warn(format!("bad \"{kind}\" record ({e})")),
        }
    }
    MetricsView {
        warnings,
        ..MetricsView::of_records(records)
    }
}

impl MetricsView {
    /// The view of records already read, in file order: duplicate steps or generations
    /// (after a crash and resume) keep the record that comes last, the ratings are the
    /// last rating record's (entries without a finite Elo dropped); stop records are not
    /// drawn.
    pub fn of_records(records: impl IntoIterator<Item = Record>) -> MetricsView {
        let mut train = BTreeMap::new();
        let mut generations = BTreeMap::new();
        let mut ratings = None;
        for record in records {
            match record {
                Record::Train(r) => {
                    train.insert(
                        r.step,
                        TrainPoint {
                            step: r.step,
                            stats: r.stats,
                        },
                    );
                }
                Record::Generation(r) => {
                    generations.insert(r.generation, *r);
                }
                Record::Rating(r) => {
                    let models = r
                        .ratings
                        .into_iter()
                        .filter_map(|e| {
                            Some(RatedModel {
                                name: e.name,
                                generation: e.generation.map(u64::from),
                                elo: finite(Some(e.elo))?,
                                stderr: finite(Some(e.stderr)).map_or(0.0, f64::abs),
                            })
                        })
                        .collect();
                    ratings = Some(models);
                }
                Record::Stop(_) => {}
            }
        }
        let records: Vec<GenerationRecord> = generations.into_values().collect();
        let generations = records
            .iter()
            .enumerate()
            .map(|(i, record)| GenerationPoint {
                record: record.clone(),
                all_selfplay_per_sec: i
                    .checked_sub(1)
                    .and_then(|before| all_selfplay_per_sec(&records[before], record)),
            })
            .collect();
        MetricsView {
            train: train.into_values().collect(),
            generations,
            ratings,
            warnings: Vec::new(),
        }
    }
}

/// All self-play positions (the loop's own and the background's) of generation `now` per
/// second of run time since the record `before`, when `now` follows it directly and both
/// have their times.
fn all_selfplay_per_sec(before: &GenerationRecord, now: &GenerationRecord) -> Option<f64> {
    let seconds = finite(now.elapsed_s)? - finite(before.elapsed_s)?;
    let positions = match (now.selfplay_positions, now.background_positions) {
        (None, None) => return None,
        (a, b) => a.unwrap_or(0) + b.unwrap_or(0),
    };
    (now.generation == before.generation + 1 && seconds > 0.0).then(|| positions as f64 / seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "run/metrics.jsonl";

    fn chart(key: &str) -> &'static Chart {
        CHARTS.iter().find(|c| c.key == key).expect("a chart")
    }

    /// The points of line `key` of chart `chart`.
    fn points(view: &MetricsView, chart_key: &str, key: &str) -> Vec<(f64, f64)> {
        view.lines(chart(chart_key))
            .into_iter()
            .find(|d| d.key == key)
            .map_or_else(Vec::new, |d| d.points)
    }

    #[test]
    fn train_duplicates_keep_last_and_sort_by_step() {
        let text = r#"{"kind":"train","step":200,"loss":3.0,"policy_loss":2.0,"value_loss":1.0}
{"kind":"train","step":100,"loss":4.0,"policy_loss":3.0,"value_loss":1.0,"extra":[1,2]}
{"kind":"train","step":200,"loss":2.5,"policy_loss":1.8,"value_loss":0.7,"occupancy_loss":0.4}
"#;
        let m = parse_metrics(text, FILE);
        assert!(m.warnings.is_empty(), "{:?}", m.warnings);
        let steps: Vec<u64> = m.train.iter().map(|p| p.step).collect();
        assert_eq!(steps, [100, 200]);
        assert_eq!(points(&m, "losses", "loss"), [(100.0, 4.0), (200.0, 2.5)]);
        assert_eq!(points(&m, "losses", "value_loss")[1], (200.0, 0.7));
        // A line only the second step has; a line no step has is left out.
        assert_eq!(points(&m, "losses", "occupancy_loss"), [(200.0, 0.4)]);
        let keys: Vec<&str> = m.lines(chart("losses")).iter().map(|d| d.key).collect();
        assert_eq!(
            keys,
            ["loss", "policy_loss", "value_loss", "occupancy_loss"]
        );
    }

    #[test]
    fn all_selfplay_rate_counts_background_positions_over_the_generation_time() {
        let text = r#"{"kind":"generation","generation":1,"selfplay_positions":900,"elapsed_s":100.0}
{"kind":"generation","generation":2,"selfplay_positions":0,"background_positions":1000,"elapsed_s":110.0}
{"kind":"generation","generation":3,"selfplay_positions":500,"background_positions":1500,"elapsed_s":120.0}
{"kind":"generation","generation":5,"selfplay_positions":500,"elapsed_s":130.0}
"#;
        let m = parse_metrics(text, FILE);
        assert!(m.warnings.is_empty(), "{:?}", m.warnings);
        // Generation 1 has no previous record, 5 follows a gap.
        assert_eq!(
            points(&m, "selfplay", "all_selfplay_per_sec"),
            [(2.0, 100.0), (3.0, 200.0)]
        );
    }

    #[test]
    fn generation_duplicates_keep_last_and_nulls_are_no_points() {
        let text = r#"{"kind":"generation","generation":2,"positions_per_sec":30.0,"evals_per_sec":5000.0,"train_samples_per_sec":600.0,"gate_score":null}
{"kind":"generation","generation":1,"positions_per_sec":20.0,"evals_per_sec":4000.0,"train_samples_per_sec":null}
{"kind":"generation","generation":2,"positions_per_sec":35.0,"evals_per_sec":5100.0,"train_samples_per_sec":650.0}
"#;
        let m = parse_metrics(text, FILE);
        assert!(m.warnings.is_empty(), "{:?}", m.warnings);
        assert_eq!(m.generations.len(), 2);
        assert_eq!(m.generations[0].generation(), 1);
        assert_eq!(
            points(&m, "training", "train_samples_per_sec"),
            [(2.0, 650.0)]
        );
        assert_eq!(
            points(&m, "selfplay", "positions_per_sec"),
            [(1.0, 20.0), (2.0, 35.0)]
        );
        let evals = m
            .lines(chart("selfplay"))
            .into_iter()
            .find(|d| d.key == "evals_per_sec")
            .unwrap();
        assert_eq!(evals.axis, Axis::Right);
    }

    #[test]
    fn last_rating_record_wins() {
        let text = r#"{"kind":"rating","generation":1,"ratings":[{"name":"gen-0001","generation":1,"elo":100.0,"stderr":50.0}]}
{"kind":"rating","generation":2,"ratings":[{"name":"gen-0001","generation":1,"elo":120.0,"stderr":40.0,"games":60},{"name":"random","generation":null,"elo":0.0,"stderr":0.0},{"name":"broken","generation":2,"elo":null,"stderr":1.0}]}
"#;
        let m = parse_metrics(text, FILE);
        assert!(m.warnings.is_empty(), "{:?}", m.warnings);
        let r = m.ratings.expect("ratings");
        assert_eq!(r.len(), 2, "entry without an Elo is dropped");
        assert_eq!(r[0].name, "gen-0001");
        assert_eq!(r[0].generation, Some(1));
        assert_eq!(r[0].elo, 120.0);
        assert_eq!(r[0].elo_95(), 1.96 * 40.0);
        assert_eq!(r[1].generation, None);
    }

    #[test]
    fn malformed_lines_are_skipped_with_file_and_line() {
        let text = "{\"kind\":\"train\",\"step\":1,\"loss\":2.0}\n\
                    not json\n\
                    \n\
                    [1,2,3]\n\
                    {\"kind\":\"train\",\"loss\":2.0}\n\
                    {\"kind\":\"generation\",\"generation\":\"x\"}\n\
                    {\"kind\":\"train\",\"step\":2,\"loss\":1.";
        let m = parse_metrics(text, FILE);
        assert_eq!(m.train.len(), 1);
        assert_eq!(m.train[0].step, 1);
        assert!(m.generations.is_empty());
        let lines: Vec<&str> = m
            .warnings
            .iter()
            .map(|w| w.split(": ").next().unwrap_or(""))
            .collect();
        assert_eq!(
            lines,
            [
                "run/metrics.jsonl:2",
                "run/metrics.jsonl:4",
                "run/metrics.jsonl:5",
                "run/metrics.jsonl:6",
                "run/metrics.jsonl:7"
            ]
        );
    }

    #[test]
    fn unknown_kinds_are_ignored_and_empty_input_gives_no_points() {
        let text = r#"{"kind":"hello","step":"not a number"}
{"kind":"checkpoint","generation":3}
{"kind":"train","step":5,"loss":1.0}
"#;
        let m = parse_metrics(text, FILE);
        assert!(m.warnings.is_empty(), "{:?}", m.warnings);
        assert_eq!(m.train.len(), 1);
        assert!(m.generations.is_empty());
        assert_eq!(m.ratings, None);
        let empty = parse_metrics("", FILE);
        assert!(empty.train.is_empty() && empty.generations.is_empty());
        assert!(empty.ratings.is_none() && empty.warnings.is_empty());
        assert!(CHARTS.iter().all(|c| empty.lines(c).is_empty()));
    }

    /// The dashboard gets every line of every chart that has points, thinned, with its
    /// axis: what `plot` draws, the dashboard shows.
    #[test]
    fn the_dashboards_charts_are_the_plots_lines() {
        let mut text = String::new();
        for step in 1..=50 {
            text.push_str(&format!(
                "{{\"kind\":\"train\",\"step\":{step},\"loss\":1.0,\"policy_kl\":0.5,\"occupancy_loss\":0.25}}\n"
            ));
        }
        text.push_str(
            "{\"kind\":\"generation\",\"generation\":1,\"positions_per_sec\":10.0,\"evals_per_sec\":300.0,\"heldout\":{\"positions\":10,\"top1\":0.25,\"top3\":0.5,\"log_likelihood\":-1.0,\"value_sign_agreement\":0.5,\"chance_top1\":0.05}}\n",
        );
        let m = parse_metrics(&text, FILE);
        assert!(m.warnings.is_empty(), "{:?}", m.warnings);
        let json = charts_json(&m, 10);
        let charts = json.as_array().unwrap();
        let keys: Vec<&str> = charts.iter().map(|c| c["key"].as_str().unwrap()).collect();
        assert_eq!(keys, ["losses", "selfplay", "training", "policy"]);
        for (chart, value) in CHARTS.iter().zip(charts) {
            let sent: Vec<&str> = value["lines"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| l["key"].as_str().unwrap())
                .collect();
            let drawn: Vec<&str> = m.lines(chart).iter().map(|d| d.key).collect();
            assert_eq!(sent, drawn, "{}", chart.key);
        }
        let losses = &charts[0]["lines"];
        assert_eq!(losses[1]["key"], "policy_kl");
        let kl = losses[1]["points"].as_array().unwrap();
        assert_eq!(kl.len(), 10);
        assert_eq!(kl[9], json!([50.0, 0.5]));
        assert_eq!(charts[1]["lines"][1]["axis"], "right");
        assert_eq!(charts[3]["lines"][0]["points"], json!([[1.0, 25.0]]));
    }
}
