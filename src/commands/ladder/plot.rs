//! `ladder.png`: the Elo of every rung against training time.

use super::picking::Climber;
use super::rungs::{times, title, Rung};
use crate::plot::{
    clip_elo, color, draw_elo_curve, draw_even_line, draw_note, elo_axis_range, padded_range, px,
    scale, Root, ELO_CLIP,
};
use anyhow::Result;
use eval::elo::EloEstimate;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// `ladder.png`: Elo ± 95% of every rung against training time, one line per time per
/// move, each point labelled with its generation; Elo 0 is alpha-beta's level.
pub fn draw(root: &Root, rungs: &[Rung]) -> Result<()> {
    let title = title(rungs);
    if rungs.is_empty() {
        return draw_note(root, &title, "no pairing finished yet");
    }
    let s = scale(root);
    let x = padded_range(rungs.iter().map(|r| r.minutes).chain([0.0]), 0.0..1.0);
    // Room on the right for the last point's label.
    let x = x.start..(x.end + 0.06 * (x.end - x.start));
    let mut chart = ChartBuilder::on(root)
        .caption(&title, ("sans-serif", px(28.0, s)))
        .margin(px(15.0, s))
        .x_label_area_size(px(55.0, s))
        .y_label_area_size(px(75.0, s))
        .build_cartesian_2d(
            x.clone(),
            elo_axis_range(rungs.iter().map(|r| r.result.elo_estimate())),
        )?;
    chart
        .configure_mesh()
        // No rotated y description (plotters spaces rotated text unevenly): the title
        // says what the y axis is.
        .x_desc(format!(
            "training time of the model (minutes). Elo over alpha-beta at equal time, ±95%; \
             beyond ±{ELO_CLIP:.0} at the edge"
        ))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .label_style(("sans-serif", px(16.0, s)))
        .axis_desc_style(("sans-serif", px(18.0, s)))
        .draw()?;
    draw_even_line(&mut chart, &x, s)?;
    let span = x.end - x.start;
    let times = times(rungs);
    let mut labelled: Vec<Climber> = Vec::new();
    // Names right of the last line's points.
    let label_dx = (times.len() as f64 - 1.0) * 0.003 * span + 0.012 * span;
    for (i, &ms) in times.iter().enumerate() {
        let c = color(i);
        // The lines of several times side by side, so that equal points stay visible.
        let dodge = (i as f64 - (times.len() - 1) as f64 / 2.0) * 0.006 * span;
        let mut line: Vec<&Rung> = rungs
            .iter()
            .filter(|r| r.ms() == ms && matches!(r.climber, Climber::Model(_)))
            .collect();
        line.sort_by(|a, b| a.minutes.total_cmp(&b.minutes));
        let points: Vec<(f64, EloEstimate)> = line
            .iter()
            .map(|r| (r.minutes + dodge, r.result.elo_estimate()))
            .collect();
        let label = format!("{ms} ms per move vs alphabeta:ms={ms}");
        if !points.is_empty() {
            draw_elo_curve(&mut chart, &points, c, s, Some(&label))?;
        }
        // The learned alpha-beta: its own marks (a triangle) in the time's colour.
        for r in rungs
            .iter()
            .filter(|r| r.ms() == ms && matches!(r.climber, Climber::Learned(_)))
        {
            let e = r.result.elo_estimate();
            let x = r.minutes + dodge;
            chart.draw_series(std::iter::once(ErrorBar::new_vertical(
                x,
                clip_elo(e.lower),
                clip_elo(e.elo),
                clip_elo(e.upper),
                c.stroke_width(px(1.5, s)),
                px(10.0, s),
            )))?;
            chart
                .draw_series(std::iter::once(TriangleMarker::new(
                    (x, clip_elo(e.elo)),
                    px(9.0, s),
                    c.filled(),
                )))?
                .label(format!("learned alpha-beta {}, {ms} ms", r.climber.name()))
                .legend(move |(x, y)| TriangleMarker::new((x + 10, y), 6, c.filled()));
        }
        // Each model is named once, beside its first point.
        let style = TextStyle::from(("sans-serif", px(13.0, s)).into_font())
            .color(&c)
            .pos(Pos::new(HPos::Left, VPos::Top));
        let unnamed: Vec<&Rung> = line
            .into_iter()
            .filter(|r| !labelled.contains(&r.climber))
            .collect();
        labelled.extend(unnamed.iter().map(|r| r.climber));
        chart.draw_series(unnamed.iter().filter_map(|r| {
            let g = r.climber.generation()?;
            Some(Text::new(
                format!("gen {g}"),
                (r.minutes + label_dx, clip_elo(r.result.elo)),
                style.clone(),
            ))
        }))?;
    }
    // Elo usually climbs with training: the upper left is the emptiest corner.
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font(("sans-serif", px(16.0, s)))
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}
