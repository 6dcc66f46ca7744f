//! SGF game files (`FF[4]`) for Lines of Action (`GM[9]`, <https://red-bean.com/sgf/loa.html>):
//! [`SgfGame::parse`] reads one, [`SgfGame::format`] writes one. Every parser returns a
//! [`Error`] naming what was wrong and where (line and column of the text); none
//! panics on any input.
//!
//! # Syntax
//!
//! A file is a collection of game trees `(;PROP[value][value]…;B[…];W[…](…)(…))`.
//! Whitespace may separate any two tokens. In a value `\` escapes the next character (so
//! `\]` and `\\`), and `\` before a line break removes the break; nothing else is changed.
//! Property identifiers are capital letters; lower-case letters in them are dropped, as old
//! (FF\[1\]–FF\[3\]) files write `AddBlack` for `AB`. A property appears at most once per node.
//!
//! Only the main line is read: the first game tree of the collection, and at every branch
//! its first variation. The rest must be well-formed and is otherwise ignored.
//!
//! # Reading
//!
//! * Root properties: `GM` must be 9 (a missing `GM` is taken as 9); `FF` 1 to 4 if given;
//!   `LZ` (below) gives the variant and rules. Without `LZ` (or what it leaves out) the
//!   rules are `classic` and the variant comes from Dyer's setup type `SU` (a variant name,
//!   or `Custom`: `standard` with the setup starting from an empty board) or else from `SZ`
//!   (8 or missing: `standard`, 6: `6x6`). `SZ` must be the variant's board size: 8, 6 for
//!   `6x6`, 9 (its rows `a`–`i`) for `alveole`. Other properties (`CA`, `AP`, `GN`, …) are
//!   ignored; the text is already UTF-8.
//! * Setup, only in nodes before the first move: `AE`, `AB`, `AW` empty a cell or put a
//!   black or white piece on it, starting from the variant's start position, and `PL` names
//!   the side to move (`B`/`W`). Variant state is kept from the start position (`parachute`
//!   reserves, `ambiloa` partners on cells that keep their colour) unless `LZ` gives a whole
//!   `start` position, which the setup properties must then agree with.
//! * Moves: one `B` or `W` per node, the side to move (the team in `ambiloa`; in `parachute`
//!   the drop of a compound turn is a second node of the same side). Values as in
//!   [`crate::notation`] and case-insensitive: `e1-e3`, `c2:c5` or `c2xc5` (the capture mark
//!   is not checked against the board), `@e5` drops, `~e5` removals, `pass` or an empty value
//!   for a pass; trailing annotations such as `+`, `++`, `!`, `?` are ignored. Every move is
//!   played through [`Game`], so an illegal move or a move after the end of the game is an
//!   error naming its number (1 = the first move node) and text. `resign` ends the game as
//!   a resignation of that colour ([`SgfGame::resigned`]); no move may follow it.
//! * Game information, from the first node of the main line that has it: `PB`, `PW`, `RE`,
//!   `DT`, `EV`, and the root's `C` ([`GameInfo`]). `RE` (`B+`, `W+Resign`, `0`, `Draw`, …)
//!   must name the winner the moves give when the game has ended; `RE[W+R]` / `RE[W+Resign]`
//!   of an unfinished game without a `resign` node records Black's resignation (and
//!   likewise for White).
//!
//! # The `LZ` property
//!
//! loazero's root property `LZ` carries what SGF cannot say, as `;`-separated `key=value`
//! pairs (keys case-insensitive, each at most once):
//!
//! * `variant=NAME`: a [`Variant`] name (`standard`, `scrambled-eggs`, `6x6`, `parachute`,
//!   `gemma`, `ambiloa`, `alveole`); default from `SU` or `SZ` as above;
//! * `rules=SPEC`: a [`Rules::parse`] spec (`classic`, `icga,ply-limit=200`, or the full
//!   form that [`Rules`] prints); default `classic`;
//! * `start=TEXT`: the start position in [`Position::to_text`] form, carrying what `AB`/`AW`
//!   cannot (vanished cells, reserves, a pending drop, partners, the player to move);
//! * `ply=N`: the start position's ply count (for the `ply-limit` rule); default 0.
//!
//! For example `LZ[variant=parachute;rules=classic,no-move=loss]`.
//!
//! # Writing
//!
//! [`SgfGame::format`] writes `FF[4]GM[9]SZ[n]CA[UTF-8]AP[loazero]`, `LZ` (with `start` and
//! `AE`/`AB`/`AW`/`PL` only when the start is not the variant's start under the rules, `ply`
//! only when not 0), the game information, `RE` and the moves (`:` for captures, `-` for
//! other moves, drops and removals in loazero notation, `pass`, a final `resign`).
//! [`SgfGame::parse`] reads it back to the same start, rules, moves and resignation.

