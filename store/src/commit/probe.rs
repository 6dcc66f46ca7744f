//! The start-up probe: whether a store honours what the commit protocol rests on
//! (create-only writes, read-after-write, list-after-write).

use super::log::WriterId;
use crate::error::{Error, Result};
use crate::key::Key;
use crate::Store;

/// Checks that `store` supports what the protocol needs, creating and then deleting one
/// object `probe/WRITER`: a create-only write succeeds; a second create-only write of the
/// same key fails with [`Error::AlreadyExists`] and leaves the first object as it was; the
/// object reads back and is listed right after its write. A store that fails a check is
/// refused with [`Error::Unsupported`] naming it; a store that cannot be reached gives the
/// store's own error.
pub fn probe(store: &dyn Store) -> Result<()> {
    let key = Key::new(format!("probe/{}", WriterId::random())).expect("a valid key");
    let unsupported = |missing: String| Error::Unsupported {
        store: store.describe(),
        missing,
    };
    let first = b"first create";
    store.put_if_absent(&key, first)?;
    let second = store.put_if_absent(&key, b"second create");
    let read = store.get(&key);
    let listed = store.list("probe");
    store.delete(&key)?;
    match second {
        Err(Error::AlreadyExists { .. }) => {}
        Ok(()) => {
            return Err(unsupported(format!(
                "create-only writes (S3 `If-None-Match: *`): a second create of {key} succeeded \
                 instead of failing, so two writers could overwrite each other's shards, models \
                 and log entries and trainers could not be fenced (Garage, for one, ignores the \
                 condition; AWS S3, GCS, Azure, MinIO, Ceph RGW, Cloudflare R2 and local \
                 directories honour it)"
            )))
        }
        Err(error) => return Err(error),
    }
    if read? != first {
        return Err(unsupported(format!(
            "create-only writes: the refused second create of {key} still replaced the object"
        )));
    }
    if !listed?.iter().any(|listed| listed.key == key) {
        return Err(unsupported(format!(
            "list-after-write: {key} was not listed right after its creation"
        )));
    }
    Ok(())
}
