//! An independent, deliberately plain move generator (arrays and loops, written from the
//! rule text, sharing no code with the bitboard generator) checked against the engine on
//! random positions of every variant, including positions with few pieces.

use loa::{Color, Position, Rules, Variant};
use std::collections::BTreeSet;

fn reference_moves(p: &Position) -> BTreeSet<(u8, u8, bool)> {
    let n = p.geometry().size as i32;
    let mut board = vec![vec![None; n as usize]; n as usize]; // [file][rank]
    for f in 0..n {
        for r in 0..n {
            board[f as usize][r as usize] = p.piece_at((r * 8 + f) as u8);
        }
    }
    let me = p.to_move();
    let inside = |f: i32, r: i32| f >= 0 && r >= 0 && f < n && r < n;
    let mut out = BTreeSet::new();
    for f in 0..n {
        for r in 0..n {
            if board[f as usize][r as usize] != Some(me) {
                continue;
            }
            for (df, dr) in [
                (0, 1),
                (1, 1),
                (1, 0),
                (1, -1),
                (0, -1),
                (-1, -1),
                (-1, 0),
                (-1, 1),
            ] {
                // Count pieces on the whole line through (f, r) in this direction's axis.
                let mut count = 0;
                for k in -n..=n {
                    let (x, y) = (f + df * k, r + dr * k);
                    if inside(x, y) && board[x as usize][y as usize].is_some() {
                        count += 1;
                    }
                }
                let (tf, tr) = (f + df * count, r + dr * count);
                if !inside(tf, tr) || board[tf as usize][tr as usize] == Some(me) {
                    continue;
                }
                let blocked = (1..count).any(|k| {
                    let c = board[(f + df * k) as usize][(r + dr * k) as usize];
                    c == Some(me.opponent())
                });
                if !blocked {
                    let capture = board[tf as usize][tr as usize] == Some(me.opponent());
                    out.insert(((r * 8 + f) as u8, (tr * 8 + tf) as u8, capture));
                }
            }
        }
    }
    out
}

#[test]
fn bitboard_generator_matches_reference() {
    let mut state = 0xDEAD_BEEF_u64;
    let mut rng = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let rules = Rules::classic();
    let mut checked = 0;
    // Plain square-board variants; the special variants (and the hexagonal board) are
    // checked against their own reference in `reference_variants.rs`.
    for v in [Variant::Standard, Variant::ScrambledEggs, Variant::Six] {
        let cells = v.geometry().cells;
        for _ in 0..3000 {
            // Random sparse or dense placements.
            let density = rng() % 3;
            let mut a = rng() & cells;
            let mut b = rng() & cells & !a;
            for _ in 0..density {
                a &= rng();
                b &= rng();
            }
            let side = if rng() % 2 == 0 {
                Color::Black
            } else {
                Color::White
            };
            let Ok(p) = Position::new(v, a, b, side) else {
                continue;
            };
            let engine: BTreeSet<_> = p
                .legal_moves(&rules)
                .iter()
                .filter(|m| !m.is_pass())
                .map(|m| (m.from(), m.to(), m.is_capture()))
                .collect();
            assert_eq!(engine, reference_moves(&p), "{v}: {}", p.to_text());
            assert_eq!(p.count_moves() as usize, engine.len(), "{}", p.to_text());
            checked += 1;
        }
    }
    assert!(checked > 4000);
}
