//! End-to-end tests of `loazero plot`.

mod common;
use common::{bin, loazero, text};

use std::path::Path;
use std::process::{Command, Output};

fn run_with_env(args: &[&str], key: &str, value: &str) -> Output {
    Command::new(bin())
        .args(args)
        .env(key, value)
        .output()
        .expect("run loazero")
}

/// A synthetic `metrics.jsonl`: every kind, duplicates from a resume, an unknown kind
/// and a truncated last line (line 14).
const METRICS: &str = r#"{"kind":"train","time":1700000000.5,"step":100,"lr":0.02,"loss":3.4,"policy_loss":2.6,"value_loss":0.8,"policy_accuracy":0.2,"value_mse":0.4,"samples":12800,"policy_samples":3200,"samples_per_sec":540.0,"window":40000}
{"kind":"train","time":1700000010.5,"step":200,"lr":0.02,"loss":3.1,"policy_loss":2.4,"value_loss":0.7}
{"kind":"generation","time":1700000020.0,"elapsed_s":612.3,"generation":1,"selfplay_games":64,"selfplay_positions":4100,"selfplay_seconds":120.5,"positions_per_sec":34.0,"evals_per_sec":5200.0,"train_steps":300,"train_seconds":60.2,"train_samples_per_sec":640.0,"loss":2.5,"policy_loss":1.9,"value_loss":0.6,"gate_games":null,"gate_score":null,"gate_elo":null,"promoted":true,"best":"gen-0001"}
{"kind":"rating","time":1700000030.0,"elapsed_s":700.0,"generation":1,"ratings":[{"name":"gen-0001","generation":1,"elo":150.0,"stderr":60.0,"games":40,"score":0.6},{"name":"random","generation":null,"elo":0.0,"stderr":0.0,"games":40,"score":0.4}]}
{"kind":"train","time":1700000040.5,"step":200,"lr":0.02,"loss":3.0,"policy_loss":2.35,"value_loss":0.65}
{"kind":"train","time":1700000050.5,"step":300,"lr":0.02,"loss":2.8,"policy_loss":2.2,"value_loss":0.6}
{"kind":"something_new","time":1700000055.0,"value":42}
{"kind":"generation","time":1700000060.0,"elapsed_s":1224.0,"generation":2,"selfplay_games":64,"selfplay_positions":4300,"selfplay_seconds":118.0,"positions_per_sec":36.4,"evals_per_sec":5400.0,"train_steps":300,"train_seconds":58.0,"train_samples_per_sec":660.0,"loss":2.4,"policy_loss":1.8,"value_loss":0.6,"gate_games":40,"gate_score":0.61,"gate_elo":77.0,"promoted":true,"best":"gen-0002"}
{"kind":"train","time":1700000070.5,"step":400,"lr":0.02,"loss":2.6,"policy_loss":2.05,"value_loss":0.55}
{"kind":"generation","time":1700000080.0,"elapsed_s":1830.0,"generation":3,"selfplay_games":64,"selfplay_positions":4200,"selfplay_seconds":115.0,"positions_per_sec":36.5,"evals_per_sec":5500.0,"train_steps":300,"train_seconds":57.0,"train_samples_per_sec":670.0,"loss":2.3,"policy_loss":1.7,"value_loss":0.6,"heldout":{"positions":393,"top1":0.21,"top3":0.45,"log_likelihood":-2.1,"value_sign_agreement":0.7,"chance_top1":0.04},"gate_games":40,"gate_score":0.45,"gate_elo":-35.0,"promoted":false,"best":"gen-0002"}
{"kind":"generation","time":1700000090.0,"elapsed_s":1900.0,"generation":3,"selfplay_games":64,"selfplay_positions":4200,"selfplay_seconds":115.0,"positions_per_sec":37.0,"evals_per_sec":5600.0,"train_steps":300,"train_seconds":57.0,"train_samples_per_sec":680.0,"loss":2.3,"policy_loss":1.7,"value_loss":0.6,"gate_games":40,"gate_score":0.45,"gate_elo":-35.0,"promoted":false,"best":"gen-0002"}
{"kind":"rating","time":1700000100.0,"elapsed_s":2000.0,"generation":3,"ratings":[{"name":"gen-0001","generation":1,"elo":140.0,"stderr":45.0,"games":60,"score":0.6},{"name":"gen-0002","generation":2,"elo":260.0,"stderr":40.0,"games":60,"score":0.65},{"name":"gen-0003","generation":3,"elo":310.0,"stderr":42.0,"games":60,"score":0.7},{"name":"random","generation":null,"elo":0.0,"stderr":0.0,"games":80,"score":0.1},{"name":"alphabeta:depth=1","generation":null,"elo":200.0,"stderr":35.0,"games":80,"score":0.5}]}
{"kind":"train","time":1700000110.5,"step":500,"lr":0.02,"loss":2.5,"policy_loss":1.95,"value_loss":0.55}
{"kind":"train","time":1700000120.5,"step":600,"lr":0.02,"loss":2.4,"pol"#;

const PLOTS: [&str; 4] = ["elo.png", "losses.png", "throughput.png", "policy.png"];

/// Asserts that `path` is a PNG of `width`×`height` pixels (IHDR, big endian).
fn assert_png(path: &Path, width: u32, height: u32) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(bytes.len() > 24, "{} is too short", path.display());
    assert_eq!(
        &bytes[..8],
        b"\x89PNG\r\n\x1a\n",
        "{} has no PNG signature",
        path.display()
    );
    assert_eq!(&bytes[12..16], b"IHDR", "{}", path.display());
    let w = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let h = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    assert_eq!((w, h), (width, height), "{}", path.display());
}

