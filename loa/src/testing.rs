//! Seeded pseudo-random play, for the tests and benchmarks of every crate: the same seed
//! gives the same positions on every machine and in every release (xorshift64, no
//! dependencies). Not for anything that must be unpredictable.

use crate::{Game, Position, Rules, Variant};

/// The xorshift64 generator (Marsaglia 2003): tiny, fast, reproducible.
#[derive(Clone, Debug)]
pub struct XorShift(u64);

impl XorShift {
    /// A generator started from `seed` (0 is replaced by a fixed non-zero state).
    pub fn new(seed: u64) -> XorShift {
        XorShift(if seed == 0 {
            0x9E37_79B9_7F4A_7C15
        } else {
            seed
        })
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `0..n` (`n > 0`; the modulo bias is irrelevant to tests).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

/// Every position of `games` random games of `variant` under `rules`, from the start, each
/// game ending at the rules' end or after `max_plies` plies; positions that are over are
/// left out.
pub fn random_game_positions(
    variant: Variant,
    rules: &Rules,
    games: usize,
    max_plies: usize,
    seed: u64,
) -> Vec<Position> {
    let mut rng = XorShift::new(seed);
    let mut out = Vec::new();
    for _ in 0..games {
        let mut pos = Position::start(variant, rules);
        for _ in 0..max_plies {
            if pos.outcome(rules).is_some() {
                break;
            }
            out.push(pos);
            let moves = pos.legal_moves(rules);
            pos.play(moves[rng.below(moves.len())]);
        }
    }
    out
}

/// `count` games that are not over, each of a random number of random plies (below
/// `max_plies`) from the start of the next variant of `variants` in turn, under `rules`.
pub fn random_games(
    variants: &[Variant],
    rules: Rules,
    count: usize,
    max_plies: usize,
    seed: u64,
) -> Vec<Game> {
    let mut rng = XorShift::new(seed);
    let mut out = Vec::new();
    let mut k = 0;
    while out.len() < count {
        let mut game = Game::new(variants[k % variants.len()], rules);
        k += 1;
        for _ in 0..rng.below(max_plies) {
            if game.is_over() {
                break;
            }
            let moves = game.legal_moves();
            game.play(moves[rng.below(moves.len())])
                .expect("a legal move plays");
        }
        if !game.is_over() {
            out.push(game);
        }
    }
    out
}

/// `data/winands-thesis-games` of the repository (real game records; see
/// `data/README.md`): looked for above the package whose test runs (cargo sets
/// `CARGO_MANIFEST_DIR` for every test process), then above the one this crate was built
/// in, so that a build moved or shared between checkouts still finds the checkout's
/// records; the built-in path (which then says what is missing) when neither has them.
pub fn thesis_games_dir() -> std::path::PathBuf {
    use std::path::{Path, PathBuf};
    const RECORDS: &str = "data/winands-thesis-games";
    let built = Path::new(env!("CARGO_MANIFEST_DIR"));
    let running = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
    let found = running
        .iter()
        .map(PathBuf::as_path)
        .chain([built])
        .flat_map(Path::ancestors)
        .map(|dir| dir.join(RECORDS))
        .find(|dir| dir.is_dir());
    found.unwrap_or_else(|| built.join("..").join(RECORDS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_play() {
        let rules = Rules::classic();
        let a = random_game_positions(Variant::Standard, &rules, 3, 50, 7);
        let b = random_game_positions(Variant::Standard, &rules, 3, 50, 7);
        assert_eq!(a, b);
        assert!(a.len() > 30 && a.iter().all(|p| p.outcome(&rules).is_none()));
        assert_ne!(
            a,
            random_game_positions(Variant::Standard, &rules, 3, 50, 8)
        );
        let games = random_games(&Variant::ALL, rules, 14, 40, 3);
        assert_eq!(games.len(), 14);
        assert!(games.iter().all(|g| !g.is_over()));
        assert_eq!(games[0].position().variant(), Variant::ALL[0]);
        // xorshift64 with the shifts 13, 7, 17 (Marsaglia 2003) from state 1, by hand:
        // 1 ^ 1 << 13 = 8193; 8193 ^ 8193 >> 7 = 8257; 8257 ^ 8257 << 17 = 1 082 269 761.
        assert_eq!(XorShift::new(1).next_u64(), 1_082_269_761);
        // Seed 0 (a fixed point of xorshift) is replaced: its stream is not all zeros.
        let mut zero = XorShift::new(0);
        assert!((0..4).map(|_| zero.next_u64()).all(|x| x != 0));
    }
}
