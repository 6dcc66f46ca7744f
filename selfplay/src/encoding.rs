//! Network input encoding (the one encoder: the trainer (`train`), search and the Python
//! wheel all use this module): a position as planes over its variant's `size × size` grid
//! ([`loa::Geometry::size`]), from the side to move's point of view.
//!
//! Every plane is one entry of [`PLANES`]: its name, what it holds, its stored value, the
//! factor the network sees it scaled by, the variants and plane sets ([`PlaneSet`])
//! that have it, and how it is computed. A variant's layout with a plane set is the
//! entries that include both, in table order; plane counts, offsets, scales, the meanings
//! written into `model.json` and the table below all come from there (a test keeps the
//! table equal to [`PLANES`]). Scales: `size` is the grid side.
//!
//! | plane | variants | plane sets | holds | stored value | network sees |
//! |-------|----------|--------------|-------|--------------|--------------|
//! | `own` | every | every | pieces of the side to move (its team in ambiloa) | 0/1 | 0/1 |
//! | `opponent` | every | every | pieces of the other side (team) | 0/1 | 0/1 |
//! | `line_count_file` | square boards | every | pieces of both sides on the file (column) through the cell | count | count / size |
//! | `line_count_diagonal` | square boards | every | pieces on the diagonal (a1-h8 direction) through the cell | count | count / size |
//! | `line_count_rank` | square boards | every | pieces on the rank (row) through the cell | count | count / size |
//! | `line_count_anti_diagonal` | square boards | every | pieces on the anti-diagonal (a8-h1 direction) through the cell | count | count / size |
//! | `line_count_e_w` | hexagonal board | every | pieces on the E-W line (grid row) through the cell | count | count / size |
//! | `line_count_ne_sw` | hexagonal board | every | pieces on the NE-SW line (grid step (+1,+1)) through the cell | count | count / size |
//! | `line_count_nw_se` | hexagonal board | every | pieces on the NW-SE line (grid column) through the cell | count | count / size |
//! | `ones` | every | every | validity: 1 on board cells, 0 on grid cells off the board | 0/1 | 0/1 |
//! | `vanished` | `gemma` | every | vanished cells (crossable, never landable) | 0/1 | 0/1 |
//! | `own_reserve` | `parachute` | every | constant: opponent's pieces the side to move can still drop | count | count / 6 |
//! | `opponent_reserve` | `parachute` | every | constant: pieces the other side can still drop | count | count / 6 |
//! | `drop_pending` | `parachute` | every | constant 1 when the side to move made the move of its compound turn and must now drop | 0/1 | 0/1 |
//! | `player_to_move` | `ambiloa` | every | pieces of the player to move | 0/1 | 0/1 |
//! | `partner` | `ambiloa` | every | pieces of the partner of the player to move | 0/1 | 0/1 |
//! | `next_opponent` | `ambiloa` | every | pieces of the opponent who moves next | 0/1 | 0/1 |
//! | `last_opponent` | `ambiloa` | every | pieces of the opponent who moved last | 0/1 | 0/1 |
//! | `turn_south` | `ambiloa` | every | constant 1 when South is to move | 0/1 | 0/1 |
//! | `turn_west` | `ambiloa` | every | constant 1 when West is to move | 0/1 | 0/1 |
//! | `turn_north` | `ambiloa` | every | constant 1 when North is to move | 0/1 | 0/1 |
//! | `turn_east` | `ambiloa` | every | constant 1 when East is to move | 0/1 | 0/1 |
//! | `own_com_distance` | every | `loa`, `loa-nearest` | board distance of the cell to the centre of mass of the side to move | round(2·d) | round(2·d) / (2·size) |
//! | `opponent_com_distance` | every | `loa`, `loa-nearest` | board distance of the cell to the other side's centre of mass | round(2·d) | round(2·d) / (2·size) |
//! | `own_group_size` | every | `loa`, `loa-nearest` | on a piece of the side to move: the pieces of its connected group | count | count / 12 |
//! | `opponent_group_size` | every | `loa`, `loa-nearest` | on a piece of the other side: the pieces of its connected group | count | count / 12 |
//! | `own_groups` | every | `loa`, `loa-nearest` | constant: connected groups of the side to move | count | count / 12 |
//! | `opponent_groups` | every | `loa`, `loa-nearest` | constant: connected groups of the other side | count | count / 12 |
//! | `own_excess_distance` | every | `loa`, `loa-nearest` | constant: mean distance of the side to move's pieces to their centre of mass above the tightest packing (loa::features::excess_distance) | round(4·e) | round(4·e) / 32 |
//! | `opponent_excess_distance` | every | `loa`, `loa-nearest` | constant: the same for the other side | round(4·e) | round(4·e) / 32 |
//! | `own_pieces` | every | `loa`, `loa-nearest` | constant: pieces of the side to move | count | count / 12 |
//! | `opponent_pieces` | every | `loa`, `loa-nearest` | constant: pieces of the other side | count | count / 12 |
//! | `own_nearest_distance` | every | `loa-nearest` | board distance of the cell to the nearest piece of the side to move (0 on its pieces) | d | d / size |
//!
//! Every plane is 0 on grid cells off the board (constant planes too). The line counts
//! are the move distances along each axis, the quantity moves depend on. The `loa` planes
//! give a small network in a few minutes of training what a flood fill and a centre of mass
//! compute exactly ([`loa::features`]); a side is connected exactly when its group size
//! equals its piece count on its pieces. Planes are stored as `u8` (small transfers to the
//! device) and scaled on the device by [`InputLayout::scales`]. Board cell `(col, row)`
//! ([`loa::Geometry::coords`]) is element `[plane][row][col]`, so the flattened cell index
//! is [`loa::Geometry::grid_cell`] and the policy planes line up with
//! [`crate::policy::PolicyIndex::policy_index`].
//!
//! # Changing the planes: the contract
//!
//! A model file records its encoding version and its plane set (`encoding_version` and
//! `net.plane_set` in its description); its network reads exactly the planes that
//! (version, variant, plane set) had when it was trained. So:
//!
//! * **Adding a plane** is one entry of [`PLANES`] and a plane set no saved model uses: a
//!   new [`PlaneSet`] variant (its name is the value users set as
//!   `train.net.plane_set`), listed in the entries of the set it extends and in the new
//!   entry. Never add a plane to an existing plane set: every model trained with that set
//!   would read a wrong input. No version bump is needed. A plane only a new game variant
//!   has is likewise free.
//! * **Changing a plane** an existing plane set has (its name, its position in the
//!   table, its scale, its computation), or removing it, changes what saved models read:
//!   bump [`ENCODING_VERSION`], say in [`check_version`] which older versions still read
//!   unchanged for which variants, and record the new fingerprints (below).
//! * The wording of a meaning or of a stored value is free.
//!
//! The test `planes_of_saved_models_are_unchanged` holds a fingerprint of every (encoding
//! version, variant, plane set): plane names, scales and the planes of fixed positions.
//! It fails on any such change made without a new version, and its message says what to do.
//!
//! Versions: version 2 introduced the per-variant layout. The planes of `standard`,
//! `scrambled-eggs` and `6x6` are exactly those of version 1, so models of those variants
//! saved with version 1 remain valid ([`check_version`]). The plane set is part of a
//! model's network shape (`train::config::NetConfig::plane_set`); model files
//! written before it existed have [`PlaneSet::Board`].

