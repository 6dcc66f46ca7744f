//! The root check of every searching player ([`RootCheck`]): the exact shallow solver of
//! [`loa::forced`] settles the tactics a search of a few dozen simulations (or a shallow
//! alpha-beta) can miss.
//!
//! * Before the search: a forced win within three turns is played at once, the shortest
//!   first; when every move loses within two turns, the move that loses latest is played.
//!   No search is run for these ([`RootCheck::settled`]).
//! * After the search: if the searched move loses within two turns while another move
//!   does not, the search's best move that does not replaces it
//!   ([`RootCheck::overrule`]). Otherwise the search's move stands.
//!
//! So a player's behaviour changes only in positions the solver decides exactly. Used by
//! [`crate::MctsPlayer`] and by the alpha-beta player of the `eval` crate; self-play
//! ([`crate::worker`]) does not use it: its move choice and its training targets (visit
//! counts, the Gumbel root's completed-Q policy) stay the search's own, so training data
//! keep what the network must learn to see. The check costs tens of microseconds on the
//! standard board (see [`loa::forced`]), negligible beside a search.

use loa::forced::{self, Forced};
use loa::{Game, Move};

/// The solver's verdict on a game's current position, as a player applies it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RootCheck {
    verdict: Forced,
    /// A legal move that the verdict does not refute (the last resort of `overrule`).
    fallback: Option<Move>,
}

impl RootCheck {
    /// Solves the current position of `game` with its repetition history. A game that is
    /// over settles nothing and allows everything (the search reports the error).
    pub fn of(game: &Game) -> RootCheck {
        if game.is_over() {
            return RootCheck {
                verdict: Forced::Open {
                    refuted: Vec::new(),
                },
                fallback: None,
            };
        }
        let verdict = forced::solve(game);
        let fallback = match &verdict {
            Forced::Open { refuted } if !refuted.is_empty() => game
                .legal_moves()
                .iter()
                .copied()
                .find(|m| !refuted.contains(m)),
            _ => None,
        };
        RootCheck { verdict, fallback }
    }

    /// The solver's verdict.
    pub fn verdict(&self) -> &Forced {
        &self.verdict
    }

    /// The move to play without searching: the shortest forced win, or the latest loss
    /// when every move loses; `None` when the search decides.
    pub fn settled(&self) -> Option<Move> {
        self.verdict.settled_move()
    }

    /// The moves the search must not play: those that lose within two turns while another
    /// move does not (empty unless the verdict is open).
    pub fn refuted(&self) -> &[Move] {
        match &self.verdict {
            Forced::Open { refuted } => refuted,
            _ => &[],
        }
    }

    /// The move to play after a search that chose `searched`, with `preference` the
    /// search's moves best first: the settled move if there is one; `searched` unless the
    /// solver refutes it; else the first move of `preference` it does not refute (else
    /// any legal move it does not refute).
    pub fn overrule(&self, searched: Move, preference: impl IntoIterator<Item = Move>) -> Move {
        if let Some(mv) = self.settled() {
            return mv;
        }
        let refuted = self.refuted();
        if !refuted.contains(&searched) {
            return searched;
        }
        preference
            .into_iter()
            .find(|m| !refuted.contains(m))
            .or(self.fallback)
            .unwrap_or(searched)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loa::{Position, Rules, Variant};

    fn game(text: &str) -> Game {
        Game::from_position(
            Position::from_text(text, Variant::Standard).unwrap(),
            Rules::classic(),
        )
    }

    #[test]
    fn a_forced_win_is_settled_and_overrules_any_search() {
        let g = game("5w2/4w3/2b1w3/8/8/8/1ww1b3/8 b");
        let win = g.position().parse_move("e2-e5", g.rules()).unwrap();
        let other = g.position().parse_move("e2-d3", g.rules()).unwrap();
        let check = RootCheck::of(&g);
        assert_eq!(check.settled(), Some(win));
        assert_eq!(check.overrule(other, [other]), win);
    }

    #[test]
    fn a_refuted_move_gives_way_to_the_searchs_next_choice() {
        let g = game("8/8/5wb1/b4wwb/3b2w1/8/4w3/3b4 b");
        let pos = *g.position();
        let mv = |t: &str| pos.parse_move(t, g.rules()).unwrap();
        let check = RootCheck::of(&g);
        assert_eq!(check.settled(), None);
        assert!(check.refuted().contains(&mv("d4xf6")));
        assert_eq!(
            check.overrule(mv("d4xf6"), [mv("d4xf6"), mv("d4-f4")]),
            mv("d4-f4")
        );
        // A move the solver does not refute stands.
        assert_eq!(check.overrule(mv("d4-f4"), []), mv("d4-f4"));
        // Without a preference, some move that is not refuted.
        let chosen = check.overrule(mv("d4xf6"), []);
        assert!(!check.refuted().contains(&chosen));
        assert!(g.legal_moves().contains(&chosen));
    }

    #[test]
    fn a_finished_game_settles_nothing() {
        let mut g = Game::new(Variant::Six, Rules::classic());
        let mut rng = loa::testing::XorShift::new(3);
        while !g.is_over() {
            let moves = g.legal_moves();
            g.play(moves[rng.below(moves.len())]).unwrap();
        }
        let check = RootCheck::of(&g);
        assert_eq!(check.settled(), None);
        assert!(check.refuted().is_empty());
    }
}
