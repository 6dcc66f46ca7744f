//! PNG learning curves of a run directory (`loazero plot`).
//!
//! Reads `RUN_DIR/metrics.jsonl` (JSON lines written by `loazero run`) and writes three
//! images into `RUN_DIR/plots/` (or `--out`):
//!
//! - `elo.png`: Elo of every trained model over the run's training time (minutes at the
//!   end of the generation that made it, from the `"generation"` records; by generation
//!   when those are missing), from the last `"rating"` record (each rating round refits
//!   all games, so the last one is the best estimate), with ±1.96·stderr error bars;
//!   fixed anchors are dashed horizontal lines.
//! - `losses.png`: total, policy and value loss (and the occupancy loss of a network with
//!   an occupancy head) against the training step (`"train"`).
//! - `policy.png`: held-out move matching (top-1, top-3, chance) of each generation's
//!   candidate (`"generation"` records with `heldout`).
//! - `throughput.png`: self-play positions/s and evaluations/s (top) and training
//!   samples/s (bottom) per generation (`"generation"`).
//!
//! The three files are always written; a plot without data shows a note such as
//! "no ratings yet". Parsing (text → typed series) is kept apart from drawing so that
//! it can be tested without fonts or images.

use anyhow::{anyhow, bail, Context, Result};
use eval::elo::EloEstimate;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::FontStyle;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use train::metrics::Record;

/// Environment variable naming the TrueType/OpenType font used for all text.
pub const FONT_ENV: &str = "LOAZERO_FONT";

/// Fonts tried, in order, when [`FONT_ENV`] is not set.
pub const FONT_PATHS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf",
    "/usr/share/fonts/noto/NotoSans-Regular.ttf",
    "/usr/share/fonts/truetype/freefont/FreeSans.ttf",
    "/Library/Fonts/Arial.ttf",
    "/System/Library/Fonts/Supplemental/Arial.ttf",
];

/// Writes `elo.png`, `losses.png` and `throughput.png` of the run in `dir` into `out`
/// (default `dir/plots`, created if missing), each atomically, and returns their paths.
///
/// Malformed lines of `metrics.jsonl` are reported on stderr (`file:line: ...`) and
/// skipped. Errors: missing run directory or `metrics.jsonl`, no usable font, or an
/// image that cannot be written.
pub fn write_plots(dir: &Path, out: Option<&Path>, size: (u32, u32)) -> Result<Vec<PathBuf>> {
    if !dir.is_dir() {
        bail!(
            "run directory {} does not exist or is not a directory",
            dir.display()
        );
    }
    let metrics = read_metrics(dir)?;

    register_font()?;
    let out = out.map_or_else(|| dir.join("plots"), Path::to_path_buf);
    std::fs::create_dir_all(&out)
        .with_context(|| format!("cannot create output directory {}", out.display()))?;
    Ok(vec![
        write_png(&out, "elo.png", size, |root| {
            draw_elo(root, metrics.ratings.as_deref(), &metrics.generations)
        })?,
        write_png(&out, "losses.png", size, |root| {
            draw_losses(root, &metrics.train)
        })?,
        write_png(&out, "throughput.png", size, |root| {
            draw_throughput(root, &metrics.generations)
        })?,
        write_png(&out, "policy.png", size, |root| {
            draw_policy(root, &metrics.generations)
        })?,
    ])
}

/// Reads and parses `dir/metrics.jsonl` ([`parse_metrics`]), printing each skipped line's
/// warning on stderr. Errors: the file cannot be read (it names the file).
pub fn read_metrics(dir: &Path) -> Result<Metrics> {
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

// ---------------------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------------------

/// Losses at one training step (a `"train"` record). Non-finite values are `None`.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainPoint {
    /// Training step (x axis).
    pub step: u64,
    /// Total loss.
    pub loss: Option<f64>,
    /// Policy (cross-entropy) loss.
    pub policy_loss: Option<f64>,
    /// Policy KL divergence to the targets.
    pub policy_kl: Option<f64>,
    /// Value loss.
    pub value_loss: Option<f64>,
    /// Occupancy loss (a network with an occupancy head).
    pub occupancy_loss: Option<f64>,
}

