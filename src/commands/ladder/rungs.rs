//! A ladder's rows ([`Rung`]: a player at a time per move and its pairing) and their
//! tables: `ladder.csv`, the text table it prints and `ladder.md`.

use super::picking::Climber;
use eval::strength::{self, Level, PairingResult};
use std::path::Path;

/// One player at one time per move: a row of `ladder.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct Rung {
    /// The model, or the learned alpha-beta.
    pub climber: Climber,
    /// Its training time in minutes (the learned alpha-beta's: the run's last).
    pub minutes: f64,
    /// Its timed pairing against `alphabeta:ms=T`.
    pub result: PairingResult,
}

impl Rung {
    /// The time per move of both sides in milliseconds (0 for a depth pairing, which a
    /// ladder does not play).
    pub fn ms(&self) -> u64 {
        match self.result.level {
            Level::Time(ms) => ms,
            Level::Depth(_) => 0,
        }
    }
}

/// `rungs` in the order of the tables: by time per move, then by training time (one
/// block per line of the plot).
pub fn in_table_order(rungs: &[Rung]) -> Vec<Rung> {
    let mut sorted = rungs.to_vec();
    sorted.sort_by(|a, b| {
        (a.ms(), a.climber)
            .cmp(&(b.ms(), b.climber))
            .then(a.minutes.total_cmp(&b.minutes))
    });
    sorted
}

/// The header of `ladder.csv`.
pub const CSV_HEADER: &str = "name,generation,training_minutes,ms,model,baseline,games,wins,\
draws,losses,score,elo,elo_lower,elo_upper,model_ms_per_move,alphabeta_ms_per_move";

/// `ladder.csv`: [`CSV_HEADER`], then one row per rung (`name` is `gen-NNNN` or the
/// learned alpha-beta's `nnue-NNNN`, whose `generation` is empty; `model` is the spec that
/// played; `ms` is the time per move each side was given; the last two columns the mean
/// time each used; infinite Elo bounds read `inf` / `-inf`).
pub fn csv(rungs: &[Rung]) -> String {
    let mut s = String::from(CSV_HEADER);
    s.push('\n');
    for r in rungs {
        s += &format!(
            "{},{},{:.2},{},{}\n",
            r.climber.name(),
            r.climber
                .generation()
                .map_or(String::new(), |g| g.to_string()),
            r.minutes,
            r.ms(),
            r.result.csv_columns()
        );
    }
    s
}

const HEADERS: [&str; 8] = [
    "model",
    "trained",
    "time/move",
    "W-D-L",
    "score",
    "Elo [95%]",
    "ms/move model",
    "ms/move alpha-beta",
];

fn rows(rungs: &[Rung]) -> Vec<Vec<String>> {
    rungs
        .iter()
        .map(|r| {
            let rung = [
                match r.climber {
                    Climber::Model(_) => r.climber.name(),
                    Climber::Learned(_) => format!("{} (learned alpha-beta)", r.climber.name()),
                },
                format!("{:.1} min", r.minutes),
                format!("{} ms", r.ms()),
            ];
            rung.into_iter().chain(r.result.table_cells()).collect()
        })
        .collect()
}

/// The rungs as an aligned text table (what `loazero ladder` prints).
pub fn table(rungs: &[Rung]) -> String {
    strength::text_table(&HEADERS, &rows(rungs))
}

/// `ladder.md`: what was played, then the table in Markdown.
pub fn markdown(run: &Path, games: usize, rungs: &[Rung]) -> String {
    let mut s = format!("# {}\n\n", title(rungs));
    s += &format!("- run: `{}`\n", run.display());
    s += &format!(
        "- each model plays `alphabeta:ms=T` at the same T per move, {games} games from the \
         same balanced openings, each with both colours, one game at a time\n"
    );
    s += "- Elo of the model over alpha-beta with its 95% interval; trained: the run's active \
          minutes when the model was made (the learned alpha-beta, made at the run's end: \
          the last model's); ms/move: the mean thinking time measured by the arena\n\n";
    s += &strength::markdown_table(&HEADERS, &rows(rungs));
    s
}

