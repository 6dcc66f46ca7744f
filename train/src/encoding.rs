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
//! With [`InputFeatures::Loa`] (a network setting, `train.net.input_features`) the
//! planes continue with what every LOA evaluation knows about connection, for the side
//! to move (`own_…`) and the other side (`opponent_…`), each computed on the cells the
//! board has ([`loa::features`]):
//!
//! | plane | content | stored value | network sees |
//! |-------|---------|--------------|--------------|
//! | `own_com_distance`, `opponent_com_distance` | board distance of the cell to the side's centre of mass | round(2·d) | d / size |
//! | `own_group_size`, `opponent_group_size` | on a piece: the number of pieces of its connected group | count | count / 12 |
//! | `own_groups`, `opponent_groups` | constant: the side's number of groups | count | count / 12 |
//! | `own_excess_distance`, `opponent_excess_distance` | constant: mean distance to the centre of mass above the tightest packing ([`loa::features::excess_distance`]) | round(4·e) | e / 8 |
//! | `own_pieces`, `opponent_pieces` | constant: the side's number of pieces | count | count / 12 |
//!
//! A side is connected exactly when its group size equals its piece count on its
//! pieces; the planes give a small network in a few minutes of training what a
//! flood fill and a centre of mass compute exactly.
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
//! saved with version 1 remain valid ([`check_version`]). The feature set is part of a
//! model's network shape ([`crate::config::NetConfig::input_features`]); model files
//! written before it existed have [`InputFeatures::Board`].

use loa::features::{excess_distance, CentreOfMass};
use loa::geometry::Shape;
use loa::variant::PARACHUTE_RESERVE;
use loa::{Color, Geometry, Player, Position, Variant};
use serde::{Deserialize, Serialize};

/// Which planes a network sees beyond the board itself (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InputFeatures {
    /// The pieces, the line counts and the variant's state only.
    #[default]
    Board,
    /// The board planes followed by the connection features (centre-of-mass distances,
    /// group sizes and counts, excess distances, piece counts) of both sides.
    Loa,
}

impl InputFeatures {
    /// The setting's name in configs and model files (`board`, `loa`).
    pub fn name(self) -> &'static str {
        match self {
            InputFeatures::Board => "board",
            InputFeatures::Loa => "loa",
        }
    }
}

/// The planes [`InputFeatures::Loa`] appends: those that vary by cell, then constants.
const LOA_CELL_PLANES: [&str; 4] = [
    "own_com_distance",
    "opponent_com_distance",
    "own_group_size",
    "opponent_group_size",
];
/// See [`LOA_CELL_PLANES`].
const LOA_CONSTANT_PLANES: [&str; 6] = [
    "own_groups",
    "opponent_groups",
    "own_excess_distance",
    "opponent_excess_distance",
    "own_pieces",
    "opponent_pieces",
];

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

/// The input planes of `variant` with `features`.
pub fn input_layout(variant: Variant, features: InputFeatures) -> InputLayout {
    let mut layout = board_layout(variant);
    if features == InputFeatures::Loa {
        let inv = 1.0 / layout.size as f32;
        for name in LOA_CELL_PLANES.iter().chain(&LOA_CONSTANT_PLANES) {
            layout.planes.push(name);
            layout.scales.push(match *name {
                "own_com_distance" | "opponent_com_distance" => 0.5 * inv,
                "own_excess_distance" | "opponent_excess_distance" => 1.0 / 32.0,
                _ => 1.0 / 12.0,
            });
        }
    }
    layout
}

/// The [`InputFeatures::Board`] planes of `variant`.
fn board_layout(variant: Variant) -> InputLayout {
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
        "own_com_distance" => {
            "board distance of the cell to the centre of mass of the side to move"
        }
        "opponent_com_distance" => "board distance of the cell to the other side's centre of mass",
        "own_group_size" => "on a piece of the side to move: the pieces of its connected group",
        "opponent_group_size" => "on a piece of the other side: the pieces of its connected group",
        "own_groups" => "constant: connected groups of the side to move",
        "opponent_groups" => "constant: connected groups of the other side",
        "own_excess_distance" => {
            "constant: mean distance of the side to move's pieces to their centre of mass \
             above the tightest packing"
        }
        "opponent_excess_distance" => "constant: the same for the other side",
        "own_pieces" => "constant: pieces of the side to move",
        "opponent_pieces" => "constant: pieces of the other side",
        _ => "",
    }
}

