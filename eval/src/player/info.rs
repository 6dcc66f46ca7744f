//! The one report of a search ([`SearchInfo`]), filled by every searching player and
//! written as one `info` line (`eval/PROTOCOL.md`) by `engine` and `bestmove`, and as a JSON
//! object with the same fields by the HTTP API (`docs/api.md`):
//!
//! `info [depth D] [seldepth S] [multipv K] nodes N nps X time T [score cp S|value V|mate P|win|loss|draw] [eval E] pv M M …`
//!
//! * `depth`: alpha-beta's last completed iteration (0: the root check settled the move
//!   without a search); the principal variation's length for UBFM and MCTS.
//! * `seldepth`: MCTS only: the deepest node a simulation reached, in plies from the root
//!   (at least `depth`).
//! * `multipv`: analysis (the engine's `go infinite`) with several principal variations:
//!   this line's rank, 1 for the best move; absent otherwise.
//! * `nodes`: what the spec's limit counts: alpha-beta nodes, MCTS simulations (`sims=`),
//!   UBFM iterations (`nodes=`); `nps` is nodes per second, `time` milliseconds.
//! * `score`, for the side to move: `cp S` alpha-beta's evaluation (evaluation units,
//!   about a hundredth of a piece's worth); `value V` a search's mean or minimax value in
//!   −1…+1 (MCTS, UBFM); `mate P` a forced win in P plies (`mate -P`: a forced loss in P);
//!   `win`, `loss`, `draw` a proven result without its distance (MCTS's solver). Absent
//!   when the root check settled an MCTS move.
//! * `eval`: alpha-beta with a learned evaluation (`alphabeta:eval=FILE`): the file's name
//!   without `.safetensors` (`nnue-0003`); absent for the hand-written evaluation.
//! * `pv`: the principal variation, the move played first (MCTS: then the most visited
//!   child at each position while one was visited, up to a leaf, a terminal or a proven
//!   node; [`selfplay::Search::principal_variation`]).

use anyhow::{anyhow, bail, Result};
use serde::Serialize;
use std::fmt;
use std::time::Duration;

/// A search's score for the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Score {
    /// Alpha-beta's evaluation in evaluation units.
    Cp(i32),
    /// A value in −1…+1 (MCTS's mean, UBFM's minimax value).
    Value(f32),
    /// A forced win in this many plies; negative: a forced loss in −N plies.
    Mate(i32),
    /// A proven result without its distance: `win`, `loss` or `draw`.
    Proven(Proven),
}

/// A proven result without its distance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Proven {
    /// A forced win.
    Win,
    /// A forced loss.
    Loss,
    /// A forced draw.
    Draw,
}

impl fmt::Display for Score {
    /// As the `info` line writes it after `score `.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Score::Cp(cp) => write!(f, "cp {cp}"),
            Score::Value(v) => write!(f, "value {v:.3}"),
            Score::Mate(plies) => write!(f, "mate {plies}"),
            Score::Proven(Proven::Win) => write!(f, "win"),
            Score::Proven(Proven::Loss) => write!(f, "loss"),
            Score::Proven(Proven::Draw) => write!(f, "draw"),
        }
    }
}

/// One search, as every searching player reports it ([`super::Player::last_info`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SearchInfo {
    /// See the module docs; `None`: not reported.
    pub depth: Option<u32>,
    /// See the module docs; `None`: not reported.
    pub seldepth: Option<u32>,
    /// See the module docs; `None`: not reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multipv: Option<u32>,
    /// Nodes, simulations or iterations (what the spec's limit counts).
    pub nodes: u64,
    /// Milliseconds the search took.
    pub time: u64,
    /// Nodes per second.
    pub nps: u64,
    /// The score for the side to move; `None`: not known.
    pub score: Option<Score>,
    /// The learned evaluation that valued the leaves (its file's stem); `None`: the
    /// searcher's own (the hand-written one, a network's value head).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eval: Option<String>,
    /// The principal variation, as move texts, the move played first.
    pub pv: Vec<String>,
}

