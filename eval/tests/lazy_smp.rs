//! Lazy SMP never invents a result: searches with 1, 2 and 4 threads of [`AlphaBeta`]
//! over the one shared transposition table, at a fixed depth, are checked against an
//! exhaustive solver of the rules ([`wins_within`]). Every win or loss a search claims is
//! real and exactly as far as claimed, and its move keeps the win; every forced result
//! within the search's depth is found by every thread count at its exact distance; a
//! claim beyond the depth that one thread does not make there, one thread makes at the
//! claim's full distance. Nothing here depends on the machine's speed: the searches are
//! bounded by depth only.

use eval::search::{score_text, AlphaBeta, SearchLimits, SearchResult, WIN, WIN_THRESHOLD};
use eval::AlphaBetaConfig;
use loa::forced::{solve, Forced};
use loa::forced_set::{tactical_positions, Quota};
use loa::{Color, Game, Outcome, Rules, Variant};

/// The depth of every search (plies): forced results up to 5 plies away (a win in three
/// of the mover's turns) lie within it.
const DEPTH: u32 = 5;

/// The thread counts compared; 1 is the reference.
const THREADS: [usize; 3] = [1, 2, 4];

/// A searcher on `threads` threads with the player's fixed-depth options (no late move
/// reductions, which cost exactness at a fixed depth).
fn searcher(threads: usize) -> AlphaBeta {
    AlphaBeta::new(AlphaBetaConfig {
        tt_mib: 4,
        threads,
        late_move_reductions: false,
        ..Default::default()
    })
}

/// Whether `me` forces a win within `plies` plies from `game`, whoever is to move.
///
/// Exhaustive minimax under the rules [`Game`] plays by (connection, repetition over the
/// game's history, the ply limit, no-move), sharing no code with the searcher: `me`
/// chooses, the other side must be beaten after every move. At nodes where `me` is to
/// move, the exact shallow solver ([`loa::forced::solve`], checked against a plain
/// minimax in `loa`) answers when it can: it sees every win within two turns of `me`
/// (`me`, the opponent, `me`), and a win that needs a third turn of `me` takes at least 5
/// plies, so its shortest win is the shortest of all when it is at most 5 plies, and no
/// win within fewer than 5 plies exists when it finds none.
fn wins_within(game: &Game, me: Color, plies: u32) -> bool {
    match game.outcome() {
        Some(Outcome::Win(c)) => return c == me,
        Some(Outcome::Draw) => return false,
        None if plies == 0 => return false,
        None => {}
    }
    let mover = game.position().to_move();
    if mover == me {
        match solve(game) {
            Forced::Win { plies: p, .. } if p <= 5 => return p <= plies,
            _ if plies < 5 => return false,
            _ => {}
        }
    }
    let moves = game.legal_moves();
    let mut children = moves.iter().map(|&mv| {
        let mut child = game.clone();
        child.play(mv).expect("a legal move plays");
        wins_within(&child, me, plies - 1)
    });
    if mover == me {
        children.any(|w| w)
    } else {
        children.all(|w| w)
    }
}

/// The exact forced result for the side to move at `game` within `max` plies, as a search
/// score: `WIN - k` for a shortest forced win in `k` plies, `-(WIN - k)` for a forced
/// loss in `k` plies against the longest defence, `None` when neither comes within `max`.
fn exact_result(game: &Game, max: u32) -> Option<i32> {
    let us = game.position().to_move();
    (1..=max).find_map(|k| {
        if wins_within(game, us, k) {
            Some(WIN - k as i32)
        } else if wins_within(game, us.opponent(), k) {
            Some(-(WIN - k as i32))
        } else {
            None
        }
    })
}

/// Whether `score` claims a win or a loss.
fn is_claim(score: i32) -> bool {
    score.abs() > WIN_THRESHOLD
}

/// Checks the claim of `r` (a win or loss score) at `game` with the exhaustive solver: the
/// side claimed to win forces a win in exactly the plies claimed (within them, not within
/// one fewer), and a claimed win's move itself keeps the win within the rest.
fn check_claim(game: &Game, r: &SearchResult) -> Result<(), String> {
    let us = game.position().to_move();
    let (side, k) = if r.score > 0 {
        (us, (WIN - r.score) as u32)
    } else {
        (us.opponent(), (WIN + r.score) as u32)
    };
    if !wins_within(game, side, k) {
        return Err(format!("{side:?} does not force a win within {k} plies"));
    }
    if wins_within(game, side, k - 1) {
        return Err(format!("{side:?} forces a win sooner than {k} plies"));
    }
    if side == us {
        let mut after = game.clone();
        after.play(r.best_move).expect("the best move is legal");
        if !wins_within(&after, us, k - 1) {
            return Err(format!("{} does not keep the win in {k}", r.best_move));
        }
    }
    Ok(())
}

