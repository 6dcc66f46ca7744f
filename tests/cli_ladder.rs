//! End-to-end tests of `loazero ladder`: a tiny run's models against alpha-beta at equal
//! time per move, the table, CSV and PNG, resuming, and its errors.

mod common;
use common::{loazero, run_args, stderr, stdout, text, tiny_model_at, tiny_run_sets};

use std::path::Path;

/// The rows of a CSV file without quoted fields that hold commas: header → value per row.
/// (The `model` column is quoted; it is read as the text between its quotes.)
fn csv_rows(text: &str) -> Vec<std::collections::BTreeMap<String, String>> {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|line| {
            // The quoted model spec holds one comma: join it back.
            let mut fields: Vec<String> = Vec::new();
            let mut quoted = false;
            for part in line.split(',') {
                if quoted {
                    let last = fields.last_mut().unwrap();
                    last.push(',');
                    last.push_str(part);
                } else {
                    fields.push(part.to_string());
                }
                quoted ^= part.matches('"').count() % 2 == 1;
            }
            assert_eq!(fields.len(), header.len(), "{line}");
            header
                .iter()
                .map(|h| h.to_string())
                .zip(fields.into_iter().map(|f| f.trim_matches('"').to_string()))
                .collect()
        })
        .collect()
}

/// The directories `gen-NNNN` in `out`, sorted.
fn generation_dirs(out: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("gen-"))
        .collect();
    names.sort();
    names
}

#[test]
fn ladder_plays_the_runs_models_writes_csv_and_png_and_resumes() {
    let dir = common::temp_dir();
    let run = dir.path().join("run");
    let o = loazero(&run_args(&run, 3, &tiny_run_sets()));
    assert!(o.status.success(), "tiny run failed: {}", text(&o));
    let out = dir.path().join("ladder");
    let args = [
        "ladder",
        run.to_str().unwrap(),
        "--points",
        "2",
        "--ms",
        "5",
        "--games",
        "2",
        "--max-plies",
        "60",
        "--out",
        out.to_str().unwrap(),
    ];
    let o = loazero(&args);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(!t.contains("(reused)"), "{t}");
    // The run directory without `--dir`, the older spelling: read, with a note.
    assert!(t.contains("`ladder RUN_DIR` is an older spelling"), "{t}");

    // One row per chosen model, in training order, the newest (gen 3) last.
    let csv = std::fs::read_to_string(out.join("ladder.csv")).unwrap();
    let rows = csv_rows(&csv);
    assert_eq!(rows.len(), 2, "{csv}");
    let minutes: Vec<f64> = rows
        .iter()
        .map(|r| r["training_minutes"].parse().unwrap())
        .collect();
    assert!(minutes[0] > 0.0 && minutes[0] < minutes[1], "{csv}");
    assert_eq!(rows[1]["generation"], "3", "{csv}");
    for r in &rows {
        assert_eq!(r["ms"], "5", "{r:?}");
        assert_eq!(r["baseline"], "alphabeta:ms=5", "{r:?}");
        assert!(
            r["model"].contains(&format!("gen-{:0>4}.safetensors", r["generation"]))
                && r["model"].ends_with(",ms=5"),
            "{r:?}"
        );
        let wdl: u32 = ["wins", "draws", "losses"]
            .iter()
            .map(|c| r[*c].parse::<u32>().unwrap())
            .sum();
        assert_eq!((r["games"].as_str(), wdl), ("2", 2), "{r:?}");
        for c in ["score", "elo", "elo_lower", "elo_upper"] {
            let _: f64 = r[c].parse().unwrap();
        }
        let model_ms: f64 = r["model_ms_per_move"].parse().unwrap();
        assert!(model_ms > 0.0, "{r:?}");
    }
    let chosen: Vec<String> = rows
        .iter()
        .map(|r| format!("gen-{:0>4}", r["generation"]))
        .collect();
    assert_eq!(generation_dirs(&out), chosen);
    for g in &chosen {
        assert!(out.join(g).join("time-5ms/done.json").is_file(), "{g}");
    }
    let png = std::fs::read(out.join("ladder.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let md = std::fs::read_to_string(out.join("ladder.md")).unwrap();
    assert!(
        md.starts_with("# Elo at 5 ms per move against training time"),
        "{md}"
    );
    // The table on stdout: a header and one line per model.
    let printed = stdout(&o);
    let header = printed
        .lines()
        .find(|l| l.starts_with("model"))
        .unwrap_or_else(|| panic!("no table: {t}"));
    for column in [
        "trained",
        "time/move",
        "W-D-L",
        "Elo [95%]",
        "ms/move alpha-beta",
    ] {
        assert!(header.contains(column), "{header}");
    }
    for g in &chosen {
        assert!(
            printed.lines().any(|l| l.starts_with(g.as_str())),
            "{g}: {printed}"
        );
    }

    // The same command again plays no game: every pairing is reused, the files unchanged.
    let o2 = loazero(&args);
    let t2 = text(&o2);
    assert!(o2.status.success(), "{t2}");
    assert_eq!(stderr(&o2).matches("(reused)").count(), 2, "{t2}");
    assert!(!stderr(&o2).contains(": game "), "{t2}");
    assert_eq!(
        std::fs::read_to_string(out.join("ladder.csv")).unwrap(),
        csv
    );

    // An explicit list: the untrained network is added and played (its two games at
    // once), generation 3 reused.
    // The run directory spelled `--dir`, as `run` and `serve` take it.
    let o3 = loazero(&[
        "ladder",
        "--dir",
        run.to_str().unwrap(),
        "--generations",
        "3,0",
        "--ms",
        "5",
        "--games",
        "2",
        "--timed-threads",
        "2",
        "--max-plies",
        "60",
        "--out",
        out.to_str().unwrap(),
    ]);
    let t3 = text(&o3);
    assert!(o3.status.success(), "{t3}");
    let e3 = stderr(&o3);
    assert!(e3.contains("gen-0003 time-5ms (reused)"), "{t3}");
    assert!(e3.contains("gen-0000 time-5ms done"), "{t3}");
    assert!(!e3.contains("gen-0003 time-5ms: game"), "{t3}");
    let rows = csv_rows(&std::fs::read_to_string(out.join("ladder.csv")).unwrap());
    let listed: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r["generation"].as_str(), r["training_minutes"].as_str()))
        .collect();
    assert_eq!(listed[0], ("0", "0.00"), "{rows:?}");
    assert_eq!(listed[1].0, "3", "{rows:?}");
}

