//! Maximum-likelihood Bradley–Terry Elo ratings over any set of games, with standard
//! errors and a first-move advantage term.
//!
//! Model: the first player (Black in loazero's results; whoever moved first) of a game
//! between `i` (first) and `j` scores with probability `1 / (1 + 10^(-(r_i + adv - r_j)/400))`;
//! a draw counts as half a win and half a loss. Anchor: the player named `random` is fixed at
//! 0 (if absent, the alphabetically first player is). Every pair of players that met also
//! gets `prior_draws` virtual draws (colour-neutral), which keeps ratings finite after a
//! clean sweep and shrinks them only slightly once many games were played; the first-move
//! advantage has a Gaussian prior (sd [`ADVANTAGE_PRIOR_ELO`]). Standard errors
//! come from the inverse Fisher information at the optimum and are relative to the anchor.

use anyhow::{bail, Result};
use std::collections::{BTreeMap, BTreeSet};

const ELO_PER_NAT: f64 = 400.0 / std::f64::consts::LN_10;
/// Standard deviation of the prior on the first-move advantage, in Elo.
pub const ADVANTAGE_PRIOR_ELO: f64 = 300.0;

/// One game for the fit.
#[derive(Clone, Debug, PartialEq)]
pub struct RatedGame {
    /// The player who moved first.
    pub first: String,
    /// The other player.
    pub second: String,
    /// Score of `first`: 1, ½ or 0.
    pub score_first: f64,
}

/// One row of the table.
#[derive(Clone, Debug, PartialEq)]
pub struct Rating {
    /// The player's name.
    pub name: String,
    /// Elo relative to the anchor.
    pub elo: f64,
    /// Standard error (the anchor's is 0).
    pub stderr: f64,
    /// Games it played.
    pub games: u32,
    /// Score fraction over its games.
    pub score: f64,
}

/// The fitted ratings.
#[derive(Clone, Debug, PartialEq)]
pub struct RatingTable {
    /// Best first.
    pub ratings: Vec<Rating>,
    /// The anchored player (rated 0).
    pub anchor: String,
    /// Elo bonus of moving first, and its standard error.
    pub first_move_advantage: f64,
    /// Standard error of the first-move advantage.
    pub first_move_advantage_stderr: f64,
}

impl RatingTable {
    /// The table as CSV: `name,elo,stderr,games,score`, then the first-move row.
    pub fn to_csv(&self) -> String {
        let mut s = String::from("name,elo,stderr,games,score\n");
        for r in &self.ratings {
            s.push_str(&format!(
                "{},{:.1},{:.1},{},{:.4}\n",
                csv_field(&r.name),
                r.elo,
                r.stderr,
                r.games,
                r.score
            ));
        }
        s.push_str(&format!(
            "(first move advantage),{:.1},{:.1},,\n",
            self.first_move_advantage, self.first_move_advantage_stderr
        ));
        s
    }
}

