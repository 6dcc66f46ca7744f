//! Player specs: `KIND[:key=value,...]` text ⇄ [`PlayerSpec`], driven by the registry of
//! kinds ([`super::kind`], [`super::KINDS`]): the kind's keys say what parses, how values
//! are checked and how the canonical form (the player's name) is written.

use super::kind::{self, Key, Order, PlayerKind, Serve, Shown, ValueType};
use super::net_options::{Device, Precision};
use anyhow::{anyhow, bail, Result};
use std::fmt;
use std::path::{Path, PathBuf};

/// A checked value of a key.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// [`ValueType::Int`].
    Int(i64),
    /// [`ValueType::NonNegative`] and [`ValueType::Real`].
    Real(f64),
    /// [`ValueType::Switch`].
    Switch(bool),
    /// [`ValueType::Choice`]: the word, lower case.
    Word(&'static str),
    /// [`ValueType::File`].
    File(PathBuf),
    /// [`ValueType::Device`].
    Device(Device),
    /// [`ValueType::Precision`].
    Precision(Precision),
}

impl fmt::Display for Value {
    /// The normal form the canonical spec writes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(n) => write!(f, "{n}"),
            Value::Real(x) => write!(f, "{}", *x as f32),
            Value::Switch(on) => f.write_str(if *on { "on" } else { "off" }),
            Value::Word(w) => f.write_str(w),
            Value::File(p) => write!(f, "{}", p.display()),
            Value::Device(d) => write!(f, "{d}"),
            Value::Precision(p) => write!(f, "{p}"),
        }
    }
}

impl Value {
    /// `text` as a value of `ty`; the error names `key` and the problem.
    pub fn parse(ty: ValueType, key: &str, text: &str) -> Result<Value, String> {
        let number = || format!("{key}={text} is not a valid number");
        match ty {
            ValueType::Int { min, max } => {
                let n: i128 = text.parse().map_err(|_| number())?;
                if !(min as i128..=max as i128).contains(&n) {
                    return Err(if min == 1 && max >= u32::MAX as i64 {
                        format!("{key} must be positive")
                    } else {
                        format!("{key} must be {min}..={max}")
                    });
                }
                Ok(Value::Int(n as i64))
            }
            ValueType::NonNegative | ValueType::Real => {
                let x: f64 = text.parse().map_err(|_| number())?;
                if !x.is_finite() || (ty == ValueType::NonNegative && x < 0.0) {
                    return Err(if ty == ValueType::NonNegative {
                        format!("{key} must be a finite number ≥ 0")
                    } else {
                        format!("{key} must be a finite number")
                    });
                }
                Ok(Value::Real(x))
            }
            ValueType::Switch => match text.to_ascii_lowercase().as_str() {
                "on" | "true" | "1" | "yes" => Ok(Value::Switch(true)),
                "off" | "false" | "0" | "no" => Ok(Value::Switch(false)),
                _ => Err(format!("{key}={text} should be on or off")),
            },
            ValueType::Choice(words) => {
                let lower = text.to_ascii_lowercase();
                words
                    .iter()
                    .find(|w| **w == lower)
                    .map(|w| Value::Word(w))
                    .ok_or_else(|| format!("{key} must be {}", one_of(words)))
            }
            ValueType::File => {
                if text.is_empty() {
                    return Err(format!("{key} needs a file name"));
                }
                Ok(Value::File(PathBuf::from(text)))
            }
            ValueType::Device => text.parse().map(Value::Device),
            ValueType::Precision => text.parse().map(Value::Precision),
        }
    }
}

