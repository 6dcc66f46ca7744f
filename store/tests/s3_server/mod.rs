//! A real S3 server process for the tests: `s3s-fs` (crates.io, `cargo install s3s-fs
//! --features binary`) on 127.0.0.1 at a free port, its data in a temporary directory, and a
//! proxy that strips `If-None-Match` to emulate a server that ignores create-only writes.
//!
//! The binary is `LOAZERO_S3S_FS` when set, else `s3s-fs` on `PATH`, else
//! `$HOME/.cache/loazero/s3s-fs/bin/s3s-fs` (where `.ci/run` installs it). Without it the S3
//! tests say SKIPPED and pass, except under `CI`, where they fail.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use store::Store;

/// The bucket every server has (a directory under its data root).
pub const BUCKET: &str = "loazero";
const ACCESS_KEY: &str = "loazero-test";
const SECRET_KEY: &str = "loazero-test-secret";

/// The s3s-fs binary, if installed.
pub fn binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("LOAZERO_S3S_FS") {
        let path = PathBuf::from(path);
        assert!(
            path.is_file(),
            "LOAZERO_S3S_FS={} is not a file",
            path.display()
        );
        return Some(path);
    }
    if let Some(paths) = std::env::var_os("PATH") {
        if let Some(found) = std::env::split_paths(&paths)
            .map(|d| d.join("s3s-fs"))
            .find(|p| p.is_file())
        {
            return Some(found);
        }
    }
    let cached = PathBuf::from(std::env::var_os("HOME")?).join(".cache/loazero/s3s-fs/bin/s3s-fs");
    cached.is_file().then_some(cached)
}

/// The binary, or `None` after a notice (a failure under `CI`).
pub fn binary_or_skip(test: &str) -> Option<PathBuf> {
    let found = binary();
    if found.is_none() {
        if std::env::var_os("CI").is_some() {
            panic!(
                "CI: {test} needs the S3 server s3s-fs (cargo install s3s-fs@0.14.1 --features binary \
                 --locked --root ~/.cache/loazero/s3s-fs, as .ci/run does, or set LOAZERO_S3S_FS)"
            );
        }
        // Past the harness's capture (it takes only `print!`/`eprint!`), so the skip shows;
        // the store crate depends on no workspace crate, so not through tests/common.
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr().lock(),
            "SKIPPED: {test}: s3s-fs not found (cargo install s3s-fs@0.14.1 --features binary --locked)"
        );
    }
    found
}