use loa::features::{board_distance, excess_distance, CentreOfMass};
use loa::geometry::Shape;
use loa::variant::PARACHUTE_RESERVE;
use loa::{Geometry, Player, Position, Square, Variant};
use serde::{Deserialize, Serialize};
use std::cell::OnceCell;

/// Which planes a network sees beyond the board itself: a named set of entries of
/// [`PLANES`] (see the module docs' contract before adding one).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlaneSet {
    /// The pieces, the line counts and the variant's state only.
    #[default]
    Board,
    /// The board planes followed by the connection features (centre-of-mass distances,
    /// group sizes and counts, excess distances, piece counts) of both sides.
    Loa,
    /// The `loa` planes followed by the distance of every cell to the nearest piece of the
    /// side to move (opt-in: no strength experiment has made it a default).
    #[serde(rename = "loa-nearest")]
    LoaNearest,
}

impl PlaneSet {
    /// Every plane set.
    pub const ALL: [PlaneSet; 3] = [PlaneSet::Board, PlaneSet::Loa, PlaneSet::LoaNearest];

    /// The setting's name in configs and model files (`board`, `loa`, `loa-nearest`).
    pub fn name(self) -> &'static str {
        match self {
            PlaneSet::Board => "board",
            PlaneSet::Loa => "loa",
            PlaneSet::LoaNearest => "loa-nearest",
        }
    }
}

/// Version of this encoding; stored in every model and checkpoint. Bump it when a plane
/// of an existing plane set changes (see the module docs' contract).
pub const ENCODING_VERSION: u32 = 2;

/// The variants that have a plane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Boards {
    /// Every variant.
    Every,
    /// The variants on square boards.
    Square,
    /// The variants on the hexagonal board.
    Hex,
    /// One variant.
    Only(Variant),
}

impl Boards {
    /// Whether `variant` has the plane.
    pub fn include(self, variant: Variant) -> bool {
        match self {
            Boards::Every => true,
            Boards::Square => variant.geometry().shape == Shape::Square,
            Boards::Hex => variant.geometry().shape == Shape::Hex,
            Boards::Only(v) => v == variant,
        }
    }
}

/// The factor a plane's stored value is multiplied by before entering the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// `1 / k`.
    Over(u32),
    /// `1 / (k · size)`, `size` the side of the grid.
    OverSize(u32),
}

impl Scale {
    /// The factor on a grid of side `size`.
    pub fn factor(self, size: usize) -> f32 {
        match self {
            Scale::Over(k) => 1.0 / k as f32,
            Scale::OverSize(k) => 1.0 / (k as usize * size) as f32,
        }
    }
}

/// How a plane's stored values come from a position ([`Context`]). Grid cells off the
/// board stay 0.
#[derive(Clone, Copy)]
pub enum Compute {
    /// 1 on the board cells of a set, 0 elsewhere.
    Cells(fn(&Context) -> u64),
    /// One value per board cell.
    PerCell(fn(&Context, Square) -> u8),
    /// One value on every board cell.
    Constant(fn(&Context) -> u8),
}

/// One input plane: everything about it (see the module docs' contract).
pub struct Plane {
    /// Its name (in `model.json` and the docs).
    pub name: &'static str,
    /// What it holds, in words (in `model.json` and the docs).
    pub meaning: &'static str,
    /// The stored `u8` value, in words (the docs' table).
    pub stored: &'static str,
    /// The factor the network sees the stored value multiplied by.
    pub scale: Scale,
    /// The variants that have it.
    pub boards: Boards,
    /// The plane sets that have it.
    pub sets: &'static [PlaneSet],
    /// How it is computed.
    pub compute: Compute,
}

impl Plane {
    /// Whether `variant` with `plane_set` has this plane.
    pub fn included(&self, variant: Variant, plane_set: PlaneSet) -> bool {
        self.boards.include(variant) && self.sets.contains(&plane_set)
    }
}

/// Every plane set: the board planes.
const EVERY_SET: &[PlaneSet] = &PlaneSet::ALL;
/// The plane sets with the connection features.
const LOA_SETS: &[PlaneSet] = &[PlaneSet::Loa, PlaneSet::LoaNearest];

