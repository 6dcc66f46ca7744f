//! Game variants: board geometry and start position.

use crate::geometry::{Geometry, HEX5, SQUARE6, SQUARE8};
use crate::{Color, Error};
use std::fmt;
use std::str::FromStr;

/// A variant of Lines of Action. Each names its board, start position and special rules
/// (see `docs/rules.md`); the rule options ([`crate::Rules`]) are independent of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// 8×8, Black b1–g1 and b8–g8, White a2–a7 and h2–h7.
    Standard,
    /// 8×8 with the colours alternating round the edge.
    ScrambledEggs,
    /// 6×6 ("Pergolazione"), 8 pieces each.
    Six,
    /// 8×8, 6 pieces each on the side edges; for each player's first 6 turns a turn is a
    /// normal move followed by a drop of one of the 6 opponent's pieces the player holds.
    Parachute,
    /// Standard start; the cell a piece leaves vanishes (crossable, never landable), and a
    /// piece without a normal move may be removed instead of moving (its cell vanishes).
    Gemma,
    /// Standard start, 4 players in 2 teams: South (b1–g1) and North (b8–g8) against West
    /// (a2–a7) and East (h2–h7), moving in the order South, West, North, East. Colours are
    /// teams: Black is South–North, White is West–East.
    Ambiloa,
    /// The 61-cell hexagonal board, 9 pieces each.
    Alveole,
}

/// Reserve each side holds at the start of `parachute`.
pub const PARACHUTE_RESERVE: u8 = 6;

impl Variant {
    /// Every implemented variant.
    pub const ALL: [Variant; 7] = [
        Variant::Standard,
        Variant::ScrambledEggs,
        Variant::Six,
        Variant::Parachute,
        Variant::Gemma,
        Variant::Ambiloa,
        Variant::Alveole,
    ];

    /// The name used on the command line and in files.
    pub const fn name(self) -> &'static str {
        match self {
            Variant::Standard => "standard",
            Variant::ScrambledEggs => "scrambled-eggs",
            Variant::Six => "6x6",
            Variant::Parachute => "parachute",
            Variant::Gemma => "gemma",
            Variant::Ambiloa => "ambiloa",
            Variant::Alveole => "alveole",
        }
    }

    /// Stable numeric id used in binary data formats.
    pub const fn id(self) -> u8 {
        match self {
            Variant::Standard => 0,
            Variant::ScrambledEggs => 1,
            Variant::Six => 2,
            Variant::Parachute => 3,
            Variant::Gemma => 4,
            Variant::Ambiloa => 5,
            Variant::Alveole => 6,
        }
    }

    /// Inverse of [`Variant::id`].
    pub fn from_id(id: u8) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.id() == id)
    }

    /// The board.
    #[inline]
    pub fn geometry(self) -> &'static Geometry {
        match self {
            Variant::Standard
            | Variant::ScrambledEggs
            | Variant::Parachute
            | Variant::Gemma
            | Variant::Ambiloa => &SQUARE8,
            Variant::Six => &SQUARE6,
            Variant::Alveole => &HEX5,
        }
    }

    /// Number of players taking turns (4 in `ambiloa`, else 2). Outcomes and values are
    /// always per colour (team).
    pub const fn players(self) -> u8 {
        match self {
            Variant::Ambiloa => 4,
            _ => 2,
        }
    }

    /// Whether turns may be compound (a move, then a drop): `parachute`.
    pub const fn has_drops(self) -> bool {
        matches!(self, Variant::Parachute)
    }

    /// Whether cells vanish and stuck pieces may be removed: `gemma`.
    pub const fn has_vanishing(self) -> bool {
        matches!(self, Variant::Gemma)
    }

    /// Whether the rules are plain LOA on its board (no drops, vanishing or partners), so
    /// that the fast whole-line move counter applies.
    pub const fn is_plain(self) -> bool {
        matches!(
            self,
            Variant::Standard | Variant::ScrambledEggs | Variant::Six | Variant::Alveole
        )
    }

    /// Start squares of the second player of each team in `ambiloa` (North for Black,
    /// East for White); empty for other variants.
    pub fn partner_squares(self, color: Color) -> &'static [&'static str] {
        match (self, color) {
            (Variant::Ambiloa, Color::Black) => &["b8", "c8", "d8", "e8", "f8", "g8"],
            (Variant::Ambiloa, Color::White) => &["h2", "h3", "h4", "h5", "h6", "h7"],
            _ => &[],
        }
    }

    /// Pieces each side holds in reserve at the start (6 in `parachute`, else 0).
    pub const fn start_reserve(self) -> u8 {
        match self {
            Variant::Parachute => PARACHUTE_RESERVE,
            _ => 0,
        }
    }

    /// Start squares of one side, as square names.
    pub fn start_squares(self, color: Color) -> &'static [&'static str] {
        match (self, color) {
            (Variant::Standard | Variant::Gemma | Variant::Ambiloa, Color::Black) => &[
                "b1", "c1", "d1", "e1", "f1", "g1", "b8", "c8", "d8", "e8", "f8", "g8",
            ],
            (Variant::Standard | Variant::Gemma | Variant::Ambiloa, Color::White) => &[
                "a2", "a3", "a4", "a5", "a6", "a7", "h2", "h3", "h4", "h5", "h6", "h7",
            ],
            (Variant::ScrambledEggs, Color::Black) => &[
                "b1", "d1", "f1", "c8", "e8", "g8", "a3", "a5", "a7", "h2", "h4", "h6",
            ],
            (Variant::ScrambledEggs, Color::White) => &[
                "c1", "e1", "g1", "b8", "d8", "f8", "a2", "a4", "a6", "h3", "h5", "h7",
            ],
            (Variant::Six, Color::Black) => &["b1", "c1", "d1", "e1", "b6", "c6", "d6", "e6"],
            (Variant::Six, Color::White) => &["a2", "a3", "a4", "a5", "f2", "f3", "f4", "f5"],
            (Variant::Parachute, Color::Black) => &["a3", "a5", "a7", "h2", "h4", "h6"],
            (Variant::Parachute, Color::White) => &["a2", "a4", "a6", "h3", "h5", "h7"],
            (Variant::Alveole, Color::Black) => {
                &["a2", "a5", "b1", "d8", "e1", "f8", "h1", "i2", "i5"]
            }
            (Variant::Alveole, Color::White) => {
                &["a1", "a4", "b6", "d1", "e9", "f1", "h6", "i1", "i4"]
            }
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Variant {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s.trim().to_ascii_lowercase().as_str() {
            "standard" | "8x8" => Ok(Variant::Standard),
            "scrambled-eggs" | "scrambled" | "scrambled_eggs" => Ok(Variant::ScrambledEggs),
            "6x6" | "six" | "pergolazione" => Ok(Variant::Six),
            "parachute" | "paracadute" => Ok(Variant::Parachute),
            "gemma" => Ok(Variant::Gemma),
            "ambiloa" => Ok(Variant::Ambiloa),
            "alveole" | "hex" => Ok(Variant::Alveole),
            _ => Err(Error::new(format!(
                "unknown variant '{s}' (expected one of: {})",
                Variant::ALL.map(|v| v.name()).join(", ")
            ))),
        }
    }
}
