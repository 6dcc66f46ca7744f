//! [`FaultyStore`]: a seeded fault-injecting wrapper of any [`Store`], for the protocol's
//! tests (and later the chaos tests of the whole run).
//!
//! Before each operation it may sleep up to [`Faults::max_delay`]; then it may fail the
//! operation without doing it ([`Faults::fail_before`]); a write that was done may still
//! report failure ([`Faults::lost_ack`]: the acknowledgement was lost, the write happened).
//! Every injected failure is an [`Error::Backend`] (outcome unknown), the error a real store
//! gives on a timeout or a dropped connection. The draws come from one ChaCha generator
//! seeded by the caller, so a single-threaded scenario replays exactly; with several threads
//! the draws are shared in whatever order the threads arrive.

use crate::error::{Error, Result};
use crate::key::Key;
use crate::{Listed, Store};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// How often and how [`FaultyStore`] misbehaves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Faults {
    /// Chance that an operation fails without taking effect.
    pub fail_before: f64,
    /// Chance that a write (put, create, delete) takes effect but reports failure.
    pub lost_ack: f64,
    /// Each operation first sleeps a uniform time in `0..=max_delay`.
    pub max_delay: Duration,
}

impl Faults {
    /// No faults.
    pub const NONE: Faults = Faults {
        fail_before: 0.0,
        lost_ack: 0.0,
        max_delay: Duration::ZERO,
    };
}

/// How many faults a [`FaultyStore`] injected.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct FaultCounts {
    /// Operations failed before taking effect.
    pub failed_before: u64,
    /// Writes done whose acknowledgement was lost.
    pub lost_acks: u64,
}

/// A [`Store`] that injects [`Faults`] into another.
#[derive(Debug)]
pub struct FaultyStore<S> {
    inner: S,
    faults: Faults,
    rng: Mutex<ChaCha8Rng>,
    enabled: AtomicBool,
    failed_before: AtomicU64,
    lost_acks: AtomicU64,
}

impl<S: Store> FaultyStore<S> {
    /// `inner` with `faults`, drawn from `seed`.
    pub fn new(inner: S, faults: Faults, seed: u64) -> FaultyStore<S> {
        FaultyStore {
            inner,
            faults,
            rng: Mutex::new(ChaCha8Rng::seed_from_u64(seed)),
            enabled: AtomicBool::new(true),
            failed_before: AtomicU64::new(0),
            lost_acks: AtomicU64::new(0),
        }
    }

    /// The wrapped store.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// Turns injection on or off (off: every call goes straight through).
    pub fn set_enabled(&self, enabled: bool) {
        self.enabled.store(enabled, Ordering::SeqCst);
    }

    /// The faults injected so far.
    pub fn counts(&self) -> FaultCounts {
        FaultCounts {
            failed_before: self.failed_before.load(Ordering::SeqCst),
            lost_acks: self.lost_acks.load(Ordering::SeqCst),
        }
    }

    /// Draws this operation's delay and fates: (fail before, lose the acknowledgement).
    fn draw(&self) -> (bool, bool) {
        if !self.enabled.load(Ordering::SeqCst) {
            return (false, false);
        }
        let (delay, before, after) = {
            let mut rng = self
                .rng
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            let nanos = self.faults.max_delay.as_nanos() as u64;
            let delay = if nanos == 0 {
                0
            } else {
                rng.random_range(0..=nanos)
            };
            (
                delay,
                rng.random_bool(self.faults.fail_before),
                rng.random_bool(self.faults.lost_ack),
            )
        };
        if delay > 0 {
            std::thread::sleep(Duration::from_nanos(delay));
        }
        (before, after)
    }

    fn injected(&self, operation: &'static str, key: &str, what: &str) -> Error {
        Error::Backend {
            store: self.describe(),
            operation,
            key: key.to_string(),
            message: format!("injected fault: {what}"),
        }
    }

    fn read<T>(
        &self,
        operation: &'static str,
        key: &str,
        call: impl FnOnce() -> Result<T>,
    ) -> Result<T> {
        let (before, _) = self.draw();
        if before {
            self.failed_before.fetch_add(1, Ordering::SeqCst);
            return Err(self.injected(operation, key, "failed before the request"));
        }
        call()
    }

    fn write(
        &self,
        operation: &'static str,
        key: &str,
        call: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        let (before, after) = self.draw();
        if before {
            self.failed_before.fetch_add(1, Ordering::SeqCst);
            return Err(self.injected(operation, key, "failed before the write"));
        }
        call()?;
        if after {
            self.lost_acks.fetch_add(1, Ordering::SeqCst);
            return Err(self.injected(operation, key, "acknowledgement lost after the write"));
        }
        Ok(())
    }
}

impl<S: Store> Store for FaultyStore<S> {
    fn describe(&self) -> String {
        format!("{} (with injected faults)", self.inner.describe())
    }

    fn get(&self, key: &Key) -> Result<Vec<u8>> {
        self.read("get", key.as_str(), || self.inner.get(key))
    }

    fn put(&self, key: &Key, bytes: &[u8]) -> Result<()> {
        self.write("put", key.as_str(), || self.inner.put(key, bytes))
    }

    fn put_if_absent(&self, key: &Key, bytes: &[u8]) -> Result<()> {
        self.write("create", key.as_str(), || {
            self.inner.put_if_absent(key, bytes)
        })
    }

    fn list(&self, folder: &str) -> Result<Vec<Listed>> {
        self.read("list", folder, || self.inner.list(folder))
    }

    fn delete(&self, key: &Key) -> Result<()> {
        self.write("delete", key.as_str(), || self.inner.delete(key))
    }

    fn size(&self, key: &Key) -> Result<Option<u64>> {
        self.read("size", key.as_str(), || self.inner.size(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemoryStore;

    #[test]
    fn a_lost_acknowledgement_reports_failure_but_keeps_the_write() {
        let store = FaultyStore::new(
            MemoryStore::new(),
            Faults {
                lost_ack: 1.0,
                ..Faults::NONE
            },
            7,
        );
        let key = Key::new("a").unwrap();
        assert!(store.put_if_absent(&key, b"x").unwrap_err().is_transient());
        assert_eq!(store.inner().get(&key).unwrap(), b"x");
        assert_eq!(
            store.counts(),
            FaultCounts {
                failed_before: 0,
                lost_acks: 1
            }
        );
    }

    #[test]
    fn a_failure_before_the_write_changes_nothing_and_the_same_seed_replays() {
        let faults = Faults {
            fail_before: 0.5,
            ..Faults::NONE
        };
        let outcomes = |seed| {
            let store = FaultyStore::new(MemoryStore::new(), faults, seed);
            let key = Key::new("a").unwrap();
            (0..32)
                .map(|_| store.put(&key, b"x").is_ok())
                .collect::<Vec<_>>()
        };
        assert_eq!(outcomes(3), outcomes(3));
        assert_ne!(outcomes(3), outcomes(4));
        let store = FaultyStore::new(
            MemoryStore::new(),
            Faults {
                fail_before: 1.0,
                ..Faults::NONE
            },
            1,
        );
        let key = Key::new("a").unwrap();
        assert!(store.put(&key, b"x").is_err());
        assert_eq!(store.inner().size(&key).unwrap(), None);
        store.set_enabled(false);
        store.put(&key, b"x").unwrap();
        assert_eq!(store.get(&key).unwrap(), b"x");
    }
}
