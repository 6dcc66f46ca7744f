//! The exact shallow tactical solver: forced wins within three turns and losses by
//! distance, decided by exhaustive search under every variant and rule option.
//!
//! A *turn* is what one side plays before the other side moves: one ply, or in a
//! `parachute` compound turn a move and the drop that completes it (two plies; a pending
//! drop at the root is a turn of one ply). Distances are counted in plies, as the game
//! counts them, so a win in one turn is 1 ply (2 in a compound turn) and a win in three
//! turns is 3 plies (more in compound turns).
//!
//! For the side to move, [`solve`] classifies every move within the horizon of three turns:
//!
//! * a forced **win** ([`MoveValue::Win`]): the move wins at once, or after it every reply
//!   of the opponent loses at once or allows a winning turn (the game neither won by the
//!   opponent nor drawn on the way);
//! * a forced **loss** ([`MoveValue::Loss`]): the move loses at once (a capture that
//!   connects the opponent alone), or the opponent has a winning turn after it;
//! * **open** ([`MoveValue::Open`]): neither (including moves that draw at once).
//!
//! and answers with a [`Forced`] verdict: the shortest forced win if there is one; when
//! every move is a forced loss, the move that loses latest; otherwise the moves that lose
//! within the horizon while another move does not (a search should never play those).
//!
//! Exactness: every position on the way is judged as [`crate::Game`] judges it:
//! [`Position::outcome`] (connection, simultaneous connection, the ply limit, no-move as
//! pass or loss), then the three-fold repetition over the game's history plus the search
//! path. Wins within a turn come from [`crate::tactics::winning_move`] (exact for
//! connection) plus, under `no-move=loss`, a scan for turns that leave the opponent without
//! a move. Drops, `gemma` removals and passes are turns like any other, and in `ambiloa`
//! the teams alternate every ply (the player to move moves only its own pieces).
//!
//! Speed (release build, a 2-core AMD EPYC Zen 4 shared with other work, 2026-11-26,
//! `solver_speed_on_random_positions`, which prints the figures): 27 µs per position on
//! average over 200 random positions of up to 160 plies on the standard board, 80 µs at
//! most; `parachute`, with its compound turns (a move times a drop), 64 µs on average and
//! 1.4 ms at most. Cheap enough for the root of every move.

use crate::rules::{NoMove, Repetition};
use crate::{Game, Move, Outcome, Position, Rules};

/// What one move of the side to move leads to within the horizon of three turns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MoveValue {
    /// A forced win; the number of plies to it against the longest defence.
    Win(u32),
    /// A forced loss; the number of plies to it against the fastest attack.
    Loss(u32),
    /// Neither a forced win within three turns nor a forced loss within two (a draw at
    /// once is open too).
    Open,
}

impl MoveValue {
    /// A key that orders values from worst to best: losses by distance (the later, the
    /// better), then open moves, then wins by distance (the sooner, the better).
    pub fn rank(self) -> i64 {
        match self {
            MoveValue::Loss(plies) => -1_000_000 + plies as i64,
            MoveValue::Open => 0,
            MoveValue::Win(plies) => 1_000_000 - plies as i64,
        }
    }
}

/// The solver's verdict on a position (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Forced {
    /// The side to move wins by force: `mv` (the first ply of its turn) wins within `plies`,
    /// and no move wins sooner.
    Win {
        /// A shortest winning move.
        mv: Move,
        /// Plies to the win against the longest defence.
        plies: u32,
    },
    /// Every move loses within the horizon: `mv` loses latest, after `plies`.
    Loss {
        /// A move that delays the loss longest.
        mv: Move,
        /// Plies to the loss against the fastest attack.
        plies: u32,
    },
    /// No forced win, and some move is not a forced loss: `refuted` lists the moves that
    /// are forced losses (empty when there are none).
    Open {
        /// The moves that lose within the horizon while another move does not.
        refuted: Vec<Move>,
    },
}

impl Forced {
    /// The move the verdict settles: the shortest win or the latest loss; `None` when open.
    pub fn settled_move(&self) -> Option<Move> {
        match self {
            Forced::Win { mv, .. } | Forced::Loss { mv, .. } => Some(*mv),
            Forced::Open { .. } => None,
        }
    }

