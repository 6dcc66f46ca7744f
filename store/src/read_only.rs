//! [`ReadOnly`]: a store that refuses every write, for readers that must never change the
//! store they look at (the read-only views of a run, `--store` of `serve`, `plot`, `ratings`
//! and `replay`).

use crate::{Error, Key, Listed, Result, Store};
use std::sync::Arc;

/// A store that refuses every write with [`Error::Refused`] (the reads go to the store
/// inside).
#[derive(Debug)]
pub struct ReadOnly(pub Arc<dyn Store>);

impl ReadOnly {
    fn refuse(&self, operation: &'static str, key: &Key) -> Error {
        Error::Refused {
            store: self.0.describe(),
            operation,
            key: key.to_string(),
            message: "a read-only view never writes to the store".into(),
        }
    }
}

impl Store for ReadOnly {
    fn describe(&self) -> String {
        self.0.describe()
    }
    fn get(&self, key: &Key) -> Result<Vec<u8>> {
        self.0.get(key)
    }
    fn put(&self, key: &Key, _: &[u8]) -> Result<()> {
        Err(self.refuse("put", key))
    }
    fn put_if_absent(&self, key: &Key, _: &[u8]) -> Result<()> {
        Err(self.refuse("create", key))
    }
    fn list(&self, folder: &str) -> Result<Vec<Listed>> {
        self.0.list(folder)
    }
    fn delete(&self, key: &Key) -> Result<()> {
        Err(self.refuse("delete", key))
    }
    fn size(&self, key: &Key) -> Result<Option<u64>> {
        self.0.size(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemoryStore;

    /// Reads pass through; every kind of write is refused, names its operation and key, and
    /// leaves the store inside as it was.
    #[test]
    fn reads_pass_and_every_write_is_refused() {
        let memory = MemoryStore::new();
        let key = Key::new("a/b").unwrap();
        memory.put(&key, b"old").unwrap();
        let view = ReadOnly(Arc::new(memory.clone()));
        assert_eq!(view.get(&key).unwrap(), b"old");
        assert_eq!(view.size(&key).unwrap(), Some(3));
        assert_eq!(view.list("a").unwrap().len(), 1);
        let other = Key::new("a/c").unwrap();
        for (operation, result) in [
            ("put", view.put(&key, b"new")),
            ("create", view.put_if_absent(&other, b"new")),
            ("delete", view.delete(&key)),
        ] {
            match result {
                Err(Error::Refused {
                    operation: op,
                    key: k,
                    ..
                }) => {
                    assert_eq!(op, operation);
                    assert!(k.starts_with("a/"), "{k}");
                }
                other => panic!("{operation}: {other:?}"),
            }
        }
        assert_eq!(memory.get(&key).unwrap(), b"old");
        assert!(memory.get(&other).is_err());
    }
}
