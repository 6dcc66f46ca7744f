//! The learned alpha-beta evaluation end to end: `train-eval` writes a weights file from
//! alpha-beta games, `bestmove` and `bench alphabeta` play it, and a file that is not one,
//! or a variant it does not cover, is refused with a message naming it; `loazero run`
//! trains learned generations at its end, promotes, rates and names the strongest player.

mod common;
use common::{loazero, run_args, stdout, text, tiny_model_at, tiny_run_sets};

/// A tiny standard run of one generation whose learned stage plays two small learned
/// generations (16 games at depth 1 each): their candidates, promotion matches and
/// verdicts are files, a promoted one is in `models/` and rated, the run ends by naming
/// its strongest player, and a second start (the count reached) makes none.
#[test]
fn a_run_trains_promotes_and_rates_learned_generations() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let mut sets: Vec<String> = tiny_run_sets()
        .into_iter()
        .map(|s| match s.as_str() {
            "selfplay.variant=6x6" => "selfplay.variant=standard".into(),
            "learned_eval.share=0" => "learned_eval.share=0.2".into(),
            _ => s,
        })
        .collect();
    sets.extend(
        [
            "selfplay.max_game_plies=40",
            "learned_eval.generations=2",
            "learned_eval.games=16",
            "learned_eval.min_games=8",
            "learned_eval.depth=1",
            "learned_eval.passes=2",
            "learned_eval.promotion_games=4",
            "learned_eval.rating_depth=1",
        ]
        .map(String::from),
    );
    let args = run_args(&run, 1, &sets);
    let o = loazero(&args);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    let mut promoted = Vec::new();
    for k in 1..=2 {
        let name = format!("nnue-{k:04}");
        assert!(
            run.join(format!("candidates/{name}.safetensors")).exists(),
            "{out}"
        );
        let done = run.join(format!("matches/promote-{name}/done.json"));
        let done: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(done).unwrap()).unwrap();
        let t = &done["tally"];
        let (w, d, l) = (
            t["wins"].as_u64().unwrap(),
            t["draws"].as_u64().unwrap(),
            t["losses"].as_u64().unwrap(),
        );
        assert_eq!(w + d + l, 4, "{done}");
        let is_promoted = 2 * w + d > 4;
        assert_eq!(
            run.join(format!("models/{name}.safetensors")).exists(),
            is_promoted,
            "{out}"
        );
        assert!(
            out.contains(&format!("learned evaluation {name}: {w}-{d}-{l} against")),
            "{out}"
        );
        if is_promoted {
            promoted.push(name);
        }
    }
    assert!(!run.join("candidates/nnue-0003.safetensors").exists());
    let strongest = stdout(&o)
        .lines()
        .find(|l| l.starts_with("strongest player: "))
        .unwrap_or_else(|| panic!("no strongest player line:\n{out}"))
        .to_string();
    let ratings = std::fs::read_to_string(run.join("ratings.csv")).unwrap();
    match promoted.last() {
        Some(best) => {
            assert!(ratings.contains(best.as_str()), "{ratings}");
            assert!(
                stdout(&o).contains(&format!(
                    "best learned evaluation: {}",
                    run.join(format!("models/{best}.safetensors")).display()
                )),
                "{out}"
            );
            // Whichever is stronger by the ratings, the line names a spec that plays.
            let spec = strongest["strongest player: ".len()..]
                .split(' ')
                .next()
                .unwrap()
                .to_string();
            let o = loazero(&["bestmove", "--player", &spec]);
            assert!(o.status.success(), "{spec}: {}", text(&o));
        }
        None => assert!(strongest.contains("model:"), "{strongest}"),
    }
    // Started again: the generations and the learned count are reached, nothing is played.
    let o = loazero(&args);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        !text(&o).contains("alpha-beta games at depth"),
        "{}",
        text(&o)
    );
    assert!(!run.join("candidates/nnue-0003.safetensors").exists());

    // The ladder: the learned alpha-beta climbs its own rung after the models, at the
    // run's last training time (a candidate stands in when none was promoted).
    let nnue = match promoted.last() {
        Some(best) => best.clone(),
        None => {
            std::fs::copy(
                run.join("candidates/nnue-0001.safetensors"),
                run.join("models/nnue-0001.safetensors"),
            )
            .unwrap();
            "nnue-0001".to_string()
        }
    };
    let ladder = dir.path().join("ladder");
    let o = loazero(&[
        "ladder",
        "--dir",
        run.to_str().unwrap(),
        "--points",
        "1",
        "--ms",
        "5",
        "--games",
        "2",
        "--max-plies",
        "40",
        "--out",
        ladder.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let csv = std::fs::read_to_string(ladder.join("ladder.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{csv}");
    assert!(rows[0].starts_with("gen-"), "{csv}");
    assert!(
        rows[1].starts_with(&format!("{nnue},,"))
            && rows[1].contains("alphabeta:")
            && rows[1].contains(&format!("{nnue}.safetensors")),
        "{csv}"
    );
    let minutes = |row: &str| row.split(',').nth(2).unwrap().parse::<f64>().unwrap();
    assert_eq!(minutes(rows[1]), minutes(rows[0]), "{csv}");
    assert!(ladder.join(format!("{nnue}/time-5ms/done.json")).is_file());
    assert!(
        stdout(&o).contains(&format!("{nnue} (learned alpha-beta)")),
        "{}",
        text(&o)
    );
}

#[test]
fn a_trained_evaluation_plays_and_bad_files_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    let r = run.to_str().unwrap();
    // No --out: the run's models/nnue-0001.safetensors, then nnue-0002.
    for k in 1..=2 {
        let o = loazero(&[
            "train-eval",
            "--dir",
            r,
            "--max-positions",
            "0",
            "--games",
            "24",
            "--depth",
            "1",
            "--passes",
            "2",
            "--threads",
            "1",
        ]);
        assert!(o.status.success(), "{}", text(&o));
        let path = run.join(format!("models/nnue-{k:04}.safetensors"));
        assert!(path.exists(), "{}", text(&o));
        assert!(
            stdout(&o).contains("alpha-beta games at depth 1"),
            "{}",
            text(&o)
        );
    }
    let net = run.join("models/nnue-0001.safetensors");
    let spec = format!("alphabeta:depth=2,eval={}", net.display());
    let o = loazero(&["bestmove", "--player", &spec]);
    assert!(o.status.success(), "{}", text(&o));
    let start = loa::Position::start(loa::Variant::Standard, &loa::Rules::classic());
    // Its info line names the evaluation.
    assert!(stdout(&o).contains(" eval nnue-0001 pv "), "{}", text(&o));
    let last = stdout(&o).lines().last().unwrap_or("").to_string();
    assert!(
        start.parse_move(&last, &loa::Rules::classic()).is_ok(),
        "{}",
        text(&o)
    );

    let o = loazero(&[
        "bench",
        "alphabeta",
        "--ms",
        "20",
        "--threads",
        "1",
        "--eval",
        net.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        stdout(&o).contains("learned / hand-written nodes a second on 1 thread(s)"),
        "{}",
        text(&o)
    );

    // `benchmark` plays the learned alpha-beta at a time and at a depth.
    let bench = dir.path().join("bench");
    let o = loazero(&[
        "benchmark",
        net.to_str().unwrap(),
        "--times",
        "5",
        "--depths",
        "1",
        "--games",
        "2",
        "--max-plies",
        "40",
        "--out",
        bench.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let csv = std::fs::read_to_string(bench.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3, "{csv}");

    // `export` writes the checked weights and a description.
    let out = dir.path().join("export");
    let o = loazero(&[
        "export",
        net.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let exported = std::fs::read(out.join("nnue-0001.safetensors")).unwrap();
    assert_eq!(exported, std::fs::read(&net).unwrap());
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("nnue-0001.json")).unwrap())
            .unwrap();
    assert_eq!(json["format"], "loazero-learned-eval");
    assert_eq!(json["tensors"].as_array().unwrap().len(), 8);

    // A policy-value model is not a learned evaluation; a variant it does not cover.
    let model = dir.path().join("m.safetensors");
    tiny_model_at(&model, loa::Variant::Standard);
    let o = loazero(&[
        "bestmove",
        "--player",
        &format!("alphabeta:depth=2,eval={}", model.display()),
    ]);
    assert!(!o.status.success());
    let e = text(&o);
    assert!(
        e.contains("m.safetensors") && e.contains("not a learned evaluation"),
        "{e}"
    );
    assert!(!e.contains("panicked"), "{e}");
    let o = loazero(&["bestmove", "--variant", "6x6", "--player", &spec]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("covers the variants standard and scrambled-eggs, not 6x6"),
        "{}",
        text(&o)
    );
}

/// The learned-data arms' tools: games with randomness in the opening only saved to a
/// scored-positions file (nothing trained with `--passes 0`), read back by a second
/// `train-eval` that scores half of them again deeper, saves them and trains on them; a
/// file that is not one is refused naming it.
#[test]
fn scored_positions_are_saved_rescored_and_trained_on() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let first = dir.path().join("first.scored");
    let o = loazero(&[
        "train-eval",
        "--dir",
        d,
        "--max-positions",
        "0",
        "--games",
        "12",
        "--depth",
        "1",
        "--random-move",
        "0",
        "--passes",
        "0",
        "--save-scored",
        first.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        stdout(&o).contains("--passes 0: nothing trained"),
        "{}",
        text(&o)
    );
    assert!(!dir.path().join("models").exists(), "{}", text(&o));
    let played = eval::scored_file::read(&first).unwrap();
    assert!(played.len() > 12 && played.iter().all(|r| r.depth == 1));

    let second = dir.path().join("second.scored");
    let out = dir.path().join("w.safetensors");
    let o = loazero(&[
        "train-eval",
        "--dir",
        d,
        "--max-positions",
        "0",
        "--scored",
        first.to_str().unwrap(),
        "--label-depth",
        "2",
        "--label-share",
        "0.5",
        "--save-scored",
        second.to_str().unwrap(),
        "--passes",
        "1",
        "--threads",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        stdout(&o).contains("scored again at depth 2"),
        "{}",
        text(&o)
    );
    let rescored = eval::scored_file::read(&second).unwrap();
    assert_eq!(rescored.len(), played.len());
    let deeper = rescored.iter().filter(|r| r.depth == 2).count();
    assert!(
        deeper > 0 && deeper < played.len(),
        "{deeper} of {}",
        played.len()
    );
    for (a, b) in played.iter().zip(&rescored) {
        assert_eq!(a.scored.position, b.scored.position);
        assert_eq!(a.scored.outcome, b.scored.outcome);
        if b.depth == 1 {
            assert_eq!(a.scored.score, b.scored.score);
        }
    }
    assert!(eval::learned::Weights::load(&out).is_ok(), "{}", text(&o));

    let o = loazero(&[
        "train-eval",
        "--dir",
        d,
        "--games",
        "2",
        "--random-move",
        "1.5",
    ]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("--random-move 1.5 is not within 0 and 1"),
        "{}",
        text(&o)
    );

    let bad = dir.path().join("bad.scored");
    std::fs::write(&bad, b"not positions").unwrap();
    let o = loazero(&["train-eval", "--dir", d, "--scored", bad.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("bad.scored: not a scored-positions file"),
        "{}",
        text(&o)
    );
}