use crate::geometry::{Geometry, Square};
use crate::moves::Move;
use crate::notation::{moves_text, name_on, parse_move_text, parse_square, MoveText};
use crate::Error;
use crate::{Color, Game, Outcome, Position, Rules, Variant};
use std::collections::HashSet;
use std::str::FromStr;

/// One property of a node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SgfProperty {
    /// The identifier in capitals, e.g. `AB` (lower-case letters of old files dropped).
    pub id: String,
    /// The values in order, escapes resolved.
    pub values: Vec<String>,
    /// Byte offset of the identifier in the text.
    pub offset: usize,
}

/// One node: the properties after a `;`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SgfNode {
    /// Byte offset of the node's `;` in the text.
    pub offset: usize,
    /// The properties in order; no identifier occurs twice.
    pub properties: Vec<SgfProperty>,
}

impl SgfNode {
    /// The property `id` (capitals, e.g. `"AB"`), if the node has it.
    pub fn get(&self, id: &str) -> Option<&SgfProperty> {
        self.properties.iter().find(|p| p.id == id)
    }
}

/// `line L, column C` (both from 1, columns in characters) of byte `offset` of `text`.
fn location(text: &str, offset: usize) -> String {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    format!("line {line}, column {column}")
}

/// An error at byte `offset` of `text`.
fn error_at(text: &str, offset: usize, what: impl std::fmt::Display) -> Error {
    Error::new(format!("SGF {}: {what}", location(text, offset)))
}

/// Parses the general SGF syntax and returns the nodes of the main line: the first game
/// tree of the collection, and at every branch its first variation (see the module docs).
/// The result has at least one node. Errors name the problem and its line and column.
pub fn parse_main_line(text: &str) -> Result<Vec<SgfNode>, Error> {
    /// An open game tree.
    struct Tree {
        open: usize,
        main: bool,
        nodes: usize,
        variations: usize,
    }
    let bytes = text.as_bytes();
    let err = |at: usize, what: String| error_at(text, at, what);
    let mut i = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let mut stack: Vec<Tree> = Vec::new();
    let mut trees = 0usize;
    let mut in_node = false;
    let mut nodes: Vec<SgfNode> = Vec::new();
    // The identifiers of the last main-line node.
    let mut ids: HashSet<String> = HashSet::new();
    while let Some(&b) = bytes.get(i) {
        match b {
            b'(' => {
                let main = match stack.last_mut() {
                    None => {
                        trees += 1;
                        trees == 1
                    }
                    Some(t) => {
                        if t.nodes == 0 {
                            return Err(err(
                                i,
                                "variation '(' before the first node ';' of its game tree".into(),
                            ));
                        }
                        t.variations += 1;
                        t.main && t.variations == 1
                    }
                };
                stack.push(Tree {
                    open: i,
                    main,
                    nodes: 0,
                    variations: 0,
                });
                in_node = false;
                i += 1;
            }
            b')' => {
                let Some(t) = stack.pop() else {
                    return Err(err(i, "')' without a matching '('".into()));
                };
                if t.nodes == 0 {
                    return Err(err(
                        t.open,
                        "empty game tree (a tree starts with a node '(;')".into(),
                    ));
                }
                in_node = false;
                i += 1;
            }
            b';' => {
                let Some(t) = stack.last_mut() else {
                    return Err(err(
                        i,
                        "node ';' outside a game tree (expected '(' first)".into(),
                    ));
                };
                if t.variations > 0 {
                    return Err(err(
                        i,
                        "node ';' after the variations of its game tree".into(),
                    ));
                }
                t.nodes += 1;
                if t.main {
                    ids.clear();
                    nodes.push(SgfNode {
                        offset: i,
                        properties: Vec::new(),
                    });
                }
                in_node = true;
                i += 1;
            }
            b'[' => return Err(err(i, "value '[' without a property identifier".into())),
            b if b.is_ascii_whitespace() => i += 1,
            b if b.is_ascii_alphabetic() => {
                let start = i;
                while bytes.get(i).is_some_and(u8::is_ascii_alphabetic) {
                    i += 1;
                }
                let word = text.get(start..i).unwrap_or("");
                let id: String = word.chars().filter(char::is_ascii_uppercase).collect();
                if !in_node {
                    return Err(err(
                        start,
                        format!(
                            "property '{}' outside a node (expected ';' before it)",
                            shorten(word)
                        ),
                    ));
                }
                if id.is_empty() {
                    return Err(err(
                        start,
                        format!(
                            "property identifier '{}' has no capital letter",
                            shorten(word)
                        ),
                    ));
                }
                let mut values = Vec::new();
                loop {
                    while bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
                        i += 1;
                    }
                    if bytes.get(i) != Some(&b'[') {
                        break;
                    }
                    let Some((value, next)) = read_value(bytes, i) else {
                        let what = format!(
                            "value of property {} is never closed (missing ']'; truncated?)",
                            shorten(&id)
                        );
                        return Err(err(i, what));
                    };
                    values.push(value);
                    i = next;
                }
                if values.is_empty() {
                    return Err(err(
                        start,
                        format!(
                            "property {} has no value (expected '[' after it)",
                            shorten(&id)
                        ),
                    ));
                }
                if stack.last().is_some_and(|t| t.main) {
                    if let Some(node) = nodes.last_mut() {
                        if !ids.insert(id.clone()) {
                            return Err(err(
                                start,
                                format!("property {} appears twice in one node", shorten(&id)),
                            ));
                        }
                        node.properties.push(SgfProperty {
                            id,
                            values,
                            offset: start,
                        });
                    }
                }
            }
            _ => {
                let c = text.get(i..).and_then(|s| s.chars().next()).unwrap_or('?');
                return Err(err(i, format!("unexpected character {c:?}")));
            }
        }
    }
    if let Some(t) = stack.last() {
        return Err(err(
            t.open,
            "game tree '(' is never closed (missing ')'; truncated?)".into(),
        ));
    }
    if nodes.is_empty() {
        return Err(Error::new(
            "SGF: no game tree (an SGF file starts with '(;')",
        ));
    }
    Ok(nodes)
}