/// Throughput of one loop generation (a `"generation"` record). Non-finite values are
/// `None`.
#[derive(Debug, Clone, PartialEq)]
pub struct GenerationPoint {
    /// Loop generation (x axis).
    pub generation: u64,
    /// Self-play positions per second.
    pub positions_per_sec: Option<f64>,
    /// Network evaluations per second during self-play.
    pub evals_per_sec: Option<f64>,
    /// Training samples per second.
    pub train_samples_per_sec: Option<f64>,
    /// Positions of all self-play since the previous generation record: the loop's own
    /// and its background self-play's.
    pub all_selfplay_positions: Option<u64>,
    /// Active run seconds when the generation ended.
    pub elapsed_s: Option<f64>,
    /// Held-out move matching of the generation's candidate: (top-1, top-3, chance
    /// top-1), fractions.
    pub heldout: Option<(f64, f64, f64)>,
}

/// One rated player of a `"rating"` record.
#[derive(Debug, Clone, PartialEq)]
pub struct RatedModel {
    /// Player name, e.g. `gen-0004` or `alphabeta:depth=1`.
    pub name: String,
    /// Generation of a trained model; `None` for a fixed anchor.
    pub generation: Option<u64>,
    /// Elo (finite).
    pub elo: f64,
    /// Standard error of the Elo (finite, ≥ 0; 0 when unknown).
    pub stderr: f64,
}

/// Everything `loazero plot` takes from `metrics.jsonl`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Metrics {
    /// One point per training step (the last record of each step), sorted by step.
    pub train: Vec<TrainPoint>,
    /// One point per generation (the last record of each), sorted by generation.
    pub generations: Vec<GenerationPoint>,
    /// The players of the last `"rating"` record (entries without a finite Elo
    /// dropped); `None` when there is no rating record.
    pub ratings: Option<Vec<RatedModel>>,
    /// One message per skipped line, `"{file}:{line}: ..."` (lines count from 1).
    pub warnings: Vec<String>,
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
/// skipped and reported in [`Metrics::warnings`], prefixed with `file:line`. Duplicate
/// steps or generations (after a crash and resume) keep the record that comes last.
pub fn parse_metrics(text: &str, file: &str) -> Metrics {
    let mut train = BTreeMap::new();
    let mut generations = BTreeMap::new();
    let mut ratings = None;
    let mut warnings = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let mut warn = |reason: String| {
            warnings.push(format!("{file}:{}: skipped line: {reason}", index + 1));
        };
        let value: serde_json::Value = match serde_json::from_str(line) {
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
            Ok(Record::Train(r)) => {
                let point = TrainPoint {
                    step: r.step,
                    loss: finite(Some(r.stats.loss)),
                    policy_loss: finite(Some(r.stats.policy_loss)),
                    policy_kl: finite(Some(r.stats.policy_kl)),
                    value_loss: finite(Some(r.stats.value_loss)),
                    occupancy_loss: finite(Some(r.stats.occupancy_loss)),
                };
                train.insert(r.step, point);
            }
            Ok(Record::Generation(r)) => {
                let point = GenerationPoint {
                    generation: r.generation as u64,
                    positions_per_sec: finite(r.positions_per_sec),
                    evals_per_sec: finite(r.evals_per_sec),
                    train_samples_per_sec: finite(r.train_samples_per_sec),
                    all_selfplay_positions: match (r.selfplay_positions, r.background_positions) {
                        (None, None) => None,
                        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
                    },
                    elapsed_s: finite(r.elapsed_s),
                    heldout: r
                        .heldout
                        .map(|h| (h.top1, h.top3, h.chance_top1))
                        .filter(|(a, b, c)| a.is_finite() && b.is_finite() && c.is_finite()),
                };
                generations.insert(r.generation as u64, point);
            }
            Ok(Record::Rating(r)) => {
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
            // Not passed by the kind filter above: `plot` draws no stops.
            Ok(Record::Stop(_)) => {}
            Err(e) => warn(format!("bad \"{kind}\" record ({e})")),
        }
    }
    Metrics {
        train: train.into_values().collect(),
        generations: generations.into_values().collect(),
        ratings,
        warnings,
    }
}

