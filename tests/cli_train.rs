//! End-to-end tests of the torch-facing commands: `info`, `export`, and the CUDA
//! refusal of `--device cuda` where CUDA is unavailable. The binary runs with
//! `LD_LIBRARY_PATH` removed: it must find libtorch through its rpath.

mod common;
use common::{bin, text};

use std::process::{Command, Output};

fn loazero(args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("LIBTORCH")
        .output()
        .expect("loazero runs")
}

#[test]
fn info_runs_without_environment() {
    let o = loazero(&["info"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("torch            2."), "{t}");
    assert!(t.contains("torch library    /"), "{t}");
    assert!(t.contains("cuda "), "{t}");
    // libtorch_cuda is linked in (not dropped by --as-needed).
    if !tch::Cuda::is_available() {
        assert!(t.contains("CUDA library loaded"), "{t}");
    }
}

/// `info` shows `auto` precision's choice for the default network: measured on the first
/// call and kept in the cache file, read from it on the next; unless other processes kept
/// the cores busy while it measured: then it is not cached, and the next call measures
/// again (both are checked: which one a run sees depends on the machine's load).
#[test]
fn info_measures_auto_precision_once_and_caches_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cache").join("precision.json");
    let info = || {
        let o = Command::new(bin())
            .arg("info")
            .env("LOAZERO_PRECISION_CACHE", &file)
            .output()
            .expect("loazero runs");
        assert!(o.status.success(), "{}", text(&o));
        text(&o)
    };
    let line = |t: &str| {
        t.lines()
            .find(|l| l.starts_with("precision        auto = "))
            .unwrap_or_else(|| panic!("no precision line: {t}"))
            .to_string()
    };
    let first = line(&info());
    assert!(
        first.contains("for inference on this cpu with the 4x32 network")
            && first.contains("measured now: fp32 ")
            && first.contains(" ms at batch 16/64"),
        "{first}"
    );
    let second = line(&info());
    if first.contains("not cached: other processes kept") {
        // Times taken on a busy machine serve only the process that took them: the next
        // one measures again (and caches it if the cores were free then).
        assert!(second.contains("measured now: fp32 "), "{second}");
        return;
    }
    assert!(
        first.contains(&format!("cached in {}", file.display())),
        "{first}"
    );
    assert!(second.contains("(measured: fp32 "), "{second}");
}

#[test]
fn cuda_without_cuda_is_a_clear_error() {
    if tch::Cuda::is_available() {
        let o = loazero(&["info", "--device", "cuda"]);
        assert!(o.status.success(), "{}", text(&o));
        return;
    }
    for args in [
        &["info", "--device", "cuda"][..],
        &[
            "bench", "net", "--device", "cuda", "--preset", "cpu", "--batch", "1",
        ][..],
    ] {
        let o = loazero(args);
        let t = text(&o);
        assert!(!o.status.success(), "{args:?} succeeded: {t}");
        assert!(t.contains("CUDA is not available"), "{t}");
    }
    let o = loazero(&["info", "--device", "tpu"]);
    assert!(!o.status.success());
    let t = text(&o);
    assert!(
        t.contains("'tpu'") && t.contains("expected cpu, cuda or cuda:N"),
        "{t}"
    );
}

#[test]
fn export_writes_weights_torchscript_and_description() {
    tch::set_num_threads(1);
    let dir = tempfile::tempdir().unwrap();
    let net = train::NetConfig::tiny();
    let model = train::Model::new(
        train::ModelInfo::new(&net, loa::Variant::Six),
        tch::Device::Cpu,
    );
    let path = dir.path().join("m.safetensors");
    model.save(&path).unwrap();
    let out = dir.path().join("out");
    let o = loazero(&[
        "export",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("TorchScript check"), "{t}");
    for f in ["model.safetensors", "model.pt", "model.json"] {
        assert!(out.join(f).exists(), "{f} missing");
    }
    let desc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("model.json")).unwrap()).unwrap();
    assert_eq!(desc["board"]["size"], 6);
    assert_eq!(desc["output"]["shape"][1], 8 * 36 + 4);
    assert_eq!(desc["net"]["channels"], 8);

    // A corrupt model file is a clear error naming it, not a panic.
    std::fs::write(&path, b"not a model").unwrap();
    let o = loazero(&[
        "export",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let t = text(&o);
    assert!(!o.status.success());
    assert!(
        t.contains("m.safetensors") && !t.contains("panicked"),
        "{t}"
    );
}
