//! [`ObjectBackend`]: a [`Store`] over any `object_store::ObjectStore` (S3, GCS, Azure,
//! object_store's local file system), under a key prefix.
//!
//! The key `k` is the object `PREFIX/k`. Create-only writes are
//! `PutMode::Create`, which object_store sends as `If-None-Match: *` (S3, Azure) or
//! `ifGenerationMatch=0` (GCS); an answer of 409/412 becomes [`Error::AlreadyExists`]. Whether
//! the server honours the condition is the server's business: [`crate::commit::probe`]
//! checks it at start-up. object_store retries idempotent requests on its own
//! (`RetryConfig`: 10 tries within 3 minutes by default) but not a create that timed out,
//! whose outcome is unknown: that surfaces as [`Error::Backend`], for the protocol to retry.
//!
//! The async calls run on a private multi-thread tokio runtime with one worker thread, so the
//! methods are plain blocking calls usable from any thread that is not itself inside a tokio
//! runtime.

use crate::error::{Error, Result};
use crate::key::{check_folder, Key};
use crate::{Listed, Store};
use futures_util::TryStreamExt;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};
use std::fmt;
use std::sync::Arc;

/// A store in an object store, under a prefix.
pub struct ObjectBackend {
    inner: Arc<dyn ObjectStore>,
    prefix: Path,
    name: String,
    runtime: tokio::runtime::Runtime,
}

impl fmt::Debug for ObjectBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectBackend")
            .field("name", &self.name)
            .finish()
    }
}

impl ObjectBackend {
    /// The store `inner` under `prefix` ("" = the whole bucket), described in messages as
    /// `name` (the URL it came from).
    pub fn new(
        inner: Arc<dyn ObjectStore>,
        prefix: &str,
        name: impl Into<String>,
    ) -> Result<ObjectBackend> {
        let name = name.into();
        let prefix = Path::parse(prefix.trim_matches('/')).map_err(|e| Error::InvalidStore {
            spec: name.clone(),
            reason: format!("prefix {prefix:?}: {e}"),
        })?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("store-io")
            .enable_all()
            .build()
            .map_err(|source| Error::Local {
                path: "tokio runtime of the object store".into(),
                source,
            })?;
        Ok(ObjectBackend {
            inner,
            prefix,
            name,
            runtime,
        })
    }

    fn path_of(&self, key: &Key) -> Path {
        key.as_str()
            .split('/')
            .fold(self.prefix.clone(), |path, segment| {
                path.clone().join(segment)
            })
    }

    fn error(&self, operation: &'static str, key: &str, error: object_store::Error) -> Error {
        let store = self.name.clone();
        let key = key.to_string();
        match error {
            object_store::Error::NotFound { .. } => Error::NotFound { store, key },
            object_store::Error::AlreadyExists { .. }
            | object_store::Error::Precondition { .. } => Error::AlreadyExists { store, key },
            object_store::Error::NotSupported { .. }
            | object_store::Error::NotImplemented { .. }
            | object_store::Error::PermissionDenied { .. }
            | object_store::Error::Unauthenticated { .. }
            | object_store::Error::UnknownConfigurationKey { .. } => Error::Refused {
                store,
                operation,
                key,
                message: chain(&error),
            },
            other => Error::Backend {
                store,
                operation,
                key,
                message: chain(&other),
            },
        }
    }

    fn write(&self, operation: &'static str, key: &Key, bytes: &[u8], mode: PutMode) -> Result<()> {
        let path = self.path_of(key);
        let payload = PutPayload::from(bytes.to_vec());
        let options = PutOptions {
            mode,
            ..PutOptions::default()
        };
        self.runtime
            .block_on(self.inner.put_opts(&path, payload, options))
            .map(|_| ())
            .map_err(|e| self.error(operation, key.as_str(), e))
    }
}

/// An error with its causes, `outer: cause: cause`.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

impl Store for ObjectBackend {
    fn describe(&self) -> String {
        self.name.clone()
    }

    fn get(&self, key: &Key) -> Result<Vec<u8>> {
        let path = self.path_of(key);
        self.runtime
            .block_on(async {
                let result = self.inner.get(&path).await?;
                result.bytes().await
            })
            .map(|bytes| bytes.to_vec())
            .map_err(|e| self.error("get", key.as_str(), e))
    }

    fn put(&self, key: &Key, bytes: &[u8]) -> Result<()> {
        self.write("put", key, bytes, PutMode::Overwrite)
    }

    fn put_if_absent(&self, key: &Key, bytes: &[u8]) -> Result<()> {
        self.write("create", key, bytes, PutMode::Create)
    }

    fn list(&self, folder: &str) -> Result<Vec<Listed>> {
        check_folder(folder)?;
        let path = if folder.is_empty() {
            self.prefix.clone()
        } else {
            self.path_of(&Key::new(folder)?)
        };
        let found: Vec<object_store::ObjectMeta> = self
            .runtime
            .block_on(self.inner.list(Some(&path)).try_collect())
            .map_err(|e| self.error("list", folder, e))?;
        let mut listed = Vec::with_capacity(found.len());
        for meta in found {
            let Some(relative) = meta.location.prefix_match(&self.prefix) else {
                continue;
            };
            let text: Vec<String> = relative.map(|part| part.as_ref().to_string()).collect();
            // Objects whose names are not keys (written by other tools) are not listed.
            if let Ok(key) = Key::new(text.join("/")) {
                listed.push(Listed {
                    key,
                    size: meta.size,
                });
            }
        }
        listed.sort();
        Ok(listed)
    }

    fn delete(&self, key: &Key) -> Result<()> {
        let path = self.path_of(key);
        match self.runtime.block_on(self.inner.delete(&path)) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.error("delete", key.as_str(), e)),
        }
    }

    fn size(&self, key: &Key) -> Result<Option<u64>> {
        let path = self.path_of(key);
        match self.runtime.block_on(self.inner.head(&path)) {
            Ok(meta) => Ok(Some(meta.size)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.error("size", key.as_str(), e)),
        }
    }
}