/// The times per move of `rungs`, ascending, each once.
pub fn times(rungs: &[Rung]) -> Vec<u64> {
    let mut t: Vec<u64> = rungs.iter().map(Rung::ms).collect();
    t.sort_unstable();
    t.dedup();
    t
}

/// "Elo at 200 ms per move against training time" (times joined by "," and "and").
pub fn title(rungs: &[Rung]) -> String {
    let t: Vec<String> = times(rungs).iter().map(u64::to_string).collect();
    let list = match t.as_slice() {
        [] => "equal time".to_string(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    };
    format!("Elo at {list} ms per move against training time")
}

#[cfg(test)]
mod tests {
    use super::*;
    use eval::elo::EloEstimate;

    fn rung(generation: u32, minutes: f64, ms: u64, wins: u32, losses: u32) -> Rung {
        let tally = eval::elo::Tally {
            wins,
            draws: 0,
            losses,
        };
        let elo = EloEstimate::from_tally(&tally);
        Rung {
            climber: Climber::Model(generation),
            minutes,
            result: PairingResult {
                pairing: Level::Time(ms).label(),
                level: Level::Time(ms),
                player: format!("model:path=m{generation}.safetensors,ms={ms}"),
                baseline: format!("alphabeta:ms={ms}"),
                tally,
                elo: elo.elo,
                elo_lower: elo.lower,
                elo_upper: elo.upper,
                player_ms_per_move: ms as f64 * 0.8,
                baseline_ms_per_move: ms as f64 * 0.7,
            },
        }
    }

    #[test]
    fn tables_and_titles() {
        let rungs = [rung(4, 2.0, 200, 1, 3), rung(8, 4.25, 200, 4, 0)];
        let text = csv(&rungs);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], CSV_HEADER);
        assert!(
            lines[1].starts_with(
                "gen-0004,4,2.00,200,\"model:path=m4.safetensors,ms=200\",alphabeta:ms=200,4,1,0,3,0.2500,"
            ),
            "{}",
            lines[1]
        );
        assert!(lines[2].contains(",inf,160.00,140.00"), "{}", lines[2]);
        let t = table(&rungs);
        assert!(t.starts_with("model"), "{t}");
        assert!(t.contains("gen-0008  4.2 min"), "{t}");
        assert!(markdown(Path::new("runs/x"), 4, &rungs)
            .contains("| gen-0004 | 2.0 min | 200 ms | 1-0-3 |"));
        assert_eq!(
            title(&rungs),
            "Elo at 200 ms per move against training time"
        );
        let played = [
            rung(4, 2.0, 200, 1, 1),
            rung(4, 2.0, 50, 1, 1),
            rung(8, 4.0, 200, 1, 1),
            rung(8, 4.0, 50, 1, 1),
        ];
        let order: Vec<(u64, Climber)> = in_table_order(&played)
            .iter()
            .map(|r| (r.ms(), r.climber))
            .collect();
        let m = Climber::Model;
        assert_eq!(order, [(50, m(4)), (50, m(8)), (200, m(4)), (200, m(8))]);
        // The learned alpha-beta: its own rows after the models of its time, named by its
        // file, its generation column empty.
        let learned = Rung {
            climber: Climber::Learned(1),
            ..rung(8, 4.0, 200, 3, 1)
        };
        let with_learned = in_table_order(&[learned.clone(), played[2].clone(), played[0].clone()]);
        assert_eq!(with_learned.last(), Some(&learned));
        let text = csv(&with_learned);
        assert!(
            text.lines()
                .last()
                .unwrap()
                .starts_with("nnue-0001,,4.00,200,"),
            "{text}"
        );
        assert!(table(&with_learned).contains("nnue-0001 (learned alpha-beta)"));
        let more = [
            rung(4, 2.0, 200, 1, 1),
            rung(4, 2.0, 50, 1, 1),
            rung(4, 2.0, 1000, 1, 1),
        ];
        assert_eq!(
            title(&more),
            "Elo at 50, 200 and 1000 ms per move against training time"
        );
    }
}
