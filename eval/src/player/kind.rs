//! What a kind of player is: its name, the keys its spec takes (with their types, defaults,
//! limits and help), whether it loads a network (and so needs torch), whether a `serve`
//! client may ask for it and within which caps, the opponents it offers the web app's Play
//! screen, and how it is built. Every kind is one [`PlayerKind`] in its own module, listed
//! once in [`super::KINDS`]; parsing and the canonical form of specs ([`super::spec`]), the
//! `--help` text of player options ([`spec_help`]), the player section of `docs/api.md`
//! ([`markdown`]), the server's checks ([`PlayerSpec::parse_for_client`]) and the web app's
//! opponent list (`GET /api/players`, [`catalogue`]) all come from these entries.

use super::spec::{PlayerSpec, Settings};
use super::{Player, PlayerFactory, KINDS};
use serde_json::{json, Value as Json};

/// Longest thinking time a `serve` client may ask for (ms), in a spec or a request.
pub const SERVE_MAX_MS: i64 = 30_000;

/// One kind of player.
pub struct PlayerKind {
    /// Its name, the text before the spec's `:`.
    pub name: &'static str,
    /// Other names a spec may use (`ab` for `alphabeta`); specs are named by [`Self::name`].
    pub aliases: &'static [&'static str],
    /// What it plays, in one sentence (help texts, docs, the API).
    pub summary: &'static str,
    /// The keys its spec takes, in the order its canonical form writes them.
    pub keys: &'static [Key],
    /// How its canonical form orders the keys.
    pub order: Order,
    /// Whether it loads a trained network (so that commands naming it need torch).
    pub network: Network,
    /// Whether a `serve` client may ask for it (within the keys' [`Serve`] rules).
    pub served: bool,
    /// Specs of it the web app's Play screen offers as opponents, with their labels.
    pub opponents: &'static [(&'static str, &'static str)],
    /// Rules across keys, run after every key parsed: errors (the caller adds the spec),
    /// and defaults the canonical form states (filled in with [`Settings::fill`]).
    pub complete: fn(&mut Settings) -> Result<(), String>,
    /// Builds a fresh player of this kind from a spec of it, with a random stream seeded
    /// by `seed`; the factory loads networks.
    pub build: fn(&PlayerSpec, &PlayerFactory, u64) -> anyhow::Result<Box<dyn Player>>,
}

impl std::fmt::Debug for PlayerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PlayerKind({})", self.name)
    }
}

/// How a kind's canonical form orders its keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// In the order of [`PlayerKind::keys`], values written in their normal form.
    Declared,
    /// As given, values as written (keys lower-cased): `alphabeta`, whose names in
    /// existing results files keep their order.
    Given,
}

/// Whether a kind loads a trained network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Network {
    /// Never.
    Never,
    /// Always.
    Always,
    /// When its spec gives this key (`ubfm:path=`).
    WithKey(&'static str),
}

/// `lists` joined into one list of `N` keys, so that kinds share a run of keys (`mcts`
/// and `model` share [`super::mcts::SEARCH_KEYS`]). A const fn, for a kind's `static`: an
/// `N` other than the number of keys, or no keys at all, fails the build.
pub const fn joined<const N: usize>(lists: &[&[Key]]) -> [Key; N] {
    assert!(
        !lists.is_empty() && !lists[0].is_empty(),
        "joined: the first list is empty"
    );
    let mut keys = [lists[0][0]; N];
    let mut count = 0;
    let mut list = 0;
    while list < lists.len() {
        let mut i = 0;
        while i < lists[list].len() {
            assert!(count < N, "joined: more keys than N");
            keys[count] = lists[list][i];
            count += 1;
            i += 1;
        }
        list += 1;
    }
    assert!(count == N, "joined: fewer keys than N");
    keys
}

/// One key of a spec.
#[derive(Clone, Copy, Debug)]
pub struct Key {
    /// Its name; a name ending in `.NAME` is a family (`w.NAME`: `w.mobility`, …).
    pub name: &'static str,
    /// Other names a spec may use (`eval` for `evaluator`).
    pub aliases: &'static [&'static str],
    /// What values it takes.
    pub value: ValueType,
    /// The default, as help texts show it (`""`: none, or described in [`Key::help`]).
    pub default: &'static str,
    /// What it does, in one sentence.
    pub help: &'static str,
    /// Whether the canonical form writes it when it equals [`Key::default`].
    pub shown: Shown,
    /// Whether it limits the search (depth, nodes, simulations, time): a spec that gives
    /// none searches by the time a request or a clock grants ([`PlayerSpec::gives_limit`]).
    pub limit: bool,
    /// What a `serve` client may give.
    pub serve: Serve,
}

impl Key {
    /// The cap of a key a `serve` client may give up to a maximum ([`Serve::AtMost`]); the
    /// largest value it takes otherwise.
    pub const fn serve_cap(&self) -> i64 {
        match (self.serve, self.value) {
            (Serve::AtMost { max, .. }, _) => max,
            (_, ValueType::Int { max, .. }) => max,
            _ => i64::MAX,
        }
    }