impl std::fmt::Display for RatingTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let width = self
            .ratings
            .iter()
            .map(|r| r.name.len())
            .max()
            .unwrap_or(4)
            .max(4);
        writeln!(
            f,
            "{:<width$}  {:>7}  {:>6}  {:>6}  {:>6}",
            "player", "elo", "±95%", "games", "score"
        )?;
        for r in &self.ratings {
            writeln!(
                f,
                "{:<width$}  {:>7.0}  {:>6.0}  {:>6}  {:>5.1}%",
                r.name,
                r.elo,
                1.96 * r.stderr,
                r.games,
                100.0 * r.score
            )?;
        }
        write!(
            f,
            "first-move advantage: {:+.0} ± {:.0} Elo; anchor: {} = 0",
            self.first_move_advantage,
            1.96 * self.first_move_advantage_stderr,
            self.anchor
        )
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Fits the ratings (see the module docs). `prior_draws`: virtual draws per pair that met
/// (0.5 is a good default). Errors if some player is not linked to the anchor by games.
pub fn fit(games: &[RatedGame], prior_draws: f64) -> Result<RatingTable> {
    let names: BTreeSet<&str> = games
        .iter()
        .flat_map(|g| [g.first.as_str(), g.second.as_str()])
        .collect();
    if names.len() < 2 {
        bail!("ratings need games between at least two players");
    }
    let anchor = if names.contains("random") {
        "random"
    } else {
        names.iter().next().expect("non-empty")
    };
    let index: BTreeMap<&str, usize> = names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let n = names.len();
    let a = index[anchor];

    // Connectivity to the anchor.
    let mut adj = vec![BTreeSet::new(); n];
    for g in games {
        let (i, j) = (index[g.first.as_str()], index[g.second.as_str()]);
        adj[i].insert(j);
        adj[j].insert(i);
    }
    let mut seen = vec![false; n];
    let mut stack = vec![a];
    seen[a] = true;
    while let Some(i) = stack.pop() {
        for &j in &adj[i] {
            if !seen[j] {
                seen[j] = true;
                stack.push(j);
            }
        }
    }
    let unlinked: Vec<&str> = names
        .iter()
        .filter(|nm| !seen[index[*nm]])
        .copied()
        .collect();
    if !unlinked.is_empty() {
        bail!(
            "players {} never played (directly or through others) against the anchor {anchor}",
            unlinked.join(", ")
        );
    }

    // Aggregate: (first, second) -> (games, score of first).
    let mut pairs: BTreeMap<(usize, usize), (f64, f64)> = BTreeMap::new();
    let mut per_player = vec![(0u32, 0.0f64); n];
    for g in games {
        let (i, j) = (index[g.first.as_str()], index[g.second.as_str()]);
        let e = pairs.entry((i, j)).or_default();
        e.0 += 1.0;
        e.1 += g.score_first;
        per_player[i].0 += 1;
        per_player[i].1 += g.score_first;
        per_player[j].0 += 1;
        per_player[j].1 += 1.0 - g.score_first;
    }
    let mut met: BTreeSet<(usize, usize)> = BTreeSet::new();
    for &(i, j) in pairs.keys() {
        met.insert((i.min(j), i.max(j)));
    }

    // Parameters: theta[0..n] (natural units; anchor fixed at 0), then the advantage.
    let dim = n + 1;
    let mut theta = vec![0.0f64; dim];
    let sigmoid = |x: f64| 1.0 / (1.0 + (-x).exp());
    let mut info = vec![vec![0.0; dim]; dim];
    for _iter in 0..100 {
        let mut grad = vec![0.0; dim];
        for row in info.iter_mut() {
            row.fill(0.0);
        }
        let add = |i: usize,
                   j: usize,
                   adv: bool,
                   games: f64,
                   score: f64,
                   grad: &mut Vec<f64>,
                   info: &mut Vec<Vec<f64>>| {
            let d = theta[i] - theta[j] + if adv { theta[n] } else { 0.0 };
            let p = sigmoid(d);
            let r = score - games * p;
            let w = games * p * (1.0 - p);
            let mut idx = vec![(i, 1.0), (j, -1.0)];
            if adv {
                idx.push((n, 1.0));
            }
            for &(u, su) in &idx {
                grad[u] += su * r;
                for &(v, sv) in &idx {
                    info[u][v] += su * sv * w;
                }
            }
        };
        for (&(i, j), &(g, s)) in &pairs {
            add(i, j, true, g, s, &mut grad, &mut info);
        }
        for &(i, j) in &met {
            add(
                i,
                j,
                false,
                prior_draws,
                0.5 * prior_draws,
                &mut grad,
                &mut info,
            );
        }
        // Gaussian prior on the first-move advantage (sd ADVANTAGE_PRIOR_ELO): identifies it
        // when every game had the same colours, negligible once colours alternate.
        let tau = 1.0 / (ADVANTAGE_PRIOR_ELO / ELO_PER_NAT).powi(2);
        grad[n] -= tau * theta[n];
        info[n][n] += tau;
        // Fix the anchor: drop its row and column.
        let keep: Vec<usize> = (0..dim).filter(|&k| k != a).collect();
        let m: Vec<Vec<f64>> = keep
            .iter()
            .map(|&u| keep.iter().map(|&v| info[u][v]).collect())
            .collect();
        let g: Vec<f64> = keep.iter().map(|&u| grad[u]).collect();
        let step = solve(m, g)?;
        let mut max_step: f64 = 0.0;
        for (k, &u) in keep.iter().enumerate() {
            let s = step[k].clamp(-2.0, 2.0);
            theta[u] += s;
            max_step = max_step.max(s.abs());
        }
        if max_step < 1e-9 {
            break;
        }
    }
    // Standard errors from the inverse information (anchor removed).
    let keep: Vec<usize> = (0..dim).filter(|&k| k != a).collect();
    let m: Vec<Vec<f64>> = keep
        .iter()
        .map(|&u| keep.iter().map(|&v| info[u][v]).collect())
        .collect();
    let mut stderr = vec![0.0; dim];
    for (k, &u) in keep.iter().enumerate() {
        let mut e = vec![0.0; keep.len()];
        e[k] = 1.0;
        let col = solve(m.clone(), e)?;
        stderr[u] = col[k].max(0.0).sqrt();
    }
    let mut ratings: Vec<Rating> = names
        .iter()
        .map(|nm| {
            let i = index[nm];
            Rating {
                name: nm.to_string(),
                elo: theta[i] * ELO_PER_NAT,
                stderr: stderr[i] * ELO_PER_NAT,
                games: per_player[i].0,
                score: per_player[i].1 / per_player[i].0.max(1) as f64,
            }
        })
        .collect();
    ratings.sort_by(|x, y| y.elo.total_cmp(&x.elo));
    Ok(RatingTable {
        ratings,
        anchor: anchor.to_string(),
        first_move_advantage: theta[n] * ELO_PER_NAT,
        first_move_advantage_stderr: stderr[n] * ELO_PER_NAT,
    })
}