/// The value whose `[` is at byte `open` of `bytes`, escapes resolved, and the offset after
/// its `]`; `None` when it is never closed.
fn read_value(bytes: &[u8], open: usize) -> Option<(String, usize)> {
    let mut value = Vec::new();
    let mut i = open + 1;
    loop {
        match *bytes.get(i)? {
            b']' => break,
            b'\\' => {
                i += 1;
                match *bytes.get(i)? {
                    // A soft line break: `\` and the break vanish.
                    c @ (b'\n' | b'\r') => {
                        let pair = if c == b'\n' { b'\r' } else { b'\n' };
                        if bytes.get(i + 1) == Some(&pair) {
                            i += 1;
                        }
                    }
                    c => value.push(c),
                }
            }
            c => value.push(c),
        }
        i += 1;
    }
    // Only whole ASCII characters were dropped, so this is valid UTF-8.
    Some((String::from_utf8_lossy(&value).into_owned(), i + 1))
}

/// At most 40 characters of `s`, with `…` when cut.
fn shorten(s: &str) -> String {
    match s.char_indices().nth(40) {
        Some((at, _)) => format!("{}…", s.get(..at).unwrap_or("")),
        None => s.to_string(),
    }
}

/// `ID[value][value]` as shortened text for messages.
fn show(p: &SgfProperty) -> String {
    let values: String = p.values.iter().map(|v| format!("[{v}]")).collect();
    shorten(&format!("{}{values}", p.id))
}

/// Game information of an SGF file (all optional).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GameInfo {
    /// Black's player (`PB`).
    pub black: Option<String>,
    /// White's player (`PW`).
    pub white: Option<String>,
    /// The result as written (`RE`), e.g. `B+`, `W+Resign`, `0`.
    pub result: Option<String>,
    /// The date (`DT`).
    pub date: Option<String>,
    /// The event (`EV`).
    pub event: Option<String>,
    /// The root node's comment (`C`).
    pub comment: Option<String>,
}