/// `a`, `a or b`, `a, b or c`.
fn one_of(words: &[&str]) -> String {
    match words.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// One key of a spec with its value.
#[derive(Clone, Debug)]
pub struct Setting {
    /// The registry's entry for the key.
    pub key: &'static Key,
    /// The key as the canonical form writes it (the key's name, or a family member's own
    /// name: `w.mobility`).
    pub name: String,
    /// The checked value.
    pub value: Value,
    /// The value as given (trimmed), for kinds named in [`Order::Given`].
    pub given: String,
    /// Whether the kind filled it in ([`Settings::fill`]) rather than the text giving it.
    pub filled: bool,
}

/// The keys of one spec, in canonical order.
#[derive(Clone, Debug)]
pub struct Settings {
    kind: &'static PlayerKind,
    list: Vec<Setting>,
}

impl Settings {
    /// The value of `name` (a key's name or a family member's name), if given.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.list.iter().find(|s| s.name == name).map(|s| &s.value)
    }

    /// Whether `name` is given.
    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Every setting, in canonical order.
    pub fn iter(&self) -> impl Iterator<Item = &Setting> {
        self.list.iter()
    }

    /// Sets `name` (a key of the kind, not a family) to `value`, replacing any value it
    /// had, in its canonical place. Errors on a key the kind does not take.
    pub fn insert(&mut self, name: &str, value: Value) -> Result<(), String> {
        let key = self
            .kind
            .keys
            .iter()
            .find(|k| k.family().is_none() && k.name == name)
            .ok_or_else(|| format!("{} takes no key '{name}'", self.kind.name))?;
        let given = value.to_string();
        let setting = Setting {
            key,
            name: name.to_string(),
            value,
            given,
            filled: false,
        };
        match self.list.iter_mut().find(|s| s.name == name) {
            Some(old) => *old = setting,
            None => {
                self.list.push(setting);
                self.sort();
            }
        }
        Ok(())
    }

    /// Sets `name` to `value` unless it is given: a default the kind's canonical form
    /// states (`sims=800`), dropped again when a derived spec changes its limits
    /// ([`PlayerSpec::with`]).
    pub fn fill(&mut self, name: &str, value: Value) -> Result<(), String> {
        if self.has(name) {
            return Ok(());
        }
        self.insert(name, value)?;
        if let Some(s) = self.list.iter_mut().find(|s| s.name == name) {
            s.filled = true;
        }
        Ok(())
    }

    /// Removes `name`, if given.
    pub fn remove(&mut self, name: &str) {
        self.list.retain(|s| s.name != name);
    }

    /// Puts the settings in the kind's canonical order (kinds in [`Order::Given`] keep
    /// theirs; an inserted key goes last).
    fn sort(&mut self) {
        if self.kind.order == Order::Declared {
            let place = |s: &Setting| {
                self.kind
                    .keys
                    .iter()
                    .position(|k| std::ptr::eq(k, s.key))
                    .unwrap_or(usize::MAX)
            };
            let mut list = std::mem::take(&mut self.list);
            list.sort_by_key(place);
            self.list = list;
        }
    }
}

/// A parsed player spec: a kind of the registry and its checked keys. Two specs are equal
/// when their canonical forms (their names) are.
#[derive(Clone)]
pub struct PlayerSpec {
    settings: Settings,
}

/// Who asked for a spec.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Audience {
    /// A command line, config file or engine session: anything the kinds take.
    Anyone,
    /// A `serve` client: only served kinds, within the keys' [`Serve`] rules.
    Client,
}

impl PlayerSpec {
    /// Parses a spec; errors name the spec and the offending part.
    pub fn parse(text: &str) -> Result<PlayerSpec> {
        PlayerSpec::parse_as(text, Audience::Anyone)
    }

    /// Parses a spec a `serve` client sent and checks it against the registry's rules for
    /// clients ([`PlayerKind::served`], each key's [`Serve`]) before anything else runs
    /// (no file is read). Paths to files ([`Serve::ServedFile`]) are left for the server
    /// to check ([`PlayerSpec::served_files_mut`]).
    pub fn parse_for_client(text: &str) -> Result<PlayerSpec> {
        PlayerSpec::parse_as(text, Audience::Client)
    }