/// The positions searched: tactical positions near the end of random games in every
/// variant and under several rule sets (forced wins in one and three plies, and positions
/// where some moves lose within two plies while others last longer; the test set of
/// [`loa::forced_set`], drawn with a seed of its own), and random positions of every
/// variant from its first 60 plies, where forced results are rare.
fn positions() -> Vec<Game> {
    let quota = Quota {
        win_now: 2,
        win_later: 5,
        loss: 7,
    };
    let mut games: Vec<Game> = tactical_positions(&Variant::ALL, quota, 6, 400, 0x005E_A2C4)
        .into_iter()
        .map(|p| p.game)
        .collect();
    games.extend(loa::testing::random_games(
        &Variant::ALL,
        Rules::classic(),
        14,
        60,
        0x001A_25E7,
    ));
    // A single legal move is played without a search (scored 0): nothing to check.
    games.retain(|g| g.legal_moves().len() > 1);
    games
}

/// With 1, 2 and 4 threads at depth [`DEPTH`], over [`positions`]: every win or loss
/// claimed is a real forced result at exactly the distance claimed, and a claimed win's
/// move keeps it ([`check_claim`]); every forced result within [`DEPTH`] plies (by the
/// exhaustive solver) is claimed by every thread count at its exact distance (so all agree
/// with one thread there); a claim beyond the depth that one thread does not make at
/// [`DEPTH`] is made by one thread searching to the claim's full distance. Fails on a
/// transposition table that loses the ply adjustment of win scores (wrong distances), and
/// on a pool that takes a helper's interrupted or shallower result.
#[test]
fn lazy_smp_claims_only_real_wins_at_their_exact_distance() {
    let mut searchers: Vec<AlphaBeta> = THREADS.iter().map(|&t| searcher(t)).collect();
    let mut claims = [0usize; THREADS.len()];
    let mut decided = 0;
    let mut failures = Vec::new();
    let games = positions();
    for game in &games {
        let rules = *game.rules();
        let exact = exact_result(game, DEPTH);
        decided += usize::from(exact.is_some());
        let mut scores = Vec::new();
        for (i, (s, &threads)) in searchers.iter_mut().zip(&THREADS).enumerate() {
            let r = s.search_game(game, SearchLimits::depth(DEPTH)).unwrap();
            let what = format!(
                "{} [{rules}] {}, {threads} threads: {} {} (depth {})",
                game.position().variant(),
                game.position().to_text(),
                r.best_move,
                score_text(r.score),
                r.depth
            );
            assert!(game.position().is_legal(r.best_move, &rules), "{what}");
            assert!(r.depth <= DEPTH, "{what}");
            if is_claim(r.score) {
                claims[i] += 1;
                if let Err(e) = check_claim(game, &r) {
                    failures.push(format!("{what}: false claim: {e}"));
                }
            }
            if let Some(e) = exact {
                if r.score != e {
                    failures.push(format!("{what}: the exact result is {}", score_text(e)));
                }
            }
            scores.push(r.score);
        }
        // A claim one thread does not make at this depth (one beyond the depth, which
        // extensions and the other threads' table entries may reach) is what one thread
        // finds at the full depth of the claim.
        for (&threads, &score) in THREADS.iter().zip(&scores).skip(1) {
            if is_claim(score) && score != scores[0] {
                let full = (WIN - score.abs()) as u32;
                let one = searcher(1)
                    .search_game(game, SearchLimits::depth(full))
                    .unwrap();
                if one.score != score {
                    failures.push(format!(
                        "{} {}: {threads} threads claim {} at depth {DEPTH}, one thread {} \
                         at depth {DEPTH} and {} at depth {full}",
                        game.position().variant(),
                        game.position().to_text(),
                        score_text(score),
                        score_text(scores[0]),
                        score_text(one.score)
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The set holds forced results within the depth, and the searches claimed some.
    assert!(decided >= games.len() / 3, "{decided} of {}", games.len());
    assert!(
        claims.iter().all(|&c| c >= decided),
        "{claims:?}, {decided} decided"
    );
}