/// A game read from or written to SGF: the game (variant, rules, start position, moves), a
/// resignation, and the game information.
#[derive(Clone, Debug)]
pub struct SgfGame {
    /// The game: its start position, rules and moves.
    pub game: Game,
    /// The colour that resigned after the moves, if one did (only while the game is not
    /// over; [`SgfGame::format`] ignores it otherwise).
    pub resigned: Option<Color>,
    /// Players, result text, date, event, comment.
    pub info: GameInfo,
}

/// The loazero root property `LZ` (see the module docs).
#[derive(Default)]
struct LzSpec {
    variant: Option<Variant>,
    rules: Option<Rules>,
    start: Option<String>,
    ply: u32,
}

impl LzSpec {
    fn parse(value: &str) -> Result<LzSpec, String> {
        let mut spec = LzSpec::default();
        let mut seen: Vec<String> = Vec::new();
        for part in value.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((key, v)) = part.split_once('=') else {
                return Err(format!("'{}' is not key=value", shorten(part)));
            };
            let key = key.trim().to_ascii_lowercase();
            if seen.contains(&key) {
                return Err(format!("key '{}' given twice", shorten(&key)));
            }
            match key.as_str() {
                "variant" => spec.variant = Some(Variant::from_str(v).map_err(|e| e.message)?),
                "rules" => spec.rules = Some(Rules::parse(v).map_err(|e| e.message)?),
                "start" => spec.start = Some(v.trim().to_string()),
                "ply" => {
                    spec.ply = v
                        .trim()
                        .parse()
                        .map_err(|_| format!("bad ply '{}' (expected a number)", shorten(v)))?
                }
                _ => {
                    return Err(format!(
                        "unknown key '{}' (expected variant, rules, start or ply)",
                        shorten(&key)
                    ))
                }
            }
            seen.push(key);
        }
        Ok(spec)
    }
}

/// The `rules` text of `LZ`: a preset name when the rules are one, else the full spec.
fn rules_text(rules: &Rules) -> String {
    if *rules == Rules::classic() {
        "classic".into()
    } else if *rules == Rules::icga() {
        "icga".into()
    } else {
        rules.to_string()
    }
}

/// The winner an `RE` value claims: `Some(Some(c))` a win of `c`, `Some(None)` a draw,
/// `None` when it names none (`?`, `Void`, other text); and whether it is a resignation.
fn result_claim(re: &str) -> (Option<Option<Color>>, bool) {
    let re = re.trim().to_ascii_uppercase();
    if matches!(re.as_str(), "0" | "D" | "DRAW") {
        return (Some(None), false);
    }
    let winner = match re.get(..2) {
        Some("B+") => Color::Black,
        Some("W+") => Color::White,
        _ => return (None, false),
    };
    let how = re.get(2..).unwrap_or("");
    (Some(Some(winner)), how == "R" || how == "RESIGN")
}

/// `black wins`, `white wins` or `a draw`.
fn outcome_text(o: Option<Color>) -> String {
    match o {
        Some(c) => format!("{c} wins"),
        None => "a draw".into(),
    }
}

/// `B` or `W`.
fn color_letter(c: Color) -> char {
    match c {
        Color::Black => 'B',
        Color::White => 'W',
    }
}

/// The only value of `p`, or an error naming it.
fn single<'a>(text: &str, p: &'a SgfProperty) -> Result<&'a str, Error> {
    match p.values.as_slice() {
        [v] => Ok(v),
        _ => Err(error_at(
            text,
            p.offset,
            format!("{} takes one value", show(p)),
        )),
    }
}

/// A move value without whitespace and trailing annotations (`+`, `!`, `?`, …).
fn move_core(value: &str) -> &str {
    value
        .trim()
        .trim_end_matches(|c: char| !c.is_ascii_alphanumeric())
        .trim()
}

/// The legal move of `game` that `text` (a [`move_core`], `""` for a pass) names; the
/// capture mark of a normal move is not checked.
fn find_move(game: &Game, text: &str) -> Result<Move, String> {
    let pos = game.position();
    let parsed = if text.is_empty() {
        MoveText::Pass
    } else {
        parse_move_text(text, pos.geometry()).map_err(|e| e.message)?
    };
    let legal = game.legal_moves();
    legal
        .iter()
        .copied()
        .find(|m| match parsed {
            MoveText::Pass => m.is_pass(),
            MoveText::Drop(sq) => m.is_drop() && m.square() == sq,
            MoveText::Remove(sq) => m.is_remove() && m.square() == sq,
            MoveText::Step { from, to, .. } => m.is_step() && m.from() == from && m.to() == to,
        })
        .ok_or_else(|| {
            format!(
                "not legal in position {} (legal: {})",
                pos.to_text(),
                moves_text(&legal)
            )
        })
}

