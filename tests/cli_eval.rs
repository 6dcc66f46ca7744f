//! End-to-end tests of the eval subcommands: engine (over pipes), bestmove, match, ratings.

mod common;
use common::{bin, temp_dir, text, Engine};

use loa::{Game, Position, Rules, Variant};

use std::process::{Command, Stdio};

/// Positions reached by random play from the starts of standard, scrambled-eggs and 6x6
/// (not over).
fn random_games(count: usize, seed: u64) -> Vec<Game> {
    loa::testing::random_games(&Variant::ALL[..3], Rules::classic(), count, 70, seed)
}

#[test]
fn engine_protocol_over_pipes() {
    let mut e = Engine::start("alphabeta:depth=3");
    assert_eq!(e.ask("protocol"), ["protocol loazero-engine 1"]);
    assert_eq!(e.ask("isready"), ["readyok"]);
    // Comments and blank lines get no answer: the next answer belongs to `isready`.
    e.send("# a comment");
    e.send("");
    assert_eq!(e.ask("isready"), ["readyok"]);
    assert_eq!(e.ask("variant 6x6"), ["ok"]);
    assert_eq!(e.ask("rules icga,ply-limit=200"), ["ok"]);
    assert_eq!(e.ask("play b1-b3"), ["ok"]);
    let out = e.ask("genmove");
    assert!(out[0].starts_with("info depth "), "{out:?}");
    let mv = out
        .last()
        .unwrap()
        .strip_prefix("move ")
        .expect("a move line")
        .to_string();
    // The engine's move was played: check it against an independent replay.
    let mut g = Game::new(Variant::Six, Rules::parse("icga,ply-limit=200").unwrap());
    g.play_text("b1-b3").unwrap();
    g.play_text(&mv).unwrap();
    let show = e.ask("show");
    assert_eq!(
        show,
        [format!(
            "position {} variant 6x6 ply 2 result none",
            g.position().to_text()
        )]
    );
    let legal = e.ask("legal");
    assert_eq!(legal.len(), 1);
    assert_eq!(
        legal[0].split_whitespace().count() - 1,
        g.legal_moves().len()
    );
    // Errors never end the session.
    for bad in [
        "play z9-z1",
        "play b1-b2 c3",
        "frobnicate",
        "variant hexagonal",
        "rules fide",
        "undo 40",
        "undo x",
        "player minimax",
        "position 8/8 b",
        "position startpos moves a1-a8",
    ] {
        let out = e.ask(bad);
        assert_eq!(out.len(), 1, "{bad}: {out:?}");
        assert!(out[0].starts_with("error "), "{bad}: {out:?}");
    }
    assert_eq!(e.ask("undo 2"), ["ok"]);
    assert_eq!(e.ask("show")[0], {
        let p = Position::start(Variant::Six, &Rules::classic());
        format!("position {} variant 6x6 ply 0 result none", p.to_text())
    });
    // A finished game: genmove is an error, not a crash.
    assert_eq!(e.ask("variant standard"), ["ok"]);
    assert_eq!(e.ask("rules classic"), ["ok"]);
    assert_eq!(e.ask("position 8/8/8/8/8/8/1b6/b6w w"), ["ok"]);
    assert!(e.ask("show")[0].ends_with("result black"));
    assert!(e.ask("genmove")[0].starts_with("error "));
    let board = {
        e.send("board");
        let mut lines = Vec::new();
        loop {
            let l = e.line();
            if l == "end" {
                break;
            }
            lines.push(l);
        }
        lines
    };
    assert!(board.len() >= 8);
    assert_eq!(e.ask("quit"), ["ok bye"]);
    assert!(e.child.wait().unwrap().success());
}

/// `threads=N` over the engine protocol: an alpha-beta player of two threads searches
/// (the `info` line, a legal move played) under `go` and under `go movetime`; a bad
/// thread count is an error naming the key, and the session goes on.
#[test]
fn engine_alphabeta_on_two_threads() {
    let mut e = Engine::start("alphabeta:depth=2");
    assert_eq!(e.ask("player alphabeta:ms=300,threads=2,tt=64"), ["ok"]);
    let mut game = Game::new(Variant::Standard, Rules::classic());
    for go in ["go", "go movetime 200", "genmove"] {
        let out = e.ask(go);
        let info = eval::player::SearchInfo::parse(&out[0]).expect("an info line");
        assert!(
            info.nodes > 1000 && info.depth.unwrap_or(0) >= 2,
            "{go}: {out:?}"
        );
        let mv = out.last().unwrap().strip_prefix("move ").expect("a move");
        game.play_text(mv).unwrap();
    }
    assert_eq!(
        e.ask("show")[0],
        format!(
            "position {} variant standard ply 3 result none",
            game.position().to_text()
        )
    );
    for bad in [
        "player alphabeta:ms=300,threads=0",
        "player alphabeta:threads=x",
    ] {
        let out = e.ask(bad);
        assert!(
            out[0].starts_with("error ") && out[0].contains("threads"),
            "{bad}: {out:?}"
        );
    }
    assert_eq!(e.ask("quit"), ["ok bye"]);
    assert!(e.child.wait().unwrap().success());
}