impl SearchInfo {
    /// A report of `nodes` in `elapsed` (nps from both; a value rounded to the line's three
    /// decimals, so that the report and its line say the same).
    pub fn new(
        depth: Option<u32>,
        nodes: u64,
        elapsed: Duration,
        score: Option<Score>,
        pv: Vec<String>,
    ) -> SearchInfo {
        SearchInfo {
            depth,
            seldepth: None,
            multipv: None,
            nodes,
            time: elapsed.as_millis() as u64,
            nps: (nodes as f64 / elapsed.as_secs_f64().max(1e-6)).round() as u64,
            score: score.map(|s| match s {
                Score::Value(v) => Score::Value((v * 1000.0).round() / 1000.0),
                other => other,
            }),
            eval: None,
            pv,
        }
    }

    /// The report of a search whose leaves the learned evaluation `name` valued.
    pub fn with_eval(self, name: Option<String>) -> SearchInfo {
        SearchInfo { eval: name, ..self }
    }

    /// The report with the deepest node reached, `seldepth`.
    pub fn with_seldepth(self, seldepth: u32) -> SearchInfo {
        SearchInfo {
            seldepth: Some(seldepth),
            ..self
        }
    }

    /// The same report for a search still going after `nodes` in `elapsed` (the engine's
    /// progress lines between an analysis's completed depths).
    pub fn progressed(self, nodes: u64, elapsed: Duration) -> SearchInfo {
        let now = SearchInfo::new(self.depth, nodes, elapsed, None, Vec::new());
        SearchInfo {
            nodes: now.nodes,
            time: now.time,
            nps: now.nps,
            ..self
        }
    }

    /// The report as the `rank`-th principal variation of an analysis (1: the best).
    pub fn with_multipv(self, rank: u32) -> SearchInfo {
        SearchInfo {
            multipv: Some(rank),
            ..self
        }
    }

    /// The `info` line (see the module docs).
    pub fn line(&self) -> String {
        let mut s = String::from("info");
        if let Some(d) = self.depth {
            s += &format!(" depth {d}");
        }
        if let Some(d) = self.seldepth {
            s += &format!(" seldepth {d}");
        }
        if let Some(k) = self.multipv {
            s += &format!(" multipv {k}");
        }
        s += &format!(" nodes {} nps {} time {}", self.nodes, self.nps, self.time);
        if let Some(score) = self.score {
            s += &format!(" score {score}");
        }
        if let Some(e) = &self.eval {
            s += &format!(" eval {e}");
        }
        s += " pv";
        for m in &self.pv {
            s += " ";
            s += m;
        }
        s
    }

    /// An `info` line read back (what a GUI does): the inverse of [`SearchInfo::line`] up to
    /// the value's three decimals.
    pub fn parse(line: &str) -> Result<SearchInfo> {
        let err = |what: &str| anyhow!("info line '{line}': {what}");
        let mut words = line.split_whitespace();
        if words.next() != Some("info") {
            return Err(err("does not start with 'info'"));
        }
        let mut info = SearchInfo::new(None, 0, Duration::ZERO, None, Vec::new());
        let mut seen_nodes = false;
        while let Some(word) = words.next() {
            match word {
                "depth" => info.depth = Some(next_number(&mut words, "depth", line)? as u32),
                "seldepth" => {
                    info.seldepth = Some(next_number(&mut words, "seldepth", line)? as u32)
                }
                "multipv" => info.multipv = Some(next_number(&mut words, "multipv", line)? as u32),
                "nodes" => {
                    info.nodes = next_number(&mut words, "nodes", line)? as u64;
                    seen_nodes = true;
                }
                "nps" => info.nps = next_number(&mut words, "nps", line)? as u64,
                "time" => info.time = next_number(&mut words, "time", line)? as u64,
                "score" => {
                    info.score = Some(match words.next() {
                        Some("cp") => Score::Cp(next_number(&mut words, "cp", line)? as i32),
                        Some("mate") => Score::Mate(next_number(&mut words, "mate", line)? as i32),
                        Some("value") => {
                            let text = words.next().ok_or_else(|| err("value without a number"))?;
                            Score::Value(text.parse().map_err(|_| err("bad value"))?)
                        }
                        Some("win") => Score::Proven(Proven::Win),
                        Some("loss") => Score::Proven(Proven::Loss),
                        Some("draw") => Score::Proven(Proven::Draw),
                        other => bail!("info line '{line}': unknown score {other:?}"),
                    })
                }
                "eval" => {
                    let name = words.next().ok_or_else(|| err("eval without a name"))?;
                    info.eval = Some(name.to_string());
                }
                "pv" => {
                    info.pv = words.by_ref().map(str::to_string).collect();
                }
                other => bail!("info line '{line}': unknown field '{other}'"),
            }
        }
        if !seen_nodes {
            return Err(err("no nodes"));
        }
        Ok(info)
    }
}

