//! Progress of the loop for humans: on a terminal, four indicatif bars (generation,
//! self-play games, training steps, match games) with summary lines printed above them;
//! otherwise plain lines on stderr, at most one per phase every `PLAIN_INTERVAL`, with the
//! summary lines on stdout. Thread-safe (`Sync`): match callbacks update it from worker
//! threads.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Plain progress lines are at most this frequent per bar.
const PLAIN_INTERVAL: Duration = Duration::from_secs(30);

/// Which bar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bar {
    /// Self-play games of the current generation.
    Selfplay,
    /// Training steps of the current generation.
    Train,
    /// Games of the current gate or rating match.
    Match,
}

/// What the top bar shows: generation, generation limit, elapsed and budget seconds at
/// the moment of the last [`LoopDisplay::generation`] call.
type TopBar = (u32, u32, f64, f64, Instant);

/// The loop's display.
pub struct LoopDisplay {
    multi: Option<MultiProgress>,
    generation: ProgressBar,
    bars: [ProgressBar; 3],
    plain_last: Mutex<[Option<Instant>; 3]>,
    /// The last `generation` call and when it happened, to keep the run clock moving.
    top: Mutex<Option<TopBar>>,
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template)
        .expect("valid template")
        .progress_chars("=> ")
}

impl LoopDisplay {
    /// Bars on a terminal (stderr), plain lines otherwise.
    pub fn new() -> LoopDisplay {
        LoopDisplay::with_bars(std::io::stderr().is_terminal())
    }

    /// Bars when `bars`, plain lines otherwise.
    pub fn with_bars(bars: bool) -> LoopDisplay {
        let multi = bars.then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr()));
        let make = |template: &str| {
            let bar = ProgressBar::new(0).with_style(style(template));
            match &multi {
                Some(m) => m.add(bar),
                None => {
                    bar.set_draw_target(ProgressDrawTarget::hidden());
                    bar
                }
            }
        };
        let generation = make("{prefix:>9} {bar:30} {msg}");
        generation.set_prefix("run");
        let bars = [
            make("{prefix:>9} {bar:30} {pos}/{len} games  {msg}"),
            make("{prefix:>9} {bar:30} {pos}/{len} steps  {msg}"),
            make("{prefix:>9} {bar:30} {pos}/{len} games  {msg}"),
        ];
        bars[0].set_prefix("self-play");
        bars[1].set_prefix("train");
        bars[2].set_prefix("match");
        LoopDisplay {
            multi,
            generation,
            bars,
            plain_last: Mutex::new([None; 3]),
            top: Mutex::new(None),
        }
    }

    /// The top bar: generation `g` and the time used of the budget (`budget_s` 0 = none),
    /// filled by time when there is a budget, by generation when `generations` is set.
    pub fn generation(&self, g: u32, generations: u32, elapsed_s: f64, budget_s: f64) {
        *self.top.lock().expect("display lock") =
            Some((g, generations, elapsed_s, budget_s, Instant::now()));
        self.draw_top(g, generations, elapsed_s, budget_s);
    }

    fn draw_top(&self, g: u32, generations: u32, elapsed_s: f64, budget_s: f64) {
        let time = if budget_s > 0.0 {
            format!("{} of {}", clock(elapsed_s), clock(budget_s))
        } else {
            clock(elapsed_s)
        };
        let of = if generations > 0 {
            format!("/{generations}")
        } else {
            String::new()
        };
        if budget_s > 0.0 {
            self.generation.set_length(budget_s as u64);
            self.generation.set_position(elapsed_s.min(budget_s) as u64);
        } else if generations > 0 {
            self.generation.set_length(generations as u64);
            self.generation
                .set_position(g.saturating_sub(1).min(generations) as u64);
        }
        self.generation
            .set_message(format!("generation {g}{of}  {time}"));
    }

    /// Starts a bar at 0 of `len` with a message.
    pub fn start(&self, which: Bar, len: u64, msg: &str) {
        let bar = &self.bars[which as usize];
        bar.reset();
        bar.set_length(len);
        bar.set_position(0);
        bar.set_message(msg.to_string());
        if self.multi.is_none() {
            eprintln!("{}: {msg} (0/{len})", label(which));
            self.plain_last.lock().expect("display lock")[which as usize] = Some(Instant::now());
        }
    }

    /// Moves a bar to `pos` with a message (plain mode: a line every `PLAIN_INTERVAL`).
    pub fn update(&self, which: Bar, pos: u64, msg: &str) {
        let bar = &self.bars[which as usize];
        bar.set_position(pos);
        bar.set_message(msg.to_string());
        let top = *self.top.lock().expect("display lock");
        if let (Some(_), Some((g, n, e, b, at))) = (&self.multi, top) {
            self.draw_top(g, n, e + at.elapsed().as_secs_f64(), b);
        }
        if self.multi.is_none() {
            let mut last = self.plain_last.lock().expect("display lock");
            let due = last[which as usize].is_none_or(|t| t.elapsed() >= PLAIN_INTERVAL);
            if due {
                eprintln!(
                    "{}: {pos}/{} {msg}",
                    label(which),
                    bar.length().unwrap_or(0)
                );
                last[which as usize] = Some(Instant::now());
            }
        }
    }

    /// Prints a summary line (above the bars on a terminal, on stdout otherwise).
    pub fn line(&self, text: &str) {
        match &self.multi {
            Some(m) => {
                let _ = m.println(text);
            }
            None => println!("{text}"),
        }
    }

    /// Removes the bars.
    pub fn finish(&self) {
        if let Some(m) = &self.multi {
            for b in &self.bars {
                b.finish_and_clear();
            }
            self.generation.finish_and_clear();
            let _ = m.clear();
        }
    }
}

fn label(which: Bar) -> &'static str {
    match which {
        Bar::Selfplay => "self-play",
        Bar::Train => "train",
        Bar::Match => "match",
    }
}

/// `h:mm:ss`.
pub fn clock(seconds: f64) -> String {
    let s = seconds.max(0.0) as u64;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_format() {
        assert_eq!(clock(0.0), "0:00:00");
        assert_eq!(clock(3725.9), "1:02:05");
    }

    #[test]
    fn plain_mode_updates_without_a_terminal() {
        let d = LoopDisplay::with_bars(false);
        assert!(d.multi.is_none(), "plain mode draws no bars");
        d.generation(1, 5, 10.0, 0.0);
        d.start(Bar::Selfplay, 10, "gen-0000");
        for i in 0..10 {
            d.update(Bar::Selfplay, i, "x");
        }
        let bar = &d.bars[Bar::Selfplay as usize];
        assert_eq!((bar.position(), bar.length()), (9, Some(10)));
        assert_eq!(bar.message(), "x");
        let last = *d.plain_last.lock().unwrap();
        // The start printed a line and set the clock; ten updates within the interval
        // printed none (the clock would have moved); the other bars printed nothing.
        let started = last[Bar::Selfplay as usize].expect("a line at the start");
        assert!(started.elapsed() < PLAIN_INTERVAL);
        assert_eq!(last[Bar::Train as usize], None);
        assert_eq!(last[Bar::Match as usize], None);
        d.finish();
    }
}