    /// Whether `mv` is one of the moves an open verdict refutes.
    pub fn refutes(&self, mv: Move) -> bool {
        matches!(self, Forced::Open { refuted } if refuted.contains(&mv))
    }
}

/// The game's history for the repetition rule: how often each earlier position occurred.
struct Seen {
    /// The hashes of every position of the game so far (the root included), sorted.
    sorted: Vec<u64>,
    three_fold: bool,
}

impl Seen {
    fn new(history: &[u64], rules: &Rules) -> Seen {
        let three_fold = rules.repetition == Repetition::ThreeFold;
        let mut sorted = if three_fold {
            history.to_vec()
        } else {
            Vec::new()
        };
        sorted.sort_unstable();
        Seen { sorted, three_fold }
    }

    /// Whether reaching `hash` after the positions `path` (the search path below the root)
    /// is a three-fold repetition.
    fn is_repetition(&self, hash: u64, path: &[u64]) -> bool {
        if !self.three_fold {
            return false;
        }
        let before = self.sorted.partition_point(|&h| h < hash);
        let in_history = self.sorted[before..].partition_point(|&h| h == hash);
        let on_path = path.iter().filter(|&&h| h == hash).count();
        in_history + on_path + 1 >= 3
    }
}

/// The positions played through below the root, for the repetition rule.
#[derive(Clone, Copy)]
struct Path {
    hashes: [u64; 6],
    len: usize,
}

impl Path {
    const EMPTY: Path = Path {
        hashes: [0; 6],
        len: 0,
    };

    fn with(mut self, hash: u64) -> Path {
        self.hashes[self.len] = hash;
        self.len += 1;
        self
    }

    fn as_slice(&self) -> &[u64] {
        &self.hashes[..self.len]
    }
}

/// The solver over one game: rules and history.
struct Solver<'a> {
    rules: &'a Rules,
    seen: Seen,
}

impl Solver<'_> {
    /// The result of the game on reaching `pos` after `path`, as [`Game`] scores it.
    fn outcome(&self, pos: &Position, path: &Path) -> Option<Outcome> {
        if let Some(o) = pos.outcome(self.rules) {
            return Some(o);
        }
        self.seen
            .is_repetition(pos.hash(), path.as_slice())
            .then_some(Outcome::Draw)
    }

    /// Calls `f(first ply, position at the end of the turn, plies, path to it)` for every
    /// turn of the side to move at `pos` (reached after `path`), until `f` returns true.
    /// A turn that ends the game half-way (a repetition on a pending drop) is passed with
    /// the position where it ended. Returns whether `f` stopped the walk.
    fn for_each_turn(
        &self,
        pos: &Position,
        path: Path,
        mut f: impl FnMut(Move, &Position, u32, Path) -> bool,
    ) -> bool {
        for &mv in &pos.legal_moves(self.rules) {
            let child = pos.after(mv);
            let child_path = path.with(child.hash());
            if !child.drop_pending() || pos.drop_pending() {
                if f(mv, &child, 1, path) {
                    return true;
                }
                continue;
            }
            if self.outcome(&child, &path).is_some() {
                if f(mv, &child, 1, path) {
                    return true;
                }
                continue;
            }
            for &drop in &child.legal_moves(self.rules) {
                if f(mv, &child.after(drop), 2, child_path) {
                    return true;
                }
            }
        }
        false
    }

    /// A turn of the side to move at `pos` (not over) that wins at once, with its plies.
    /// Repetition never matters: [`Game`] scores the position before the repetition.
    fn win_this_turn(&self, pos: &Position) -> Option<(Move, u32)> {
        if let Some((mv, plies)) = crate::tactics::winning_move(pos, self.rules) {
            return Some((mv, plies as u32));
        }
        if self.rules.no_move != NoMove::Loss {
            // Connection is then the only way to win.
            return None;
        }
        let us = pos.to_move();
        let mut found = None;
        self.for_each_turn(pos, Path::EMPTY, |mv, end, plies, _| {
            let wins = end.outcome(self.rules) == Some(Outcome::Win(us));
            if wins {
                found = Some((mv, plies));
            }
            wins
        });
        found
    }

    /// The value for the side to move at the root of the turn that ends in `end` after
    /// `plies` plies (`path`: the positions on the way, `end` excluded).
    fn turn_value(&self, us: crate::Color, end: &Position, plies: u32, path: Path) -> MoveValue {
        match self.outcome(end, &path) {
            Some(Outcome::Win(c)) if c == us => return MoveValue::Win(plies),
            Some(Outcome::Win(_)) => return MoveValue::Loss(plies),
            Some(Outcome::Draw) => return MoveValue::Open,
            None => {}
        }
        if let Some((_, theirs)) = self.win_this_turn(end) {
            return MoveValue::Loss(plies + theirs);
        }
        let path = path.with(end.hash());
        let mut longest = 0;
        let refuted = self.for_each_turn(end, path, |_, after, their_plies, reply_path| {
            let so_far = plies + their_plies;
            match self.outcome(after, &reply_path) {
                Some(Outcome::Win(c)) if c == us => {
                    longest = longest.max(so_far);
                    false
                }
                Some(_) => true,
                None => match self.win_this_turn(after) {
                    Some((_, ours)) => {
                        longest = longest.max(so_far + ours);
                        false
                    }
                    None => true,
                },
            }
        });
        if refuted {
            MoveValue::Open
        } else {
            MoveValue::Win(longest)
        }
    }

    /// Every root move with its value (a compound turn's first ply takes the best of its
    /// drops).
    fn move_values(&self, root: &Position) -> Vec<(Move, MoveValue)> {
        let us = root.to_move();
        let mut values: Vec<(Move, MoveValue)> = Vec::new();
        self.for_each_turn(root, Path::EMPTY, |mv, end, plies, path| {
            let value = self.turn_value(us, end, plies, path);
            match values.last_mut() {
                Some((last, best)) if *last == mv => {
                    if value.rank() > best.rank() {
                        *best = value;
                    }
                }
                _ => values.push((mv, value)),
            }
            false
        });
        values
    }
}