/// Number of input planes of `variant` with `features`.
pub fn num_planes(variant: Variant, features: InputFeatures) -> usize {
    let (sets, constants) = extra_planes(variant);
    let board = 3 + variant.geometry().axes as usize + sets.len() + constants.len();
    match features {
        InputFeatures::Board => board,
        InputFeatures::Loa => board + LOA_CELL_PLANES.len() + LOA_CONSTANT_PLANES.len(),
    }
}

/// Number of `u8` values that encode one position of `variant` with `features`.
pub fn input_len(variant: Variant, features: InputFeatures) -> usize {
    let n = variant.geometry().size as usize;
    num_planes(variant, features) * n * n
}

/// The factor each stored `u8` plane of `variant` with `features` is multiplied by
/// before entering the network.
pub fn plane_scales(variant: Variant, features: InputFeatures) -> Vec<f32> {
    input_layout(variant, features).scales
}

/// Whether a model of `variant` saved with encoding `version` can be used by this build:
/// the current version, or version 1 for the variants whose planes did not change.
pub fn check_version(variant: Variant, version: u32) -> anyhow::Result<()> {
    let v1 = matches!(
        variant,
        Variant::Standard | Variant::ScrambledEggs | Variant::Six
    );
    if version == ENCODING_VERSION || (version == 1 && v1) {
        return Ok(());
    }
    Err(anyhow::anyhow!(
        "input encoding version {version} for {variant} is not readable: this build has \
         version {ENCODING_VERSION} (and reads version 1 for standard, scrambled-eggs and 6x6)"
    ))
}

/// Whether a network made for `a` reads and writes positions of `b` exactly as those of
/// `a`: the same input planes, grid and policy planes (e.g. `standard` and
/// `scrambled-eggs`).
pub fn same_layout(a: Variant, b: Variant) -> bool {
    a == b
        || (board_layout(a) == board_layout(b)
            && crate::policy::policy_plane_names(a) == crate::policy::policy_plane_names(b))
}

/// Writes the planes of `pos` with `features` into `out` (length [`input_len`] of its
/// variant), every entry overwritten. Pure and thread-safe; allocates nothing.
///
/// # Panics
/// If `out` has the wrong length (a caller bug, not a data error).
pub fn encode_into(pos: &Position, features: InputFeatures, out: &mut [u8]) {
    let variant = pos.variant();
    let g = pos.geometry();
    let n = g.size as usize;
    let cells = n * n;
    assert_eq!(
        out.len(),
        input_len(variant, features),
        "encoding buffer length"
    );
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
    if features == InputFeatures::Loa {
        let first = first_constant + constants.len();
        encode_loa_features(g, own, opp, &mut out[first * cells..]);
    }
}

/// The [`InputFeatures::Loa`] planes of the sides `own` (to move) and `opp` into `out`
/// (zeroed, starting at the first feature plane).
fn encode_loa_features(g: &Geometry, own: u64, opp: u64, out: &mut [u8]) {
    let cells = (g.size as usize) * (g.size as usize);
    let coms = [CentreOfMass::of(g, own), CentreOfMass::of(g, opp)];
    let mut group_counts = [0u8; 2];
    for (side, set) in [own, opp].into_iter().enumerate() {
        let plane = &mut out[(2 + side) * cells..(3 + side) * cells];
        for group in g.groups(set & g.cells) {
            group_counts[side] += 1;
            let size = group.count_ones() as u8;
            let mut bits = group;
            while bits != 0 {
                plane[g.grid_cell[bits.trailing_zeros() as usize] as usize] = size;
                bits &= bits - 1;
            }
        }
    }
    let round = |x: f32| x.round().clamp(0.0, 255.0) as u8;
    // 2 / count per side (no division per cell on the inference thread's hot path).
    let twice_over_count = coms.map(|com| 2.0 / com.count.max(1) as f32);
    let constants = [
        group_counts[0],
        group_counts[1],
        round(4.0 * excess_distance(g, own)),
        round(4.0 * excess_distance(g, opp)),
        (own & g.cells).count_ones() as u8,
        (opp & g.cells).count_ones() as u8,
    ];
    let mut bits = g.cells;
    while bits != 0 {
        let sq = bits.trailing_zeros() as u8;
        bits &= bits - 1;
        let cell = g.grid_cell[sq as usize] as usize;
        for (side, com) in coms.iter().enumerate() {
            if com.count > 0 {
                let d = com.distance_n(g, sq) as f32 * twice_over_count[side];
                out[side * cells + cell] = round(d);
            }
        }
        for (k, &value) in constants.iter().enumerate() {
            out[(LOA_CELL_PLANES.len() + k) * cells + cell] = value;
        }
    }
}

