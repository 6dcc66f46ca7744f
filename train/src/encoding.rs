//! Network input encoding: a position as planes over its variant's `size × size` grid
//! ([`loa::Geometry::size`]), from the side to move's point of view.
//!
//! Every variant has the base planes, in this order:
//!
//! | plane | content | stored value | network sees |
//! |-------|---------|--------------|--------------|
//! | `own` | pieces of the side (team) to move | 0/1 | 0/1 |
//! | `opponent` | pieces of the other side (team) | 0/1 | 0/1 |
//! | `line_count_*` (one per axis) | pieces (both sides) on that axis's line through the cell | count | count / size |
//! | `ones` | 1 on board cells, 0 on grid cells off the board (the hexagon in its 9×9 grid) | 0/1 | 0/1 |
//!
//! Square boards have 4 axes (`file`, `diagonal`, `rank`, `anti_diagonal`), the
//! hexagonal board 3 (`e_w`, `ne_sw`, `nw_se`). Variants append planes:
//!
//! * `gemma`: `vanished` (0/1 per cell);
//! * `parachute`: `own_reserve`, `opponent_reserve` (constant planes holding the pieces
//!   each side can still drop, scaled by 1/6) and `drop_pending` (constant 0/1: the side
//!   to move made the move of its compound turn and must now drop);
//! * `ambiloa`: the pieces of `player_to_move`, `partner`, `next_opponent` (who moves
//!   next) and `last_opponent` (who moved last), then four constant one-hot planes
//!   `turn_south`, `turn_west`, `turn_north`, `turn_east` for the player to move.
//!
//! Every plane is 0 on grid cells off the board (constant planes too). The line counts
//! are the move distances along each axis, the quantity moves depend on. Planes are stored
//! as `u8` (small transfers to the device) and scaled on the device by
//! [`InputLayout::scales`]. Board cell `(col, row)` ([`loa::Geometry::coords`]) is element
//! `[plane][row][col]`, so the flattened cell index is [`loa::Geometry::grid_cell`] and the
//! policy planes line up with [`crate::policy::PolicyIndex::policy_index`].
//!
//! Versions: version 2 introduced the per-variant layout. The planes of `standard`,
//! `scrambled-eggs` and `6x6` are exactly those of version 1, so models of those variants
//! saved with version 1 remain valid ([`check_version`]).

use loa::geometry::Shape;
use loa::variant::PARACHUTE_RESERVE;
use loa::{Color, Player, Position, Variant};

/// Version of this encoding; stored in every model and checkpoint.
pub const ENCODING_VERSION: u32 = 2;

/// Names of the line-count planes on square boards, by axis.
const SQUARE_LINE_PLANES: [&str; 4] = [
    "line_count_file",
    "line_count_diagonal",
    "line_count_rank",
    "line_count_anti_diagonal",
];

/// Names of the line-count planes on the hexagonal board, by axis.
const HEX_LINE_PLANES: [&str; 3] = ["line_count_e_w", "line_count_ne_sw", "line_count_nw_se"];

/// The input planes of one variant, in plane order.
#[derive(Clone, Debug, PartialEq)]
pub struct InputLayout {
    /// Plane names (see the module docs and [`plane_meaning`]).
    pub planes: Vec<&'static str>,
    /// The factor each stored `u8` plane is multiplied by before entering the network.
    pub scales: Vec<f32>,
    /// Side of the grid: every plane is `size × size`.
    pub size: usize,
}

impl InputLayout {
    /// Number of planes.
    pub fn num_planes(&self) -> usize {
        self.planes.len()
    }

    /// Number of `u8` values that encode one position.
    pub fn input_len(&self) -> usize {
        self.planes.len() * self.size * self.size
    }
}