    /// The family prefix (`w.`) of a family key.
    pub fn family(&self) -> Option<&'static str> {
        self.name
            .strip_suffix("NAME")
            .filter(|prefix| prefix.ends_with('.'))
    }

    /// Whether `name` (lower case) is this key.
    pub fn matches(&self, name: &str) -> bool {
        match self.family() {
            Some(prefix) => name.len() > prefix.len() && name.starts_with(prefix),
            None => self.name == name || self.aliases.contains(&name),
        }
    }
}

/// The values a key takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ValueType {
    /// An integer in `min..=max`.
    Int {
        /// Smallest allowed.
        min: i64,
        /// Largest allowed.
        max: i64,
    },
    /// A finite number ≥ 0.
    NonNegative,
    /// Any finite number.
    Real,
    /// `on` or `off` (also true/false, 1/0, yes/no).
    Switch,
    /// One of these words (case does not matter).
    Choice(&'static [&'static str]),
    /// A file path.
    File,
    /// A [`super::Device`].
    Device,
    /// A [`super::Precision`].
    Precision,
}

impl ValueType {
    /// A positive integer up to `max`.
    pub const fn positive(max: i64) -> ValueType {
        ValueType::Int { min: 1, max }
    }

    /// The values as help texts write them.
    pub fn describe(self) -> String {
        match self {
            ValueType::Int { min: 1, max } if max >= u32::MAX as i64 => "positive integer".into(),
            ValueType::Int { min: 0, max } if max >= u32::MAX as i64 => "integer ≥ 0".into(),
            ValueType::Int { min, max } if min <= i32::MIN as i64 && max >= i32::MAX as i64 => {
                "integer".into()
            }
            ValueType::Int { min, max } => format!("integer {min}..={max}"),
            ValueType::NonNegative => "number ≥ 0".into(),
            ValueType::Real => "number".into(),
            ValueType::Switch => "on|off".into(),
            ValueType::Choice(words) => words.join("|"),
            ValueType::File => "file".into(),
            ValueType::Device => "cpu|cuda|cuda:N".into(),
            ValueType::Precision => super::Precision::ALL
                .iter()
                .map(|p| p.name())
                .collect::<Vec<_>>()
                .join("|"),
        }
    }
}

/// Whether the canonical form writes a key whose value is the default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shown {
    /// Written whenever present.
    Always,
    /// Left out when it equals [`Key::default`] (`device=cpu`, `completion=on`).
    UnlessDefault,
}

/// What a `serve` client may give for a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Serve {
    /// Anything the key takes.
    Any,
    /// At most `max`, unless one of the keys `unless` is given too (a fixed depth is capped,
    /// a depth under a time limit is not).
    AtMost {
        /// The cap.
        max: i64,
        /// Keys that lift the cap.
        unless: &'static [&'static str],
    },
    /// Only this value (the key's normal form), for the reason given.
    Only(&'static str, &'static str),
    /// Nothing: the reason.
    Refused(&'static str),
    /// A file under a directory the server serves (replaced by its canonical path).
    ServedFile,
}

impl Serve {
    /// The rule as the docs write it (`""`: no rule).
    pub fn describe(self) -> String {
        match self {
            Serve::Any => String::new(),
            Serve::AtMost { max, unless: [] } => format!("at most {max}"),
            Serve::AtMost { max, unless } => {
                format!("at most {max} without {}", unless.join(" or "))
            }
            Serve::Only(value, _) => format!("only {value}"),
            Serve::Refused(_) => "refused".into(),
            Serve::ServedFile => "a file under a served directory".into(),
        }
    }
}

/// The kind called `name` (or one of its aliases; lower case).
pub fn find(name: &str) -> Option<&'static PlayerKind> {
    KINDS
        .iter()
        .copied()
        .find(|k| k.name == name || k.aliases.contains(&name))
}