/// Solves the current position of `game` (which must not be over) with its repetition
/// history: see the module docs.
pub fn solve(game: &Game) -> Forced {
    solve_position(game.position(), game.rules(), game.history())
}

/// Solves `pos` (not over) under `rules`; `history` holds the hashes of the game's
/// positions so far for the repetition rule (as [`Game::history`]: the root last; empty
/// when unknown).
pub fn solve_position(pos: &Position, rules: &Rules, history: &[u64]) -> Forced {
    let solver = Solver {
        rules,
        seen: Seen::new(history, rules),
    };
    if let Some((mv, plies)) = solver.win_this_turn(pos) {
        return Forced::Win { mv, plies };
    }
    let values = solver.move_values(pos);
    classify(&values)
}

/// Every legal move of `pos` (not over) with its value within the horizon (see
/// [`solve_position`] for the arguments). Slower than [`solve_position`], which stops at a
/// win within the turn; for tests and analysis.
pub fn move_values(pos: &Position, rules: &Rules, history: &[u64]) -> Vec<(Move, MoveValue)> {
    Solver {
        rules,
        seen: Seen::new(history, rules),
    }
    .move_values(pos)
}

/// The verdict on a list of root moves with their values.
fn classify(values: &[(Move, MoveValue)]) -> Forced {
    let Some(&(best_mv, best)) = values.iter().max_by_key(|(_, v)| v.rank()) else {
        return Forced::Open {
            refuted: Vec::new(),
        };
    };
    // The first move of the best value (deterministic, in move-generation order).
    let first_best = values
        .iter()
        .find(|(_, v)| *v == best)
        .map_or(best_mv, |&(m, _)| m);
    match best {
        MoveValue::Win(plies) => Forced::Win {
            mv: first_best,
            plies,
        },
        MoveValue::Loss(plies) => Forced::Loss {
            mv: first_best,
            plies,
        },
        MoveValue::Open => Forced::Open {
            refuted: values
                .iter()
                .filter(|(_, v)| matches!(v, MoveValue::Loss(_)))
                .map(|&(m, _)| m)
                .collect(),
        },
    }
}

#[cfg(test)]
mod tests;