fn assert_no_temporary_files(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!name.contains(".tmp"), "left over: {name}");
    }
}

#[test]
fn plot_writes_every_png_with_the_requested_size() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("metrics.jsonl"), METRICS).unwrap();
    let d = dir.path().to_str().unwrap();
    let o = loazero(&["plot", d, "--width", "640", "--height", "480"]);
    let all = text(&o);
    assert!(o.status.success(), "{all}");
    assert!(!all.contains("panicked"), "{all}");
    // The truncated last line is reported with its file and line number.
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("metrics.jsonl:14"), "{stderr}");
    let plots = dir.path().join("plots");
    let stdout = String::from_utf8_lossy(&o.stdout);
    for name in PLOTS {
        let path = plots.join(name);
        assert_png(&path, 640, 480);
        assert!(
            stdout.contains(&path.display().to_string()),
            "{name} not printed: {stdout}"
        );
    }
    assert_no_temporary_files(&plots);

    // Default size, other output directory; running twice replaces the files; the run
    // directory spelled `--dir`, as `run` and `serve` take it (it used to fail with clap's
    // `-- --dir` tip), or as before.
    let out = dir.path().join("elsewhere");
    let o_str = out.to_str().unwrap();
    for (args, older) in [
        (["plot", "--dir", d, "--out", o_str].as_slice(), false),
        (&["plot", d, "--out", o_str], true),
    ] {
        let o = loazero(args);
        assert!(o.status.success(), "{}", text(&o));
        // The older spelling is read, with a note that names the one spelling.
        let noted = text(&o).contains("`plot RUN_DIR` is an older spelling")
            && text(&o).contains("`plot --dir RUN_DIR`");
        assert_eq!(noted, older, "{}", text(&o));
    }
    for name in PLOTS {
        assert_png(&out.join(name), 1200, 800);
    }
    assert_no_temporary_files(&out);
}

#[test]
fn plot_without_records_still_writes_every_file() {
    let dir = tempfile::tempdir().unwrap();
    // No records at all: every file shows a note.
    std::fs::write(dir.path().join("metrics.jsonl"), "").unwrap();
    let d = dir.path().to_str().unwrap();
    let o = loazero(&["plot", d, "--width", "400", "--height", "300"]);
    assert!(o.status.success(), "{}", text(&o));
    for name in PLOTS {
        assert_png(&dir.path().join("plots").join(name), 400, 300);
    }

    std::fs::write(
        dir.path().join("metrics.jsonl"),
        "{\"kind\":\"train\",\"step\":7,\"loss\":1.0,\"policy_loss\":1.0,\"value_loss\":1.0}\n\
         {\"kind\":\"generation\",\"generation\":0,\"positions_per_sec\":0.0,\"evals_per_sec\":0.0,\"train_samples_per_sec\":null}\n\
         {\"kind\":\"rating\",\"ratings\":[{\"name\":\"random\",\"generation\":null,\"elo\":0.0,\"stderr\":0.0}]}\n",
    )
    .unwrap();
    // One point of each kind (single-point and zero-width ranges), only an anchor rated.
    let o = loazero(&["plot", d]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!text(&o).contains("panicked"), "{}", text(&o));
    for name in PLOTS {
        assert_png(&dir.path().join("plots").join(name), 1200, 800);
    }
}

#[test]
fn plot_of_a_missing_directory_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-run");
    let o = loazero(&["plot", missing.to_str().unwrap()]);
    let all = text(&o);
    assert!(!o.status.success(), "{all}");
    assert!(all.contains(missing.to_str().unwrap()), "{all}");
    assert!(!all.contains("panicked"), "{all}");
}

#[test]
fn plot_without_metrics_file_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let o = loazero(&["plot", dir.path().to_str().unwrap()]);
    let all = text(&o);
    assert!(!o.status.success(), "{all}");
    let expected = dir.path().join("metrics.jsonl");
    assert!(all.contains(expected.to_str().unwrap()), "{all}");
    assert!(!all.contains("panicked"), "{all}");
}

#[test]
fn plot_with_a_missing_font_names_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("metrics.jsonl"), METRICS).unwrap();
    let font = dir.path().join("no-such-font.ttf");
    let o = run_with_env(
        &["plot", dir.path().to_str().unwrap()],
        "LOAZERO_FONT",
        font.to_str().unwrap(),
    );
    let all = text(&o);
    assert!(!o.status.success(), "{all}");
    assert!(all.contains(font.to_str().unwrap()), "{all}");
    assert!(all.contains("LOAZERO_FONT"), "{all}");
    assert!(!all.contains("panicked"), "{all}");
    assert!(!dir.path().join("plots").join("elo.png").exists());
}