/// A move in SGF: `e1-e3`, `c2:c5` for a capture, `@e5`, `~e5`, `pass`.
fn move_text(mv: Move, g: &Geometry) -> String {
    if mv.is_step() {
        let sep = if mv.is_capture() { ':' } else { '-' };
        format!("{}{sep}{}", name_on(mv.from(), g), name_on(mv.to(), g))
    } else {
        mv.to_string()
    }
}

/// Escapes `\` and `]` for an SGF value.
fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace(']', "\\]")
}

/// The squares of a bitboard, in ascending order.
fn squares(mut bits: u64) -> impl Iterator<Item = Square> {
    std::iter::from_fn(move || {
        (bits != 0).then(|| {
            let sq = bits.trailing_zeros() as Square;
            bits &= bits - 1;
            sq
        })
    })
}

impl SgfGame {
    /// A game with no resignation and no game information.
    pub fn new(game: Game) -> SgfGame {
        SgfGame {
            game,
            resigned: None,
            info: GameInfo::default(),
        }
    }

    /// How the game ended: the game's outcome, or a win of the side that did not resign;
    /// `None` while it is unfinished.
    pub fn result(&self) -> Option<Outcome> {
        self.game
            .outcome()
            .or_else(|| self.resigned.map(|c| Outcome::Win(c.opponent())))
    }

