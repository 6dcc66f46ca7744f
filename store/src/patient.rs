//! [`Patient`]: a store that waits for its store to come back (the trainer of
//! `loazero run --store` wraps its store in one).
//!
//! Every operation whose outcome is unknown ([`crate::Error::Backend`]: the store is down,
//! unreachable or answering with server errors) is tried again, with waits doubling from
//! 0.2 s to 10 s, for as long as it takes: the trainer of a run has nothing better to do
//! than wait, and dying would only cost the scheduler a restart and the trainer its
//! unpublished work. There is no bound on purpose; the owner's `give_up` check (the
//! trainer's: a Ctrl-C or SIGTERM came) ends the wait at once (the operation then fails
//! with its last error, and the loop stops at its next safe point). The first failure
//! prints `… waiting for the store (ERROR)`, every 5 minutes of waiting another line, and
//! the first success after a wait `… the store is back after N s`, like the workers'
//! progress lines.
//!
//! Retrying below the commit protocol is safe: a create whose outcome was unknown and that
//! finds, when tried again, an object at its key returns [`crate::Error::AlreadyExists`] to
//! the protocol, which then compares the bytes (its own earlier write, or another's) as it
//! does for its own retries; overwrites, deletes and reads are idempotent. Definite answers
//! (not found, already exists, refused) pass through at once.

use crate::{Key, Listed, Store};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often a long wait says that it still waits.
const REMIND_EVERY: Duration = Duration::from_secs(300);
/// The first wait after a failure, and the longest.
const FIRST_DELAY: Duration = Duration::from_millis(200);
const MAX_DELAY: Duration = Duration::from_secs(10);

/// A store whose transient failures are waited out (module doc).
#[derive(Debug)]
pub struct Patient {
    inner: Arc<dyn Store>,
    /// Who waits, the start of each progress line (`run --store s3://…`).
    who: String,
    /// Whether to stop waiting (checked between tries and during each wait).
    give_up: fn() -> bool,
}

impl Patient {
    /// `inner`, waited for by `who` until `give_up` says to stop waiting.
    pub fn wrap(
        inner: Arc<dyn Store>,
        who: impl Into<String>,
        give_up: fn() -> bool,
    ) -> Arc<dyn Store> {
        Arc::new(Patient {
            inner,
            who: who.into(),
            give_up,
        })
    }

    fn call<T>(&self, mut operation: impl FnMut() -> crate::Result<T>) -> crate::Result<T> {
        let mut delay = FIRST_DELAY;
        let mut since: Option<Instant> = None;
        let mut reminded = Instant::now();
        loop {
            match operation() {
                Err(error) if error.is_transient() => {
                    if (self.give_up)() {
                        return Err(error);
                    }
                    match since {
                        None => {
                            since = Some(Instant::now());
                            reminded = Instant::now();
                            println!(
                                "{}: waiting for the store ({error}); the trainer goes on when \
                                 it is back (Ctrl-C stops it)",
                                self.who
                            );
                        }
                        Some(start) if reminded.elapsed() >= REMIND_EVERY => {
                            reminded = Instant::now();
                            println!(
                                "{}: still waiting for the store after {:.0} s ({error})",
                                self.who,
                                start.elapsed().as_secs_f64()
                            );
                        }
                        Some(_) => {}
                    }
                    let until = Instant::now() + delay;
                    while Instant::now() < until && !(self.give_up)() {
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    delay = (delay * 2).min(MAX_DELAY);
                }
                outcome => {
                    if let Some(start) = since {
                        println!(
                            "{}: the store is back after {:.0} s",
                            self.who,
                            start.elapsed().as_secs_f64()
                        );
                    }
                    return outcome;
                }
            }
        }
    }
}

impl Store for Patient {
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn get(&self, key: &Key) -> crate::Result<Vec<u8>> {
        self.call(|| self.inner.get(key))
    }
    fn put(&self, key: &Key, bytes: &[u8]) -> crate::Result<()> {
        self.call(|| self.inner.put(key, bytes))
    }
    fn put_if_absent(&self, key: &Key, bytes: &[u8]) -> crate::Result<()> {
        self.call(|| self.inner.put_if_absent(key, bytes))
    }
    fn list(&self, folder: &str) -> crate::Result<Vec<Listed>> {
        self.call(|| self.inner.list(folder))
    }
    fn delete(&self, key: &Key) -> crate::Result<()> {
        self.call(|| self.inner.delete(key))
    }
    fn size(&self, key: &Key) -> crate::Result<Option<u64>> {
        self.call(|| self.inner.size(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faults::{Faults, FaultyStore};
    use crate::MemoryStore;

    /// A store that is down for a while: the patient store's operations wait and then
    /// succeed (a lost acknowledgement of a create included, seen by the protocol as its own
    /// earlier write); definite answers come back at once.
    #[test]
    fn operations_wait_for_the_store_and_definite_answers_pass() {
        let memory = MemoryStore::new();
        let down = Arc::new(FaultyStore::new(
            memory.clone(),
            Faults {
                fail_before: 1.0,
                ..Faults::NONE
            },
            1,
        ));
        let patient = Patient::wrap(down.clone(), "test", || false);
        let key = Key::new("a").unwrap();
        let outage = Duration::from_millis(700);
        let started = Instant::now();
        std::thread::scope(|scope| {
            scope.spawn(|| {
                std::thread::sleep(outage);
                down.set_enabled(false);
            });
            patient.put(&key, b"x").unwrap();
        });
        assert!(started.elapsed() >= outage);
        assert_eq!(memory.get(&key).unwrap(), b"x");
        assert!(down.counts().failed_before >= 2, "{:?}", down.counts());
        let missing = patient.get(&Key::new("b").unwrap()).unwrap_err();
        assert!(
            matches!(missing, crate::Error::NotFound { .. }),
            "{missing}"
        );

        // Every acknowledgement lost once: the create is retried, finds its own object, and
        // the protocol's shard commit still succeeds with one copy.
        let lossy = Arc::new(FaultyStore::new(
            memory.clone(),
            Faults {
                lost_ack: 0.5,
                ..Faults::NONE
            },
            3,
        ));
        let patient = Patient::wrap(lossy.clone(), "test", || false);
        let mut writer =
            crate::commit::ShardWriter::new(patient, crate::commit::Retry::immediately(1));
        for i in 0..8 {
            let shard = writer.prepare(0, format!("shard {i}").into_bytes());
            writer.commit(&shard).unwrap();
        }
        assert!(lossy.counts().lost_acks > 0);
        assert_eq!(memory.list("shards").unwrap().len(), 8);
    }
}