/// Analysis over pipes: `go infinite` prints `info` lines while the engine reads stdin,
/// two threads search, `stop` answers the best move of the last `multipv 1` line, and the
/// position is unchanged; `isready` of a player whose file is missing names the file.
#[test]
fn engine_analysis_until_stop() {
    let mut e = Engine::start("alphabeta:threads=2,eval=gone/nnue-0007.safetensors");
    let ready = e.ask_last("isready");
    assert!(
        ready.starts_with("error player '") && ready.contains("gone/nnue-0007.safetensors"),
        "{ready}"
    );
    assert_eq!(e.ask("player alphabeta:threads=2"), ["ok"]);
    assert_eq!(e.ask("multipv 2"), ["ok"]);
    e.send("go infinite");
    let mut infos = Vec::new();
    // Lines come while the engine reads: it still answers isready.
    e.send("isready");
    let mut ready = false;
    while !ready
        || !infos
            .iter()
            .any(|i: &eval::player::SearchInfo| i.depth >= Some(4) && i.multipv == Some(2))
    {
        let line = e.line();
        if line == "readyok" {
            ready = true;
        } else {
            infos.push(eval::player::SearchInfo::parse(&line).expect("an info line"));
        }
    }
    e.send("stop");
    let answer = loop {
        let line = e.line();
        match eval::player::SearchInfo::parse(&line) {
            Ok(info) => infos.push(info),
            Err(_) => break line,
        }
    };
    let best = infos.iter().rev().find(|i| i.multipv == Some(1)).unwrap();
    assert_eq!(answer, format!("bestmove {}", best.pv[0]));
    let at_depth_4 = |rank| {
        infos
            .iter()
            .find(|i| i.depth == Some(4) && i.multipv == Some(rank))
            .unwrap_or_else(|| panic!("depth 4, rank {rank}: {infos:?}"))
    };
    assert_ne!(at_depth_4(1).pv[0], at_depth_4(2).pv[0]);
    assert!(e.ask_last("show").ends_with(" ply 0 result none"));
    assert_eq!(e.ask("quit"), ["ok bye"]);
    assert!(e.child.wait().unwrap().success());
}

#[test]
fn engine_genmove_is_legal_on_thousands_of_random_positions() {
    let mut e = Engine::start("alphabeta:depth=2,tt=4");
    let games = random_games(2000, 0x5eed);
    for g in &games {
        let p = g.position();
        assert_eq!(e.ask(&format!("variant {}", p.variant())), ["ok"]);
        assert_eq!(e.ask(&format!("position {}", p.to_text())), ["ok"]);
        let out = e.ask("genmove");
        let mv = out
            .last()
            .unwrap()
            .strip_prefix("move ")
            .unwrap_or_else(|| panic!("{}: {out:?}", p.to_text()));
        let game = Game::from_position(*p, Rules::classic());
        assert!(
            p.parse_move(mv, game.rules()).is_ok(),
            "illegal {mv} in {}",
            p.to_text()
        );
    }
    e.send("quit");
    assert!(e.child.wait().unwrap().success());
}

