//! The alpha-beta baseline as a [`Player`].

use super::Player;
use crate::config::AlphaBetaConfig;
use crate::search::{AlphaBeta, SearchLimits, SearchResult};
use anyhow::Result;
use loa::{Game, Move};
use std::time::Duration;

/// The alpha-beta baseline as a player.
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
}

impl Player for AlphaBetaPlayer {
    fn choose_move(&mut self, game: &Game) -> Result<Move> {
        let r = self.search.search_game(game, self.limits)?;
        let mv = r.best_move;
        self.last = Some(r);
        Ok(mv)
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
        let r = self.search.search_game(game, limits)?;
        let mv = r.best_move;
        self.last = Some(r);
        Ok(mv)
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