/// The names of the variant's planes after the base planes: those holding one cell set
/// each, then the constant planes.
const fn extra_planes(variant: Variant) -> (&'static [&'static str], &'static [&'static str]) {
    match variant {
        Variant::Gemma => (&["vanished"], &[]),
        Variant::Parachute => (&[], &["own_reserve", "opponent_reserve", "drop_pending"]),
        Variant::Ambiloa => (
            &[
                "player_to_move",
                "partner",
                "next_opponent",
                "last_opponent",
            ],
            &["turn_south", "turn_west", "turn_north", "turn_east"],
        ),
        Variant::Standard | Variant::ScrambledEggs | Variant::Six | Variant::Alveole => (&[], &[]),
    }
}

/// The input planes of `variant`.
pub fn input_layout(variant: Variant) -> InputLayout {
    let g = variant.geometry();
    let size = g.size as usize;
    let line_names: &[&'static str] = match g.shape {
        Shape::Square => &SQUARE_LINE_PLANES,
        Shape::Hex => &HEX_LINE_PLANES,
    };
    let inv = 1.0 / size as f32;
    let mut planes = vec!["own", "opponent"];
    let mut scales = vec![1.0, 1.0];
    for &name in &line_names[..g.axes as usize] {
        planes.push(name);
        scales.push(inv);
    }
    planes.push("ones");
    scales.push(1.0);
    let (sets, constants) = extra_planes(variant);
    for &name in sets.iter().chain(constants) {
        planes.push(name);
        scales.push(match name {
            "own_reserve" | "opponent_reserve" => 1.0 / PARACHUTE_RESERVE as f32,
            _ => 1.0,
        });
    }
    InputLayout {
        planes,
        scales,
        size,
    }
}

/// What plane `name` holds (for `model.json`); empty for names no variant uses.
pub fn plane_meaning(name: &str) -> &'static str {
    match name {
        "own" => "pieces of the side to move (its team in ambiloa)",
        "opponent" => "pieces of the other side (team)",
        "line_count_file" => "pieces of both sides on the file (column) through the cell",
        "line_count_diagonal" => "pieces on the diagonal (a1-h8 direction) through the cell",
        "line_count_rank" => "pieces on the rank (row) through the cell",
        "line_count_anti_diagonal" => {
            "pieces on the anti-diagonal (a8-h1 direction) through the cell"
        }
        "line_count_e_w" => "pieces on the E-W line (grid row) through the cell",
        "line_count_ne_sw" => "pieces on the NE-SW line (grid step (+1,+1)) through the cell",
        "line_count_nw_se" => "pieces on the NW-SE line (grid column) through the cell",
        "ones" => "validity: 1 on board cells, 0 on grid cells off the board",
        "vanished" => "vanished cells (crossable, never landable)",
        "own_reserve" => "constant: opponent's pieces the side to move can still drop",
        "opponent_reserve" => "constant: pieces the other side can still drop",
        "drop_pending" => {
            "constant 1 when the side to move made the move of its compound turn and must \
             now drop"
        }
        "player_to_move" => "pieces of the player to move",
        "partner" => "pieces of the partner of the player to move",
        "next_opponent" => "pieces of the opponent who moves next",
        "last_opponent" => "pieces of the opponent who moved last",
        "turn_south" => "constant 1 when South is to move",
        "turn_west" => "constant 1 when West is to move",
        "turn_north" => "constant 1 when North is to move",
        "turn_east" => "constant 1 when East is to move",
        _ => "",
    }
}

/// Number of input planes of `variant`.
pub fn num_planes(variant: Variant) -> usize {
    let (sets, constants) = extra_planes(variant);
    3 + variant.geometry().axes as usize + sets.len() + constants.len()
}

/// Number of `u8` values that encode one position of `variant`.
pub fn input_len(variant: Variant) -> usize {
    let n = variant.geometry().size as usize;
    num_planes(variant) * n * n
}

/// The factor each stored `u8` plane of `variant` is multiplied by before entering the
/// network.
pub fn plane_scales(variant: Variant) -> Vec<f32> {
    input_layout(variant).scales
}