#[test]
fn bestmove_prints_a_legal_move_last() {
    for g in random_games(12, 77) {
        let p = g.position();
        for player in ["alphabeta:depth=2", "random"] {
            let out = Command::new(bin())
                .args([
                    "bestmove",
                    "--position",
                    &p.to_text(),
                    "--variant",
                    p.variant().name(),
                    "--player",
                    player,
                ])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let stdout = String::from_utf8(out.stdout).unwrap();
            let last = stdout.lines().last().unwrap();
            assert!(
                p.parse_move(last, &Rules::classic()).is_ok(),
                "{player}: {last} in {}",
                p.to_text()
            );
        }
    }
    // Bad input: clear errors, no panic.
    for args in [
        vec!["bestmove", "--position", "nonsense"],
        vec!["bestmove", "--player", "alphabeta:depth=zero"],
        vec!["bestmove", "--position", "8/8/8/8/8/8/1b6/b6w w"],
        vec!["bestmove", "--player", "model:path=/nonexistent.pt,sims=4"],
    ] {
        let out = Command::new(bin()).args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && stderr.starts_with("error:"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// `--threads 0` means one per core, as in every command that counts things run at once
/// (it used to start a match of zero threads).
#[test]
fn match_threads_zero_is_one_per_core() {
    let tmp = temp_dir();
    let out = Command::new(bin())
        .args([
            "match",
            "--a",
            "random",
            "--b",
            "first-legal",
            "--games",
            "2",
            "--variant",
            "6x6",
            "--threads",
            "0",
            "--out",
        ])
        .arg(tmp.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert!(
        stderr.contains(&format!(" {cores} threads")),
        "{stderr}{stdout}"
    );
    assert_eq!(
        eval::arena::read_results(tmp.path()).unwrap().games.len(),
        2
    );
}

#[test]
fn match_writes_replayable_records_and_ratings_read_them() {
    let tmp = temp_dir();
    let dir = tmp.path().to_path_buf();
    let out = Command::new(bin())
        .args([
            "match",
            "--a",
            "alphabeta:depth=2",
            "--b",
            "random",
            "--games",
            "6",
            "--variant",
            "6x6",
            "--threads",
            "2",
            "--openings",
            "random:3",
            "--sgf",
            "--out",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("games 6"), "{stdout}");
    assert!(stdout.contains("Elo(A - B)"), "{stdout}");
    let results = eval::arena::read_results(&dir).unwrap().games;
    assert_eq!(results.len(), 6);
    let mut openings = std::collections::HashMap::new();
    for v in &results {
        // The record (its header names the variant) and the SGF file replay to the result.
        let record = dir.join(v.record.as_ref().unwrap());
        for file in [record.clone(), record.with_extension("sgf")] {
            let replay = Command::new(bin())
                .arg("replay")
                .arg(&file)
                .output()
                .unwrap();
            assert!(
                replay.status.success(),
                "{}: {}",
                file.display(),
                String::from_utf8_lossy(&replay.stderr)
            );
            let last = String::from_utf8(replay.stdout).unwrap();
            assert!(
                last.trim_end().ends_with(&format!("result: {}", v.result)) || v.adjudicated,
                "{}: {last} vs {v:?}",
                file.display()
            );
        }
        let sgf = std::fs::read_to_string(record.with_extension("sgf")).unwrap();
        assert!(sgf.contains("GM[9]") && sgf.contains("SZ[6]"), "{sgf}");
        assert!(sgf.contains(&format!("PB[{}]", v.black)), "{sgf}");
        *openings.entry(v.opening.clone()).or_insert(0) += 1;
    }
    // Three distinct openings, each played with both colours.
    assert_eq!(openings.len(), 3, "{openings:?}");
    assert!(openings.values().all(|&n| n == 2));

    // `--dir`, as every command spells the directory, and the older positional form.
    let with_flag = Command::new(bin())
        .args(["ratings", "--dir"])
        .arg(&dir)
        .output()
        .unwrap();
    let out = Command::new(bin())
        .arg("ratings")
        .arg(&dir)
        .output()
        .unwrap();
    for o in [&with_flag, &out] {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(
            stdout.contains("random") && stdout.contains("alphabeta:depth=2"),
            "{stdout}"
        );
    }
    let csv = std::fs::read_to_string(dir.join("ratings.csv")).unwrap();
    assert!(csv.starts_with("name,elo,stderr,games,score\n"), "{csv}");
    assert!(csv.contains("\nrandom,0.0,0.0,6,"), "{csv}");

    // Bad specs and openings fail cleanly.
    let out = Command::new(bin())
        .args([
            "match",
            "--a",
            "alphabeta:depth=2",
            "--b",
            "oracle",
            "--games",
            "2",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("oracle"));
}

/// `ratings` on a copy of a run that kept only its models and ratings (`data/shipped`, no
/// `matches/` folder) shows the ratings the run wrote; its `metrics.jsonl` is not read as
/// a results file (which failed with "missing field game").
#[test]
fn ratings_of_a_run_copy_without_its_games_shows_its_saved_table() {
    let tmp = temp_dir();
    let copy = tmp.path().join("shipped");
    std::fs::create_dir_all(&copy).unwrap();
    let shipped = common::repo_path("data/shipped");
    for name in ["metrics.jsonl", "ratings.csv", "state.json", "config.toml"] {
        std::fs::copy(shipped.join(name), copy.join(name)).unwrap();
    }
    let out = Command::new(bin())
        .arg("ratings")
        .arg(&copy)
        .output()
        .unwrap();
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("keeps no rating games"), "{t}");
    let saved = std::fs::read_to_string(copy.join("ratings.csv")).unwrap();
    assert!(t.contains(saved.trim_end()), "{t}");
    assert!(t.contains("gen-0099"), "{t}");
}

/// A match cut short goes on with `--resume`: a folder holding results is refused without
/// it, another match's games are refused with it, and the resumed match plays only the
/// missing games (here: its results file cut to three lines and half a fourth, as a kill
/// leaves it) and reports every game.
#[test]
fn a_match_cut_short_goes_on_with_resume() {
    let tmp = temp_dir();
    let dir = tmp.path().join("m");
    let run = |b: &str, extra: &[&str]| {
        let out = Command::new(bin())
            .args([
                "match",
                "--a",
                "alphabeta:depth=1",
                "--b",
                b,
                "--games",
                "8",
            ])
            .args(["--variant", "6x6", "--threads", "2", "--seed", "3", "--out"])
            .arg(&dir)
            .args(extra)
            .output()
            .unwrap();
        (out.status.success(), text(&out))
    };
    let (ok, text) = run("random", &[]);
    assert!(ok, "{text}");
    let results = dir.join("results.jsonl");
    let lines: Vec<String> = std::fs::read_to_string(&results)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(lines.len(), 8);
    let cut = format!(
        "{}\n{}\n{}\n{}",
        lines[2],
        lines[7],
        lines[4],
        &lines[0][..20]
    );
    std::fs::write(&results, &cut).unwrap();

    let (ok, text) = run("random", &[]);
    assert!(
        !ok && text.contains("already holds the results of a match"),
        "{text}"
    );
    assert!(text.contains("--resume"), "{text}");
    let (ok, text) = run("first-legal", &["--resume"]);
    assert!(!ok && text.contains("player B is \"random\""), "{text}");
    assert_eq!(std::fs::read_to_string(&results).unwrap(), cut);

    let (ok, text) = run("random", &["--resume"]);
    assert!(ok, "{text}");
    assert!(text.contains("resumed: 3 of the 8 games"), "{text}");
    assert!(text.contains("games 8 "), "{text}");
    let read = eval::arena::read_results(&results).unwrap();
    assert!(read.skipped.is_empty(), "{:?}", read.skipped);
    let mut numbers: Vec<usize> = read.games.iter().map(|g| g.game).collect();
    numbers.sort();
    assert_eq!(numbers, (0..8).collect::<Vec<_>>());
    let score = text
        .lines()
        .find(|l| l.starts_with("games 8 "))
        .unwrap()
        .to_string();

    // A finished match resumed plays nothing and prints the same figures.
    let (ok, again) = run("random", &["--resume"]);
    assert!(ok, "{again}");
    assert!(again.contains("resumed: 8 of the 8 games"), "{again}");
    assert!(again.contains(&score), "{again}");
    // --resume needs --out.
    let out = Command::new(bin())
        .args(["match", "--a", "random", "--b", "random", "--resume"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--out"));
}

/// Ctrl-C during `match` lets the running games finish, keeps their records and
/// results, prints the tally so far and exits with 130.
#[test]
fn match_stops_cleanly_on_sigint() {
    let tmp = temp_dir();
    let dir = tmp.path().to_path_buf();
    let out = dir.join("m");
    let child = Command::new(bin())
        .args([
            "match",
            "--a",
            "alphabeta:depth=3",
            "--b",
            "alphabeta:depth=3",
            "--games",
            "400",
            "--threads",
            "1",
            "--out",
        ])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let results = out.join("results.jsonl");
    let t = std::time::Instant::now();
    while std::fs::read_to_string(&results).map_or(0, |s| s.lines().count()) < 2 {
        assert!(t.elapsed().as_secs() < 60, "no game finished in a minute");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: kill(2) on our own child.
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) },
        0
    );
    let t = std::time::Instant::now();
    let output = child.wait_with_output().unwrap();
    assert!(t.elapsed().as_secs() < 20, "took {:?} to stop", t.elapsed());
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(output.status.code(), Some(130), "{text}");
    assert!(
        text.contains("stopped after") && text.contains("of 400 games"),
        "{text}"
    );
    assert!(
        text.contains(&format!("--out {} --resume", out.display())),
        "{text}"
    );
    let played = std::fs::read_to_string(&results).unwrap().lines().count();
    assert!((2..400).contains(&played), "{played} games");
    assert!(text.contains(&format!("games {played} ")), "{text}");
}
