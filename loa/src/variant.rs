//! Game variants: board geometry and start position.

use crate::geometry::{Geometry, SQUARE6, SQUARE8};
use crate::Color;
use std::fmt;
use std::str::FromStr;

/// A variant of Lines of Action. Each names its board and start position; the rule
/// options ([`crate::Rules`]) are independent of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// 8×8, Black b1–g1 and b8–g8, White a2–a7 and h2–h7.
    Standard,
    /// 8×8 with the colours alternating round the edge.
    ScrambledEggs,
    /// 6×6 ("Pergolazione"), 8 pieces each.
    Six,
}

impl Variant {
    /// Every implemented variant.
    pub const ALL: [Variant; 3] = [Variant::Standard, Variant::ScrambledEggs, Variant::Six];

    /// The name used on the command line and in files.
    pub const fn name(self) -> &'static str {
        match self {
            Variant::Standard => "standard",
            Variant::ScrambledEggs => "scrambled-eggs",
            Variant::Six => "6x6",
        }
    }

    /// Stable numeric id used in binary data formats.
    pub const fn id(self) -> u8 {
        match self {
            Variant::Standard => 0,
            Variant::ScrambledEggs => 1,
            Variant::Six => 2,
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
            Variant::Standard | Variant::ScrambledEggs => &SQUARE8,
            Variant::Six => &SQUARE6,
        }
    }

    /// Start squares of one side, as square names.
    pub fn start_squares(self, color: Color) -> &'static [&'static str] {
        match (self, color) {
            (Variant::Standard, Color::Black) => &[
                "b1", "c1", "d1", "e1", "f1", "g1", "b8", "c8", "d8", "e8", "f8", "g8",
            ],
            (Variant::Standard, Color::White) => &[
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
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Variant {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "standard" | "8x8" => Ok(Variant::Standard),
            "scrambled-eggs" | "scrambled" | "scrambled_eggs" => Ok(Variant::ScrambledEggs),
            "6x6" | "six" | "pergolazione" => Ok(Variant::Six),
            _ => Err(format!(
                "unknown variant '{s}' (expected one of: {})",
                Variant::ALL.map(|v| v.name()).join(", ")
            )),
        }
    }
}