/// The integer after the field `name` of an `info` line.
fn next_number(words: &mut std::str::SplitWhitespace, name: &str, line: &str) -> Result<i64> {
    let text = words
        .next()
        .ok_or_else(|| anyhow!("info line '{line}': {name} without a value"))?;
    text.parse()
        .map_err(|_| anyhow!("info line '{line}': {name} '{text}' is not a number"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_read_back() {
        for info in [
            SearchInfo::new(
                Some(4),
                5321,
                Duration::from_millis(4),
                Some(Score::Cp(-12)),
                vec!["a2-c2".into(), "b8-b6".into()],
            ),
            SearchInfo::new(
                Some(3),
                744,
                Duration::from_millis(200),
                Some(Score::Value(0.25)),
                vec!["e6-e4".into(), "a5-c5".into(), "f5-d5".into()],
            )
            .with_seldepth(9),
            SearchInfo::new(
                Some(0),
                0,
                Duration::ZERO,
                Some(Score::Mate(-3)),
                vec!["c1-c3".into()],
            ),
            SearchInfo::new(
                None,
                8,
                Duration::from_millis(1),
                Some(Score::Proven(Proven::Draw)),
                vec![],
            ),
            SearchInfo::new(
                None,
                8,
                Duration::from_millis(1),
                None,
                vec!["f5-d5".into()],
            ),
            SearchInfo::new(
                Some(5),
                9000,
                Duration::from_millis(9),
                Some(Score::Cp(40)),
                vec!["f5-d5".into()],
            )
            .with_eval(Some("nnue-0003".into())),
            SearchInfo::new(
                Some(7),
                9000,
                Duration::from_millis(9),
                Some(Score::Cp(-40)),
                vec!["b1-b3".into()],
            )
            .with_multipv(2),
        ] {
            let line = info.line();
            assert_eq!(SearchInfo::parse(&line).unwrap(), info, "{line}");
        }
        let line = SearchInfo::new(
            Some(4),
            5321,
            Duration::from_millis(4),
            Some(Score::Cp(12)),
            vec!["a2-c2".into()],
        )
        .line();
        assert_eq!(
            line,
            "info depth 4 nodes 5321 nps 1330250 time 4 score cp 12 pv a2-c2"
        );
        let line = SearchInfo::new(
            Some(2),
            400,
            Duration::from_millis(8),
            Some(Score::Value(0.112)),
            vec!["b6-d4".into(), "c1-c3".into()],
        )
        .with_seldepth(7)
        .line();
        assert_eq!(
            line,
            "info depth 2 seldepth 7 nodes 400 nps 50000 time 8 score value 0.112 pv b6-d4 c1-c3"
        );
        let line = SearchInfo::new(
            Some(4),
            5321,
            Duration::from_millis(4),
            Some(Score::Cp(12)),
            vec!["a2-c2".into()],
        )
        .with_eval(Some("nnue-0001".into()))
        .line();
        assert_eq!(
            line,
            "info depth 4 nodes 5321 nps 1330250 time 4 score cp 12 eval nnue-0001 pv a2-c2"
        );
        let line = SearchInfo::new(
            Some(6),
            800,
            Duration::from_millis(2),
            Some(Score::Cp(3)),
            vec!["a2-c2".into()],
        )
        .with_multipv(3)
        .line();
        assert_eq!(
            line,
            "info depth 6 multipv 3 nodes 800 nps 400000 time 2 score cp 3 pv a2-c2"
        );
        for bad in [
            "info nodes 1 eval",
            "depth 4 nodes 1",
            "info depth x nodes 1",
            "info seldepth nodes 1",
            "info depth 4",
            "info nodes 1 score elo 3",
            "info nodes 1 speed 3",
            "info multipv two nodes 1",
        ] {
            assert!(SearchInfo::parse(bad).is_err(), "{bad}");
        }
    }
}
