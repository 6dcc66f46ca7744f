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
mod tests {
    use super::*;
    use crate::testing::{random_game_positions, XorShift};
    use crate::GameRecord;

    /// A random game from `start`: up to `max_plies` random moves, so it may end by the
    /// rules; some unfinished ones end in a resignation, some have game information.
    fn random_sgf(start: Position, rules: Rules, max_plies: usize, rng: &mut XorShift) -> SgfGame {
        let mut game = Game::from_position(start, rules);
        for _ in 0..rng.below(max_plies + 1) {
            if game.is_over() {
                break;
            }
            let moves = game.legal_moves();
            game.play(moves[rng.below(moves.len())]).unwrap();
        }
        let mut sgf = SgfGame::new(game);
        if !sgf.game.is_over() && rng.below(3) == 0 {
            sgf.resigned = Some(Color::ALL[rng.below(2)]);
        }
        if rng.below(2) == 0 {
            sgf.info.black = Some("Mark H.M. Winands [MIA]".into());
            sgf.info.white = Some("back\\slash ]bracket[ \u{e9}".into());
            sgf.info.comment = Some("line 1\nline 2 \\] ;(".into());
            sgf.info.date = Some("2024-05-01".into());
            sgf.info.event = Some("test".into());
        }
        sgf
    }

    /// The SGF text of `sgf` reads back to the same game and writes the same text.
    fn assert_round_trip(sgf: &SgfGame) {
        let text = sgf.format();
        let back = SgfGame::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let (a, b) = (&sgf.game, &back.game);
        assert_eq!(b.start(), a.start(), "{text}");
        assert_eq!(b.start().ply(), a.start().ply(), "{text}");
        assert_eq!(b.rules(), a.rules(), "{text}");
        assert_eq!(b.moves(), a.moves(), "{text}");
        assert_eq!(b.position(), a.position(), "{text}");
        assert_eq!(b.outcome(), a.outcome(), "{text}");
        assert_eq!(back.resigned, sgf.resigned, "{text}");
        assert_eq!(back.result(), sgf.result(), "{text}");
        let info = GameInfo {
            result: back.info.result.clone(),
            ..sgf.info.clone()
        };
        assert_eq!(back.info, info, "{text}");
        assert_eq!(back.format(), text);
    }

    #[test]
    fn random_games_of_every_variant_round_trip() {
        let mut rng = XorShift::new(11);
        let rule_sets = [
            Rules::classic(),
            Rules::icga(),
            Rules::parse("no-move=loss,first=white").unwrap(),
            Rules::parse("repetition=off,ply-limit=30").unwrap(),
        ];
        let mut ended = 0;
        for variant in Variant::ALL {
            for rules in rule_sets {
                for _ in 0..6 {
                    let sgf = random_sgf(Position::start(variant, &rules), rules, 150, &mut rng);
                    ended += sgf.game.is_over() as usize;
                    assert_round_trip(&sgf);
                }
            }
        }
        assert!(ended > 20, "only {ended} games ended");
        for game in crate::testing::random_games(&Variant::ALL, Rules::classic(), 70, 100, 2) {
            assert_round_trip(&SgfGame::new(game));
        }
    }

    #[test]
    fn custom_starts_of_every_variant_round_trip() {
        let mut rng = XorShift::new(5);
        for variant in Variant::ALL {
            let rules = Rules::classic();
            let positions = random_game_positions(variant, &rules, 4, 40, 3);
            for start in positions.iter().step_by(7) {
                let sgf = random_sgf(*start, rules, 30, &mut rng);
                assert_round_trip(&sgf);
                let text = sgf.format();
                assert_eq!(
                    text.contains("start="),
                    *start != Position::start(variant, &rules)
                );
                assert!(text.contains("PL[") || *start == Position::start(variant, &rules));
            }
        }
        // Parachute with a drop pending: the drop is a node of the same colour.
        let rules = Rules::classic();
        let mut game = Game::new(Variant::Parachute, rules);
        let mv = game.legal_moves()[0];
        game.play(mv).unwrap();
        let drop = game.legal_moves()[0];
        assert!(drop.is_drop());
        game.play(drop).unwrap();
        let text = SgfGame::new(game).format();
        assert!(text.contains(&format!(";B[{mv}];B[{drop}]")), "{text}");
    }