    fn parse_as(text: &str, audience: Audience) -> Result<PlayerSpec> {
        let spec = text.trim();
        let (kind_name, rest) = spec.split_once(':').unwrap_or((spec, ""));
        let kind_name = kind_name.trim().to_ascii_lowercase();
        if kind_name.is_empty() {
            bail!("empty player spec");
        }
        let kind = kind::find(&kind_name).ok_or_else(|| {
            anyhow!(
                "player '{spec}': unknown player kind '{kind_name}' (expected {})",
                kind::kind_names()
            )
        })?;
        let err = |msg: String| anyhow!("player '{spec}': {msg}");
        if audience == Audience::Client && !kind.served {
            return Err(err(format!("{} players are not served", kind.name)));
        }
        let mut settings = Settings {
            kind,
            list: Vec::new(),
        };
        for part in rest.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((name, given)) = part.split_once('=') else {
                return Err(err(format!("'{part}' should be key=value")));
            };
            let name = name.trim().to_ascii_lowercase();
            let given = given.trim();
            let key = kind.keys.iter().find(|k| k.matches(&name)).ok_or_else(|| {
                let allowed: Vec<&str> = kind.keys.iter().map(|k| k.name).collect();
                let allowed = if allowed.is_empty() {
                    "none".to_string()
                } else {
                    allowed.join(", ")
                };
                err(format!(
                    "unknown key '{name}' for {} (allowed: {allowed})",
                    kind.name
                ))
            })?;
            let name = if key.family().is_some() {
                name
            } else {
                key.name.to_string()
            };
            if settings.has(&name) {
                return Err(err(format!("{name} is given twice")));
            }
            let value = Value::parse(key.value, &name, given).map_err(err)?;
            settings.list.push(Setting {
                key,
                name,
                value,
                given: given.to_string(),
                filled: false,
            });
        }
        settings.sort();
        if audience == Audience::Client {
            check_for_client(&settings).map_err(err)?;
        }
        (kind.complete)(&mut settings).map_err(err)?;
        Ok(PlayerSpec { settings })
    }

    /// Its kind.
    pub fn kind(&self) -> &'static PlayerKind {
        self.settings.kind
    }

    /// Its keys and values.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Sets a key (see [`Settings::insert`]) or removes it (`None`): for commands that
    /// derive one player from another (a model at another time limit). The defaults the
    /// kind filled in are dropped and its rules run again.
    pub fn with(&self, name: &str, value: Option<Value>) -> Result<PlayerSpec> {
        let mut settings = self.settings.clone();
        settings.list.retain(|s| !s.filled);
        match value {
            Some(v) => settings
                .insert(name, v)
                .map_err(|e| anyhow!("player '{self}': {e}"))?,
            None => settings.remove(name),
        }
        (self.kind().complete)(&mut settings).map_err(|e| anyhow!("player '{self}': {e}"))?;
        Ok(PlayerSpec { settings })
    }

    /// This spec searching by time: `ms` milliseconds per move, the limits its kind filled
    /// in dropped and the ones its text gave kept as caps (`model:path=P` at 200 ms is
    /// `model:path=P,ms=200`, not `…,sims=800`). The spec itself for kinds without a time
    /// limit (they do not search).
    pub fn searching_for(&self, ms: u64) -> Result<PlayerSpec> {
        if !self.kind().keys.iter().any(|k| k.name == "ms") {
            return Ok(self.clone());
        }
        self.with("ms", Some(Value::Int(ms as i64)))
    }

    /// Whether the spec's text gives a limit of its own ([`Key::limit`]: a depth, node,
    /// simulation or time limit), rather than only the defaults its kind fills in.
    pub fn gives_limit(&self) -> bool {
        self.settings.iter().any(|s| s.key.limit && !s.filled)
    }

    /// The canonical name of the player (used in results and ratings).
    pub fn name(&self) -> String {
        self.to_string()
    }

    /// An integer key's value.
    pub fn int(&self, name: &str) -> Option<i64> {
        match self.settings.get(name) {
            Some(Value::Int(n)) => Some(*n),
            _ => None,
        }
    }

    /// A number key's value.
    pub fn real(&self, name: &str) -> Option<f64> {
        match self.settings.get(name) {
            Some(Value::Real(x)) => Some(*x),
            _ => None,
        }
    }

    /// A switch key's value.
    pub fn switch(&self, name: &str) -> Option<bool> {
        match self.settings.get(name) {
            Some(Value::Switch(on)) => Some(*on),
            _ => None,
        }
    }

    /// A choice key's word.
    pub fn word(&self, name: &str) -> Option<&'static str> {
        match self.settings.get(name) {
            Some(Value::Word(w)) => Some(w),
            _ => None,
        }
    }

    /// A file key's path.
    pub fn file(&self, name: &str) -> Option<&Path> {
        match self.settings.get(name) {
            Some(Value::File(p)) => Some(p),
            _ => None,
        }
    }

    /// A device key's value.
    pub fn device(&self, name: &str) -> Option<Device> {
        match self.settings.get(name) {
            Some(Value::Device(d)) => Some(*d),
            _ => None,
        }
    }

    /// A precision key's value.
    pub fn precision(&self, name: &str) -> Option<Precision> {
        match self.settings.get(name) {
            Some(Value::Precision(p)) => Some(*p),
            _ => None,
        }
    }

    /// The trained network the player loads, if any (its kind's
    /// [`super::kind::Network`] rule), with where and how it runs.
    pub fn network(&self) -> Option<(&Path, super::NetOptions)> {
        let loads = match self.kind().network {
            kind::Network::Never => false,
            kind::Network::Always => true,
            kind::Network::WithKey(key) => self.settings.has(key),
        };
        if !loads {
            return None;
        }
        Some((self.file("path")?, super::NetOptions::of(self)))
    }

    /// The paths of the keys a client may only point at served files
    /// ([`Serve::ServedFile`]), for the server to check and replace by canonical paths.
    pub fn served_files_mut(&mut self) -> impl Iterator<Item = &mut PathBuf> {
        self.settings
            .list
            .iter_mut()
            .filter_map(|s| match &mut s.value {
                Value::File(p) if s.key.serve == Serve::ServedFile => Some(p),
                _ => None,
            })
    }
}