/// Every input plane, in plane order: a layout is the entries its variant and plane set
/// include ([`Plane::included`]). The board planes come first (in every plane set), the
/// variants' cell sets before their constant planes.
pub const PLANES: &[Plane] = &[
    Plane {
        name: "own",
        meaning: "pieces of the side to move (its team in ambiloa)",
        stored: "0/1",
        scale: Scale::Over(1),
        boards: Boards::Every,
        sets: EVERY_SET,
        compute: Compute::Cells(|c| c.sides[0]),
    },
    Plane {
        name: "opponent",
        meaning: "pieces of the other side (team)",
        stored: "0/1",
        scale: Scale::Over(1),
        boards: Boards::Every,
        sets: EVERY_SET,
        compute: Compute::Cells(|c| c.sides[1]),
    },
    Plane {
        name: "line_count_file",
        meaning: "pieces of both sides on the file (column) through the cell",
        stored: "count",
        scale: Scale::OverSize(1),
        boards: Boards::Square,
        sets: EVERY_SET,
        compute: Compute::PerCell(line_count::<0>),
    },
    Plane {
        name: "line_count_diagonal",
        meaning: "pieces on the diagonal (a1-h8 direction) through the cell",
        stored: "count",
        scale: Scale::OverSize(1),
        boards: Boards::Square,
        sets: EVERY_SET,
        compute: Compute::PerCell(line_count::<1>),
    },
    Plane {
        name: "line_count_rank",
        meaning: "pieces on the rank (row) through the cell",
        stored: "count",
        scale: Scale::OverSize(1),
        boards: Boards::Square,
        sets: EVERY_SET,
        compute: Compute::PerCell(line_count::<2>),
    },
    Plane {
        name: "line_count_anti_diagonal",
        meaning: "pieces on the anti-diagonal (a8-h1 direction) through the cell",
        stored: "count",
        scale: Scale::OverSize(1),
        boards: Boards::Square,
        sets: EVERY_SET,
        compute: Compute::PerCell(line_count::<3>),
    },
    Plane {
        name: "line_count_e_w",
        meaning: "pieces on the E-W line (grid row) through the cell",
        stored: "count",
        scale: Scale::OverSize(1),
        boards: Boards::Hex,
        sets: EVERY_SET,
        compute: Compute::PerCell(line_count::<0>),
    },
    Plane {
        name: "line_count_ne_sw",
        meaning: "pieces on the NE-SW line (grid step (+1,+1)) through the cell",
        stored: "count",
        scale: Scale::OverSize(1),
        boards: Boards::Hex,
        sets: EVERY_SET,
        compute: Compute::PerCell(line_count::<1>),
    },
    Plane {
        name: "line_count_nw_se",
        meaning: "pieces on the NW-SE line (grid column) through the cell",
        stored: "count",
        scale: Scale::OverSize(1),
        boards: Boards::Hex,
        sets: EVERY_SET,
        compute: Compute::PerCell(line_count::<2>),
    },
    Plane {
        name: "ones",
        meaning: "validity: 1 on board cells, 0 on grid cells off the board",
        stored: "0/1",
        scale: Scale::Over(1),
        boards: Boards::Every,
        sets: EVERY_SET,
        compute: Compute::Cells(|c| c.g.cells),
    },
    Plane {
        name: "vanished",
        meaning: "vanished cells (crossable, never landable)",
        stored: "0/1",
        scale: Scale::Over(1),
        boards: Boards::Only(Variant::Gemma),
        sets: EVERY_SET,
        compute: Compute::Cells(|c| c.pos.vanished()),
    },
    Plane {
        name: "own_reserve",
        meaning: "constant: opponent's pieces the side to move can still drop",
        stored: "count",
        scale: Scale::Over(PARACHUTE_RESERVE as u32),
        boards: Boards::Only(Variant::Parachute),
        sets: EVERY_SET,
        compute: Compute::Constant(|c| c.pos.reserve(c.pos.to_move())),
    },
    Plane {
        name: "opponent_reserve",
        meaning: "constant: pieces the other side can still drop",
        stored: "count",
        scale: Scale::Over(PARACHUTE_RESERVE as u32),
        boards: Boards::Only(Variant::Parachute),
        sets: EVERY_SET,
        compute: Compute::Constant(|c| c.pos.reserve(c.pos.to_move().opponent())),
    },
    Plane {
        name: "drop_pending",
        meaning: "constant 1 when the side to move made the move of its compound turn and \
                  must now drop",
        stored: "0/1",
        scale: Scale::Over(1),
        boards: Boards::Only(Variant::Parachute),
        sets: EVERY_SET,
        compute: Compute::Constant(|c| c.pos.drop_pending() as u8),
    },
    Plane {
        name: "player_to_move",
        meaning: "pieces of the player to move",
        stored: "0/1",
        scale: Scale::Over(1),
        boards: Boards::Only(Variant::Ambiloa),
        sets: EVERY_SET,
        compute: Compute::Cells(player_pieces::<0>),
    },
    Plane {
        name: "partner",
        meaning: "pieces of the partner of the player to move",
        stored: "0/1",
        scale: Scale::Over(1),
        boards: Boards::Only(Variant::Ambiloa),
        sets: EVERY_SET,
        compute: Compute::Cells(player_pieces::<2>),
    },
    Plane {
        name: "next_opponent",
        meaning: "pieces of the opponent who moves next",
        stored: "0/1",
        scale: Scale::Over(1),
        boards: Boards::Only(Variant::Ambiloa),
        sets: EVERY_SET,
        compute: Compute::Cells(player_pieces::<1>),
    },
    Plane {
        name: "last_opponent",
        meaning: "pieces of the opponent who moved last",
        stored: "0/1",
        scale: Scale::Over(1),
        boards: Boards::Only(Variant::Ambiloa),
        sets: EVERY_SET,
        compute: Compute::Cells(player_pieces::<3>),
    },
    Plane {
        name: "turn_south",
        meaning: "constant 1 when South is to move",
        stored: "0/1",
        scale: Scale::Over(1),
        boards: Boards::Only(Variant::Ambiloa),
        sets: EVERY_SET,
        compute: Compute::Constant(turn::<{ Player::South as usize }>),
    },
    Plane {
        name: "turn_west",
        meaning: "constant 1 when West is to move",
        stored: "0/1",
        scale: Scale::Over(1),
        boards: Boards::Only(Variant::Ambiloa),
        sets: EVERY_SET,
        compute: Compute::Constant(turn::<{ Player::West as usize }>),
    },
    Plane {
        name: "turn_north",
        meaning: "constant 1 when North is to move",
        stored: "0/1",
        scale: Scale::Over(1),
        boards: Boards::Only(Variant::Ambiloa),
        sets: EVERY_SET,
        compute: Compute::Constant(turn::<{ Player::North as usize }>),
    },
    Plane {
        name: "turn_east",
        meaning: "constant 1 when East is to move",
        stored: "0/1",
        scale: Scale::Over(1),
        boards: Boards::Only(Variant::Ambiloa),
        sets: EVERY_SET,
        compute: Compute::Constant(turn::<{ Player::East as usize }>),
    },
    Plane {
        name: "own_com_distance",
        meaning: "board distance of the cell to the centre of mass of the side to move",
        stored: "round(2·d)",
        scale: Scale::OverSize(2),
        boards: Boards::Every,
        sets: LOA_SETS,
        compute: Compute::PerCell(com_distance::<0>),
    },
    Plane {
        name: "opponent_com_distance",
        meaning: "board distance of the cell to the other side's centre of mass",
        stored: "round(2·d)",
        scale: Scale::OverSize(2),
        boards: Boards::Every,
        sets: LOA_SETS,
        compute: Compute::PerCell(com_distance::<1>),
    },
    Plane {
        name: "own_group_size",
        meaning: "on a piece of the side to move: the pieces of its connected group",
        stored: "count",
        scale: Scale::Over(12),
        boards: Boards::Every,
        sets: LOA_SETS,
        compute: Compute::PerCell(group_size::<0>),
    },
    Plane {
        name: "opponent_group_size",
        meaning: "on a piece of the other side: the pieces of its connected group",
        stored: "count",
        scale: Scale::Over(12),
        boards: Boards::Every,
        sets: LOA_SETS,
        compute: Compute::PerCell(group_size::<1>),
    },
    Plane {
        name: "own_groups",
        meaning: "constant: connected groups of the side to move",
        stored: "count",
        scale: Scale::Over(12),
        boards: Boards::Every,
        sets: LOA_SETS,
        compute: Compute::Constant(|c| c.groups()[0].count),
    },
    Plane {
        name: "opponent_groups",
        meaning: "constant: connected groups of the other side",
        stored: "count",
        scale: Scale::Over(12),
        boards: Boards::Every,
        sets: LOA_SETS,
        compute: Compute::Constant(|c| c.groups()[1].count),
    },
    Plane {
        name: "own_excess_distance",
        meaning: "constant: mean distance of the side to move's pieces to their centre of \
                  mass above the tightest packing (loa::features::excess_distance)",
        stored: "round(4·e)",
        scale: Scale::Over(32),
        boards: Boards::Every,
        sets: LOA_SETS,
        compute: Compute::Constant(|c| round_u8(4.0 * excess_distance(c.g, c.sides[0]))),
    },
    Plane {
        name: "opponent_excess_distance",
        meaning: "constant: the same for the other side",
        stored: "round(4·e)",
        scale: Scale::Over(32),
        boards: Boards::Every,
        sets: LOA_SETS,
        compute: Compute::Constant(|c| round_u8(4.0 * excess_distance(c.g, c.sides[1]))),
    },
    Plane {
        name: "own_pieces",
        meaning: "constant: pieces of the side to move",
        stored: "count",
        scale: Scale::Over(12),
        boards: Boards::Every,
        sets: LOA_SETS,
        compute: Compute::Constant(|c| (c.sides[0] & c.g.cells).count_ones() as u8),
    },
    Plane {
        name: "opponent_pieces",
        meaning: "constant: pieces of the other side",
        stored: "count",
        scale: Scale::Over(12),
        boards: Boards::Every,
        sets: LOA_SETS,
        compute: Compute::Constant(|c| (c.sides[1] & c.g.cells).count_ones() as u8),
    },
    Plane {
        name: "own_nearest_distance",
        meaning: "board distance of the cell to the nearest piece of the side to move (0 on \
                  its pieces)",
        stored: "d",
        scale: Scale::OverSize(1),
        boards: Boards::Every,
        sets: &[PlaneSet::LoaNearest],
        compute: Compute::PerCell(|c, sq| {
            let (col, row) = c.g.coords(sq);
            let mut pieces = c.sides[0] & c.g.cells;
            let mut nearest = u8::MAX;
            while pieces != 0 {
                let (x, y) = c.g.coords(pieces.trailing_zeros() as Square);
                pieces &= pieces - 1;
                let d = board_distance(c.g.shape, x as i32 - col as i32, y as i32 - row as i32);
                nearest = nearest.min(d as u8);
            }
            if nearest == u8::MAX {
                0
            } else {
                nearest
            }
        }),
    },
];