    /// Reads an SGF file's main line (see the module docs): variant and rules, start
    /// position, every move checked for legality, resignation and game information. Errors
    /// name the property or move (moves by number) and its line and column.
    pub fn parse(text: &str) -> Result<SgfGame, Error> {
        let nodes = parse_main_line(text)?;
        let root = nodes.first().ok_or_else(|| Error::new("SGF: no node"))?;
        let at = |p: &SgfProperty, what: String| {
            error_at(text, p.offset, format!("{}: {what}", show(p)))
        };

        if let Some(p) = root.get("GM") {
            if single(text, p)?.trim().parse::<u32>() != Ok(9) {
                return Err(at(p, "not a Lines of Action file (GM[9])".into()));
            }
        }
        if let Some(p) = root.get("FF") {
            if !matches!(single(text, p)?.trim().parse::<u32>(), Ok(1..=4)) {
                return Err(at(
                    p,
                    "unsupported SGF version (FF[1] to FF[4] are read)".into(),
                ));
            }
        }
        let lz = match root.get("LZ") {
            Some(p) => LzSpec::parse(single(text, p)?).map_err(|e| at(p, e))?,
            None => LzSpec::default(),
        };
        let mut custom = false;
        let mut variant = lz.variant;
        if let (None, Some(p)) = (variant, root.get("SU")) {
            let name = single(text, p)?.trim();
            if name.eq_ignore_ascii_case("custom") {
                custom = true;
            } else {
                variant = Some(Variant::from_str(name).map_err(|e| at(p, e.message))?);
            }
        }
        let size = match root.get("SZ") {
            Some(p) => {
                let v = single(text, p)?.trim();
                let (a, b) = v.split_once(':').unwrap_or((v, v));
                match (a.trim().parse::<u32>(), b.trim().parse::<u32>()) {
                    (Ok(a), Ok(b)) if a == b => Some((a, p)),
                    _ => return Err(at(p, "bad board size (expected e.g. SZ[8])".into())),
                }
            }
            None => None,
        };
        let variant = match (variant, size) {
            (Some(v), _) => v,
            (None, None | Some((8, _))) => Variant::Standard,
            (None, Some((6, _))) => Variant::Six,
            (None, Some((_, p))) => {
                return Err(at(
                    p,
                    "no variant has this board size without LZ \
                     (8: standard, 6: 6x6; others need LZ[variant=…])"
                        .into(),
                ))
            }
        };
        let g = variant.geometry();
        if let Some((n, p)) = size {
            if n != g.size as u32 {
                return Err(at(p, format!("the {variant} board has size {}", g.size)));
            }
        }
        let rules = lz.rules.unwrap_or_else(Rules::classic);

        let mut info = GameInfo {
            comment: root.get("C").map(|p| p.values.concat()),
            ..GameInfo::default()
        };
        for (id, field) in [
            ("PB", &mut info.black),
            ("PW", &mut info.white),
            ("RE", &mut info.result),
            ("DT", &mut info.date),
            ("EV", &mut info.event),
        ] {
            if let Some(p) = nodes.iter().find_map(|n| n.get(id)) {
                *field = Some(single(text, p)?.to_string());
            }
        }

        // Setup, from the nodes before the first move.
        let is_move = |p: &SgfProperty| p.id == "B" || p.id == "W";
        let first_move = nodes
            .iter()
            .position(|n| n.properties.iter().any(is_move))
            .unwrap_or(nodes.len());
        let start = Position::start(variant, &rules);
        let mut pieces = if custom {
            [0, 0]
        } else {
            [start.pieces(Color::Black), start.pieces(Color::White)]
        };
        let mut to_move: Option<Color> = None;
        let mut setup = false;
        for (k, node) in nodes.iter().enumerate() {
            let mut touched = 0u64;
            for id in ["AE", "AB", "AW", "PL"] {
                let Some(p) = node.get(id) else { continue };
                if k == first_move {
                    return Err(at(p, "setup and a move in one node".into()));
                }
                if k > first_move {
                    return Err(at(p, "setup after the first move is not supported".into()));
                }
                setup = true;
                if id == "PL" {
                    to_move = Some(
                        Color::from_str(single(text, p)?.trim()).map_err(|e| at(p, e.message))?,
                    );
                    continue;
                }
                for v in &p.values {
                    let sq = parse_square(v.trim(), g).map_err(|e| at(p, e.message))?;
                    let bit = 1u64 << sq;
                    if touched & bit != 0 {
                        return Err(at(
                            p,
                            format!("cell {} is set twice in one node", name_on(sq, g)),
                        ));
                    }
                    touched |= bit;
                    pieces[0] &= !bit;
                    pieces[1] &= !bit;
                    match id {
                        "AB" => pieces[0] |= bit,
                        "AW" => pieces[1] |= bit,
                        _ => {}
                    }
                }
            }
        }
        let lz_prop = root.get("LZ");
        let mut position = match (&lz.start, lz_prop) {
            (Some(start_text), Some(p)) => {
                let pos = Position::from_text(start_text, variant).map_err(|e| at(p, e.message))?;
                let same_board = pieces == [pos.pieces(Color::Black), pos.pieces(Color::White)];
                if setup && (!same_board || to_move.is_some_and(|c| c != pos.to_move())) {
                    return Err(at(
                        p,
                        "the setup properties AB/AW/AE/PL disagree with the start position".into(),
                    ));
                }
                pos
            }
            _ if setup => {
                let mut extra = start.extra();
                let same = (pieces[0] & start.pieces(Color::Black))
                    | (pieces[1] & start.pieces(Color::White));
                extra.partners &= same;
                Position::with_extra(
                    variant,
                    pieces[0],
                    pieces[1],
                    to_move.unwrap_or(start.to_move()),
                    extra,
                )
                .map_err(|e| {
                    error_at(
                        text,
                        root.offset,
                        format!("the setup properties AB/AW/AE/PL give no valid position: {e}"),
                    )
                })?
            }
            _ => start,
        };
        position.set_ply(lz.ply);

        let mut game = Game::from_position(position, rules);
        let mut resigned: Option<Color> = None;
        let mut number = 0usize;
        for node in nodes.iter().skip(first_move) {
            let (p, color) = match (node.get("B"), node.get("W")) {
                (Some(p), None) => (p, Color::Black),
                (None, Some(p)) => (p, Color::White),
                (None, None) => continue,
                (Some(_), Some(p)) => return Err(at(p, "a node with both B and W".into())),
            };
            number += 1;
            let fail = |what: String| {
                error_at(
                    text,
                    p.offset,
                    format!("move {number} ({}): {what}", show(p)),
                )
            };
            let value = single(text, p)?;
            let core = move_core(value);
            if core.is_empty() && !value.trim().is_empty() {
                return Err(fail("no move in the value".into()));
            }
            if let Some(r) = resigned {
                return Err(fail(format!("follows {r}'s resignation")));
            }
            if let Some(o) = game.outcome() {
                return Err(fail(format!(
                    "the game is already over ({})",
                    outcome_text(o.winner())
                )));
            }
            if core.eq_ignore_ascii_case("resign") {
                resigned = Some(color);
                continue;
            }
            let side = game.position().to_move();
            if color != side {
                return Err(fail(format!("it is {side}'s turn")));
            }
            let mv = find_move(&game, core).map_err(&fail)?;
            game.play(mv).map_err(|e| fail(e.message))?;
        }

        if let (Some(re), Some(p)) = (&info.result, nodes.iter().find_map(|n| n.get("RE"))) {
            let (claim, resignation) = result_claim(re);
            let actual = match resigned {
                Some(r) => Some(Some(r.opponent())),
                None => game.outcome().map(Outcome::winner),
            };
            if let (Some(c), Some(a)) = (claim, actual) {
                if c != a {
                    return Err(at(p, format!("the moves give {}", outcome_text(a))));
                }
            }
            if let (Some(Some(winner)), true, None) = (claim, resignation, actual) {
                resigned = Some(winner.opponent());
            }
        }
        Ok(SgfGame {
            game,
            resigned,
            info,
        })
    }

