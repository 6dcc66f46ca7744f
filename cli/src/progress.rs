//! Progress for people, drawn by the binary (the library crates only report numbers):
//! an indicatif bar on stderr when it is a terminal, otherwise a plain line on stderr at
//! most every `interval` and once at the end. `Sync`: threads may share one.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One progress display over a known total (see the module docs).
pub struct ProgressLine {
    bar: Option<ProgressBar>,
    label: String,
    unit: String,
    total: u64,
    interval: Duration,
    /// When the last plain line was printed, and at which position.
    last: Mutex<(Option<Instant>, u64)>,
}

impl ProgressLine {
    /// A display of `total` `unit`s (e.g. "games") labelled `label`; plain lines at most
    /// every `interval` (zero: every update).
    pub fn new(label: &str, total: u64, unit: &str, interval: Duration) -> ProgressLine {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(total);
            bar.set_style(
                ProgressStyle::with_template(&format!(
                    "{{elapsed_precise}} [{{bar:30}}] {{pos}}/{{len}} {unit}  {{msg}}"
                ))
                .expect("valid template")
                .progress_chars("=> "),
            );
            bar
        });
        ProgressLine {
            bar,
            label: label.to_string(),
            unit: unit.to_string(),
            total,
            interval,
            last: Mutex::new((None, u64::MAX)),
        }
    }

    /// Shows `pos` of the total with `msg`.
    pub fn update(&self, pos: u64, msg: &str) {
        if let Some(bar) = &self.bar {
            bar.set_position(pos);
            bar.set_message(msg.to_string());
            return;
        }
        let mut last = self.last.lock().expect("progress lock");
        let due = last.0.is_none_or(|t| t.elapsed() >= self.interval);
        let end = pos == self.total && last.1 != pos;
        if due || end {
            eprintln!("{}: {pos}/{} {}; {msg}", self.label, self.total, self.unit);
            *last = (Some(Instant::now()), pos);
        }
    }

    /// Closes the bar (plain lines need nothing).
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish();
        }
    }
}
