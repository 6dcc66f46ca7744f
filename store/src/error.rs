//! `store::Error`, the crate's one error type: storage operations, store URLs and keys, and
//! the commit protocol (fencing, conflicts, corrupt objects, refused stores).
//!
//! Only [`Error::Backend`] is transient: the protocol retries it (the store did not answer,
//! or answered with a server error, so the operation may or may not have happened). Every
//! other variant is a definite answer and is never retried.

/// Everything that can go wrong in this crate. Each message names the store and the key.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A read of a key that holds no object.
    #[error("{store}: no object at {key}")]
    NotFound {
        /// The store, as [`crate::Store::describe`] writes it.
        store: String,
        /// The key that was read.
        key: String,
    },
    /// A create-only write ([`crate::Store::put_if_absent`]) found an object at the key.
    #[error("{store}: an object already exists at {key} (create-only write refused)")]
    AlreadyExists {
        /// The store.
        store: String,
        /// The key that was to be created.
        key: String,
    },
    /// An object key that the store layout does not allow.
    #[error("invalid object key {key:?}: {reason}")]
    InvalidKey {
        /// The key as given.
        key: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A `--store` value that names no usable store.
    #[error("invalid store {spec:?}: {reason}")]
    InvalidStore {
        /// The URL or path as given.
        spec: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The store failed or did not answer (network, timeout, server error, local I/O): the
    /// operation may or may not have taken effect. The protocol retries these.
    #[error("{store}: {operation} {key} failed: {message}")]
    Backend {
        /// The store.
        store: String,
        /// The operation (get, put, create, list, delete, size).
        operation: &'static str,
        /// The key or folder.
        key: String,
        /// The store's own message, with its causes.
        message: String,
    },
    /// The store answered with a definite refusal (no permission, bad credentials, an
    /// operation it does not implement). Not retried.
    #[error("{store}: {operation} {key} refused: {message}")]
    Refused {
        /// The store.
        store: String,
        /// The operation.
        operation: &'static str,
        /// The key or folder.
        key: String,
        /// The store's message.
        message: String,
    },
    /// The start-up probe found that the store lacks a capability the protocol needs.
    #[error("{store} cannot hold a run: it does not support {missing}")]
    Unsupported {
        /// The store.
        store: String,
        /// What it lacks and how that showed.
        missing: String,
    },
    /// This trainer lost its run to another trainer: the next log entry it meant to create
    /// was created by a trainer of another epoch. The trainer must stop.
    #[error(
        "trainer epoch {epoch} was fenced: {store} log entry {index} was written by trainer \
         epoch {by_epoch} (writer {by_writer}), so another trainer has taken over this run; \
         this trainer stops without publishing"
    )]
    Fenced {
        /// The store.
        store: String,
        /// This trainer's epoch.
        epoch: u64,
        /// The log index it tried to create.
        index: u64,
        /// The epoch of the trainer that wrote that entry.
        by_epoch: u64,
        /// The writer id of that trainer.
        by_writer: String,
    },
    /// A key that only this writer ever creates holds different bytes: the writer id is
    /// shared with another process (never happens with random ids) or the object was edited.
    #[error("{store}: {key} already holds different bytes than this writer created there")]
    Conflict {
        /// The store.
        store: String,
        /// The key.
        key: String,
    },
    /// An object that does not read back as what the protocol wrote (a log entry that does
    /// not parse, a model whose sha256 differs from its log entry).
    #[error("{store}: {key} is corrupt: {reason}")]
    Corrupt {
        /// The store.
        store: String,
        /// The key.
        key: String,
        /// What is wrong.
        reason: String,
    },
    /// A publication that would add a shard some generation already added.
    #[error("{store}: shard {key} was already added by generation {generation}")]
    ShardReused {
        /// The store.
        store: String,
        /// The shard key.
        key: String,
        /// The generation that added it.
        generation: u64,
    },
    /// Local file I/O outside the store (the model download directory).
    #[error("{path}: {source}")]
    Local {
        /// The file or directory.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
}

impl Error {
    /// Whether the operation may be retried: the store did not give a definite answer.
    pub fn is_transient(&self) -> bool {
        matches!(self, Error::Backend { .. })
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