/// A range covering every finite value, padded by 5% on each side; `default` when there
/// are none, and at least ±max(10% of |value|, 1) around a single or constant value (so
/// the range is never empty).
pub fn padded_range(values: impl IntoIterator<Item = f64>, default: Range<f64>) -> Range<f64> {
    let (lo, hi) = values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if lo > hi {
        return default;
    }
    let span = hi - lo;
    if span <= f64::EPSILON * lo.abs().max(1.0) {
        let pad = (lo.abs() * 0.1).max(1.0);
        return (lo - pad)..(hi + pad);
    }
    (lo - 0.05 * span)..(hi + 0.05 * span)
}

/// The y range of a rate (≥ 0): from 0 (so that small fluctuations do not look like
/// large ones) to a little above the largest value.
fn rate_range(points: &[(i64, f64)]) -> Range<f64> {
    let r = padded_range(points.iter().map(|p| p.1).chain([0.0]), 0.0..1.0);
    r.start.max(0.0)..r.end
}

/// An integer range covering every value with one unit of margin on each side;
/// `0..1` when there are none.
pub fn padded_int_range(values: impl IntoIterator<Item = u64>) -> Range<i64> {
    let (lo, hi) = values
        .into_iter()
        .map(|v| i64::try_from(v).unwrap_or(i64::MAX - 1))
        .fold((i64::MAX, i64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo > hi {
        return 0..1;
    }
    let margin = ((hi - lo) / 20).max(1);
    lo.saturating_sub(margin)..hi.saturating_add(margin)
}

// ---------------------------------------------------------------------------------------
// Drawing
// ---------------------------------------------------------------------------------------

pub(crate) type Root<'a> = DrawingArea<BitMapBackend<'a>, Shift>;

/// Registers a TrueType font as `sans-serif` (plotters' `ab_glyph` backend has none):
/// `$LOAZERO_FONT` if set, else the first of [`FONT_PATHS`] that exists. Errors name
/// every path tried.
pub(crate) fn register_font() -> Result<()> {
    let (candidates, from_env) = match std::env::var_os(FONT_ENV) {
        Some(p) if !p.is_empty() => (vec![PathBuf::from(p)], true),
        _ => (FONT_PATHS.iter().map(PathBuf::from).collect(), false),
    };
    for path in &candidates {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if from_env => {
                return Err(e).with_context(|| {
                    format!("cannot read font {} (from {FONT_ENV})", path.display())
                })
            }
            Err(_) => continue,
        };
        // plotters keeps the font for the whole process: leaking it once is intended.
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        return plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
            .map_err(|_| anyhow!("{} is not a usable TrueType/OpenType font", path.display()));
    }
    let tried: Vec<String> = candidates.iter().map(|p| p.display().to_string()).collect();
    bail!(
        "no TrueType font found (tried {}); set {FONT_ENV} to the path of a .ttf file",
        tried.join(", ")
    )
}

/// Renders one image with `draw` on a white background and moves it to `dir/name`
/// atomically (a hidden temporary file in `dir`, fsync, rename). Returns the final path.
pub(crate) fn write_png(
    dir: &Path,
    name: &str,
    size: (u32, u32),
    draw: impl FnOnce(&Root) -> Result<()>,
) -> Result<PathBuf> {
    let path = dir.join(name);
    // BitMapBackend picks the encoder from the extension: the temporary file keeps it.
    selfplay::atomic_file::write_atomically_with(&path, |tmp| {
        let rendered = (|| -> Result<()> {
            let root = BitMapBackend::new(tmp, size).into_drawing_area();
            root.fill(&WHITE)?;
            draw(&root)?;
            root.present()?;
            Ok(())
        })();
        rendered.map_err(|e| std::io::Error::other(format!("cannot draw: {e:#}")))
    })?;
    Ok(path)
}

/// Font sizes scaled with the image (1.0 at 1200×800).
pub(crate) fn scale(root: &Root) -> f64 {
    let (w, h) = root.dim_in_pixel();
    (f64::from(w) / 1200.0)
        .min(f64::from(h) / 800.0)
        .clamp(0.4, 4.0)
}

pub(crate) fn px(base: f64, s: f64) -> u32 {
    (base * s).round().max(1.0) as u32
}

/// A titled empty panel with `note` in its middle.
pub(crate) fn draw_note(area: &Root, title: &str, note: &str) -> Result<()> {
    let s = scale(area);
    let area = area.titled(title, ("sans-serif", px(28.0, s)))?;
    let (w, h) = area.dim_in_pixel();
    let grey = BLACK.mix(0.6);
    let style = TextStyle::from(("sans-serif", px(22.0, s)).into_font())
        .color(&grey)
        .pos(Pos::new(HPos::Center, VPos::Center));
    area.draw_text(note, &style, (w as i32 / 2, h as i32 / 2))?;
    Ok(())
}

/// Color of the `i`th series.
pub(crate) fn color(i: usize) -> RGBColor {
    const COLORS: [RGBColor; 6] = [
        RGBColor(31, 119, 180),
        RGBColor(214, 39, 40),
        RGBColor(44, 160, 44),
        RGBColor(255, 127, 14),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
    ];
    COLORS[i % COLORS.len()]
}

/// Elo values beyond ±this are drawn at it (a clean sweep has infinite bounds).
pub(crate) const ELO_CLIP: f64 = 1000.0;

/// `elo` clamped to ±[`ELO_CLIP`] (infinities included).
pub(crate) fn clip_elo(elo: f64) -> f64 {
    elo.clamp(-ELO_CLIP, ELO_CLIP)
}

/// The y range of a chart of Elo estimates against an opponent: every 95% interval
/// (clipped by [`clip_elo`]) and at least −100..100, padded by 8% of the span.
pub(crate) fn elo_axis_range(estimates: impl IntoIterator<Item = EloEstimate>) -> Range<f64> {
    let (mut lo, mut hi) = (-100.0f64, 100.0f64);
    for e in estimates {
        lo = lo.min(clip_elo(e.lower));
        hi = hi.max(clip_elo(e.upper));
    }
    let pad = 0.08 * (hi - lo);
    (lo - pad)..(hi + pad)
}

/// A chart of Elo against anything: any `f64` x axis (linear or log), a linear Elo axis.
pub(crate) type EloChart<'a, 'b, X> =
    ChartContext<'a, BitMapBackend<'b>, Cartesian2d<X, RangedCoordf64>>;

/// Draws a thin black line at Elo 0 (level with the opponent) across `x`.
pub(crate) fn draw_even_line<X: Ranged<ValueType = f64>>(
    chart: &mut EloChart<'_, '_, X>,
    x: &Range<f64>,
    s: f64,
) -> Result<()> {
    chart.draw_series(LineSeries::new(
        [(x.start, 0.0), (x.end, 0.0)],
        BLACK.mix(0.4).stroke_width(px(1.0, s)),
    ))?;
    Ok(())
}

/// Draws `points` (x, Elo with its 95% interval) in colour `c`: a vertical error bar at
/// each point, the estimates joined by a line with markers, every value clipped by
/// [`clip_elo`]; with `label`, the line gets that legend entry.
pub(crate) fn draw_elo_curve<X: Ranged<ValueType = f64>>(
    chart: &mut EloChart<'_, '_, X>,
    points: &[(f64, EloEstimate)],
    c: RGBColor,
    s: f64,
    label: Option<&str>,
) -> Result<()> {
    chart.draw_series(points.iter().map(|&(x, e)| {
        ErrorBar::new_vertical(
            x,
            clip_elo(e.lower),
            clip_elo(e.elo),
            clip_elo(e.upper),
            c.stroke_width(px(1.5, s)),
            px(10.0, s),
        )
    }))?;
    let line = chart.draw_series(
        LineSeries::new(
            points.iter().map(|&(x, e)| (x, clip_elo(e.elo))),
            c.stroke_width(px(2.0, s)),
        )
        .point_size(px(4.0, s)),
    )?;
    if let Some(label) = label {
        line.label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
    }
    Ok(())
}

/// `elo.png`: trained models (points, ±1.96·stderr bars, joined by a line) against
/// their generation; anchors, and the run's learned alpha-beta (`nnue-k`, rated once at
/// the end of the run), as dashed horizontal lines labelled with their name.
/// The x axis is the run's training time in minutes when every rated model's generation
/// has an end time in `generations` (generation 0 is minute 0), else the generation.
fn draw_elo(
    root: &Root,
    ratings: Option<&[RatedModel]>,
    generations: &[GenerationPoint],
) -> Result<()> {
    const TITLE: &str = "Elo vs generation (anchor: random = 0)";
    let Some(ratings) = ratings.filter(|r| !r.is_empty()) else {
        return draw_note(root, TITLE, "no ratings yet");
    };
    let mut models: Vec<(u64, &RatedModel)> = ratings
        .iter()
        .filter_map(|m| Some((m.generation?, m)))
        .collect();
    models.sort_by_key(|&(g, _)| g);
    let anchors: Vec<&RatedModel> = ratings.iter().filter(|m| m.generation.is_none()).collect();
    let minutes: BTreeMap<u64, f64> = generations
        .iter()
        .filter_map(|g| Some((g.generation, g.elapsed_s? / 60.0)))
        .chain(std::iter::once((0, 0.0)))
        .collect();
    let by_time = !models.is_empty() && models.iter().all(|(g, _)| minutes.contains_key(g));
    let x_of = |g: u64| if by_time { minutes[&g] } else { g as f64 };
    let (title, x_desc) = if by_time {
        (
            "Elo over training time (anchor: random = 0)",
            "training time (minutes; points labelled by generation)",
        )
    } else {
        (TITLE, "generation")
    };

    let s = scale(root);
    let x_range = padded_range(models.iter().map(|&(g, _)| x_of(g)), 0.0..1.0);
    let y_range = padded_range(
        ratings
            .iter()
            .flat_map(|m| [m.elo - 1.96 * m.stderr, m.elo + 1.96 * m.stderr]),
        0.0..1.0,
    );
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", px(28.0, s)))
        .margin(px(15.0, s))
        .x_label_area_size(px(55.0, s))
        .y_label_area_size(px(75.0, s))
        .build_cartesian_2d(x_range.clone(), y_range)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc("Elo")
        .y_label_formatter(&|y| format!("{y:.0}"))
        .label_style(("sans-serif", px(16.0, s)))
        .axis_desc_style(("sans-serif", px(18.0, s)))
        .draw()?;

    for (i, anchor) in anchors.iter().enumerate() {
        let c = color(i + 1);
        chart.draw_series(DashedLineSeries::new(
            [(x_range.start, anchor.elo), (x_range.end, anchor.elo)],
            px(8.0, s),
            px(5.0, s),
            c.stroke_width(px(1.5, s)),
        ))?;
        let label = if anchor.name.starts_with("nnue-") {
            // The run's learned evaluation (its alpha-beta at learned_eval.rating_depth).
            format!("{}: learned alpha-beta ({:.0})", anchor.name, anchor.elo)
        } else {
            format!("{} ({:.0})", anchor.name, anchor.elo)
        };
        let style = TextStyle::from(("sans-serif", px(15.0, s)).into_font())
            .color(&c)
            .pos(Pos::new(HPos::Left, VPos::Bottom));
        chart.draw_series(std::iter::once(Text::new(
            label,
            (x_range.start, anchor.elo),
            style,
        )))?;
    }

    let c = color(0);
    chart.draw_series(models.iter().map(|&(g, m)| {
        let half = 1.96 * m.stderr;
        ErrorBar::new_vertical(
            x_of(g),
            m.elo - half,
            m.elo,
            m.elo + half,
            c.stroke_width(px(1.5, s)),
            px(10.0, s),
        )
    }))?;
    if !models.is_empty() {
        chart
            .draw_series(
                LineSeries::new(
                    models.iter().map(|&(g, m)| (x_of(g), m.elo)),
                    c.stroke_width(px(2.0, s)),
                )
                .point_size(px(4.0, s)),
            )?
            .label("trained models (±1.96·stderr)")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
        if by_time {
            let style = TextStyle::from(("sans-serif", px(13.0, s)).into_font())
                .color(&c)
                .pos(Pos::new(HPos::Left, VPos::Top));
            let dx = 0.012 * (x_range.end - x_range.start);
            chart.draw_series(models.iter().map(|&(g, m)| {
                Text::new(format!("gen {g}"), (x_of(g) + dx, m.elo), style.clone())
            }))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .label_font(("sans-serif", px(16.0, s)))
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()?;
    }
    Ok(())
}

/// `losses.png`: total, policy and value loss (and the occupancy loss, if any) against the
/// training step.
fn draw_losses(root: &Root, train: &[TrainPoint]) -> Result<()> {
    const TITLE: &str = "Training loss vs step";
    type Getter = fn(&TrainPoint) -> Option<f64>;
    let getters: [(&str, Getter); 5] = [
        ("total loss", |p| p.loss),
        ("policy loss", |p| p.policy_loss),
        ("policy KL", |p| p.policy_kl),
        ("value loss", |p| p.value_loss),
        ("occupancy loss", |p| p.occupancy_loss),
    ];
    let series: Vec<(&str, Vec<(i64, f64)>)> = getters
        .iter()
        .map(|(name, get)| {
            let points: Vec<(i64, f64)> = train
                .iter()
                .filter_map(|p| Some((p.step as i64, get(p)?)))
                .collect();
            (*name, points)
        })
        // A series no record has (the occupancy loss of a net without the head, the policy
        // KL of older logs) gets no legend entry.
        .filter(|(_, points)| !points.is_empty())
        .collect();
    if series.is_empty() {
        return draw_note(root, TITLE, "no training records yet");
    }
    let y_range = padded_range(
        series.iter().flat_map(|(_, p)| p.iter().map(|(_, y)| *y)),
        0.0..1.0,
    );
    draw_lines(
        root,
        LineChart {
            title: TITLE,
            x_desc: "training step",
            y_desc: "loss",
            x_range: padded_int_range(train.iter().map(|p| p.step)),
            y_range,
            markers: train.len() <= 30,
            legend: SeriesLabelPosition::UpperRight,
        },
        series,
    )
}

/// `policy.png`: move matching of each generation's candidate on the held-out set
/// (top-1 and top-3, %) with the chance level of top-1.
fn draw_policy(root: &Root, generations: &[GenerationPoint]) -> Result<()> {
    const TITLE: &str = "Held-out move matching vs alphabeta:depth=5";
    let points: Vec<(i64, (f64, f64, f64))> = generations
        .iter()
        .filter_map(|g| Some((g.generation as i64, g.heldout?)))
        .collect();
    if points.is_empty() {
        return draw_note(root, TITLE, "no held-out scores yet (run.heldout)");
    }
    let y_max = points
        .iter()
        .map(|(_, (_, t3, _))| 100.0 * t3)
        .fold(10.0f64, f64::max);
    type Getter = fn(&(f64, f64, f64)) -> f64;
    let getters: [(&str, Getter); 3] = [
        ("top-1", |h| h.0),
        ("top-3", |h| h.1),
        ("chance (top-1)", |h| h.2),
    ];
    let series = getters
        .iter()
        .map(|(name, get)| {
            let line = points.iter().map(|(g, h)| (*g, 100.0 * get(h))).collect();
            (*name, line)
        })
        .collect();
    draw_lines(
        root,
        LineChart {
            title: TITLE,
            x_desc: "generation",
            y_desc: "% of positions",
            x_range: padded_int_range(points.iter().map(|(g, _)| *g as u64)),
            y_range: 0.0..(y_max * 1.1).min(100.0),
            markers: points.len() <= 40,
            legend: SeriesLabelPosition::UpperLeft,
        },
        series,
    )
}

/// The frame of a chart of lines over an integer x axis, for [`draw_lines`].
struct LineChart<'a> {
    title: &'a str,
    x_desc: &'a str,
    y_desc: &'a str,
    x_range: Range<i64>,
    y_range: Range<f64>,
    /// Mark every point (for short series).
    markers: bool,
    legend: SeriesLabelPosition,
}

/// Draws `series` (name, points) as lines in the palette's order, with a legend.
fn draw_lines(root: &Root, frame: LineChart, series: Vec<(&str, Vec<(i64, f64)>)>) -> Result<()> {
    let s = scale(root);
    let mut chart = ChartBuilder::on(root)
        .caption(frame.title, ("sans-serif", px(28.0, s)))
        .margin(px(15.0, s))
        .x_label_area_size(px(55.0, s))
        .y_label_area_size(px(75.0, s))
        .build_cartesian_2d(frame.x_range, frame.y_range)?;
    chart
        .configure_mesh()
        .x_desc(frame.x_desc)
        .y_desc(frame.y_desc)
        .label_style(("sans-serif", px(16.0, s)))
        .axis_desc_style(("sans-serif", px(18.0, s)))
        .draw()?;
    for (i, (name, points)) in series.into_iter().enumerate() {
        let c = color(i);
        chart
            .draw_series(
                LineSeries::new(points, c.stroke_width(px(2.0, s))).point_size(if frame.markers {
                    px(3.0, s)
                } else {
                    0
                }),
            )?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .position(frame.legend)
        .label_font(("sans-serif", px(16.0, s)))
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

/// All self-play positions per second of run time in each generation after the first
/// (the loop's own and the background's, over the time since the previous generation
/// record), when both records have their time.
fn all_selfplay_rates(generations: &[GenerationPoint]) -> Vec<(i64, f64)> {
    generations
        .windows(2)
        .filter_map(|w| {
            let seconds = w[1].elapsed_s? - w[0].elapsed_s?;
            let positions = w[1].all_selfplay_positions? as f64;
            (w[1].generation == w[0].generation + 1 && seconds > 0.0)
                .then(|| (w[1].generation as i64, positions / seconds))
        })
        .collect()
}

/// `throughput.png`: top panel self-play positions/s (left axis: the loop's self-play
/// phase, and all self-play over the generation's run time) and evaluations/s (right
/// axis); bottom panel training samples/s; all per generation.
fn draw_throughput(root: &Root, generations: &[GenerationPoint]) -> Result<()> {
    let s = scale(root);
    let panels = root.split_evenly((2, 1));
    let x_range = padded_int_range(generations.iter().map(|g| g.generation));
    let points = |get: fn(&GenerationPoint) -> Option<f64>| -> Vec<(i64, f64)> {
        generations
            .iter()
            .filter_map(|g| Some((g.generation as i64, get(g)?)))
            .collect()
    };
    let marker = px(4.0, s);

    // Top: self-play.
    const TOP: &str = "Self-play throughput per generation";
    let positions = points(|g| g.positions_per_sec);
    let evals = points(|g| g.evals_per_sec);
    let all = all_selfplay_rates(generations);
    if positions.is_empty() && evals.is_empty() && all.is_empty() {
        draw_note(&panels[0], TOP, "no generation records yet")?;
    } else {
        let both: Vec<(i64, f64)> = positions.iter().chain(&all).copied().collect();
        let y_left = rate_range(&both);
        let y_right = rate_range(&evals);
        let mut chart = ChartBuilder::on(&panels[0])
            .caption(TOP, ("sans-serif", px(24.0, s)))
            .margin(px(12.0, s))
            .x_label_area_size(px(45.0, s))
            .y_label_area_size(px(75.0, s))
            .right_y_label_area_size(px(85.0, s))
            .build_cartesian_2d(x_range.clone(), y_left)?
            .set_secondary_coord(x_range.clone(), y_right);
        chart
            .configure_mesh()
            .x_desc("generation")
            .y_desc("positions/s")
            .label_style(("sans-serif", px(15.0, s)))
            .axis_desc_style(("sans-serif", px(17.0, s)))
            .draw()?;
        chart
            .configure_secondary_axes()
            .y_desc("evaluations/s")
            .label_style(("sans-serif", px(15.0, s)))
            .axis_desc_style(("sans-serif", px(17.0, s)))
            .draw()?;
        let (c0, c1) = (color(0), color(1));
        chart
            .draw_series(
                LineSeries::new(positions, c0.stroke_width(px(2.0, s))).point_size(marker),
            )?
            .label("positions/s of the loop's self-play phase (left)")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c0.stroke_width(2)));
        let c3 = color(3);
        chart
            .draw_series(LineSeries::new(all, c3.stroke_width(px(2.0, s))).point_size(marker))?
            .label("all self-play positions/s of run time, with background (left)")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c3.stroke_width(2)));
        chart
            .draw_secondary_series(
                LineSeries::new(evals, c1.stroke_width(px(2.0, s))).point_size(marker),
            )?
            .label("evaluations/s (right)")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c1.stroke_width(2)));
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .label_font(("sans-serif", px(15.0, s)))
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()?;
    }

    // Bottom: training.
    const BOTTOM: &str = "Training throughput per generation";
    let samples = points(|g| g.train_samples_per_sec);
    if samples.is_empty() {
        draw_note(&panels[1], BOTTOM, "no generation records yet")?;
    } else {
        let y_range = rate_range(&samples);
        let mut chart = ChartBuilder::on(&panels[1])
            .caption(BOTTOM, ("sans-serif", px(24.0, s)))
            .margin(px(12.0, s))
            .x_label_area_size(px(45.0, s))
            .y_label_area_size(px(75.0, s))
            .right_y_label_area_size(px(85.0, s))
            .build_cartesian_2d(x_range, y_range)?;
        chart
            .configure_mesh()
            .x_desc("generation")
            .y_desc("samples/s")
            .label_style(("sans-serif", px(15.0, s)))
            .axis_desc_style(("sans-serif", px(17.0, s)))
            .draw()?;
        let c = color(2);
        chart
            .draw_series(LineSeries::new(samples, c.stroke_width(px(2.0, s))).point_size(marker))?
            .label("training samples/s")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .label_font(("sans-serif", px(15.0, s)))
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "run/metrics.jsonl";

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
        assert_eq!(m.train[1].loss, Some(2.5));
        assert_eq!(m.train[1].value_loss, Some(0.7));
        assert_eq!(m.train[1].occupancy_loss, Some(0.4));
        assert_eq!(m.train[0].occupancy_loss, None);
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
        assert_eq!(m.generations[1].all_selfplay_positions, Some(1000));
        // Generation 1 has no previous record, 5 follows a gap.
        assert_eq!(all_selfplay_rates(&m.generations), [(2, 100.0), (3, 200.0)]);
    }

    #[test]
    fn generation_duplicates_keep_last_and_nulls_are_none() {
        let text = r#"{"kind":"generation","generation":2,"positions_per_sec":30.0,"evals_per_sec":5000.0,"train_samples_per_sec":600.0,"gate_score":null}
{"kind":"generation","generation":1,"positions_per_sec":20.0,"evals_per_sec":4000.0,"train_samples_per_sec":null}
{"kind":"generation","generation":2,"positions_per_sec":35.0,"evals_per_sec":5100.0,"train_samples_per_sec":650.0}
"#;
        let m = parse_metrics(text, FILE);
        assert!(m.warnings.is_empty(), "{:?}", m.warnings);
        assert_eq!(m.generations.len(), 2);
        assert_eq!(m.generations[0].generation, 1);
        assert_eq!(m.generations[0].train_samples_per_sec, None);
        assert_eq!(m.generations[1].positions_per_sec, Some(35.0));
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
    fn unknown_kinds_are_ignored() {
        let text = r#"{"kind":"hello","step":"not a number"}
{"kind":"checkpoint","generation":3}
{"kind":"train","step":5,"loss":1.0}
"#;
        let m = parse_metrics(text, FILE);
        assert!(m.warnings.is_empty(), "{:?}", m.warnings);
        assert_eq!(m.train.len(), 1);
        assert!(m.generations.is_empty());
        assert_eq!(m.ratings, None);
    }

    #[test]
    fn empty_input_gives_empty_metrics() {
        assert_eq!(parse_metrics("", FILE), Metrics::default());
    }

    #[test]
    fn ranges_are_never_empty() {
        assert_eq!(padded_range([], 0.0..1.0), 0.0..1.0);
        let r = padded_range([f64::NAN, 5.0, f64::INFINITY], 0.0..1.0);
        assert!(r.start < 5.0 && r.end > 5.0);
        let r = padded_range([0.0, 0.0], 0.0..1.0);
        assert!(r.start < 0.0 && r.end > 0.0);
        let r = padded_range([1.0, 3.0], 0.0..1.0);
        assert!(r.start < 1.0 && r.end > 3.0);
        assert_eq!(padded_int_range([]), 0..1);
        assert_eq!(padded_int_range([4]), 3..5);
        assert_eq!(padded_int_range([0, 3, 1]), -1..4);
    }
}
