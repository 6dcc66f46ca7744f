//! [`open`]: the `--store` value → a [`Store`].
//!
//! | value | store |
//! |---|---|
//! | `s3://BUCKET/PREFIX` (or `s3a://`) | S3 or an S3-compatible server; endpoint, region, credentials from `AWS_*` variables (`AWS_ENDPOINT`, `AWS_REGION`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_ALLOW_HTTP`, …) |
//! | `gs://BUCKET/PREFIX` | Google Cloud Storage; `GOOGLE_*` variables (`GOOGLE_SERVICE_ACCOUNT`, `GOOGLE_APPLICATION_CREDENTIALS`, …) |
//! | `az://CONTAINER/PREFIX` (or `azure://`, `abfs://`) | Azure Blob Storage; `AZURE_*` variables (`AZURE_STORAGE_ACCOUNT_NAME`, `AZURE_STORAGE_ACCOUNT_KEY`, …) |
//! | `file:///ABSOLUTE/PATH` | a local directory through object_store's file system (created when missing; fsync on) |
//! | `memory://` | a new, empty in-memory store (tests; each `open` is a separate store) |
//! | any other value without `://` | a local directory ([`DirStore`], created when missing) |
//!
//! [`open_with_options`] adds `object_store` configuration keys on top of the variables
//! (`aws_endpoint`, `aws_allow_http`, `google_service_account`, `azure_storage_account_name`,
//! …, case-insensitive); an unknown key is an error naming it.

use crate::error::{Error, Result};
use crate::{DirStore, MemoryStore, ObjectBackend, Store};
use object_store::aws::AmazonS3Builder;
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::local::LocalFileSystem;
use object_store::ObjectStore;
use std::sync::Arc;
use url::Url;

/// The store named by `spec` (see the module doc), configured from the environment.
pub fn open(spec: &str) -> Result<Arc<dyn Store>> {
    open_with_options(spec, &[])
}

/// The store named by `spec`, with `options` (object_store configuration keys and values)
/// overriding the environment.
pub fn open_with_options(spec: &str, options: &[(&str, &str)]) -> Result<Arc<dyn Store>> {
    let invalid = |reason: String| Error::InvalidStore {
        spec: spec.to_string(),
        reason,
    };
    if spec.trim().is_empty() {
        return Err(invalid(
            "empty; expected s3://, gs://, az://, file://, memory:// or a directory".into(),
        ));
    }
    if !spec.contains("://") {
        if !options.is_empty() {
            return Err(invalid("a directory store takes no options".into()));
        }
        return Ok(Arc::new(DirStore::open(spec)?));
    }
    let url = Url::parse(spec).map_err(|e| invalid(format!("not a URL: {e}")))?;
    let name = spec.trim_end_matches('/').to_string();
    let inner: Arc<dyn ObjectStore> = match url.scheme() {
        "memory" => {
            if !url.path().trim_matches('/').is_empty() || url.host_str().is_some_and(|h| !h.is_empty()) {
                return Err(invalid("memory:// takes no bucket or path".into()));
            }
            if !options.is_empty() {
                return Err(invalid("memory:// takes no options".into()));
            }
            return Ok(Arc::new(MemoryStore::new()));
        }
        "file" => {
            if url.host_str().is_some_and(|h| !h.is_empty() && h != "localhost") {
                return Err(invalid("file:// URLs name a local path (file:///absolute/path)".into()));
            }
            if !options.is_empty() {
                return Err(invalid("file:// takes no options".into()));
            }
            let path = url
                .to_file_path()
                .map_err(|()| invalid("file:// needs an absolute path (file:///absolute/path)".into()))?;
            std::fs::create_dir_all(&path)
                .map_err(|source| Error::Local { path: path.display().to_string(), source })?;
            let local = LocalFileSystem::new_with_prefix(&path)
                .map_err(|e| invalid(e.to_string()))?
                .with_fsync(true);
            return Ok(Arc::new(ObjectBackend::new(Arc::new(local), "", name)?));
        }
        "s3" | "s3a" => {
            let mut builder = AmazonS3Builder::from_env().with_url(spec);
            for (key, value) in options {
                let key = key.to_ascii_lowercase().parse().map_err(|_| invalid(format!("unknown S3 option {key:?}")))?;
                builder = builder.with_config(key, *value);
            }
            Arc::new(builder.build().map_err(|e| invalid(e.to_string()))?)
        }
        "gs" => {
            let mut builder = GoogleCloudStorageBuilder::from_env().with_url(spec);
            for (key, value) in options {
                let key = key.to_ascii_lowercase().parse().map_err(|_| invalid(format!("unknown GCS option {key:?}")))?;
                builder = builder.with_config(key, *value);
            }
            Arc::new(builder.build().map_err(|e| invalid(e.to_string()))?)
        }
        "az" | "azure" | "abfs" | "abfss" | "adl" => {
            let mut builder = MicrosoftAzureBuilder::from_env().with_url(spec);
            for (key, value) in options {
                let key = key.to_ascii_lowercase().parse().map_err(|_| invalid(format!("unknown Azure option {key:?}")))?;
                builder = builder.with_config(key, *value);
            }
            Arc::new(builder.build().map_err(|e| invalid(e.to_string()))?)
        }
        other => {
            return Err(invalid(format!(
                "unknown scheme {other}://; expected s3://, gs://, az://, file://, memory:// or a directory"
            )))
        }
    };
    if url.host_str().is_none_or(str::is_empty) {
        return Err(invalid(
            "no bucket (expected SCHEME://BUCKET/PREFIX)".into(),
        ));
    }
    let prefix = url.path().trim_matches('/');
    if !prefix.is_empty() {
        crate::Key::new(prefix).map_err(|e| invalid(format!("prefix: {e}")))?;
    }
    Ok(Arc::new(ObjectBackend::new(inner, prefix, name)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(spec: &str, options: &[(&str, &str)]) -> String {
        open_with_options(spec, options).unwrap_err().to_string()
    }

    #[test]
    fn opens_each_kind_of_store() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("run");
        assert!(open(plain.to_str().unwrap())
            .unwrap()
            .describe()
            .starts_with("directory "));
        assert!(plain.is_dir());
        let file_url = format!("file://{}/obj", dir.path().display());
        assert_eq!(open(&file_url).unwrap().describe(), file_url);
        assert_eq!(open("memory://").unwrap().describe(), "memory");
        let s3 = open_with_options(
            "s3://bucket/runs/a",
            &[
                ("aws_region", "us-east-1"),
                ("AWS_ENDPOINT", "http://127.0.0.1:1"),
                ("aws_allow_http", "true"),
            ],
        )
        .unwrap();
        assert_eq!(s3.describe(), "s3://bucket/runs/a");
    }

    #[test]
    fn refuses_bad_values_naming_the_problem() {
        assert!(refusal("", &[]).contains("empty"));
        assert!(refusal("ftp://host/x", &[]).contains("unknown scheme ftp://"));
        assert!(refusal("memory://x", &[]).contains("memory:// takes no bucket"));
        assert!(
            refusal("s3://bucket/a", &[("aws_no_such_thing", "1")]).contains("unknown S3 option")
        );
        assert!(refusal("s3://bucket/a b", &[("aws_region", "x")]).contains("prefix"));
        assert!(refusal("file://host/x", &[]).contains("local path"));
        assert!(refusal("/tmp/x", &[("aws_region", "x")]).contains("no options"));
    }
}
