//! Training metrics: a JSON-lines file (one object per record, flushed at once, so a
//! crash loses at most the line being written). Progress for people is the binary's
//! business: it reads the same records.

use anyhow::{Context, Result};
use serde::Serialize;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Appends JSON records to a file, one per line.
pub struct MetricsLog {
    file: File,
    path: PathBuf,
}

impl MetricsLog {
    /// Opens `path` for appending (creating it and its directory).
    pub fn open(path: &Path) -> Result<MetricsLog> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        Ok(MetricsLog {
            file,
            path: path.to_path_buf(),
        })
    }

    /// Appends one record as a line.
    pub fn write<T: Serialize>(&mut self, record: &T) -> Result<()> {
        let mut line = serde_json::to_string(record)?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|_| self.file.flush())
            .with_context(|| format!("writing {}", self.path.display()))
    }
}

/// Seconds since the Unix epoch.
pub fn unix_time() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_append() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/metrics.jsonl");
        let mut log = MetricsLog::open(&path).unwrap();
        log.write(&serde_json::json!({"step": 1})).unwrap();
        drop(log);
        let mut log = MetricsLog::open(&path).unwrap();
        log.write(&serde_json::json!({"step": 2})).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let steps: Vec<u64> = text
            .lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["step"]
                    .as_u64()
                    .unwrap()
            })
            .collect();
        assert_eq!(steps, vec![1, 2]);
    }
}