#[allow(clippy::needless_range_loop)]
/// Solves `m x = b` by Gaussian elimination with partial pivoting.
fn solve(mut m: Vec<Vec<f64>>, mut b: Vec<f64>) -> Result<Vec<f64>> {
    let n = b.len();
    for col in 0..n {
        let piv = (col..n)
            .max_by(|&x, &y| m[x][col].abs().total_cmp(&m[y][col].abs()))
            .expect("non-empty");
        if m[piv][col].abs() < 1e-12 {
            bail!("the rating fit is singular (too few games between the players)");
        }
        m.swap(col, piv);
        b.swap(col, piv);
        for r in col + 1..n {
            let f = m[r][col] / m[col][col];
            if f != 0.0 {
                for c in col..n {
                    m[r][c] -= f * m[col][c];
                }
                b[r] -= f * b[col];
            }
        }
    }
    let mut x = vec![0.0; n];
    for r in (0..n).rev() {
        let mut s = b[r];
        for c in r + 1..n {
            s -= m[r][c] * x[c];
        }
        x[r] = s / m[r][r];
    }
    Ok(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elo::expected_score;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    #[test]
    fn recovers_known_elo_differences() {
        let truth = [("random", 0.0), ("a", 150.0), ("b", 400.0), ("c", 650.0)];
        let advantage = 40.0;
        let mut rng = SmallRng::seed_from_u64(7);
        let mut games = Vec::new();
        for _ in 0..12_000 {
            let i = rng.random_range(0..truth.len());
            let mut j = rng.random_range(0..truth.len() - 1);
            if j >= i {
                j += 1;
            }
            let p = expected_score(truth[i].1 - truth[j].1 + advantage);
            let score = if rng.random_bool(p) { 1.0 } else { 0.0 };
            games.push(RatedGame {
                first: truth[i].0.into(),
                second: truth[j].0.into(),
                score_first: score,
            });
        }
        let table = fit(&games, 0.5).unwrap();
        assert_eq!(table.anchor, "random");
        for (name, elo) in truth {
            let r = table.ratings.iter().find(|r| r.name == name).unwrap();
            let want = elo;
            // Sampling noise plus the slight shrinkage of the prior draws.
            assert!(
                (r.elo - want).abs() < 3.0 * r.stderr + 5.0,
                "{name}: fitted {:.0} ± {:.0}, expected about {want:.0}\n{table}",
                r.elo,
                r.stderr
            );
        }
        assert!(
            table.first_move_advantage > 15.0 && table.first_move_advantage < 65.0,
            "{table}"
        );
        assert!(table
            .to_csv()
            .starts_with("name,elo,stderr,games,score\nc,"));
    }

    #[test]
    fn exact_recovery_without_draws() {
        let truth = [("random", 0.0), ("x", 300.0), ("y", -200.0)];
        let mut games = Vec::new();
        // Expected-value games: n games with the exact expected number of wins.
        for (i, &(ni, ri)) in truth.iter().enumerate() {
            for &(nj, rj) in &truth[i + 1..] {
                let p = expected_score(ri - rj);
                let wins = (p * 10_000.0).round() as usize;
                for k in 0..10_000 {
                    let (first, second, s) = if k % 2 == 0 {
                        (ni, nj, 1.0)
                    } else {
                        (nj, ni, 0.0)
                    };
                    let s = if k < wins { s } else { 1.0 - s };
                    games.push(RatedGame {
                        first: first.into(),
                        second: second.into(),
                        score_first: s,
                    });
                }
            }
        }
        let table = fit(&games, 0.0).unwrap();
        for (name, elo) in truth {
            let r = table.ratings.iter().find(|r| r.name == name).unwrap();
            assert!(
                (r.elo - elo).abs() < 1.0,
                "{name}: {:.1} vs {elo}\n{table}",
                r.elo
            );
        }
    }

    #[test]
    fn clean_sweeps_stay_finite_and_unlinked_players_are_errors() {
        let mut games: Vec<RatedGame> = (0..20)
            .map(|_| RatedGame {
                first: "strong".into(),
                second: "random".into(),
                score_first: 1.0,
            })
            .collect();
        let t = fit(&games, 0.5).unwrap();
        assert!(
            t.ratings[0].elo.is_finite() && t.ratings[0].elo > 300.0,
            "{t}"
        );
        games.push(RatedGame {
            first: "p".into(),
            second: "q".into(),
            score_first: 0.5,
        });
        let e = fit(&games, 0.5).unwrap_err().to_string();
        assert!(e.contains("p, q"), "{e}");
    }
}
