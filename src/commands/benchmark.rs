//! `loazero benchmark MODEL`: is the network stronger than alpha-beta at the same time per
//! move? Plays the model against `alphabeta:ms=T` at equal times T and against
//! `alphabeta:depth=D` at a fixed simulation count ([`eval::strength`]), prints one table
//! and writes `results.csv`, `results.md` and `benchmark.png` (Elo ± 95% against time per
//! move) into the output directory after every pairing. Rerunning the same command
//! resumes: complete pairings are reused, and one cut short (Ctrl-C, a kill) goes on from
//! the games it holds.

use crate::pairings::{game_progress, report_pairing, PairingArgs, Search};
use crate::plot::{
    clip_elo, color, draw_elo_curve, draw_even_line, draw_note, elo_axis_range, px, register_font,
    scale, write_png, Root, ELO_CLIP,
};
use anyhow::{bail, Result};
use eval::arena::Openings;
use eval::elo::EloEstimate;
use eval::strength::{self, Level, PairingResult, StrengthConfig};
use loazero::args::{default_match_games, parse_list, GameArgs};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::ops::Range;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `loazero benchmark`.
#[derive(clap::Args)]
pub struct Args {
    /// The model file (`.safetensors` written by loazero), or a learned evaluation
    /// (`nnue-NNNN.safetensors`: the learned alpha-beta, at each depth of --depths
    /// against the hand-written evaluation).
    pub model: PathBuf,
    /// Times per move in milliseconds for the equal-time pairings (model `ms=T` vs
    /// `alphabeta:ms=T`), comma-separated; `none` for no timed pairing.
    #[arg(long, default_value = "50,200,1000")]
    pub times: String,
    /// Alpha-beta depths for the fixed-depth pairings (model at `--sims` vs
    /// `alphabeta:depth=D`), comma-separated; `none` for no depth pairing.
    #[arg(long, default_value = "1,2,3")]
    pub depths: String,
    /// Search count per move of the model in the depth pairings: simulations (`--search
    /// mcts`) or iterations (`--search ubfm`).
    #[arg(long, default_value_t = 64)]
    pub sims: u32,
    /// Games per pairing, even (each opening with both colours). 100 games give an Elo
    /// interval of about ±70 near even strength, 200 about ±50.
    #[arg(long, default_value_t = default_match_games())]
    pub games: usize,
    /// Games played at once in the depth pairings (absent or 0: one per CPU core).
    /// Timed pairings play one game at a time (see --timed-threads).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Games played at once in the timed pairings; more than 1 lets the games compete
    /// for the CPU, which distorts equal-time results.
    #[arg(long, default_value_t = 1)]
    pub timed_threads: usize,
    #[command(flatten)]
    pub pairing: PairingArgs,
    #[command(flatten)]
    pub game: GameArgs,
    /// Output directory (default `benchmarks/<model file name>`).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Plays every pairing, printing progress on stderr and the table on stdout.
pub fn run(args: Args) -> Result<()> {
    let times: Vec<u64> = parse_list("--times", &args.times)?;
    let depths: Vec<u32> = parse_list("--depths", &args.depths)?;
    let variant = args.game.variant;
    let search = args.pairing.search.unwrap_or(Search::Mcts);
    // A learned evaluation file plays as the learned alpha-beta: alphabeta:eval=FILE at
    // each time, and at each depth against the hand-written evaluation.
    let learned = std::fs::read(&args.model)
        .map(|b| eval::learned::Weights::claims_format(&b))
        .unwrap_or(false);
    let player = if learned {
        eval::player::spec_builders::learned_alphabeta_spec(&args.model, Some(1))?
    } else {
        search.spec(&args.model, args.sims, args.pairing.device)?
    };
    let config = StrengthConfig {
        player,
        times_ms: times,
        depths,
        sims: args.sims,
        games: args.games,
        timed_threads: args.timed_threads,
        depth_threads: loazero::args::threads_or_all_cores(args.threads),
        variant,
        rules: args.game.rules,
        openings: Openings::parse(&args.pairing.play.openings, variant, args.game.rules)?,
        max_plies: args.pairing.play.max_plies,
        seed: args.pairing.play.seed,
    };
    let pairings = config.pairings()?;
    if !args.model.is_file() {
        bail!("model file {} does not exist", args.model.display());
    }
    // One torch thread, no batch wait: the model's time budget is spent on search, and
    // one core is left to the opponent.
    let factory = train::players::model_player_factory(
        train::players::timed_inference(selfplay::Device::Cpu),
        Some(variant),
    );
    // Load the model now: a bad file is reported before any game.
    factory.build(&pairings[0].player, 0)?;
    let out = args.out.clone().unwrap_or_else(|| {
        let stem = args
            .model
            .file_stem()
            .map_or_else(|| "model".into(), |s| s.to_string_lossy().into_owned());
        PathBuf::from("benchmarks").join(stem)
    });
    eprintln!(
        "benchmark: {} vs alpha-beta; {} pairings of {} games; {} {}; output {}",
        args.model.display(),
        pairings.len(),
        args.games,
        config.variant,
        config.rules,
        out.display()
    );
    register_font()?;
    let start = Instant::now();
    let on_game = game_progress(args.games, "");
    let results = strength::run(&factory, &config, &out, &on_game, &mut |p, all, reused| {
        report_pairing("", p, all, reused);
        write_png(&out, "benchmark.png", (1200, 800), |root| draw(root, all))?;
        Ok(())
    })?;
    println!("model: {}", args.model.display());
    print!("{}", strength::table(&results));
    println!(
        "Elo of the model over alpha-beta, 95% interval; {} games per pairing; {:.1} s",
        args.games,
        start.elapsed().as_secs_f64()
    );
    for f in ["results.csv", "results.md", "benchmark.png"] {
        println!("wrote {}", out.join(f).display());
    }
    Ok(())
}

/// The labelled ticks of the log-scale time axis over `range`: every pairing's time per
/// move, and the 1-2-5 times of each decade that are not within a quarter (in ratio) of a
/// pairing's, so that a narrow range (one pairing) still has labels and none crowd.
fn time_ticks(range: &Range<f64>, times: &[f64]) -> Vec<f64> {
    let mut ticks: Vec<f64> = times
        .iter()
        .copied()
        .filter(|t| range.contains(t))
        .collect();
    if !(range.start > 0.0 && range.end.is_finite()) {
        return ticks;
    }
    let mut decade = 10f64.powf(range.start.log10().floor());
    while decade <= range.end {
        for m in [1.0, 2.0, 5.0] {
            let t = m * decade;
            let near = times.iter().any(|&p| (t / p).ln().abs() < 1.25f64.ln());
            if range.contains(&t) && !near {
                ticks.push(t);
            }
        }
        decade *= 10.0;
    }
    ticks.sort_by(f64::total_cmp);
    ticks.dedup();
    ticks
}

/// Elo ± 95% of the timed pairings against time per move (log scale); depth pairings as
/// labelled dashed lines.
fn draw(root: &Root, results: &[PairingResult]) -> Result<()> {
    const TITLE: &str = "Elo of the model over alpha-beta at equal time per move";
    let timed: Vec<(f64, &PairingResult)> = results
        .iter()
        .filter_map(|r| match r.level {
            Level::Time(ms) => Some((ms as f64, r)),
            Level::Depth(_) => None,
        })
        .collect();
    let depth: Vec<(u32, &PairingResult)> = results
        .iter()
        .filter_map(|r| match r.level {
            Level::Depth(d) => Some((d, r)),
            Level::Time(_) => None,
        })
        .collect();
    if timed.is_empty() && depth.is_empty() {
        return draw_note(root, TITLE, "no pairing finished yet");
    }
    let s = scale(root);
    let (mut x_lo, mut x_hi) = timed
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), &(t, _)| {
            (lo.min(t), hi.max(t))
        });
    if timed.is_empty() {
        (x_lo, x_hi) = (10.0, 1000.0);
    }
    // Room on the right for the last point's label.
    let x_range = (x_lo / 1.6)..(x_hi * 3.0);
    let times: Vec<f64> = timed.iter().map(|&(t, _)| t).collect();
    let mut chart = ChartBuilder::on(root)
        .caption(TITLE, ("sans-serif", px(28.0, s)))
        .margin(px(15.0, s))
        .x_label_area_size(px(55.0, s))
        .y_label_area_size(px(75.0, s))
        .build_cartesian_2d(
            x_range
                .clone()
                .log_scale()
                .with_key_points(time_ticks(&x_range, &times)),
            elo_axis_range(results.iter().map(PairingResult::elo_estimate)),
        )?;
    // No rotated y description (plotters spaces rotated text unevenly: "El o"): the
    // title says what the y axis is.
    chart
        .configure_mesh()
        .x_desc(format!(
            "time per move, ms (both sides; log scale). Elo ±95%; beyond ±{ELO_CLIP:.0} drawn at the edge"
        ))
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .label_style(("sans-serif", px(16.0, s)))
        .axis_desc_style(("sans-serif", px(18.0, s)))
        .draw()?;
    draw_even_line(&mut chart, &x_range, s)?;
    for (i, (d, r)) in depth.iter().enumerate() {
        let c = color(i + 1);
        let y = clip_elo(r.elo);
        chart.draw_series(DashedLineSeries::new(
            [(x_range.start, y), (x_range.end, y)],
            px(8.0, s),
            px(5.0, s),
            c.stroke_width(px(1.5, s)),
        ))?;
        let style = TextStyle::from(("sans-serif", px(15.0, s)).into_font())
            .color(&c)
            .pos(Pos::new(HPos::Left, VPos::Bottom));
        let label = format!(
            "{} vs depth {d}: {:+.0}",
            strength::count_label(&r.player).unwrap_or_else(|| "model".into()),
            r.elo.round() + 0.0
        );
        chart.draw_series(std::iter::once(Text::new(label, (x_range.start, y), style)))?;
    }
    if !timed.is_empty() {
        let c = color(0);
        let points: Vec<(f64, EloEstimate)> =
            timed.iter().map(|&(t, r)| (t, r.elo_estimate())).collect();
        draw_elo_curve(&mut chart, &points, c, s, None)?;
        let style = TextStyle::from(("sans-serif", px(14.0, s)).into_font())
            .color(&c)
            .pos(Pos::new(HPos::Left, VPos::Top));
        chart.draw_series(timed.iter().map(|&(t, r)| {
            Text::new(
                format!(
                    "{t:.0} ms: {}-{}-{}, used {:.0} ms",
                    r.tally.wins, r.tally.draws, r.tally.losses, r.player_ms_per_move
                ),
                (t * 1.04, clip_elo(r.elo)),
                style.clone(),
            )
        }))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::time_ticks;

    /// Every pairing's time is labelled, round times fill the rest of the axis without
    /// crowding a pairing's label, and one pairing alone (a narrow range, where plotters'
    /// own ticks left one label or none) still gets its own and round neighbours.
    #[test]
    fn every_pairings_time_is_a_tick_and_round_times_fill_in() {
        let ticks = time_ticks(&(50.0 / 1.6..1000.0 * 3.0), &[50.0, 200.0, 1000.0]);
        assert_eq!(ticks, [50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0]);
        let ticks = time_ticks(&(300.0 / 1.6..300.0 * 3.0), &[300.0]);
        assert_eq!(ticks, [200.0, 300.0, 500.0]);
        let ticks = time_ticks(&(900.0 / 1.6..900.0 * 3.0), &[900.0]);
        assert_eq!(ticks, [900.0, 2000.0], "1000 is too near 900 to label");
        assert_eq!(
            time_ticks(&(10.0..1000.0), &[]),
            [10.0, 20.0, 50.0, 100.0, 200.0, 500.0]
        );
    }
}