/// Whether a model of `variant` saved with encoding `version` can be used by this build:
/// the current version, or version 1 for the variants whose planes did not change.
pub fn check_version(variant: Variant, version: u32) -> Result<(), String> {
    let v1 = matches!(
        variant,
        Variant::Standard | Variant::ScrambledEggs | Variant::Six
    );
    if version == ENCODING_VERSION || (version == 1 && v1) {
        return Ok(());
    }
    Err(format!(
        "input encoding version {version} for {variant} is not readable: this build has \
         version {ENCODING_VERSION} (and reads version 1 for standard, scrambled-eggs and 6x6)"
    ))
}

/// Whether a network made for `a` reads and writes positions of `b` exactly as those of
/// `a`: the same input planes, grid and policy planes (e.g. `standard` and
/// `scrambled-eggs`).
pub fn same_layout(a: Variant, b: Variant) -> bool {
    a == b
        || (input_layout(a) == input_layout(b)
            && crate::policy::policy_plane_names(a) == crate::policy::policy_plane_names(b))
}

/// Writes the planes of `pos` into `out` (length [`input_len`] of its variant), every
/// entry overwritten. Pure and thread-safe; allocates nothing.
///
/// # Panics
/// If `out` has the wrong length (a caller bug, not a data error).
pub fn encode_into(pos: &Position, out: &mut [u8]) {
    let variant = pos.variant();
    let g = pos.geometry();
    let n = g.size as usize;
    let cells = n * n;
    assert_eq!(out.len(), input_len(variant), "encoding buffer length");
    out.fill(0);
    let axes = g.axes as usize;
    let me: Color = pos.to_move();
    let own = pos.pieces(me);
    let opp = pos.pieces(me.opponent());
    let occupied = own | opp;
    let ones = 2 + axes;
    // Cell-set planes, then constant planes, from plane `ones + 1` on.
    let mut sets = [0u64; 4];
    let mut constants = [0u8; 4];
    let (set_names, constant_names) = extra_planes(variant);
    match variant {
        Variant::Gemma => sets[0] = pos.vanished(),
        Variant::Parachute => {
            constants[0] = pos.reserve(me);
            constants[1] = pos.reserve(me.opponent());
            constants[2] = pos.drop_pending() as u8;
        }
        Variant::Ambiloa => {
            if let Some(player) = pos.player() {
                let i = player as usize;
                for (k, set) in sets.iter_mut().enumerate() {
                    // player, partner (i + 2), next (i + 1), last (i + 3).
                    let other = Player::ALL[(i + [0, 2, 1, 3][k]) % 4];
                    *set = pos.player_pieces(other);
                }
                constants[i] = 1;
            }
        }
        Variant::Standard | Variant::ScrambledEggs | Variant::Six | Variant::Alveole => {}
    }
    let sets = &sets[..set_names.len()];
    let constants = &constants[..constant_names.len()];
    let first_constant = ones + 1 + sets.len();
    let mut bits = g.cells;
    while bits != 0 {
        let sq = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        let cell = g.grid_cell[sq] as usize;
        let mask = 1u64 << sq;
        out[cell] = (own & mask != 0) as u8;
        out[cells + cell] = (opp & mask != 0) as u8;
        for axis in 0..axes {
            out[(2 + axis) * cells + cell] = (g.line[sq][axis] & occupied).count_ones() as u8;
        }
        out[ones * cells + cell] = 1;
        for (k, set) in sets.iter().enumerate() {
            out[(ones + 1 + k) * cells + cell] = (set & mask != 0) as u8;
        }
        for (k, &value) in constants.iter().enumerate() {
            out[(first_constant + k) * cells + cell] = value;
        }
    }
}