/// A running s3s-fs, killed on drop.
pub struct S3Server {
    child: Child,
    data: tempfile::TempDir,
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// Whether requests must be signed with the test keys.
    authenticated: bool,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn wait_for_port(port: u16, child: &mut Child, log: &std::path::Path) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!(
                "s3s-fs exited ({status}): {}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
        }
        assert!(
            Instant::now() < deadline,
            "s3s-fs did not listen on port {port} within 20 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl S3Server {
    /// Starts `binary` with a fresh data directory holding the bucket. `authenticated`: it
    /// checks request signatures made with the test keys; otherwise it takes any request.
    pub fn start(binary: &std::path::Path, authenticated: bool) -> S3Server {
        let data = tempfile::tempdir().unwrap();
        let root = data.path().join("root");
        std::fs::create_dir_all(root.join(BUCKET)).unwrap();
        let log = data.path().join("s3s-fs.log");
        // Another process may take the port between the probe and the bind: retry then.
        for _ in 0..5 {
            let port = free_port();
            let mut command = Command::new(binary);
            command.args(["--host", "127.0.0.1", "--port", &port.to_string()]);
            if authenticated {
                command.args(["--access-key", ACCESS_KEY, "--secret-key", SECRET_KEY]);
            }
            let output = std::fs::File::create(&log).unwrap();
            let mut child = command
                .arg(&root)
                .stdin(Stdio::null())
                .stdout(output.try_clone().unwrap())
                .stderr(output)
                .spawn()
                .unwrap_or_else(|e| panic!("starting {}: {e}", binary.display()));
            std::thread::sleep(Duration::from_millis(30));
            if child.try_wait().unwrap().is_some() {
                continue;
            }
            wait_for_port(port, &mut child, &log);
            return S3Server {
                child,
                data,
                port,
                authenticated,
            };
        }
        panic!(
            "s3s-fs did not start: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }

    /// Where its objects lie on disk.
    pub fn data_dir(&self) -> PathBuf {
        self.data.path().join("root")
    }

    /// The object_store options that reach this server at `endpoint_port` (its own port, or
    /// a proxy's).
    pub fn options(&self, endpoint_port: u16) -> Vec<(&'static str, String)> {
        let mut options = vec![
            ("aws_endpoint", format!("http://127.0.0.1:{endpoint_port}")),
            ("aws_allow_http", "true".to_string()),
            ("aws_region", "us-east-1".to_string()),
            ("aws_virtual_hosted_style_request", "false".to_string()),
        ];
        if self.authenticated {
            options.push(("aws_access_key_id", ACCESS_KEY.to_string()));
            options.push(("aws_secret_access_key", SECRET_KEY.to_string()));
        } else {
            options.push(("aws_skip_signature", "true".to_string()));
        }
        options
    }

    /// A new handle to `s3://loazero/PREFIX` on this server, reached at `endpoint_port`.
    pub fn open_via(&self, prefix: &str, endpoint_port: u16) -> Arc<dyn Store> {
        let options = self.options(endpoint_port);
        let borrowed: Vec<(&str, &str)> = options.iter().map(|(k, v)| (*k, v.as_str())).collect();
        store::open_with_options(&format!("s3://{BUCKET}/{prefix}"), &borrowed).unwrap()
    }

    /// A new handle to `s3://loazero/PREFIX` on this server.
    pub fn open(&self, prefix: &str) -> Arc<dyn Store> {
        self.open_via(prefix, self.port)
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP/1.1 proxy on 127.0.0.1 that forwards to `upstream` and deletes every
/// `If-None-Match` request header: a store behind it ignores create-only writes the way
/// Garage 2.5 does. Requests must carry their body with `Content-Length` (object_store's
/// do). Its threads end when the test process does.
pub struct StrippingProxy {
    /// Its port.
    pub port: u16,
    stripped: Arc<AtomicUsize>,
}

impl StrippingProxy {
    /// Starts the proxy in front of 127.0.0.1:`upstream`.
    pub fn start(upstream: u16) -> StrippingProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let stripped = Arc::new(AtomicUsize::new(0));
        let counter = stripped.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let counter = counter.clone();
                std::thread::spawn(move || {
                    let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                        return;
                    };
                    let (mut server_read, mut client_write) =
                        (server.try_clone().unwrap(), client.try_clone().unwrap());
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut server_read, &mut client_write);
                        let _ = client_write.shutdown(std::net::Shutdown::Both);
                    });
                    let _ = forward_requests(client, server, &counter);
                });
            }
        });
        StrippingProxy { port, stripped }
    }

    /// How many `If-None-Match` headers it has deleted.
    pub fn stripped(&self) -> usize {
        self.stripped.load(Ordering::SeqCst)
    }
}

/// Copies requests from `client` to `server`, one head and body at a time, minus
/// `If-None-Match`.
fn forward_requests(
    client: TcpStream,
    mut server: TcpStream,
    stripped: &AtomicUsize,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(client);
    loop {
        let mut head = Vec::new();
        let mut body_length = 0usize;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line)? == 0 {
                return Ok(());
            }
            let lower = line.to_ascii_lowercase();
            if lower.starts_with("if-none-match:") {
                stripped.fetch_add(1, Ordering::SeqCst);
                continue;
            }
            if let Some(value) = lower.strip_prefix("content-length:") {
                body_length = value.trim().parse().expect("a Content-Length");
            }
            assert!(
                !lower.starts_with("transfer-encoding:"),
                "the proxy forwards Content-Length bodies only"
            );
            head.extend_from_slice(line.as_bytes());
            if line == "\r\n" {
                break;
            }
        }
        server.write_all(&head)?;
        let mut body = vec![0; body_length];
        reader.read_exact(&mut body)?;
        server.write_all(&body)?;
    }
}
