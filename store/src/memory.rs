//! [`MemoryStore`]: the in-memory back end, for tests. Every operation holds one mutex, so
//! every operation, create-only writes included, is atomic.

use crate::error::{Error, Result};
use crate::key::{check_folder, Key};
use crate::{Listed, Store};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// A store in memory. Clones share the same objects (as two handles to one bucket do).
#[derive(Debug, Clone, Default)]
pub struct MemoryStore {
    objects: Arc<Mutex<BTreeMap<Key, Vec<u8>>>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    fn objects(&self) -> std::sync::MutexGuard<'_, BTreeMap<Key, Vec<u8>>> {
        // A panic while holding the lock leaves the map whole (every update is one call).
        self.objects
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Store for MemoryStore {
    fn describe(&self) -> String {
        "memory".into()
    }

    fn get(&self, key: &Key) -> Result<Vec<u8>> {
        self.objects()
            .get(key)
            .cloned()
            .ok_or_else(|| Error::NotFound {
                store: self.describe(),
                key: key.to_string(),
            })
    }

    fn put(&self, key: &Key, bytes: &[u8]) -> Result<()> {
        self.objects().insert(key.clone(), bytes.to_vec());
        Ok(())
    }

    fn put_if_absent(&self, key: &Key, bytes: &[u8]) -> Result<()> {
        let mut objects = self.objects();
        if objects.contains_key(key) {
            return Err(Error::AlreadyExists {
                store: self.describe(),
                key: key.to_string(),
            });
        }
        objects.insert(key.clone(), bytes.to_vec());
        Ok(())
    }

    fn list(&self, folder: &str) -> Result<Vec<Listed>> {
        check_folder(folder)?;
        Ok(self
            .objects()
            .iter()
            .filter(|(key, _)| key.is_in(folder))
            .map(|(key, bytes)| Listed {
                key: key.clone(),
                size: bytes.len() as u64,
            })
            .collect())
    }

    fn delete(&self, key: &Key) -> Result<()> {
        self.objects().remove(key);
        Ok(())
    }

    fn size(&self, key: &Key) -> Result<Option<u64>> {
        Ok(self.objects().get(key).map(|bytes| bytes.len() as u64))
    }
}