    /// The SGF text of the game (see the module docs), ending in a line break.
    /// [`SgfGame::parse`] reads it back to the same variant, rules, start position (ply
    /// included), moves, resignation and game information; only `info.result` may differ:
    /// `RE` is written from the game's result when it has one ([`SgfGame::result`]: `B+`,
    /// `W+`, `0` for a draw, `B+Resign`, `W+Resign`), else from `info.result`.
    pub fn format(&self) -> String {
        let game = &self.game;
        let start = game.start();
        let variant = start.variant();
        let rules = game.rules();
        let g = variant.geometry();
        let standard = Position::start(variant, rules);
        let custom = *start != standard;
        let mut lz = format!("variant={variant};rules={}", rules_text(rules));
        if custom {
            lz.push_str(&format!(";start={}", start.to_text()));
        }
        if start.ply() != 0 {
            lz.push_str(&format!(";ply={}", start.ply()));
        }
        let mut s = format!("(;FF[4]GM[9]SZ[{}]CA[UTF-8]AP[loazero]\nLZ[{lz}]", g.size);
        let resigned = self.resigned.filter(|_| !game.is_over());
        let result = match (game.outcome(), resigned) {
            (Some(Outcome::Win(c)), _) => Some(format!("{}+", color_letter(c))),
            (Some(Outcome::Draw), _) => Some("0".into()),
            (None, Some(r)) => Some(format!("{}+Resign", color_letter(r.opponent()))),
            (None, None) => self.info.result.clone(),
        };
        let info = [
            ("PB", &self.info.black),
            ("PW", &self.info.white),
            ("EV", &self.info.event),
            ("DT", &self.info.date),
            ("RE", &result),
            ("C", &self.info.comment),
        ];
        for (id, value) in info {
            if let Some(v) = value {
                s.push_str(&format!("\n{id}[{}]", escape(v)));
            }
        }
        if custom {
            let cells = |bits: u64| -> String {
                squares(bits)
                    .map(|sq| format!("[{}]", name_on(sq, g)))
                    .collect()
            };
            let (b0, w0) = (standard.pieces(Color::Black), standard.pieces(Color::White));
            let (b, w) = (start.pieces(Color::Black), start.pieces(Color::White));
            s.push('\n');
            for (id, bits) in [
                ("AE", (b0 | w0) & !(b | w)),
                ("AB", b & !b0),
                ("AW", w & !w0),
            ] {
                if bits != 0 {
                    s.push_str(&format!("{id}{}", cells(bits)));
                }
            }
            s.push_str(&format!("PL[{}]", color_letter(start.to_move())));
        }
        s.push('\n');
        let mut pos = *start;
        for (i, &mv) in game.moves().iter().enumerate() {
            s.push_str(&format!(
                ";{}[{}]",
                color_letter(pos.to_move()),
                move_text(mv, g)
            ));
            if i % 10 == 9 {
                s.push('\n');
            }
            pos.play(mv);
        }
        if let Some(r) = resigned {
            s.push_str(&format!(";{}[resign]", color_letter(r)));
        }
        s.push_str(")\n");
        s
    }
}

#[cfg(test)]
#[path = "sgf_tests.rs"]
mod tests;
