//! PNG learning curves of a run directory (`loazero plot`).
//!
//! Reads `RUN_DIR/metrics.jsonl` (JSON lines written by `loazero run`) and writes four
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
//! The four files are always written; a plot without data shows a note such as
//! "no ratings yet". What is drawn comes from the run's one metrics view
//! ([`crate::metrics_view`]: the parsed records and every chart's lines, which the
//! dashboard draws too); this module only draws.

use crate::metrics_view::{
    read_metrics, Axis, Chart, GenerationPoint, MetricsView, RatedModel, CHARTS,
};
use anyhow::{anyhow, bail, Context, Result};
use eval::elo::EloEstimate;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::FontStyle;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

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

/// Writes `elo.png`, `losses.png`, `throughput.png` and `policy.png` of the run in `dir`
/// into `out` (default `dir/plots`, created if missing), each atomically, and returns
/// their paths.
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
    let mut written = vec![write_png(&out, "elo.png", size, |root| {
        draw_elo(root, metrics.ratings.as_deref(), &metrics.generations)
    })?];
    // The other charts, each PNG holding its charts stacked in order.
    let mut pngs: Vec<&str> = CHARTS.iter().map(|c| c.png).collect();
    pngs.dedup();
    for png in pngs {
        let charts: Vec<&Chart> = CHARTS.iter().filter(|c| c.png == png).collect();
        written.push(write_png(&out, png, size, |root| {
            let panels = root.split_evenly((charts.len(), 1));
            for (panel, chart) in panels.iter().zip(&charts) {
                draw_chart(panel, chart, &metrics)?;
            }
            Ok(())
        })?);
    }
    Ok(written)
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
fn rate_range(values: impl IntoIterator<Item = f64>) -> Range<f64> {
    let r = padded_range(values.into_iter().chain([0.0]), 0.0..1.0);
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
        .filter_map(|g| Some((g.generation(), g.elapsed_s()? / 60.0)))
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
            .flat_map(|m| [m.elo - m.elo_95(), m.elo + m.elo_95()]),
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
        let half = m.elo_95();
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
            .label("trained models (± 95%)")
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

/// Where the legend of chart `key` goes: where its lines usually leave room.
fn legend_position(key: &str) -> SeriesLabelPosition {
    match key {
        "losses" => SeriesLabelPosition::UpperRight,
        "policy" => SeriesLabelPosition::UpperLeft,
        _ => SeriesLabelPosition::LowerRight,
    }
}

/// Draws `chart` of the run's metrics into `area`: its lines over the steps or generations
/// (a marker at each point of a short line), the [`Axis::Right`] ones against a second
/// axis, with a legend; a note when no line has a point.
fn draw_chart(area: &Root, chart: &Chart, view: &MetricsView) -> Result<()> {
    let lines = view.lines(chart);
    if lines.is_empty() {
        return draw_note(area, chart.title, chart.empty);
    }
    let s = scale(area);
    let y_range = |axis: Axis| {
        let ys = lines
            .iter()
            .filter(|d| d.axis == axis)
            .flat_map(|d| d.points.iter().map(|p| p.1));
        if chart.from_zero {
            rate_range(ys)
        } else {
            padded_range(ys, 0.0..1.0)
        }
    };
    let right = lines.iter().any(|d| d.axis == Axis::Right);
    let x_range = padded_int_range(
        lines
            .iter()
            .flat_map(|d| d.points.iter().map(|p| p.0.max(0.0) as u64)),
    );
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(chart.title, ("sans-serif", px(26.0, s)))
        .margin(px(15.0, s))
        .x_label_area_size(px(50.0, s))
        .y_label_area_size(px(75.0, s));
    if right {
        builder.right_y_label_area_size(px(85.0, s));
    }
    let mut plot = builder
        .build_cartesian_2d(x_range.clone(), y_range(Axis::Left))?
        .set_secondary_coord(x_range, y_range(Axis::Right));
    plot.configure_mesh()
        .x_desc(chart.x_label)
        .y_desc(chart.y_label)
        .label_style(("sans-serif", px(15.0, s)))
        .axis_desc_style(("sans-serif", px(17.0, s)))
        .draw()?;
    if right {
        plot.configure_secondary_axes()
            .y_desc(chart.right_label)
            .label_style(("sans-serif", px(15.0, s)))
            .axis_desc_style(("sans-serif", px(17.0, s)))
            .draw()?;
    }
    for (i, line) in lines.iter().enumerate() {
        let c = color(i);
        let marker = if line.points.len() <= 40 {
            px(3.0, s)
        } else {
            0
        };
        let points = line.points.iter().map(|&(x, y)| (x as i64, y));
        let series = LineSeries::new(points, c.stroke_width(px(2.0, s))).point_size(marker);
        let label = match line.axis {
            Axis::Left if right => format!("{} (left)", line.label),
            Axis::Right => format!("{} (right)", line.label),
            Axis::Left => line.label.to_string(),
        };
        let drawn = match line.axis {
            Axis::Left => plot.draw_series(series)?,
            Axis::Right => plot.draw_secondary_series(series)?,
        };
        drawn
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
    }
    plot.configure_series_labels()
        .position(legend_position(chart.key))
        .label_font(("sans-serif", px(15.0, s)))
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