/// The kinds' names as an error lists them: `a, b or c`.
pub fn kind_names() -> String {
    let names: Vec<&str> = KINDS.iter().map(|k| k.name).collect();
    match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// A key as a grammar line writes it: `sims=N`-style, `key=positive integer`.
fn key_form(key: &Key) -> String {
    format!("{}={}", key.name, key.value.describe())
}

/// The spec grammar for `--help` texts: one paragraph per kind with its keys.
pub fn spec_help() -> String {
    let mut s = String::from(
        "A player spec is KIND[:key=value,...]. Kinds and keys (defaults in brackets):\n",
    );
    for kind in KINDS {
        s += &format!("\n  {} — {}\n", kind.name, kind.summary);
        for key in kind.keys {
            let default = if key.default.is_empty() {
                String::new()
            } else {
                format!(" [{}]", key.default)
            };
            s += &format!("      {}{default}: {}\n", key_form(key), key.help);
        }
    }
    s
}

/// The player section of `docs/api.md` (checked against the file by a test of the root
/// crate): one table per kind.
pub fn markdown() -> String {
    let mut s = String::from(
        "A player spec is `KIND[:key=value,...]` (case and spaces around parts do not \
         matter). The kinds, their keys, and what a `serve` client may ask for:\n",
    );
    for kind in KINDS {
        let aliases = if kind.aliases.is_empty() {
            String::new()
        } else {
            format!(" (also `{}`)", kind.aliases.join("`, `"))
        };
        let network = match kind.network {
            Network::Never => "",
            Network::Always => " Loads a network (needs torch).",
            Network::WithKey(_) => " Loads a network with `path=` (needs torch).",
        };
        let served = if kind.served {
            ""
        } else {
            " Not served to clients."
        };
        s += &format!(
            "\n### `{}`{aliases}\n\n{}.{network}{served}\n",
            kind.name, kind.summary
        );
        if kind.keys.is_empty() {
            s += "\nNo keys.\n";
            continue;
        }
        s += "\n| key | values | default | meaning | serve |\n|---|---|---|---|---|\n";
        for key in kind.keys {
            // A `|` inside a cell would end it.
            let cell = |text: String| text.replace('|', "\\|");
            s += &format!(
                "| `{}` | {} | {} | {} | {} |\n",
                key.name,
                cell(key.value.describe()),
                if key.default.is_empty() {
                    "—".to_string()
                } else {
                    format!("`{}`", key.default)
                },
                key.help,
                key.serve.describe()
            );
        }
    }
    s
}

/// The registry as JSON (`GET /api/players`): every kind with its keys, whether a client may
/// ask for it, and the opponents it offers.
pub fn catalogue() -> Json {
    let kinds: Vec<Json> = KINDS
        .iter()
        .map(|kind| {
            let keys: Vec<Json> = kind
                .keys
                .iter()
                .map(|key| {
                    json!({
                        "name": key.name,
                        "aliases": key.aliases,
                        "values": key.value.describe(),
                        "default": key.default,
                        "help": key.help,
                        "serve": key.serve.describe(),
                    })
                })
                .collect();
            let opponents: Vec<Json> = kind
                .opponents
                .iter()
                .map(|(spec, label)| json!({"spec": spec, "label": label}))
                .collect();
            json!({
                "name": kind.name,
                "aliases": kind.aliases,
                "summary": kind.summary,
                "network": kind.network != Network::Never,
                "served": kind.served,
                "keys": keys,
                "opponents": opponents,
            })
        })
        .collect();
    json!({ "kinds": kinds })
}

#[cfg(test)]
mod tests {
    /// [`super::joined`] keeps every list's keys in order, one list after another.
    #[test]
    fn joined_keeps_the_order_of_the_lists() {
        use crate::player::{mcts, model};
        let names = |keys: &[super::Key]| keys.iter().map(|k| k.name).collect::<Vec<_>>();
        let search = ["sims", "ms", "cpuct", "fpu", "gumbel", "topk", "leaves"];
        assert_eq!(names(&mcts::SEARCH_KEYS), search);
        let builtin = names(mcts::KIND.keys);
        assert_eq!(builtin[1..8], search);
        assert_eq!([builtin[0], builtin[8]], ["evaluator", "threads"]);
        let model = names(model::KIND.keys);
        assert_eq!(model[1..8], search);
        assert_eq!(
            [model[0], model[8], model[9], model[10]],
            ["path", "threads", "device", "precision"]
        );
    }

    /// `docs/api.md`'s player section is [`super::markdown`] (rewritten under
    /// `LOAZERO_BLESS=1`, except under CI, where a stale section always fails).
    #[test]
    fn the_api_docs_list_the_registry() {
        // Where the test runs, not where it was built (cargo sets it for each test process).
        let path = std::path::PathBuf::from(
            std::env::var_os("CARGO_MANIFEST_DIR")
                .expect("CARGO_MANIFEST_DIR: run the tests with cargo"),
        )
        .join("../docs/api.md");
        let text = std::fs::read_to_string(&path).unwrap();
        let (begin, end) = ("<!-- players:begin -->\n", "<!-- players:end -->");
        let start = text
            .find(begin)
            .expect("docs/api.md: no players:begin marker")
            + begin.len();
        let stop = text.find(end).expect("docs/api.md: no players:end marker");
        let generated = super::markdown();
        if text[start..stop] != generated {
            let bless = std::env::var_os("LOAZERO_BLESS").is_some();
            if bless && std::env::var_os("CI").is_none() {
                let new = format!("{}{generated}{}", &text[..start], &text[stop..]);
                std::fs::write(&path, new).unwrap();
            } else {
                panic!(
                    "docs/api.md's player section differs from the registry; rewrite it with \
                     LOAZERO_BLESS=1 cargo test -p eval player::kind"
                );
            }
        }
    }
}
