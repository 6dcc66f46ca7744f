//! A game in progress: position, move list and repetition history under one set of rules.

use crate::moves::{Move, MoveList};
use crate::rules::{Repetition, Rules};
use crate::Error;
use crate::{Outcome, Position, Variant};

/// A game: the rules, the start position, every move played, and the hash history used by
/// the repetition rule. Every mutation checks legality, so a `Game` is always legal.
#[derive(Clone, Debug)]
pub struct Game {
    rules: Rules,
    start: Position,
    position: Position,
    moves: Vec<Move>,
    /// Hash of every position so far, the current one last.
    hashes: Vec<u64>,
    outcome: Option<Outcome>,
}

impl Game {
    /// A new game from the variant's start position.
    pub fn new(variant: Variant, rules: Rules) -> Game {
        Game::from_position(Position::start(variant, &rules), rules)
    }

    /// A new game from any position (its earlier history is unknown).
    pub fn from_position(position: Position, rules: Rules) -> Game {
        let mut g = Game {
            rules,
            start: position,
            position,
            moves: Vec::new(),
            hashes: vec![position.hash()],
            outcome: None,
        };
        g.outcome = g.compute_outcome();
        g
    }

    /// The rules.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The current position.
    pub fn position(&self) -> &Position {
        &self.position
    }

    /// The position the game started from.
    pub fn start(&self) -> &Position {
        &self.start
    }

    /// The moves played so far.
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// The hash of every position of the game so far, the start first and the current
    /// position last (what the repetition rule counts).
    pub fn history(&self) -> &[u64] {
        &self.hashes
    }

    /// The result, once the game is over.
    pub fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    /// Whether the game is over.
    pub fn is_over(&self) -> bool {
        self.outcome.is_some()
    }

    /// How often the current position (with the same side to move) has occurred, this time
    /// included.
    pub fn repetition_count(&self) -> usize {
        let h = self.position.hash();
        self.hashes.iter().filter(|&&x| x == h).count()
    }

    /// The legal moves; empty once the game is over.
    pub fn legal_moves(&self) -> MoveList {
        if self.is_over() {
            MoveList::new()
        } else {
            self.position.legal_moves(&self.rules)
        }
    }

    fn compute_outcome(&self) -> Option<Outcome> {
        if let Some(o) = self.position.outcome(&self.rules) {
            return Some(o);
        }
        if self.rules.repetition == Repetition::ThreeFold && self.repetition_count() >= 3 {
            return Some(Outcome::Draw);
        }
        None
    }

    /// Plays `mv` if it is legal and the game is not over.
    pub fn play(&mut self, mv: Move) -> Result<(), Error> {
        if let Some(o) = self.outcome {
            return Err(Error::new(format!(
                "the game is over ({}); no move '{mv}' can follow",
                o.name()
            )));
        }
        if !self.position.is_legal(mv, &self.rules) {
            return Err(Error::new(format!(
                "'{mv}' is not legal in position {}",
                self.position.to_text()
            )));
        }
        self.position.play(mv);
        self.moves.push(mv);
        self.hashes.push(self.position.hash());
        self.outcome = self.compute_outcome();
        Ok(())
    }

    /// Parses `text` as a move of the current position and plays it.
    pub fn play_text(&mut self, text: &str) -> Result<Move, Error> {
        if let Some(o) = self.outcome {
            return Err(Error::new(format!(
                "the game is over ({}); no move '{}' can follow",
                o.name(),
                text.trim()
            )));
        }
        let mv = self.position.parse_move(text, &self.rules)?;
        self.play(mv)?;
        Ok(mv)
    }
}