/// What the planes of one position are computed from; values several planes share are
/// computed once, on first use. Side 0 is the side (team) to move, side 1 the other.
pub struct Context<'a> {
    /// The position.
    pub pos: &'a Position,
    /// Its board.
    pub g: &'a Geometry,
    /// The pieces of each side.
    pub sides: [u64; 2],
    /// The pieces of both.
    pub occupied: u64,
    coms: OnceCell<[SideCentre; 2]>,
    groups: OnceCell<[SideGroups; 2]>,
}

/// A side's centre of mass with `2 / count` (no division per cell on the inference
/// thread's hot path).
#[derive(Clone, Copy)]
pub struct SideCentre {
    /// The centre of mass of the side's pieces.
    pub com: CentreOfMass,
    /// `2 / max(count, 1)`.
    pub twice_over_count: f32,
}

/// A side's connected groups.
#[derive(Clone, Copy)]
pub struct SideGroups {
    /// Number of groups.
    pub count: u8,
    /// On each of its pieces (by square): the size of its group; 0 elsewhere.
    pub size_at: [u8; 64],
}

impl<'a> Context<'a> {
    /// The context of `pos`.
    pub fn new(pos: &'a Position) -> Context<'a> {
        let me = pos.to_move();
        let sides = [pos.pieces(me), pos.pieces(me.opponent())];
        Context {
            pos,
            g: pos.geometry(),
            sides,
            occupied: sides[0] | sides[1],
            coms: OnceCell::new(),
            groups: OnceCell::new(),
        }
    }

    /// Each side's centre of mass ([`CentreOfMass::of`]).
    pub fn centres(&self) -> &[SideCentre; 2] {
        self.coms.get_or_init(|| {
            self.sides.map(|set| {
                let com = CentreOfMass::of(self.g, set);
                SideCentre {
                    com,
                    twice_over_count: 2.0 / com.count.max(1) as f32,
                }
            })
        })
    }

    /// Each side's connected groups of pieces on the board.
    pub fn groups(&self) -> &[SideGroups; 2] {
        self.groups.get_or_init(|| {
            self.sides.map(|set| {
                let mut side = SideGroups {
                    count: 0,
                    size_at: [0; 64],
                };
                for group in self.g.groups(set & self.g.cells) {
                    side.count += 1;
                    let size = group.count_ones() as u8;
                    let mut bits = group;
                    while bits != 0 {
                        side.size_at[bits.trailing_zeros() as usize] = size;
                        bits &= bits - 1;
                    }
                }
                side
            })
        })
    }
}

/// Pieces of both sides on the line of axis `AXIS` through `sq`.
fn line_count<const AXIS: usize>(c: &Context, sq: Square) -> u8 {
    (c.g.line[sq as usize][AXIS] & c.occupied).count_ones() as u8
}

/// `ambiloa`: the pieces of the player `STEP` turns after the player to move (0 itself, 1
/// the next opponent, 2 the partner, 3 the last opponent).
fn player_pieces<const STEP: usize>(c: &Context) -> u64 {
    c.pos.player().map_or(0, |p| {
        c.pos.player_pieces(Player::ALL[(p as usize + STEP) % 4])
    })
}

/// `ambiloa`: 1 when player number `PLAYER` ([`Player::ALL`]) is to move.
fn turn<const PLAYER: usize>(c: &Context) -> u8 {
    (c.pos.player().map(|p| p as usize) == Some(PLAYER)) as u8
}

/// `round(2 · d)`, `d` the board distance of `sq` to side `SIDE`'s centre of mass; 0 when
/// the side has no piece.
fn com_distance<const SIDE: usize>(c: &Context, sq: Square) -> u8 {
    let side = &c.centres()[SIDE];
    if side.com.count == 0 {
        return 0;
    }
    round_u8(side.com.distance_n(c.g, sq) as f32 * side.twice_over_count)
}

/// The size of the group of side `SIDE` on `sq`; 0 off its pieces.
fn group_size<const SIDE: usize>(c: &Context, sq: Square) -> u8 {
    c.groups()[SIDE].size_at[sq as usize]
}

/// `x` rounded and clamped to a `u8`.
fn round_u8(x: f32) -> u8 {
    x.round().clamp(0.0, 255.0) as u8
}

/// The planes of `variant` with `plane_set`, in plane order.
pub fn planes_of(variant: Variant, plane_set: PlaneSet) -> impl Iterator<Item = &'static Plane> {
    PLANES
        .iter()
        .filter(move |plane| plane.included(variant, plane_set))
}

