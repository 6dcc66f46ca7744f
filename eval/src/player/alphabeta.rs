//! The alpha-beta baseline as a [`Player`].

use super::Player;
use crate::config::AlphaBetaConfig;
use crate::search::{AlphaBeta, SearchLimits, SearchResult, WIN};
use anyhow::Result;
use loa::forced::Forced;
use loa::{Game, Move};
use selfplay::RootCheck;
use std::time::{Duration, Instant};

/// The alpha-beta baseline as a player. Every move starts with the root check
/// ([`RootCheck`]): a forced win within three turns, or the latest loss when every move
/// loses, is played without a search (reported as a search of depth 0 with the exact
/// score), and the moves the check refutes are left out of the search.
pub struct AlphaBetaPlayer {
    name: String,
    search: AlphaBeta,
    limits: SearchLimits,
    last: Option<SearchResult>,
}

impl AlphaBetaPlayer {
    /// A player searching within `limits` per move.
    pub fn new(name: String, config: AlphaBetaConfig, limits: SearchLimits) -> AlphaBetaPlayer {
        AlphaBetaPlayer {
            name,
            search: AlphaBeta::new(config),
            limits,
            last: None,
        }
    }

    /// The last search's result.
    pub fn last_result(&self) -> Option<&SearchResult> {
        self.last.as_ref()
    }

    /// The root check, then the search within `limits` over the moves it does not refute.
    fn checked_search(&mut self, game: &Game, limits: SearchLimits) -> Result<Move> {
        let started = Instant::now();
        let check = RootCheck::of(game);
        let settled = |best_move: Move, score: i32| SearchResult {
            best_move,
            score,
            depth: 0,
            nodes: 0,
            elapsed: started.elapsed(),
            iterations: Vec::new(),
        };
        let r = match *check.verdict() {
            Forced::Win { mv, plies } => settled(mv, WIN - plies as i32),
            Forced::Loss { mv, plies } => settled(mv, -(WIN - plies as i32)),
            Forced::Open { ref refuted } => {
                self.search.search_game_excluding(game, limits, refuted)?
            }
        };
        let mv = r.best_move;
        self.last = Some(r);
        Ok(mv)
    }
}

impl Player for AlphaBetaPlayer {
    fn choose_move(&mut self, game: &Game) -> Result<Move> {
        self.checked_search(game, self.limits)
    }
    fn name(&self) -> String {
        self.name.clone()
    }
    fn choose_move_within(&mut self, game: &Game, budget: Duration) -> Result<Move> {
        let limits = if self.limits.time.is_some() {
            SearchLimits {
                time: Some(budget),
                ..self.limits
            }
        } else {
            SearchLimits {
                time: Some(budget),
                ..SearchLimits::default()
            }
        };
        self.checked_search(game, limits)
    }
    fn last_info(&self) -> Option<String> {
        self.last.as_ref().map(|r| {
            format!(
                "depth {} score {} nodes {} time {} ms nps {:.0} pv {}",
                r.depth,
                crate::search::score_text(r.score),
                r.nodes,
                r.elapsed.as_millis(),
                r.nodes as f64 / r.elapsed.as_secs_f64().max(1e-6),
                r.pv()
                    .iter()
                    .map(|m| m.to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        })
    }
}
