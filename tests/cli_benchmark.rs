//! End-to-end tests of `loazero benchmark` and of a model player under the engine's time
//! controls, with a tiny untrained network.

mod common;
use common::{bin, loazero, text, tiny_model_at};

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

/// A 1-block, 8-channel 6×6 network saved at `path`.
/// Splits a CSV line, honouring double-quoted fields.
fn csv_fields(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                out.last_mut().unwrap().push('"');
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out
}

#[test]
fn benchmark_writes_table_csv_and_png_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("tiny.safetensors");
    tiny_model_at(&model, loa::Variant::Six);
    let out = dir.path().join("bench");
    let args = [
        "benchmark",
        model.to_str().unwrap(),
        "--variant",
        "6x6",
        "--times",
        "5,10",
        "--depths",
        "1",
        "--sims",
        "8",
        "--games",
        "2",
        "--max-plies",
        "80",
        "--out",
        out.to_str().unwrap(),
    ];
    let o = loazero(&args);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    let header = stdout
        .lines()
        .find(|l| l.starts_with("pairing"))
        .unwrap_or_else(|| panic!("no table: {t}"));
    for column in [
        "W-D-L",
        "score",
        "Elo [95%]",
        "ms/move player",
        "ms/move alpha-beta",
    ] {
        assert!(header.contains(column), "{header}");
    }
    for row in [
        "5 ms vs alphabeta:ms=5",
        "10 ms vs alphabeta:ms=10",
        "8 sims vs alphabeta:depth=1",
    ] {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(row))
            .unwrap_or_else(|| panic!("no row {row}: {t}"));
        // W-D-L of two games.
        let wdl: Vec<u32> = line
            .split_whitespace()
            .find(|w| w.matches('-').count() == 2 && !w.contains(':'))
            .unwrap()
            .split('-')
            .map(|n| n.parse().unwrap())
            .collect();
        assert_eq!(wdl.iter().sum::<u32>(), 2, "{line}");
    }

    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<String> = csv_fields(lines.next().unwrap());
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<Vec<String>> = lines.map(csv_fields).collect();
    assert_eq!(rows.len(), 3, "{csv}");
    for r in &rows {
        assert_eq!(r.len(), header.len(), "{r:?}");
        let games: u32 = r[col("games")].parse().unwrap();
        let wdl: u32 = ["wins", "draws", "losses"]
            .iter()
            .map(|c| r[col(c)].parse::<u32>().unwrap())
            .sum();
        assert_eq!((games, wdl), (2, 2), "{r:?}");
        for c in ["score", "elo", "elo_lower", "elo_upper"] {
            let _: f64 = r[col(c)].parse().unwrap();
        }
        let model_ms: f64 = r[col("player_ms_per_move")].parse().unwrap();
        let ab_ms: f64 = r[col("baseline_ms_per_move")].parse().unwrap();
        assert!(model_ms > 0.0 && ab_ms >= 0.0, "{r:?}");
    }
    assert_eq!(rows[0][col("kind")], "time");
    assert_eq!(rows[0][col("level")], "5");
    assert!(rows[0][col("player")].ends_with(",ms=5"), "{:?}", rows[0]);
    assert_eq!(rows[2][col("baseline")], "alphabeta:depth=1");
    assert!(rows[2][col("player")].ends_with(",sims=8"), "{:?}", rows[2]);
    let md = std::fs::read_to_string(out.join("results.md")).unwrap();
    assert!(md.contains("| 8 sims vs alphabeta:depth=1 |"), "{md}");
    let png = std::fs::read(out.join("benchmark.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert!(out.join("time-5ms/results.jsonl").is_file());

    // The same command again reuses every pairing and prints the same table.
    let o2 = loazero(&args);
    let t2 = text(&o2);
    assert!(o2.status.success(), "{t2}");
    assert_eq!(t2.matches("(reused)").count(), 3, "{t2}");
    assert_eq!(
        std::fs::read_to_string(out.join("results.csv")).unwrap(),
        csv
    );

    // A pairing cut short (killed: no done.json, one of its two games in its results)
    // goes on from the game it holds: only the other one is played.
    std::fs::remove_file(out.join("time-10ms/done.json")).unwrap();
    let results = out.join("time-10ms/results.jsonl");
    let kept = std::fs::read_to_string(&results).unwrap();
    let kept = kept.lines().next().unwrap();
    std::fs::write(&results, format!("{kept}\n")).unwrap();
    let o3 = loazero(&args);
    let t3 = text(&o3);
    assert!(o3.status.success(), "{t3}");
    assert_eq!(t3.matches("(reused)").count(), 2, "{t3}");
    assert!(
        t3.contains("time-10ms: game 2/2") && !t3.contains("time-10ms: game 1/2"),
        "{t3}"
    );
    assert!(t3.contains("time-10ms done"), "{t3}");
    let after = std::fs::read_to_string(&results).unwrap();
    assert_eq!(after.lines().count(), 2, "{after}");
    assert!(after.starts_with(&format!("{kept}\n")), "{after}");
}

/// A Descent model is benchmarked with its own search: `--search ubfm` plays the `ubfm:`
/// player, by time in the timed pairings and by iterations in the depth pairings.
#[test]
fn benchmark_plays_a_model_with_ubfm_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("tiny.safetensors");
    tiny_model_at(&model, loa::Variant::Six);
    let out = dir.path().join("bench");
    let o = loazero(&[
        "benchmark",
        model.to_str().unwrap(),
        "--search",
        "ubfm",
        "--variant",
        "6x6",
        "--times",
        "5",
        "--depths",
        "1",
        "--sims",
        "6",
        "--games",
        "2",
        "--max-plies",
        "80",
        "--out",
        out.to_str().unwrap(),
    ]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    for row in ["5 ms vs alphabeta:ms=5", "6 nodes vs alphabeta:depth=1"] {
        assert!(
            stdout.lines().any(|l| l.starts_with(row)),
            "no row {row}: {t}"
        );
    }
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let players: Vec<String> = csv
        .lines()
        .skip(1)
        .filter_map(|l| csv_fields(l).into_iter().find(|f| f.starts_with("ubfm:")))
        .collect();
    assert_eq!(players.len(), 2, "{csv}");
    assert!(
        players[0].starts_with("ubfm:path=") && players[0].ends_with(",ms=5"),
        "{csv}"
    );
    assert!(players[1].ends_with(",nodes=6"), "{csv}");
}

#[test]
fn benchmark_refuses_bad_arguments_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("tiny.safetensors");
    tiny_model_at(&model, loa::Variant::Six);
    let m = model.to_str().unwrap();
    for (args, needle) in [
        (vec!["benchmark", m, "--games", "3"], "even"),
        (vec!["benchmark", m, "--times", "5,x"], "--times"),
        (vec!["benchmark", m, "--depths", "0"], "--depths"),
        (
            vec!["benchmark", m, "--times", "none", "--depths", "none"],
            "nothing",
        ),
        (
            vec!["benchmark", "/nonexistent/m.safetensors"],
            "does not exist",
        ),
        // The model is a 6×6 network: refused on the standard board.
        (vec!["benchmark", m, "--games", "2"], "tiny.safetensors"),
    ] {
        let o = loazero(&args);
        let t = text(&o);
        assert!(!o.status.success(), "{args:?}: {t}");
        assert!(
            t.contains(needle) && !t.contains("panicked"),
            "{args:?}: {t}"
        );
    }
}