/// A run directory by hand: 6×6 config, models of generations 0, 2 and 4 (gen 4 an empty,
/// broken file), generation records with their times.
fn fake_run(dir: &Path) {
    std::fs::create_dir_all(dir.join("models")).unwrap();
    std::fs::write(dir.join("config.toml"), "[selfplay]\nvariant = \"6x6\"\n").unwrap();
    for g in [0, 2] {
        tiny_model_at(
            &dir.join(format!("models/gen-{g:04}.safetensors")),
            loa::Variant::Six,
        );
    }
    std::fs::write(dir.join("models/gen-0004.safetensors"), b"").unwrap();
    let records: String = (1..=4)
        .map(|g| {
            format!(
                "{{\"kind\":\"generation\",\"generation\":{g},\"elapsed_s\":{}}}\n",
                60 * g
            )
        })
        .collect();
    std::fs::write(dir.join("metrics.jsonl"), records).unwrap();
}

#[test]
fn ladder_refuses_bad_arguments_by_name() {
    let dir = common::temp_dir();
    let run = dir.path().join("run");
    fake_run(&run);
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let r = run.to_str().unwrap();
    let out = dir.path().join("out");
    let o = out.to_str().unwrap();
    for (args, needles) in [
        (
            vec!["ladder", "/nonexistent/run"],
            vec!["/nonexistent/run", "does not exist"],
        ),
        (
            vec!["ladder", empty.to_str().unwrap()],
            vec!["not a run directory", "models"],
        ),
        (
            vec!["ladder", r, "--generations", "2,7", "--out", o],
            vec!["generation 7", "gen-0007.safetensors", "3 models"],
        ),
        (
            vec!["ladder", r, "--generations", "2,x", "--out", o],
            vec!["--generations", "'x'"],
        ),
        (vec!["ladder", r, "--ms", "5,0", "--out", o], vec!["--ms"]),
        (vec!["ladder", r, "--ms", "none", "--out", o], vec!["--ms"]),
        (
            vec!["ladder", r, "--points", "0", "--out", o],
            vec!["--points"],
        ),
        (
            vec![
                "ladder",
                r,
                "--generations",
                "2",
                "--games",
                "3",
                "--out",
                o,
            ],
            vec!["--games", "even"],
        ),
        // The newest model is a broken file: named before any game.
        (vec!["ladder", r, "--out", o], vec!["gen-0004.safetensors"]),
    ] {
        let out = loazero(&args);
        let t = text(&out);
        assert!(!out.status.success(), "{args:?}: {t}");
        for needle in needles {
            assert!(t.contains(needle), "{args:?}: no '{needle}' in {t}");
        }
        assert!(!t.contains("panicked"), "{args:?}: {t}");
        assert!(!t.contains(": game "), "{args:?} played: {t}");
    }
    // --generations and --points exclude each other.
    let both = loazero(&["ladder", r, "--generations", "2", "--points", "3"]);
    assert!(!both.status.success());
    assert!(text(&both).contains("--points"), "{}", text(&both));
}