/// The input planes of one variant, in plane order.
#[derive(Clone, Debug, PartialEq)]
pub struct InputLayout {
    /// Plane names (see [`PLANES`]).
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

/// The input planes of `variant` with `plane_set`.
pub fn input_layout(variant: Variant, plane_set: PlaneSet) -> InputLayout {
    let size = variant.geometry().size as usize;
    let planes: Vec<&Plane> = planes_of(variant, plane_set).collect();
    InputLayout {
        planes: planes.iter().map(|p| p.name).collect(),
        scales: planes.iter().map(|p| p.scale.factor(size)).collect(),
        size,
    }
}

/// What plane `name` holds (for `model.json`); empty for names no variant uses.
pub fn plane_meaning(name: &str) -> &'static str {
    PLANES
        .iter()
        .find(|p| p.name == name)
        .map_or("", |p| p.meaning)
}

/// Number of input planes of `variant` with `plane_set`.
pub fn num_planes(variant: Variant, plane_set: PlaneSet) -> usize {
    planes_of(variant, plane_set).count()
}

/// Number of `u8` values that encode one position of `variant` with `plane_set`.
pub fn input_len(variant: Variant, plane_set: PlaneSet) -> usize {
    let n = variant.geometry().size as usize;
    num_planes(variant, plane_set) * n * n
}

/// The factor each stored `u8` plane of `variant` with `plane_set` is multiplied by
/// before entering the network.
pub fn plane_scales(variant: Variant, plane_set: PlaneSet) -> Vec<f32> {
    input_layout(variant, plane_set).scales
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
        || (input_layout(a, PlaneSet::Board) == input_layout(b, PlaneSet::Board)
            && crate::policy::policy_plane_names(a) == crate::policy::policy_plane_names(b))
}

/// Writes the planes of `pos` with `plane_set` into `out` (length [`input_len`] of its
/// variant), every entry overwritten. Pure and thread-safe; allocates nothing.
///
/// # Panics
/// If `out` has the wrong length (a caller bug, not a data error).
pub fn encode_into(pos: &Position, plane_set: PlaneSet, out: &mut [u8]) {
    let variant = pos.variant();
    let g = pos.geometry();
    let cells = (g.size as usize) * (g.size as usize);
    assert_eq!(
        out.len(),
        input_len(variant, plane_set),
        "encoding buffer length"
    );
    out.fill(0);
    let context = Context::new(pos);
    for (plane, out) in planes_of(variant, plane_set).zip(out.chunks_exact_mut(cells)) {
        match plane.compute {
            Compute::Cells(set) => {
                for cell in g.grid_cells(set(&context)) {
                    out[cell] = 1;
                }
            }
            Compute::PerCell(value) => {
                let mut bits = g.cells;
                while bits != 0 {
                    let sq = bits.trailing_zeros() as Square;
                    out[g.grid_cell[sq as usize] as usize] = value(&context, sq);
                    bits &= bits - 1;
                }
            }
            Compute::Constant(value) => {
                let value = value(&context);
                for cell in g.grid_cells(g.cells) {
                    out[cell] = value;
                }
            }
        }
    }
}

/// The planes of `pos` with `plane_set` as a new vector.
pub fn encode(pos: &Position, plane_set: PlaneSet) -> Vec<u8> {
    let mut out = vec![0; input_len(pos.variant(), plane_set)];
    encode_into(pos, plane_set, &mut out);
    out
}