/// The planes of `pos` as a new vector.
pub fn encode(pos: &Position) -> Vec<u8> {
    let mut out = vec![0; input_len(pos.variant())];
    encode_into(pos, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{policy_planes, policy_size, transform_policy_index, PolicyIndex};
    use loa::geometry::NO_SQUARE;
    use loa::Rules;

    fn plane(enc: &[u8], n: usize, p: usize) -> &[u8] {
        &enc[p * n * n..(p + 1) * n * n]
    }

    fn sum(p: &[u8]) -> u32 {
        p.iter().map(|&x| x as u32).sum()
    }

    /// xorshift, for reproducible pseudo-random games.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// Every position of `games` pseudo-random games (at most `plies` plies each).
    fn game_positions(variant: Variant, games: usize, plies: usize, seed: u64) -> Vec<Position> {
        let rules = Rules::classic();
        let mut rng = Rng(seed);
        let mut out = vec![];
        for _ in 0..games {
            let mut pos = Position::start(variant, &rules);
            for _ in 0..plies {
                if pos.outcome(&rules).is_some() {
                    break;
                }
                out.push(pos);
                let moves = pos.legal_moves(&rules);
                pos.play(moves[rng.below(moves.len())]);
            }
        }
        out
    }

    /// The version-1 encoder, verbatim: the reference for the variants whose planes must
    /// not change.
    fn encode_v1(pos: &Position) -> Vec<u8> {
        let g = pos.geometry();
        let n = g.size as usize;
        let cells = n * n;
        let mut out = vec![0u8; 7 * cells];
        let me: Color = pos.to_move();
        let own = pos.pieces(me);
        let opp = pos.pieces(me.opponent());
        let occupied = own | opp;
        let mut bits = g.cells;
        while bits != 0 {
            let sq = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let (col, row) = g.coords(sq as u8);
            let cell = row as usize * n + col as usize;
            let mask = 1u64 << sq;
            out[cell] = (own & mask != 0) as u8;
            out[cells + cell] = (opp & mask != 0) as u8;
            for axis in 0..4 {
                out[(2 + axis) * cells + cell] = (g.line[sq][axis] & occupied).count_ones() as u8;
            }
            out[6 * cells + cell] = 1;
        }
        out
    }

    #[test]
    fn version_one_variants_keep_the_version_one_planes() {
        for variant in [Variant::Standard, Variant::ScrambledEggs, Variant::Six] {
            let layout = input_layout(variant);
            let n = variant.geometry().size as usize;
            assert_eq!(
                layout.planes,
                vec![
                    "own",
                    "opponent",
                    "line_count_file",
                    "line_count_diagonal",
                    "line_count_rank",
                    "line_count_anti_diagonal",
                    "ones"
                ]
            );
            let inv = 1.0 / n as f32;
            assert_eq!(layout.scales, vec![1.0, 1.0, inv, inv, inv, inv, 1.0]);
            let positions = game_positions(variant, 4, 80, 3);
            assert!(positions.len() > 100);
            for pos in positions {
                assert_eq!(encode(&pos), encode_v1(&pos), "{variant}");
            }
            assert!(check_version(variant, 1).is_ok());
            assert!(check_version(variant, 2).is_ok());
        }
        for variant in [
            Variant::Parachute,
            Variant::Gemma,
            Variant::Ambiloa,
            Variant::Alveole,
        ] {
            let err = check_version(variant, 1).unwrap_err();
            assert!(
                err.contains("version 1") && err.contains(variant.name()),
                "{err}"
            );
            assert!(check_version(variant, 2).is_ok());
        }
        assert!(check_version(Variant::Standard, 3).is_err());
        assert!(same_layout(Variant::Standard, Variant::ScrambledEggs));
        for (a, b) in [
            (Variant::Standard, Variant::Six),
            (Variant::Standard, Variant::Gemma),
            (Variant::Standard, Variant::Parachute),
            (Variant::Standard, Variant::Ambiloa),
            (Variant::Gemma, Variant::Parachute),
        ] {
            assert!(!same_layout(a, b), "{a} {b}");
        }
    }

    #[test]
    fn layouts_of_every_variant() {
        let expected = [
            (Variant::Standard, 7, 8),
            (Variant::ScrambledEggs, 7, 8),
            (Variant::Six, 7, 6),
            (Variant::Parachute, 10, 8),
            (Variant::Gemma, 8, 8),
            (Variant::Ambiloa, 15, 8),
            (Variant::Alveole, 6, 9),
        ];
        for (variant, planes, size) in expected {
            let layout = input_layout(variant);
            assert_eq!(layout.num_planes(), planes, "{variant}");
            assert_eq!(num_planes(variant), planes, "{variant}");
            assert_eq!(layout.size, size, "{variant}");
            assert_eq!(layout.scales.len(), planes);
            assert_eq!(input_len(variant), planes * size * size);
            assert_eq!(layout.input_len(), input_len(variant));
            for name in &layout.planes {
                assert!(!plane_meaning(name).is_empty(), "{name}");
            }
            let pos = Position::start(variant, &Rules::classic());
            assert_eq!(encode(&pos).len(), input_len(variant));
        }
        let hex = input_layout(Variant::Alveole);
        assert_eq!(
            hex.planes,
            vec![
                "own",
                "opponent",
                "line_count_e_w",
                "line_count_ne_sw",
                "line_count_nw_se",
                "ones"
            ]
        );
        assert_eq!(hex.scales[2], 1.0 / 9.0);
        assert_eq!(input_layout(Variant::Parachute).scales[7], 1.0 / 6.0);
    }

    #[test]
    fn start_position_planes() {
        let rules = Rules::classic();
        let pos = Position::start(Variant::Standard, &rules);
        let enc = encode(&pos);
        assert_eq!(enc.len(), 7 * 64);
        // Black (to move) has b1..g1 and b8..g8.
        let own = plane(&enc, 8, 0);
        assert_eq!(sum(own), 12);
        assert_eq!(own[1], 1); // b1
        assert_eq!(own[0], 0); // a1 empty
        assert_eq!(own[7 * 8 + 6], 1); // g8
        let opp = plane(&enc, 8, 1);
        assert_eq!(opp[8], 1); // a2 is white
                               // File count at b1: b1 and b8 -> 2. Rank count at b1: b1..g1 -> 6.
        assert_eq!(plane(&enc, 8, 2)[1], 2);
        assert_eq!(plane(&enc, 8, 4)[1], 6);
        // Rank 2 (a2, h2): 2 pieces; a1 diagonal a1..h8: empty.
        assert_eq!(plane(&enc, 8, 4)[8 + 3], 2);
        assert_eq!(plane(&enc, 8, 3)[0], 0);
        assert!(plane(&enc, 8, 6).iter().all(|&x| x == 1));
    }

    #[test]
    fn point_of_view_swaps_with_side_to_move() {
        let rules = Rules::classic();
        let pos = Position::start(Variant::Standard, &rules);
        let mv = pos.legal_moves(&rules)[0];
        let after = pos.after(mv);
        let enc = encode(&after);
        // Now white is to move: own plane = white pieces.
        let own = plane(&enc, 8, 0);
        assert_eq!(own[8], 1);
        assert_eq!(own[1], 0);
    }

    /// The hexagon in its 9×9 grid: 61 board cells; the 20 grid cells off the board are
    /// zero in every plane, in every position.
    #[test]
    fn hex_board_in_its_grid() {
        let g = Variant::Alveole.geometry();
        let off: Vec<usize> = (0..81).filter(|&c| g.grid_square[c] == NO_SQUARE).collect();
        assert_eq!(off.len(), 20);
        let positions = game_positions(Variant::Alveole, 3, 60, 5);
        for pos in &positions {
            let enc = encode(pos);
            for p in 0..6 {
                for &c in &off {
                    assert_eq!(enc[p * 81 + c], 0, "plane {p} cell {c}");
                }
            }
            assert_eq!(sum(plane(&enc, 9, 5)), 61);
            let own = pos.pieces(pos.to_move());
            assert_eq!(sum(plane(&enc, 9, 0)), own.count_ones());
            // Line counts: each E-W row holds the sum of its cells' pieces.
            for sq in 0..64u8 {
                if !g.contains(sq) {
                    continue;
                }
                let cell = g.grid_cell[sq as usize] as usize;
                let (col, row) = g.coords(sq);
                assert_eq!(cell, row as usize * 9 + col as usize);
                let row_pieces: u32 = (0..9)
                    .map(|c| (enc[row as usize * 9 + c] + enc[81 + row as usize * 9 + c]) as u32)
                    .sum();
                assert_eq!(enc[2 * 81 + cell] as u32, row_pieces);
            }
        }
        let start = encode(&Position::start(Variant::Alveole, &Rules::classic()));
        assert_eq!(sum(plane(&start, 9, 0)), 9);
        assert_eq!(sum(plane(&start, 9, 1)), 9);
    }

    #[test]
    fn variant_planes_hold_the_variant_state() {
        let n = 64;
        // Parachute: reserves and the pending drop, as constants on every cell.
        let mut saw_pending = false;
        for pos in game_positions(Variant::Parachute, 2, 30, 9) {
            let enc = encode(&pos);
            let me = pos.to_move();
            assert!(plane(&enc, 8, 7).iter().all(|&x| x == pos.reserve(me)));
            assert!(plane(&enc, 8, 8)
                .iter()
                .all(|&x| x == pos.reserve(me.opponent())));
            assert!(plane(&enc, 8, 9)
                .iter()
                .all(|&x| x == pos.drop_pending() as u8));
            saw_pending |= pos.drop_pending();
        }
        assert!(saw_pending);
        // Gemma: vanished cells.
        let mut saw_vanished = false;
        for pos in game_positions(Variant::Gemma, 2, 40, 9) {
            let enc = encode(&pos);
            let v = plane(&enc, 8, 7);
            for (sq, &x) in v.iter().enumerate().take(n) {
                assert_eq!(x as u64, pos.vanished() >> sq & 1);
            }
            saw_vanished |= pos.vanished() != 0;
        }
        assert!(saw_vanished);
        // Ambiloa: the four players relative to the mover, and whose turn it is.
        let mut turns = [0; 4];
        for pos in game_positions(Variant::Ambiloa, 2, 40, 9) {
            let enc = encode(&pos);
            let p = pos.player().unwrap() as usize;
            turns[p] += 1;
            let relative = [p, (p + 2) % 4, (p + 1) % 4, (p + 3) % 4];
            for (k, &who) in relative.iter().enumerate() {
                let set = pos.player_pieces(Player::ALL[who]);
                for (sq, &x) in plane(&enc, 8, 7 + k).iter().enumerate() {
                    assert_eq!(x as u64, set >> sq & 1, "plane {k}");
                }
            }
            for t in 0..4 {
                let want = (t == p) as u8;
                assert!(plane(&enc, 8, 11 + t).iter().all(|&x| x == want));
            }
            // own = the team of the player to move = player + partner.
            let own =
                pos.player_pieces(Player::ALL[p]) | pos.player_pieces(Player::ALL[(p + 2) % 4]);
            assert_eq!(own, pos.pieces(pos.to_move()));
            for (sq, &x) in plane(&enc, 8, 0).iter().enumerate() {
                assert_eq!(x as u64, own >> sq & 1);
            }
        }
        assert!(turns.iter().all(|&t| t > 0), "{turns:?}");
    }

    /// The axis of line-count plane `axis` after symmetry `s`.
    fn axis_image(variant: Variant, s: usize, axis: usize) -> usize {
        let g = variant.geometry();
        g.symmetry_direction[s][axis] as usize % g.axes as usize
    }

    /// For every variant and every board symmetry: the planes of the transformed position
    /// are the planes of the position with cells (and line-count axes) permuted, and the
    /// policy index of every legal move (drops and removals included) follows the move.
    #[test]
    fn symmetries_permute_planes_and_policy_in_every_variant() {
        let rules = Rules::classic();
        for variant in Variant::ALL {
            let g = variant.geometry();
            let n = g.size as usize;
            let cells = n * n;
            let axes = g.axes as usize;
            let planes = num_planes(variant);
            let mut kinds = [0usize; 3]; // normal moves, drops, removals
            for pos in game_positions(variant, 2, 60, 17).into_iter().step_by(7) {
                let enc = encode(&pos);
                let moves = pos.legal_moves(&rules);
                for s in 0..g.num_symmetries as usize {
                    let t = pos.transformed(s);
                    let enc_t = encode(&t);
                    for sq in 0..64u8 {
                        if !g.contains(sq) {
                            continue;
                        }
                        let c = g.grid_cell[sq as usize] as usize;
                        let c2 = g.grid_cell[g.symmetry_square[s][sq as usize] as usize] as usize;
                        for p in 0..planes {
                            let p2 = if (2..2 + axes).contains(&p) {
                                2 + axis_image(variant, s, p - 2)
                            } else {
                                p
                            };
                            assert_eq!(
                                enc[p * cells + c],
                                enc_t[p2 * cells + c2],
                                "{variant} symmetry {s} plane {p}"
                            );
                        }
                    }
                    for &mv in moves.iter().filter(|m| !m.is_pass()) {
                        let idx = pos.policy_index(mv).unwrap();
                        let mv_t = pos.transform_move(mv, s);
                        let idx_t = t.policy_index(mv_t).unwrap();
                        assert_eq!(transform_policy_index(variant, idx, s), idx_t);
                        assert_eq!(t.move_from_policy(idx_t), Some(mv_t));
                        assert!(idx < policy_size(variant));
                        let extra = idx / cells >= g.directions() as usize;
                        assert_eq!(extra, mv.is_drop() || mv.is_remove(), "{mv}");
                        if s == 0 {
                            kinds[mv.is_drop() as usize + 2 * mv.is_remove() as usize] += 1;
                        }
                    }
                }
            }
            assert!(kinds[0] > 0, "{variant}: no normal moves");
            assert_eq!(
                kinds[1] > 0,
                variant.has_drops(),
                "{variant}: drops {kinds:?}"
            );
            if !variant.has_vanishing() {
                assert_eq!(kinds[2], 0);
            }
        }
    }

    /// Removals (`gemma`) get an index on the `remove` plane at their cell; found along
    /// pseudo-random games.
    #[test]
    fn removals_have_policy_indices() {
        let g = Variant::Gemma.geometry();
        let mut found = 0;
        for pos in game_positions(Variant::Gemma, 40, 150, 23) {
            let mut list = loa::MoveList::new();
            pos.generate_moves(&mut list);
            for &mv in list.iter().filter(|m| m.is_remove()) {
                let idx = pos.policy_index(mv).unwrap();
                assert_eq!(idx / 64, g.directions() as usize);
                assert_eq!(idx % 64, g.grid_cell[mv.square() as usize] as usize);
                assert_eq!(pos.move_from_policy(idx), Some(mv));
                for s in 0..8 {
                    let t = pos.transformed(s);
                    let mv_t = pos.transform_move(mv, s);
                    assert!(mv_t.is_remove());
                    assert_eq!(
                        transform_policy_index(Variant::Gemma, idx, s),
                        t.policy_index(mv_t).unwrap()
                    );
                }
                found += 1;
            }
        }
        assert!(found > 0, "no removal in 40 random gemma games");
    }

    /// Off-board cells of the hexagon's grid are never legal: no legal move has an index
    /// there, and no index there decodes to a move.
    #[test]
    fn off_board_hex_cells_are_never_in_the_policy() {
        let g = Variant::Alveole.geometry();
        let rules = Rules::classic();
        let size = policy_size(Variant::Alveole);
        assert_eq!(size, policy_planes(Variant::Alveole) * 81);
        assert_eq!(policy_planes(Variant::Alveole), 6);
        for pos in game_positions(Variant::Alveole, 2, 60, 31) {
            for &mv in pos.legal_moves(&rules).iter().filter(|m| !m.is_pass()) {
                let idx = pos.policy_index(mv).unwrap();
                assert_ne!(g.grid_square[idx % 81], NO_SQUARE, "{mv}");
            }
            for idx in 0..size {
                if g.grid_square[idx % 81] == NO_SQUARE {
                    assert_eq!(pos.move_from_policy(idx), None);
                }
            }
        }
    }
}