/// The registry's rules for `serve` clients over the keys as given.
fn check_for_client(settings: &Settings) -> Result<(), String> {
    for s in settings.iter() {
        match s.key.serve {
            Serve::Any | Serve::ServedFile => {}
            Serve::AtMost { max, unless } => {
                let over = match &s.value {
                    Value::Int(n) => *n > max,
                    Value::Real(x) => *x > max as f64,
                    _ => false,
                };
                if over && !unless.iter().any(|k| settings.has(k)) {
                    return Err(if unless.is_empty() {
                        format!("{} at most {max}", s.name)
                    } else {
                        format!("{} at most {max} without {}", s.name, unless.join(" or "))
                    });
                }
            }
            Serve::Only(value, why) => {
                if s.value.to_string() != value {
                    return Err(format!("{}={}: {why}", s.name, s.given));
                }
            }
            Serve::Refused(why) => return Err(format!("{}: {why}", s.name)),
        }
    }
    Ok(())
}

impl fmt::Debug for PlayerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PlayerSpec({self})")
    }
}

impl PartialEq for PlayerSpec {
    fn eq(&self, other: &PlayerSpec) -> bool {
        self.to_string() == other.to_string()
    }
}

impl fmt::Display for PlayerSpec {
    /// The canonical form: the kind's name, then `:key=value,...` in the kind's order (see
    /// [`Order`] and [`Shown`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = self.kind();
        let mut first = true;
        f.write_str(kind.name)?;
        for s in self.settings.iter() {
            if s.key.shown == Shown::UnlessDefault
                && Value::parse(s.key.value, &s.name, s.key.default).as_ref() == Ok(&s.value)
            {
                continue;
            }
            f.write_str(if first { ":" } else { "," })?;
            first = false;
            match kind.order {
                Order::Declared => write!(f, "{}={}", s.name, s.value)?,
                Order::Given => write!(f, "{}={}", s.name, s.given)?,
            }
        }
        Ok(())
    }
}

impl std::str::FromStr for PlayerSpec {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<Self> {
        PlayerSpec::parse(s)
    }
}

impl serde::Serialize for PlayerSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

impl<'de> serde::Deserialize<'de> for PlayerSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        PlayerSpec::parse(&text).map_err(|e| serde::de::Error::custom(format!("{e:#}")))
    }
}