/// The planes `planes` of a `variant` position with `plane_set` (as [`encode`] writes
/// them) seen under board symmetry `s` (`0..geometry.num_symmetries`): equal to the planes
/// of `pos.transformed(s)` (the training batches' augmentation). Every cell moves to its
/// image; the line-count planes are permuted with their axes. Errors: a wrong length, a
/// symmetry out of range.
pub fn transform_planes(
    variant: Variant,
    plane_set: PlaneSet,
    planes: &[u8],
    s: usize,
) -> Result<Vec<u8>, String> {
    let g = variant.geometry();
    let len = input_len(variant, plane_set);
    if planes.len() != len {
        return Err(format!(
            "planes of length {} for {variant} with plane set {}: expected {len}",
            planes.len(),
            plane_set.name()
        ));
    }
    if s >= g.num_symmetries as usize {
        return Err(format!(
            "symmetry {s} out of range: {variant} has {}",
            g.num_symmetries
        ));
    }
    let cells = g.size as usize * g.size as usize;
    let names: Vec<&str> = planes_of(variant, plane_set).map(|p| p.name).collect();
    let line_counts: Vec<usize> = (0..names.len())
        .filter(|&p| names[p].starts_with("line_count_"))
        .collect();
    let mut out = vec![0u8; len];
    for p in 0..names.len() {
        let to_plane = match line_counts.iter().position(|&q| q == p) {
            Some(axis) => line_counts[g.symmetry_direction[s][axis] as usize % g.axes as usize],
            None => p,
        };
        let mut bits = g.cells;
        while bits != 0 {
            let sq = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let from = g.grid_cell[sq] as usize;
            let to = g.grid_cell[g.symmetry_square[s][sq] as usize] as usize;
            out[to_plane * cells + to] = planes[p * cells + from];
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{policy_planes, policy_size, transform_policy_index, PolicyIndex};
    use loa::geometry::NO_SQUARE;
    use loa::{Color, Rules};

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

    /// The plane table of the module docs, as [`PLANES`] says it should read.
    fn doc_table() -> String {
        let mut lines = vec![
            "//! | plane | variants | plane sets | holds | stored value | network sees |"
                .to_string(),
            "//! |-------|----------|--------------|-------|--------------|--------------|"
                .to_string(),
        ];
        for p in PLANES {
            let sets = if p.sets == EVERY_SET {
                "every".to_string()
            } else {
                let names: Vec<String> = p.sets.iter().map(|s| format!("`{}`", s.name())).collect();
                names.join(", ")
            };
            let boards = match p.boards {
                Boards::Every => "every".to_string(),
                Boards::Square => "square boards".to_string(),
                Boards::Hex => "hexagonal board".to_string(),
                Boards::Only(v) => format!("`{v}`"),
            };
            let sees = match p.scale {
                Scale::Over(1) => p.stored.to_string(),
                Scale::Over(k) => format!("{} / {k}", p.stored),
                Scale::OverSize(1) => format!("{} / size", p.stored),
                Scale::OverSize(k) => format!("{} / ({k}·size)", p.stored),
            };
            lines.push(format!(
                "//! | `{}` | {boards} | {sets} | {} | {} | {sees} |",
                p.name, p.meaning, p.stored
            ));
        }
        lines.join("\n")
    }

    /// The module docs show exactly the planes of [`PLANES`].
    #[test]
    fn the_docs_table_is_the_plane_table() {
        let source = include_str!("encoding.rs");
        let table = doc_table();
        assert!(
            source.contains(&format!("//!\n{table}\n//!\n")),
            "the plane table in the module docs of train/src/encoding.rs differs from \
             PLANES: replace it with\n{table}"
        );
    }

    /// Names are unique and explained; every plane set starts with the board planes and
    /// has a name that configs read back; every entry is in some layout.
    #[test]
    fn the_plane_table_is_consistent() {
        for (i, p) in PLANES.iter().enumerate() {
            assert!(!p.meaning.is_empty() && !p.stored.is_empty(), "{}", p.name);
            assert!(
                PLANES[..i].iter().all(|q| q.name != p.name),
                "plane {} twice",
                p.name
            );
            assert!(!p.sets.is_empty(), "{} is in no plane set", p.name);
            assert!(
                Variant::ALL.iter().any(|&v| p.boards.include(v)),
                "{} is on no board",
                p.name
            );
        }
        for plane_set in PlaneSet::ALL {
            let text = format!("\"{}\"", plane_set.name());
            assert_eq!(serde_json::from_str::<PlaneSet>(&text).unwrap(), plane_set);
            for variant in Variant::ALL {
                let board = input_layout(variant, PlaneSet::Board);
                let layout = input_layout(variant, plane_set);
                assert_eq!(
                    &layout.planes[..board.num_planes()],
                    &board.planes[..],
                    "{variant} {plane_set:?}"
                );
            }
        }
    }

    /// Positions every fingerprint encodes, as text ([`Position::to_text`]), by variant:
    /// starts, middle games, a pending parachute drop, vanished gemma cells.
    const FIXED_POSITIONS: &[(&str, &[&str])] = &[
        (
            "standard",
            &[
                "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b",
                "1b2bbb1/w4w2/b2b3w/w7/w3w2w/b6w/b6w/1b1bbb1w w",
                "1b4bb/w2w1b2/b2b3w/1w6/4bw2/bw5w/b1w5/b4b1b b",
                "4wbb1/4w3/b5bw/w7/8/bw2w1b1/w1b1b3/b4b2 b",
                "1w3b2/7w/ww1b2b1/2bbb2w/4w1b1/w1wb2ww/w6w/1bbb2b1 w",
                "b1bbbb1b/w6w/w6w/w4w2/w6w/w6w/w4w2/2bbbbbb w",
            ],
        ),
        (
            "scrambled-eggs",
            &[
                "1wbwbwb1/b6w/w6b/b6w/w6b/b6w/w6b/1bwbwbw1 b",
                "1wbwbwb1/b7/w4b1b/b4w1w/w7/b3w2w/w4b2/1bwbb1w1 w",
                "1wwwbb2/b3b3/4w2w/4w3/w7/b1b1w3/w4b2/2wbb1w1 b",
                "5bb1/b7/4w1ww/2w5/5b1b/2w1w3/2w1w1bw/2b2b2 b",
                "4bw2/b4w1w/w1w2w2/b1w2b2/w1w2bb1/b2b2ww/7b/3bwb2 w",
                "1wwwbwbb/b6w/7b/b6w/1w6/b6w/w6b/1bwbwbw1 w",
            ],
        ),
        (
            "6x6",
            &[
                "1bbbb1/w4w/w4w/w4w/w4w/1bbbb1 b",
                "3wbw/5w/bb4/1bw2w/w5/1b2b1 w",
                "b2b1w/ww3w/4b1/1bb3/w5/1b4 b",
                "b3bw/w2w2/6/2b2w/bw4/1b2b1 b",
                "1b1wb1/wb1w2/2w3/w5/bbw2w/5b w",
                "wbb1b1/w2w2/w4b/w4b/2b2w/2b1b1 w",
            ],
        ),
        (
            "parachute",
            &[
                "8/b6w/w6b/b6w/w6b/b6w/w6b/8 b 6:6",
                "5ww1/b2w4/w1b2b1b/b6w/w6b/7w/w6b/2b5 b@ 4:4",
                "3w1ww1/2bb3w/w1b2b1b/b3b2w/7w/7w/w1w4b/2bbbw2 w 0:1",
                "2ww4/3w2w1/2b3bb/b7/2w3b1/3w2b1/w4b1w/2b3b1 b 0:0",
                "w6w/b5bw/8/bw5w/w1w3bb/b4w1w/w3b2b/6b1 w@ 2:3",
                "8/2b4w/7b/bw5w/w6b/b4b1w/w4b2/7w b@ 5:5",
            ],
        ),
        (
            "gemma",
            &[
                "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b",
                "bbxbxxbw/xw5x/w3b1bw/x6w/w6w/b1b4w/w6x/1bxbxbbw w",
                "bbxxxxxw/xwb4x/x3w1bw/xw1x2wx/xw2x2w/x1xbx1wx/bb1b3x/1xxbxbbx b",
                "xxxxxxxx/xxxxxw1x/xbxxxxww/xw1xbxxx/xb1bxxbx/x1xxxbxx/xb1xxw1x/xxxxxbbx b",
                "bbbbbwxw/x5bx/w1x2x1x/wbw1x2w/x3w2w/x1xxb2w/w1b4w/1bwxxxx1 w",
                "1xbxbbxb/w6w/w1wbb2w/w6w/x1w4w/w6w/x6w/1bbbbbb1 w",
            ],
        ),
        (
            "ambiloa",
            &[
                "1nnnnnn1/w6e/w6e/w6e/w6e/w6e/w6e/1ssssss1 s",
                "1nnn1nn1/w6e/w2n3e/w6e/7e/3e4/2sw3e/1s1ss1s1 w",
                "1nn3nn/w5ne/3e1e2/w4e2/5w2/w7/2s1s2e/1s1s2s1 n",
                "1nne2nn/3n4/6e1/w6e/3sw3/1w1e4/7e/ss1s2s1 s",
                "1nwn1nn1/2w4e/7n/w1w4e/w7/3ss1se/2ew3e/3sss1e e",
                "1nn1nnne/7e/w4n1e/w1w4e/w6e/w2ss2e/w7/3ssss1 w",
            ],
        ),
        (
            "alveole",
            &[
                "wb1wb/b4w/7/w6b/b7w/w6b/7/b4w/wb1wb b",
                "wb1wb/5w/7/w1b2b2/b8/w4b2/3wb1w/2b2w/wb3 w",
                "wb1wb/4w1/6w/1w6/b1b1bbb2/w4b2/w6/2b2w/3w1 b",
                "1w3/4b1/7/5w2/b3b4/b3w3/w1w1bb1/3b1b/4w b",
                "wb3/5w/7/w3bb1b/b7w/7b/1b2w2/b2w1w/w2w1 w",
                "w2wb/b4w/3b3/w6b/b7w/w6b/2w4/b2w2/1b1wb w",
            ],
        ),
    ];

    /// Fingerprints of every layout: (encoding version, variant, plane set, FNV-1a hash of
    /// the plane names and scales and of the planes of [`FIXED_POSITIONS`]).
    const RECORDED_FINGERPRINTS: &[(u32, &str, &str, u64)] = &[
        (2, "standard", "board", 0xb596887fe2b3efb3),
        (2, "standard", "loa", 0x20aa986c6e11c04b),
        (2, "scrambled-eggs", "board", 0xa0798e8ae3997313),
        (2, "scrambled-eggs", "loa", 0xc0be0583f035c6a1),
        (2, "6x6", "board", 0xd68b368efefdb0e5),
        (2, "6x6", "loa", 0xae1b5a9bcfdb591a),
        (2, "parachute", "board", 0xbc016dc40f5d831e),
        (2, "parachute", "loa", 0x6c64a07f05967dfd),
        (2, "gemma", "board", 0x00a25939f390bb85),
        (2, "gemma", "loa", 0xb5f683bc88369f1b),
        (2, "ambiloa", "board", 0xcad04c1d15441e92),
        (2, "ambiloa", "loa", 0x946b05d522703c10),
        (2, "alveole", "board", 0xe303ee505ec6f267),
        (2, "alveole", "loa", 0xc3fe8e275edb1090),
        (2, "standard", "loa-nearest", 0x5adfc4f277188be6),
        (2, "scrambled-eggs", "loa-nearest", 0x3b338187161d801e),
        (2, "6x6", "loa-nearest", 0xdac9a0b4659b2630),
        (2, "parachute", "loa-nearest", 0x11e6cf3752a2ad97),
        (2, "gemma", "loa-nearest", 0x3c039c4a8dab9616),
        (2, "ambiloa", "loa-nearest", 0xc254af7304944383),
        (2, "alveole", "loa-nearest", 0xe1023969d920e168),
    ];

    /// The fingerprint of the planes of `variant` with `plane_set` (see
    /// [`RECORDED_FINGERPRINTS`]).
    fn fingerprint(variant: Variant, plane_set: PlaneSet) -> u64 {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        let mut write = |bytes: &[u8]| {
            for &b in bytes {
                hash = (hash ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
            }
        };
        let layout = input_layout(variant, plane_set);
        for (name, scale) in layout.planes.iter().zip(&layout.scales) {
            write(name.as_bytes());
            write(&scale.to_bits().to_le_bytes());
        }
        let (_, texts) = FIXED_POSITIONS
            .iter()
            .find(|(name, _)| *name == variant.name())
            .unwrap_or_else(|| panic!("FIXED_POSITIONS has no {variant} position"));
        for text in *texts {
            let pos = Position::from_text(text, variant).unwrap();
            assert_eq!(
                pos.to_text(),
                *text,
                "{variant}: position text does not round-trip"
            );
            write(&encode(&pos, plane_set));
        }
        hash
    }

    /// A saved model reads its planes under the encoding version it records: the planes of
    /// every (variant, plane set) under [`ENCODING_VERSION`] are those recorded for it.
    /// Fails, saying what to do, when a plane changed without a new version.
    #[test]
    fn planes_of_saved_models_are_unchanged() {
        let mut problems = Vec::new();
        for variant in Variant::ALL {
            for plane_set in PlaneSet::ALL {
                let now = fingerprint(variant, plane_set);
                let line = format!(
                    "({ENCODING_VERSION}, \"{variant}\", \"{}\", {now:#018x}),",
                    plane_set.name()
                );
                let recorded = RECORDED_FINGERPRINTS.iter().find(|r| {
                    r.0 == ENCODING_VERSION && r.1 == variant.name() && r.2 == plane_set.name()
                });
                match recorded {
                    Some(r) if r.3 == now => {}
                    Some(r) => problems.push(format!(
                        "the planes of {variant} with input features `{}` changed under \
                         encoding version {ENCODING_VERSION} (fingerprint {now:#018x}, recorded \
                         {:#018x}): models saved with them would read wrong inputs. Undo the \
                         change; or, to add a plane, put it in a new PlaneSet variant \
                         (module docs: \"Changing the planes\"); or, to change a plane on \
                         purpose, bump ENCODING_VERSION to {}, say in check_version which \
                         older versions still read, and record the new fingerprints",
                        plane_set.name(),
                        r.3,
                        ENCODING_VERSION + 1
                    )),
                    None => problems.push(format!(
                        "no fingerprint recorded for {variant} with `{}` under encoding version \
                         {ENCODING_VERSION}: for a new plane set, a new variant or a new \
                         encoding version add to RECORDED_FINGERPRINTS in \
                         train/src/encoding.rs: {line}",
                        plane_set.name()
                    )),
                }
            }
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
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
            let layout = input_layout(variant, PlaneSet::Board);
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
                assert_eq!(encode(&pos, PlaneSet::Board), encode_v1(&pos), "{variant}");
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
            let layout = input_layout(variant, PlaneSet::Board);
            assert_eq!(layout.num_planes(), planes, "{variant}");
            assert_eq!(num_planes(variant, PlaneSet::Board), planes, "{variant}");
            assert_eq!(layout.size, size, "{variant}");
            assert_eq!(layout.scales.len(), planes);
            assert_eq!(input_len(variant, PlaneSet::Board), planes * size * size);
            assert_eq!(layout.input_len(), input_len(variant, PlaneSet::Board));
            for name in &layout.planes {
                assert!(!plane_meaning(name).is_empty(), "{name}");
            }
            let pos = Position::start(variant, &Rules::classic());
            assert_eq!(
                encode(&pos, PlaneSet::Board).len(),
                input_len(variant, PlaneSet::Board)
            );
        }
        let hex = input_layout(Variant::Alveole, PlaneSet::Board);
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
            input_layout(Variant::Parachute, PlaneSet::Board).scales[7],
            1.0 / 6.0
        );
    }

    #[test]
    fn start_position_planes() {
        let rules = Rules::classic();
        let pos = Position::start(Variant::Standard, &rules);
        let enc = encode(&pos, PlaneSet::Board);
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
        let enc = encode(&after, PlaneSet::Board);
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
            let enc = encode(pos, PlaneSet::Board);
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
            PlaneSet::Board,
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
            let enc = encode(&pos, PlaneSet::Board);
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
            let enc = encode(&pos, PlaneSet::Board);
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
            let enc = encode(&pos, PlaneSet::Board);
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
            let board = num_planes(variant, PlaneSet::Board);
            let layout = input_layout(variant, PlaneSet::Loa);
            assert_eq!(layout.num_planes(), board + 10);
            assert_eq!(
                &layout.planes[..board],
                &input_layout(variant, PlaneSet::Board).planes[..]
            );
            for name in &layout.planes {
                assert!(!plane_meaning(name).is_empty(), "{name}");
            }
            for pos in game_positions(variant, 2, 60, 41).into_iter().step_by(5) {
                let plain = encode(&pos, PlaneSet::Board);
                let enc = encode(&pos, PlaneSet::Loa);
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
        let enc = encode(&pos, PlaneSet::Loa);
        let p = |k: usize, cell: usize| enc[(7 + k) * 64 + cell];
        assert_eq!((p(4, 0), p(5, 0), p(8, 0), p(9, 0)), (2, 2, 12, 12));
        assert_eq!(p(2, 1), 6); // b1: a group of six
        assert_eq!(p(2, 0), 0); // a1: empty
        assert_eq!(p(3, 8), 6); // a2: white group of six
                                // Black's centre of mass is (3.5, 3.5): b1 is at distance 3.5, d4 at 0.5.
        assert_eq!(p(0, 1), 7);
        assert_eq!(p(0, 27), 1);
    }

    /// `own_nearest_distance` (`loa-nearest`): the steps from each board cell to the nearest
    /// piece of the side to move, found by growing its pieces one neighbourhood at a time.
    #[test]
    fn nearest_own_distance_counts_steps_to_the_nearest_own_piece() {
        for variant in Variant::ALL {
            let g = variant.geometry();
            let cells = (g.size as usize).pow(2);
            let loa = num_planes(variant, PlaneSet::Loa);
            let layout = input_layout(variant, PlaneSet::LoaNearest);
            assert_eq!(layout.planes.len(), loa + 1);
            assert_eq!(layout.planes[loa], "own_nearest_distance");
            for pos in game_positions(variant, 2, 60, 53).into_iter().step_by(6) {
                let enc = encode(&pos, PlaneSet::LoaNearest);
                assert_eq!(&enc[..loa * cells], &encode(&pos, PlaneSet::Loa)[..]);
                let plane = &enc[loa * cells..];
                let (mut reached, mut newest) = (0, pos.pieces(pos.to_move()) & g.cells);
                for steps in 0.. {
                    reached |= newest;
                    let mut bits = newest;
                    let mut grown = 0;
                    while bits != 0 {
                        let sq = bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        assert_eq!(plane[g.grid_cell[sq] as usize], steps, "{variant} {sq}");
                        grown |= g.neighbours[sq] & g.cells;
                    }
                    newest = grown & !reached;
                    if newest == 0 {
                        break;
                    }
                }
                assert_eq!(reached, g.cells, "{variant}");
                for cell in (0..cells).filter(|&c| g.grid_square[c] == NO_SQUARE) {
                    assert_eq!(plane[cell], 0);
                }
            }
        }
    }

    /// The axis of line-count plane `axis` after symmetry `s`.
    fn axis_image(variant: Variant, s: usize, axis: usize) -> usize {
        let g = variant.geometry();
        g.symmetry_direction[s][axis] as usize % g.axes as usize
    }

    /// For every variant, plane set and board symmetry: the planes of the transformed
    /// position are the planes of the position with cells (and line-count axes) permuted,
    /// and the policy index of every legal move (drops and removals included) follows the
    /// move.
    #[test]
    fn symmetries_permute_planes_and_policy_in_every_variant() {
        let rules = Rules::classic();
        for (variant, plane_set) in Variant::ALL
            .into_iter()
            .flat_map(|v| PlaneSet::ALL.map(|f| (v, f)))
        {
            let g = variant.geometry();
            let n = g.size as usize;
            let cells = n * n;
            let axes = g.axes as usize;
            let planes = num_planes(variant, plane_set);
            let mut kinds = [0usize; 3]; // normal moves, drops, removals
            for pos in game_positions(variant, 2, 60, 17).into_iter().step_by(7) {
                let enc = encode(&pos, plane_set);
                let moves = pos.legal_moves(&rules);
                for s in 0..g.num_symmetries as usize {
                    let t = pos.transformed(s);
                    let enc_t = encode(&t, plane_set);
                    assert_eq!(
                        transform_planes(variant, plane_set, &enc, s).unwrap(),
                        enc_t,
                        "{variant} {plane_set:?} transform_planes {s}"
                    );
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
                                "{variant} {plane_set:?} symmetry {s} plane {p}"
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