    /// The page's example style: capitals, `:` for captures, annotations.
    const EXAMPLE: &str = "(;FF[4]GM[9]SZ[8]PB[Black]PW[White]
;B[e1-e3] ; W[H3:E3++]
;B[D1-d3!];W[a2-c2?]
;B[d3:a3])";

    #[test]
    fn reads_the_page_style_case_insensitively() {
        let sgf = SgfGame::parse(EXAMPLE).unwrap();
        let mut game = Game::new(Variant::Standard, Rules::classic());
        for m in ["e1-e3", "h3xe3", "d1-d3", "a2-c2", "d3xa3"] {
            game.play_text(m).unwrap();
        }
        assert_eq!(sgf.game.moves(), game.moves());
        assert_eq!(sgf.game.rules(), &Rules::classic());
        assert_eq!(sgf.info.black.as_deref(), Some("Black"));
        assert_eq!(sgf.resigned, None);
        // A capture written with '-' or 'x', a quiet move written with ':'.
        let loose = EXAMPLE
            .replace("H3:E3++", "h3-e3")
            .replace("D1-d3!", "d1:d3")
            .replace("d3:a3", "d3xa3");
        assert_eq!(SgfGame::parse(&loose).unwrap().game.moves(), game.moves());
        // Lower-case letters in identifiers (old files), whitespace, a BOM.
        let old = format!("\u{feff} \n{}", EXAMPLE.replace("PB[", "PlayerBlack ["));
        assert_eq!(
            SgfGame::parse(&old).unwrap().info.black.as_deref(),
            Some("Black")
        );
        // Passes and resignation.
        let r = SgfGame::parse("(;GM[9];B[e1-e3];W[resign])").unwrap();
        assert_eq!(r.resigned, Some(Color::White));
        assert_eq!(r.result(), Some(Outcome::Win(Color::Black)));
        let r = SgfGame::parse("(;GM[9];B[e1-e3];W[h3:e3];B[RESIGN])").unwrap();
        assert_eq!(r.resigned, Some(Color::Black));
        assert_eq!(r.game.moves().len(), 2);
        let r = SgfGame::parse("(;GM[9]RE[W+R];B[e1-e3])").unwrap();
        assert_eq!(r.resigned, Some(Color::Black));
    }

    #[test]
    fn the_main_line_is_the_first_variation() {
        let text = "(;GM[9];B[e1-e3](;W[h3:e3](;B[d1-d3])(;B[c1-c3]))(;W[a2-c2]))(;GM[1])";
        let sgf = SgfGame::parse(text).unwrap();
        let shown: Vec<String> = sgf.game.moves().iter().map(|m| m.to_string()).collect();
        assert_eq!(shown, ["e1-e3", "h3xe3", "d1-d3"]);
    }

    #[test]
    fn values_unescape_and_escape() {
        let sgf = SgfGame::parse("(;GM[9]C[a \\] b \\\\ c\\\nd]PB[x\\y])").unwrap();
        assert_eq!(sgf.info.comment.as_deref(), Some("a ] b \\ cd"));
        assert_eq!(sgf.info.black.as_deref(), Some("xy"));
        let mut sgf = SgfGame::new(Game::new(Variant::Standard, Rules::classic()));
        sgf.info.comment = Some("]\\]".into());
        assert!(sgf.format().contains("C[\\]\\\\\\]]"), "{}", sgf.format());
        assert_round_trip(&sgf);
    }

    #[test]
    fn setup_properties_give_a_custom_start() {
        let text = "(;GM[9]SZ[8]AE[b1][c1][d1][e1][f1][g1][b8][c8][d8][e8][f8][g8]\
                    AB[d4][f6]AW[a2]PL[w];W[a4:d4])";
        let sgf = SgfGame::parse(text).unwrap();
        let expected =
            Position::from_text("8/w6w/w4b1w/w6w/w2b3w/w6w/w6w/8 w", Variant::Standard).unwrap();
        assert_eq!(sgf.game.start(), &expected);
        assert_eq!(sgf.game.moves().len(), 1);
        // Dyer's custom setup starts from an empty board.
        let sgf = SgfGame::parse("(;GM[9]SU[Custom]AB[d4][e5]AW[c3])").unwrap();
        let expected = Position::from_text("8/8/8/4b3/3b4/2w5/8/8 b", Variant::Standard).unwrap();
        assert_eq!(sgf.game.start(), &expected);
        // SU names a variant; SZ[6] without LZ is 6x6.
        let sgf = SgfGame::parse("(;GM[9]SU[Scrambled-eggs])").unwrap();
        assert_eq!(sgf.game.start().variant(), Variant::ScrambledEggs);
        let sgf = SgfGame::parse("(;GM[9]SZ[6];B[b1-b3])").unwrap();
        assert_eq!(sgf.game.start().variant(), Variant::Six);
        // LZ gives variant and rules, and writing shows them.
        let text = "(;GM[9]LZ[variant=parachute;rules=classic,no-move=loss])";
        let sgf = SgfGame::parse(text).unwrap();
        assert_eq!(
            sgf.game.start(),
            &Position::start(Variant::Parachute, &Rules::classic())
        );
        assert_eq!(sgf.game.rules().no_move, crate::rules::NoMove::Loss);
        let written = sgf.format();
        assert!(
            written.starts_with(
                "(;FF[4]GM[9]SZ[8]CA[UTF-8]AP[loazero]\nLZ[variant=parachute;rules=first=black,"
            ),
            "{written}"
        );
        assert!(
            !written.contains("AB[") && !written.contains("PL["),
            "{written}"
        );
        let hex = SgfGame::new(Game::new(Variant::Alveole, Rules::icga())).format();
        assert!(
            hex.contains("SZ[9]") && hex.contains("LZ[variant=alveole;rules=icga]"),
            "{hex}"
        );
    }

    #[test]
    fn a_custom_start_is_written_as_setup() {
        let rules = Rules::classic();
        let start =
            Position::from_text("8/w6w/w4b1w/w6w/w2b3w/w6w/w6w/8 w", Variant::Standard).unwrap();
        let sgf = SgfGame::new(Game::from_position(start, rules));
        let text = sgf.format();
        assert!(
            text.contains("AE[b1][c1][d1][e1][f1][g1][b8][c8][d8][e8][f8][g8]AB[d4][f6]PL[W]"),
            "{text}"
        );
        // Without LZ's start the setup alone gives the same position.
        let plain = text.replace(";start=8/w6w/w4b1w/w6w/w2b3w/w6w/w6w/8 w", "");
        assert_ne!(plain, text);
        assert_eq!(SgfGame::parse(&plain).unwrap().game.start(), &start);
        // Setup that disagrees with LZ's start is an error.
        let e = SgfGame::parse(&text.replace("AB[d4]", "AB[d5]")).unwrap_err();
        assert!(e.message.contains("disagree"), "{e}");
    }

    /// The error message of `text`, which must not parse.
    fn error(text: &str) -> String {
        match SgfGame::parse(text) {
            Ok(_) => panic!("{text:?} parsed"),
            Err(e) => e.message,
        }
    }

    #[test]
    fn illegal_moves_name_their_number() {
        let e = error("(;GM[9]\n;B[e1-e3];W[h3:e3]\n;B[d1-d4])");
        assert!(
            e.contains("move 3") && e.contains("B[d1-d4]") && e.contains("line 3, column 2"),
            "{e}"
        );
        let e = error("(;GM[9];W[a2-c2])");
        assert!(e.contains("move 1") && e.contains("black's turn"), "{e}");
        let e = error("(;GM[9];B[e1-e3];W[z9-a1])");
        assert!(e.contains("move 2") && e.contains("z9"), "{e}");
        let e = error("(;GM[9];B[e1-e3];W[resign];B[d1-d3])");
        assert!(e.contains("move 3") && e.contains("resignation"), "{e}");
        let e = error("(;GM[9];B[pass])");
        assert!(e.contains("move 1") && e.contains("not legal"), "{e}");
        let e = error("(;GM[9];B[])");
        assert!(e.contains("move 1") && e.contains("not legal"), "{e}");
        let e = error("(;GM[9];B[e1-e3]W[a2-c2])");
        assert!(e.contains("both B and W"), "{e}");
        let e = error("(;GM[9];B[e1-e3];AB[d4])");
        assert!(e.contains("setup"), "{e}");
        let e = error("(;GM[9];B[e1-e3][d1-d3])");
        assert!(e.contains("one value"), "{e}");
        // A move after the end of the game.
        let rules = Rules::classic();
        let mut rng = XorShift::new(3);
        let over = loop {
            let sgf = random_sgf(Position::start(Variant::Six, &rules), rules, 400, &mut rng);
            if sgf.game.is_over() {
                break sgf;
            }
        };
        let text = over.format();
        let n = over.game.moves().len();
        let extra = text.replace(")\n", ";B[pass])");
        let e = error(&extra);
        assert!(
            e.contains(&format!("move {}", n + 1)) && e.contains("over"),
            "{e}"
        );
        // RE must agree with the end of the game.
        let winner = over.game.outcome().unwrap().winner();
        let wrong = match winner {
            Some(Color::Black) => "RE[W+]",
            _ => "RE[B+]",
        };
        let re = text.lines().find(|l| l.starts_with("RE[")).unwrap();
        assert!(error(&text.replace(re, wrong)).contains("the moves give"));
    }

    #[test]
    fn forced_passes_read_as_pass_or_empty() {
        let rules = Rules::classic();
        // Black's a1 and h8 are boxed in by White; nobody is connected.
        let pos = Position::from_text("6wb/6ww/8/8/8/8/ww6/bw6 b", Variant::Standard).unwrap();
        assert_eq!(pos.legal_moves(&rules).as_slice(), [Move::PASS]);
        for value in ["pass", "PASS", "", " pass+ "] {
            let mut sgf = SgfGame::new(Game::from_position(pos, rules));
            sgf.game.play(Move::PASS).unwrap();
            let text = sgf.format().replace("[pass]", &format!("[{value}]"));
            assert_eq!(
                SgfGame::parse(&text).unwrap().game.moves(),
                [Move::PASS],
                "{text}"
            );
        }
    }

    #[test]
    fn root_properties_are_checked() {
        for (text, word) in [
            ("(;GM[1])", "GM[1]"),
            ("(;GM[12])", "GM[12]"),
            ("(;GM[nine])", "GM"),
            ("(;FF[5])", "FF[5]"),
            ("(;SZ[19])", "SZ[19]"),
            ("(;SZ[8:6])", "SZ[8:6]"),
            ("(;SZ[99999999999999999999999])", "size"),
            ("(;LZ[variant=gemma]SZ[6])", "gemma"),
            ("(;LZ[variant=alveole]SZ[8])", "size 9"),
            ("(;LZ[variant=chess])", "chess"),
            ("(;LZ[rules=fide])", "fide"),
            ("(;LZ[colour=red])", "colour"),
            ("(;LZ[variant])", "key=value"),
            ("(;LZ[ply=-1])", "ply"),
            ("(;LZ[variant=gemma;variant=6x6])", "twice"),
            ("(;LZ[start=8/8 b])", "rows"),
            ("(;SU[Chess])", "Chess"),
            ("(;AB[z9])", "z9"),
            ("(;AB[a1:c3])", "a1:c3"),
            ("(;PL[x])", "PL[x]"),
            ("(;SU[Custom]AB[d4])", "each side"),
            ("(;AB[d4]AW[D4])", "d4 is set twice"),
            ("(;AB[d4];AW[d4];B[pass])", "move 1"),
            ("(;GM[9]RE[B+];B[e1-e3])", ""),
        ] {
            if word.is_empty() {
                assert!(SgfGame::parse(text).is_ok(), "{text}");
                continue;
            }
            let e = error(text);
            assert!(e.contains(word), "{text}: {e}");
        }
        assert_eq!(
            SgfGame::parse("(;LZ[variant=alveole]SZ[9])")
                .unwrap()
                .game
                .start()
                .variant(),
            Variant::Alveole
        );
    }

    #[test]
    fn syntax_errors_name_what_and_where() {
        for (text, words) in [
            ("", &["no game tree"][..]),
            ("   \n ", &["no game tree"]),
            ("(", &["never closed", "line 1, column 1"]),
            ("(;GM[9]", &["never closed"]),
            ("(;GM[9]\nC[abc", &["never closed", "line 2, column 2"]),
            ("(;GM[9]))", &["without a matching", "column 9"]),
            ("()", &["empty game tree"]),
            ("(;GM[9]()", &["empty game tree"]),
            ("((;GM[9]))", &["before the first node"]),
            ("(;GM[9](;B[e1-e3]);W[a2-c2])", &["after the variations"]),
            (";GM[9]", &["outside a game tree"]),
            ("(GM[9])", &["outside a node"]),
            ("(;gm[9])", &["no capital"]),
            ("(;GM)", &["no value"]),
            ("(;GM 9)", &["no value"]),
            ("(;[9])", &["without a property"]),
            ("(;GM[9]#)", &["unexpected character '#'"]),
            ("(;GM[9]\u{1F600})", &["unexpected character"]),
            ("(;GM[9]C[a]C[b])", &["twice"]),
            ("(;GM[9])x", &["outside a node", "column 9"]),
            ("(;GM[9])?", &["unexpected character '?'"]),
        ] {
            let e = error(text);
            for w in words {
                assert!(e.contains(w), "{text:?}: {e}");
            }
        }
        let huge = format!("(;GM[9]C[{}]", "x".repeat(100_000));
        assert!(error(&huge).contains("never closed"));
        let deep = "(;".repeat(50_000);
        assert!(error(&deep).contains("never closed"));
        let deep = format!("{}{}", "(;GM[9]".repeat(20_000), ")".repeat(20_000));
        assert!(SgfGame::parse(&deep).is_ok());
        let long_id = format!("(;{}[1])", "A".repeat(10_000));
        assert!(SgfGame::parse(&long_id).is_ok());
        let long_move = format!("(;GM[9];B[{}])", "e1-e3".repeat(10_000));
        assert!(error(&long_move).contains("move 1"));
    }

    #[test]
    fn garbage_never_panics() {
        let mut rng = XorShift::new(0x5eed);
        let alphabet = b"();[]\\:-+!xX@~ \n\tBWABAWAEPLGMSZLZRE0123456789abcdefghipassresign=";
        for len in 0..3000usize {
            let mut bytes = Vec::new();
            for _ in 0..(len % 120) {
                let r = rng.next_u64();
                bytes.push(if r.is_multiple_of(5) {
                    (r >> 8) as u8
                } else {
                    alphabet[(r >> 16) as usize % alphabet.len()]
                });
            }
            let text = String::from_utf8_lossy(&bytes);
            let _ = SgfGame::parse(&text);
            let _ = SgfGame::parse(&format!("(;GM[9]{text})"));
            let _ = SgfGame::parse(&format!("(;GM[9];B[{text}])"));
        }
        // Truncations and single-byte changes of valid files.
        let rules = Rules::classic();
        let mut files = Vec::new();
        for variant in Variant::ALL {
            let start = random_game_positions(variant, &rules, 1, 20, 4)[10];
            let mut sgf = random_sgf(start, rules, 40, &mut rng);
            sgf.info.comment = Some("a ] \\ comment".into());
            files.push(sgf.format());
        }
        for text in &files {
            let end = text.rfind(')').unwrap();
            for cut in 0..text.len() {
                if let Some(prefix) = text.get(..cut) {
                    let r = SgfGame::parse(prefix);
                    assert_eq!(r.is_ok(), cut > end, "{prefix}");
                }
            }
            for _ in 0..400 {
                let mut bytes = text.as_bytes().to_vec();
                let at = rng.below(bytes.len());
                bytes[at] = if rng.below(2) == 0 {
                    rng.next_u64() as u8
                } else {
                    alphabet[rng.below(alphabet.len())]
                };
                let _ = SgfGame::parse(&String::from_utf8_lossy(&bytes));
                bytes.remove(rng.below(bytes.len()));
                let _ = SgfGame::parse(&String::from_utf8_lossy(&bytes));
            }
        }
    }

    #[test]
    fn a_thesis_game_round_trips() {
        let path = crate::testing::thesis_games_dir().join("appendix_E_game1.txt");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let record = GameRecord::parse(&text).unwrap();
        let mut game = Game::new(Variant::Standard, Rules::classic());
        for token in &record.moves {
            game.play_text(token).unwrap();
        }
        let winner = game.outcome().and_then(Outcome::winner).unwrap();
        let mut sgf = SgfGame::new(game);
        sgf.info.black = Some("MIA".into());
        sgf.info.white = Some("opponent".into());
        sgf.info.event = Some("Winands thesis, appendix E, game 1".into());
        assert_round_trip(&sgf);
        let written = sgf.format();
        assert!(
            written.contains(&format!("RE[{}+]", color_letter(winner))),
            "{written}"
        );
        assert!(
            written.contains(";B[") && written.contains(":"),
            "{written}"
        );
        let back = SgfGame::parse(&written).unwrap();
        assert_eq!(back.game.moves().len(), record.moves.len());
    }
}