/// The planes of `pos` with `features` as a new vector.
pub fn encode(pos: &Position, features: InputFeatures) -> Vec<u8> {
    let mut out = vec![0; input_len(pos.variant(), features)];
    encode_into(pos, features, &mut out);
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

    /// Every position of `games` pseudo-random games (at most `plies` plies each).
    fn game_positions(variant: Variant, games: usize, plies: usize, seed: u64) -> Vec<Position> {
        loa::testing::random_game_positions(variant, &Rules::classic(), games, plies, seed)
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
            let layout = input_layout(variant, InputFeatures::Board);
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
                assert_eq!(
                    encode(&pos, InputFeatures::Board),
                    encode_v1(&pos),
                    "{variant}"
                );
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
            let err = check_version(variant, 1).unwrap_err().to_string();
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
            let layout = input_layout(variant, InputFeatures::Board);
            assert_eq!(layout.num_planes(), planes, "{variant}");
            assert_eq!(
                num_planes(variant, InputFeatures::Board),
                planes,
                "{variant}"
            );
            assert_eq!(layout.size, size, "{variant}");
            assert_eq!(layout.scales.len(), planes);
            assert_eq!(
                input_len(variant, InputFeatures::Board),
                planes * size * size
            );
            assert_eq!(layout.input_len(), input_len(variant, InputFeatures::Board));
            for name in &layout.planes {
                assert!(!plane_meaning(name).is_empty(), "{name}");
            }
            let pos = Position::start(variant, &Rules::classic());
            assert_eq!(
                encode(&pos, InputFeatures::Board).len(),
                input_len(variant, InputFeatures::Board)
            );
        }
        let hex = input_layout(Variant::Alveole, InputFeatures::Board);
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
        assert_eq!(
            input_layout(Variant::Parachute, InputFeatures::Board).scales[7],
            1.0 / 6.0
        );
    }

    #[test]
    fn start_position_planes() {
        let rules = Rules::classic();
        let pos = Position::start(Variant::Standard, &rules);
        let enc = encode(&pos, InputFeatures::Board);
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
        let enc = encode(&after, InputFeatures::Board);
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
            let enc = encode(pos, InputFeatures::Board);
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
        let start = encode(
            &Position::start(Variant::Alveole, &Rules::classic()),
            InputFeatures::Board,
        );
        assert_eq!(sum(plane(&start, 9, 0)), 9);
        assert_eq!(sum(plane(&start, 9, 1)), 9);
    }

    #[test]
    fn variant_planes_hold_the_variant_state() {
        let n = 64;
        // Parachute: reserves and the pending drop, as constants on every cell.
        let mut saw_pending = false;
        for pos in game_positions(Variant::Parachute, 2, 30, 9) {
            let enc = encode(&pos, InputFeatures::Board);
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
            let enc = encode(&pos, InputFeatures::Board);
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
            let enc = encode(&pos, InputFeatures::Board);
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

    /// The `loa` feature planes: the board planes unchanged in front, then the values of
    /// the connection features, checked against the definitions on hand-made and
    /// pseudo-random positions of every variant.
    #[test]
    fn loa_feature_planes_hold_the_connection_features() {
        for variant in Variant::ALL {
            let g = variant.geometry();
            let n = g.size as usize;
            let cells = n * n;
            let board = num_planes(variant, InputFeatures::Board);
            let layout = input_layout(variant, InputFeatures::Loa);
            assert_eq!(layout.num_planes(), board + 10);
            assert_eq!(
                &layout.planes[..board],
                &input_layout(variant, InputFeatures::Board).planes[..]
            );
            for name in &layout.planes {
                assert!(!plane_meaning(name).is_empty(), "{name}");
            }
            for pos in game_positions(variant, 2, 60, 41).into_iter().step_by(5) {
                let plain = encode(&pos, InputFeatures::Board);
                let enc = encode(&pos, InputFeatures::Loa);
                assert_eq!(&enc[..board * cells], &plain[..], "{variant}");
                let me = pos.to_move();
                for (side, set) in [pos.pieces(me), pos.pieces(me.opponent())]
                    .into_iter()
                    .enumerate()
                {
                    let set = set & g.cells;
                    let com = CentreOfMass::of(g, set);
                    let groups: Vec<u64> = g.groups(set).collect();
                    let constant = |k: usize| {
                        enc[(board + 4 + k) * cells
                            + g.grid_cell[g.cells.trailing_zeros() as usize] as usize]
                    };
                    assert_eq!(constant(side) as usize, groups.len());
                    assert_eq!(constant(4 + side) as u32, set.count_ones());
                    assert_eq!(
                        constant(2 + side),
                        (4.0 * excess_distance(g, set)).round() as u8
                    );
                    for cell in (0..cells).filter(|&c| g.grid_square[c] == NO_SQUARE) {
                        for p in board..board + 10 {
                            assert_eq!(enc[p * cells + cell], 0, "{variant} plane {p}");
                        }
                    }
                    for sq in (0..64u8).filter(|&sq| g.contains(sq)) {
                        let cell = g.grid_cell[sq as usize] as usize;
                        let d = enc[(board + side) * cells + cell] as f32 / 2.0;
                        if set != 0 {
                            assert!((d - com.distance(g, sq)).abs() <= 0.25 + 1e-6, "{variant}");
                        }
                        let size = enc[(board + 2 + side) * cells + cell] as u32;
                        let want = groups
                            .iter()
                            .find(|&&gr| gr >> sq & 1 == 1)
                            .map_or(0, |gr| gr.count_ones());
                        assert_eq!(size, want, "{variant} side {side} square {sq}");
                    }
                }
            }
        }
        // The start position: Black (to move) has two groups of six, White two of six.
        let pos = Position::start(Variant::Standard, &Rules::classic());
        let enc = encode(&pos, InputFeatures::Loa);
        let p = |k: usize, cell: usize| enc[(7 + k) * 64 + cell];
        assert_eq!((p(4, 0), p(5, 0), p(8, 0), p(9, 0)), (2, 2, 12, 12));
        assert_eq!(p(2, 1), 6); // b1: a group of six
        assert_eq!(p(2, 0), 0); // a1: empty
        assert_eq!(p(3, 8), 6); // a2: white group of six
                                // Black's centre of mass is (3.5, 3.5): b1 is at distance 3.5, d4 at 0.5.
        assert_eq!(p(0, 1), 7);
        assert_eq!(p(0, 27), 1);
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
        for (variant, features) in Variant::ALL
            .into_iter()
            .flat_map(|v| [(v, InputFeatures::Board), (v, InputFeatures::Loa)])
        {
            let g = variant.geometry();
            let n = g.size as usize;
            let cells = n * n;
            let axes = g.axes as usize;
            let planes = num_planes(variant, features);
            let mut kinds = [0usize; 3]; // normal moves, drops, removals
            for pos in game_positions(variant, 2, 60, 17).into_iter().step_by(7) {
                let enc = encode(&pos, features);
                let moves = pos.legal_moves(&rules);
                for s in 0..g.num_symmetries as usize {
                    let t = pos.transformed(s);
                    let enc_t = encode(&t, features);
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
                                "{variant} {features:?} symmetry {s} plane {p}"
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