#[test]
fn engine_model_player_under_time_controls() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("tiny.safetensors");
    tiny_model_at(&model, loa::Variant::Six);
    let mut child = Command::new(bin())
        .args([
            "engine",
            "--player",
            &format!("model:path={},sims=4", model.display()),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut ask = |line: &str| -> Vec<String> {
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        let mut out = Vec::new();
        loop {
            let mut s = String::new();
            stdout.read_line(&mut s).unwrap();
            assert!(!s.is_empty(), "engine closed its output");
            let l = s.trim_end().to_string();
            let last = !l.starts_with("info ");
            out.push(l);
            if last {
                return out;
            }
        }
    };
    assert_eq!(ask("variant 6x6"), ["ok"]);
    // The model player's report, read back as a GUI would (the one `info` format): its
    // nodes are simulations, its score a value, its principal variation starts with the
    // move played.
    let sims = |out: &[String]| -> u64 {
        let line = out.iter().find(|l| l.starts_with("info ")).unwrap();
        let info = eval::player::SearchInfo::parse(line).unwrap();
        let mv = out.last().unwrap().strip_prefix("move ").unwrap();
        assert_eq!(info.pv.first().map(String::as_str), Some(mv), "{out:?}");
        assert!(
            matches!(info.score, Some(eval::player::Score::Value(v)) if (-1.0..=1.0).contains(&v)),
            "{out:?}"
        );
        info.nodes
    };
    let out = ask("genmove");
    assert!(out.last().unwrap().starts_with("move "), "{out:?}");
    assert_eq!(sims(&out), 4, "{out:?}");
    // Under movetime the spec's simulation count (no ms) no longer limits the search.
    let out = ask("go movetime 300");
    assert!(out.last().unwrap().starts_with("move "), "{out:?}");
    assert!(sims(&out) > 4, "{out:?}");
    assert_eq!(ask("time 20000 20000 100"), ["ok"]);
    let out = ask("genmove");
    assert!(out.last().unwrap().starts_with("move "), "{out:?}");
    let out = ask("go movetime 0");
    assert!(
        out[0].starts_with("error ") && out[0].contains("movetime"),
        "{out:?}"
    );
    // The same network searched by two threads (two inference threads behind them).
    let spec = format!("model:path={},ms=300,threads=2", model.display());
    assert_eq!(ask(&format!("player {spec}")), ["ok"]);
    let out = ask("go");
    assert!(out.last().unwrap().starts_with("move "), "{out:?}");
    assert!(sims(&out) > 4, "{out:?}");
    assert_eq!(ask("quit"), ["ok bye"]);
    child.wait().unwrap();
}
