//! The storage of a run, and the protocol that lets several machines share it without locks.
//!
//! Everything a distributed run reads and writes goes through one synchronous interface,
//! [`Store`], with three back ends:
//!
//! * [`DirStore`]: a local directory. Create-only writes are a temporary file plus
//!   `link(2)`, which fails when the name exists, so they are atomic on one machine (and on
//!   NFS servers, where `link` is atomic too); overwrites are a temporary file plus
//!   `rename(2)`. Data is fsynced before it becomes visible.
//! * [`MemoryStore`]: a map behind a mutex, for tests; every operation is atomic.
//! * [`ObjectBackend`]: any store of the `object_store` crate: S3 and S3-compatible servers
//!   (`s3://bucket/prefix`, create-only = `If-None-Match: *`), Google Cloud Storage
//!   (`gs://`, `ifGenerationMatch=0`), Azure Blob Storage (`az://`, `If-None-Match: *`) and
//!   `file://` (object_store's own local file system). It drives the async crate on a small
//!   tokio runtime of its own, so its methods must not be called from inside another tokio
//!   runtime (use `spawn_blocking` there).
//!
//! [`open`] turns a `--store` value into a store: `s3://`, `gs://`, `az://`, `file://`,
//! `memory://` or a plain directory path.
//!
//! On top of it, [`commit`] is the commit protocol (its module doc is the contract: keys,
//! writer ids, generations, fencing, the start-up probe, and which guarantee each test
//! relies on), [`faults`] is a seeded fault-injecting wrapper of any store for the
//! protocol's tests, and [`parallel`] reads many objects at once (a store's latency, not its
//! bandwidth, bounds reading thousands of small objects one after another).
//!
//! Two decorators wrap any store: [`Patient`] waits out outages (the trainer's store) and
//! [`ReadOnly`] refuses every write (the read-only views of a run).

pub mod commit;
mod dir;
mod error;
pub mod faults;
mod key;
mod memory;
mod object;
mod open;
pub mod parallel;
mod patient;
mod read_only;

pub use dir::DirStore;
pub use error::{Error, Result};
pub use key::{Key, MAX_KEY_LEN};
pub use memory::MemoryStore;
pub use object::ObjectBackend;
pub use open::{open, open_with_options};
pub use patient::Patient;
pub use read_only::ReadOnly;

use std::sync::Arc;

/// One object found by [`Store::list`].
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Listed {
    /// Its key.
    pub key: Key,
    /// Its size in bytes.
    pub size: u64,
}

/// A flat namespace of immutable-or-overwritten objects, addressed by [`Key`].
///
/// The contract every back end keeps (the protocol relies on each point):
/// * a write is atomic: a reader sees the whole old object, the whole new one, or none;
/// * read-after-write: once a write has returned `Ok`, every later `get`, `size` and `list`
///   (from any handle to the same store) sees it;
/// * [`Store::put_if_absent`] creates the object only if no object is at the key, and
///   otherwise returns [`Error::AlreadyExists`] and changes nothing. For object stores this
///   rests on the server honouring the condition; [`commit::probe`] checks that it does.
///
/// Errors: [`Error::NotFound`] and [`Error::AlreadyExists`] are definite answers;
/// [`Error::Backend`] means the outcome is unknown (the write may have happened).
pub trait Store: Send + Sync + std::fmt::Debug {
    /// The store for messages: `directory /runs/a`, `s3://bucket/prefix`, `memory`.
    fn describe(&self) -> String;

    /// The whole object at `key`, or [`Error::NotFound`].
    fn get(&self, key: &Key) -> Result<Vec<u8>>;

    /// Writes `bytes` at `key`, replacing any object there.
    fn put(&self, key: &Key, bytes: &[u8]) -> Result<()>;

    /// Writes `bytes` at `key` only if no object is there; otherwise
    /// [`Error::AlreadyExists`], leaving the existing object as it was.
    fn put_if_absent(&self, key: &Key, bytes: &[u8]) -> Result<()>;

    /// Every object in `folder` (`""` = the whole store; otherwise keys under `folder/`,
    /// at any depth), sorted by key.
    fn list(&self, folder: &str) -> Result<Vec<Listed>>;

    /// Removes the object at `key`; removing a missing object is not an error.
    fn delete(&self, key: &Key) -> Result<()>;

    /// The size of the object at `key`, or `None` when there is none.
    fn size(&self, key: &Key) -> Result<Option<u64>>;
}

impl<S: Store + ?Sized> Store for Arc<S> {
    fn describe(&self) -> String {
        (**self).describe()
    }
    fn get(&self, key: &Key) -> Result<Vec<u8>> {
        (**self).get(key)
    }
    fn put(&self, key: &Key, bytes: &[u8]) -> Result<()> {
        (**self).put(key, bytes)
    }
    fn put_if_absent(&self, key: &Key, bytes: &[u8]) -> Result<()> {
        (**self).put_if_absent(key, bytes)
    }
    fn list(&self, folder: &str) -> Result<Vec<Listed>> {
        (**self).list(folder)
    }
    fn delete(&self, key: &Key) -> Result<()> {
        (**self).delete(key)
    }
    fn size(&self, key: &Key) -> Result<Option<u64>> {
        (**self).size(key)
    }
}
