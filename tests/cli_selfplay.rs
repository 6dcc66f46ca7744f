//! End-to-end tests of `loazero selfplay` and `loazero bench mcts`.

mod common;
use common::{loazero, temp_dir, text};

use std::path::Path;

#[test]
fn selfplay_writes_shards_and_replayable_records() {
    let tmp = temp_dir();
    let dir = tmp.path().to_path_buf();
    let config = dir.join("sp.toml");
    std::fs::write(
        &config,
        "[selfplay]\nvariant = \"6x6\"\nrules = \"icga\"\nshard_samples = 40\n\
         [selfplay.mcts]\nleaves_per_batch = 4\n[train]\nanything = 1\n",
    )
    .unwrap();
    let out = dir.join("out");
    let o = loazero(&[
        "selfplay",
        "--config",
        config.to_str().unwrap(),
        "--evaluator",
        "heuristic",
        "--games",
        "6",
        "--sims",
        "40",
        "--threads",
        "2",
        "--seed",
        "5",
        "--sgf",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("selfplay: 6 games"), "{}", text(&o));
    let scan = selfplay::data::read_recent_shards(&out.join("shards"), None).unwrap();
    assert!(scan.skipped.is_empty());
    assert!(!scan.samples.is_empty());
    assert!(scan
        .samples
        .iter()
        .all(|s| s.position.variant() == loa::Variant::Six && s.rules == loa::Rules::icga()));
    let records: Vec<_> = std::fs::read_dir(out.join("games"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    assert_eq!(records.len(), 6);
    for r in &records {
        // The header lines give variant, rules and start; the SGF beside it says the same.
        let o = loazero(&["replay", r.to_str().unwrap()]);
        assert!(o.status.success(), "{}: {}", r.display(), text(&o));
        let sgf = loazero(&["replay", r.with_extension("sgf").to_str().unwrap()]);
        assert!(sgf.status.success(), "{}: {}", r.display(), text(&sgf));
        let record = std::fs::read_to_string(r).unwrap();
        let end = record.lines().find(|l| l.starts_with("# end ")).unwrap();
        // SGF records resignations too; a game stopped at the ply cap has no result.
        let winner = end.split_whitespace().nth(2).unwrap();
        let want = if end.contains("adjudicated") {
            "result: none".to_string()
        } else {
            format!("result: {winner}")
        };
        assert!(text(&sgf).contains(&want), "{record}\n{}", text(&sgf));
        // The record's `# end` line gives the result of a game its moves do not end.
        assert!(text(&o).contains(&format!("result: {winner}")), "{record}");
    }
}

/// `loazero replay` of a self-play record that ended by resignation, as a user types it,
/// prints that result: who resigned and the winner (the record's moves do not end the
/// game; its `# end` line says how it ended). Resignation is made certain: a side resigns
/// from ply 4 whenever its searched value is below 0.9, in every game.
#[test]
fn replay_of_a_resigned_selfplay_record_prints_its_result() {
    let tmp = temp_dir();
    let dir = tmp.path().to_path_buf();
    let config = dir.join("resign.toml");
    std::fs::write(
        &config,
        "[selfplay]\nvariant = \"6x6\"\nresign_threshold = 0.9\nresign_min_ply = 4\n\
         resign_disabled_fraction = 0.0\n",
    )
    .unwrap();
    let out = dir.join("out");
    let o = loazero(&[
        "selfplay",
        "--config",
        config.to_str().unwrap(),
        "--evaluator",
        "heuristic",
        "--games",
        "2",
        "--sims",
        "16",
        "--threads",
        "1",
        "--seed",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let mut resigned = 0;
    for entry in std::fs::read_dir(out.join("games")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "txt") {
            continue;
        }
        let record = std::fs::read_to_string(&path).unwrap();
        let end = record.lines().find(|l| l.starts_with("# end ")).unwrap();
        let Some(loser) = end
            .strip_suffix(" resigned)")
            .and_then(|e| e.rsplit('(').next())
        else {
            continue;
        };
        resigned += 1;
        let winner = end.split_whitespace().nth(2).unwrap();
        assert_ne!(winner, loser, "{end}");
        let o = loazero(&["replay", path.to_str().unwrap()]);
        assert!(o.status.success(), "{}: {}", path.display(), text(&o));
        let printed = common::stdout(&o);
        assert!(
            printed.contains(&format!("{loser} resigned\n")),
            "{record}\n{printed}"
        );
        assert_eq!(
            common::last_line(&o),
            format!("result: {winner}"),
            "{record}\n{printed}"
        );
    }
    assert!(resigned > 0, "no self-play game resigned");
}

#[test]
fn model_selfplay_and_model_player_match() {
    let tmp = temp_dir();
    let dir = tmp.path().to_path_buf();
    let net = train::NetConfig::tiny();
    let model = train::Model::new(
        train::ModelInfo::new(&net, loa::Variant::Six),
        tch::Device::Cpu,
    );
    let path = dir.join("tiny.model");
    model.save(&path).unwrap();
    let config = dir.join("six.toml");
    std::fs::write(&config, "variant = \"6x6\"\nsimulations = 8\n").unwrap();
    let out = dir.join("sp");
    let o = loazero(&[
        "selfplay",
        "--config",
        config.to_str().unwrap(),
        "--model",
        path.to_str().unwrap(),
        "--games",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(std::fs::read_dir(out.join("shards")).unwrap().count() >= 1);

    let o = loazero(&[
        "match",
        "--a",
        &format!("model:path={},sims=8", path.display()),
        "--b",
        "random",
        "--games",
        "2",
        "--variant",
        "6x6",
        "--out",
        dir.join("m").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));

    let o = loazero(&[
        "selfplay",
        "--model",
        "/nonexistent/net.model",
        "--games",
        "1",
        "--out",
        dir.join("x").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(text(&o).contains("/nonexistent/net.model"), "{}", text(&o));
}

#[test]
fn bad_configs_name_the_file_and_key() {
    let tmp = temp_dir();
    let dir = tmp.path().to_path_buf();
    let config = dir.join("bad.toml");
    std::fs::write(&config, "[mcts]\ncpuctt = 2\n").unwrap();
    let o = loazero(&[
        "selfplay",
        "--config",
        config.to_str().unwrap(),
        "--games",
        "1",
        "--out",
        dir.join("o").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let t = text(&o);
    assert!(t.contains("bad.toml") && t.contains("cpuctt"), "{t}");
    assert!(!Path::new(&dir.join("o").join("shards")).exists());
}

#[test]
fn bench_mcts_reports_both_evaluators() {
    // `--simulations`, the old name of `--sims`, still works.
    let o = loazero(&["bench", "mcts", "--seconds", "0.2", "--simulations", "200"]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("mcts uniform") && t.contains("mcts heuristic"),
        "{t}"
    );
    assert!(t.contains("sims/s/thread"), "{t}");
}
