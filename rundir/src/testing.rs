//! Helpers for tests of a run kept in a store, here and in the crates above (the `testing`
//! feature): a store that shows what a sync did to it, and a shard bundle.

use crate::bundle;
use std::sync::atomic::{AtomicUsize, Ordering};
use store::{Key, Listed, MemoryStore, Store};

/// A store that records every key read and counts writes, refusing them when
/// `refuse_writes`: what a sync does to a store, made visible.
#[derive(Debug, Default)]
pub struct Counting {
    /// The store that holds the objects.
    pub inner: MemoryStore,
    /// Whether every write is refused ([`store::Error::Refused`]).
    pub refuse_writes: bool,
    /// Every key read, in order.
    pub got: std::sync::Mutex<Vec<String>>,
    /// How many writes were asked for (refused ones included).
    pub writes: AtomicUsize,
}

impl Counting {
    /// A store that takes no writes.
    pub fn read_only() -> Counting {
        Counting {
            refuse_writes: true,
            ..Counting::default()
        }
    }
    /// How many reads so far.
    pub fn gets(&self) -> usize {
        self.got.lock().unwrap().len()
    }
    /// How many writes so far.
    pub fn writes(&self) -> usize {
        self.writes.load(Ordering::SeqCst)
    }
    fn write(&self, operation: &'static str, key: &Key) -> store::Result<()> {
        self.writes.fetch_add(1, Ordering::SeqCst);
        if !self.refuse_writes {
            return Ok(());
        }
        Err(store::Error::Refused {
            store: "counting".into(),
            operation,
            key: key.to_string(),
            message: "this test's store takes no writes".into(),
        })
    }
}

impl Store for Counting {
    fn describe(&self) -> String {
        "counting".into()
    }
    fn get(&self, key: &Key) -> store::Result<Vec<u8>> {
        self.got.lock().unwrap().push(key.to_string());
        self.inner.get(key)
    }
    fn put(&self, key: &Key, bytes: &[u8]) -> store::Result<()> {
        self.write("put", key)?;
        self.inner.put(key, bytes)
    }
    fn put_if_absent(&self, key: &Key, bytes: &[u8]) -> store::Result<()> {
        self.write("create", key)?;
        self.inner.put_if_absent(key, bytes)
    }
    fn list(&self, folder: &str) -> store::Result<Vec<Listed>> {
        self.inner.list(folder)
    }
    fn delete(&self, key: &Key) -> store::Result<()> {
        self.write("delete", key)?;
        self.inner.delete(key)
    }
    fn size(&self, key: &Key) -> store::Result<Option<u64>> {
        self.inner.size(key)
    }
}

/// A bundle ([`bundle::pack`]) of a shard `stem` with one game record.
pub fn bundle_bytes(stem: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(format!("{stem}.shard")), b"samples").unwrap();
    std::fs::write(dir.path().join(format!("{stem}-000.txt")), b"1. a1-a2 *").unwrap();
    bundle::pack(&dir.path().join(format!("{stem}.shard")), dir.path())
        .unwrap()
        .0
}
