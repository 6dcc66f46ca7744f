//! Object keys: `/`-separated names that every back end stores the same way.
//!
//! A key is 1 to 512 bytes of segments separated by `/`; each segment is non-empty, made of
//! ASCII letters, digits and `. _ - =`, and does not start with `.`. That set is valid
//! unescaped in S3, GCS and Azure keys, in `object_store` paths and in file names, and it
//! leaves names starting with `.` to the directory back end's temporary files, which can
//! therefore never collide with a key nor be listed as one.

use crate::error::{Error, Result};
use std::fmt;

/// The longest key, in bytes (S3 allows 1024; half leaves room for a store's prefix).
pub const MAX_KEY_LEN: usize = 512;

/// A validated object key (see the module doc for the rules).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key(String);

impl Key {
    /// Checks `text` against the key rules.
    pub fn new(text: impl Into<String>) -> Result<Key> {
        let text = text.into();
        match problem(&text) {
            None => Ok(Key(text)),
            Some(reason) => Err(Error::InvalidKey { key: text, reason }),
        }
    }

    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The key `self/segment...` (`rest` is checked like any key).
    pub fn join(&self, rest: &str) -> Result<Key> {
        Key::new(format!("{}/{rest}", self.0))
    }

    /// Whether this key lies in `folder` ("" = every key; otherwise keys that start with
    /// `folder/`, so `log` holds `log/1` but not `logs/1`).
    pub fn is_in(&self, folder: &str) -> bool {
        folder.is_empty()
            || (self.0.len() > folder.len()
                && self.0.starts_with(folder)
                && self.0.as_bytes()[folder.len()] == b'/')
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Checks a list folder: "" (the whole store) or a valid key.
pub fn check_folder(folder: &str) -> Result<()> {
    if folder.is_empty() {
        return Ok(());
    }
    Key::new(folder).map(|_| ())
}

fn problem(text: &str) -> Option<String> {
    if text.is_empty() {
        return Some("empty".into());
    }
    if text.len() > MAX_KEY_LEN {
        return Some(format!("{} bytes, more than {MAX_KEY_LEN}", text.len()));
    }
    for segment in text.split('/') {
        if segment.is_empty() {
            return Some("empty segment (a leading, trailing or doubled '/')".into());
        }
        if segment.starts_with('.') {
            return Some(format!("segment {segment:?} starts with '.'"));
        }
        if let Some(bad) = segment
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '=')))
        {
            return Some(format!(
                "character {bad:?} (allowed: ASCII letters, digits, '.', '_', '-', '=')"
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_layout_keys_and_refuses_the_rest_with_reasons() {
        for good in [
            "log/00000001.json",
            "shards/g00000003/ab-00000002.shard",
            "a=b",
        ] {
            assert_eq!(Key::new(good).unwrap().as_str(), good);
        }
        for (bad, reason) in [
            ("", "empty"),
            ("/a", "empty segment"),
            ("a//b", "empty segment"),
            ("a/", "empty segment"),
            ("a/../b", "starts with '.'"),
            ("a/.tmp.x", "starts with '.'"),
            ("a b", "character ' '"),
            ("a\\b", "character '\\\\'"),
        ] {
            let error = Key::new(bad).unwrap_err().to_string();
            assert!(error.contains(reason), "{bad:?}: {error}");
        }
        assert!(Key::new("x".repeat(MAX_KEY_LEN + 1)).is_err());
    }

    #[test]
    fn folders_are_whole_segments() {
        let key = Key::new("log/1").unwrap();
        assert!(key.is_in("log"));
        assert!(key.is_in(""));
        assert!(!key.is_in("lo"));
        assert!(!Key::new("logs/1").unwrap().is_in("log"));
        assert!(!Key::new("log").unwrap().is_in("log"));
    }
}
