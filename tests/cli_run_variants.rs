//! End-to-end: `loazero run --variant V` trains one tiny generation of each special variant
//! (parachute, gemma, ambiloa, alveole) from its embedded config; the model then plays
//! `match` in its variant, exports with a `model.json` that names it, and is refused for a
//! variant whose network layout differs.

mod common;
use common::{loazero, temp_dir, text};

use std::path::Path;

/// A generation small enough for a test: a 1×8 net, 4 games, 4 steps, no gate, one anchor.
const TINY: [&str; 25] = [
    "selfplay.simulations=16",
    "selfplay.mcts.cheap_simulations=4",
    "selfplay.mcts.leaves_per_batch=4",
    "selfplay.games_per_worker=2",
    "selfplay.threads=1",
    "selfplay.shard_samples=60",
    "run.minutes=0",
    "run.games_per_generation=4",
    "run.train_steps_per_generation=4",
    "run.gate=false",
    "run.match_threads=1",
    "train.batch_size=16",
    "train.threads=1",
    "train.net.blocks=1",
    "train.net.channels=8",
    "train.net.global_pool_every=1",
    "train.net.policy_channels=4",
    "train.net.value_channels=4",
    "train.net.value_hidden=8",
    "rating.anchors=[\"random\"]",
    "rating.games=2",
    "rating.anchor_games=2",
    "rating.simulations=8",
    "rating.every=1",
    "learned_eval.share=0",
];

fn run_one_generation(variant: &str, dir: &Path) {
    let mut args: Vec<String> = vec![
        "run".into(),
        "--variant".into(),
        variant.into(),
        "--dir".into(),
        dir.display().to_string(),
        "--generations".into(),
        "1".into(),
    ];
    for s in TINY {
        args.push("--set".into());
        args.push(s.into());
    }
    let o = loazero(&args);
    assert!(o.status.success(), "{variant}: {}", text(&o));
    let config = std::fs::read_to_string(dir.join("config.toml")).unwrap();
    assert!(
        config.contains(&format!("variant = \"{variant}\"")),
        "{config}"
    );
}

#[test]
fn each_special_variant_trains_plays_and_exports() {
    let tmp = temp_dir();
    let root = tmp.path().to_path_buf();
    for variant in ["parachute", "gemma", "ambiloa", "alveole"] {
        let dir = root.join(variant);
        run_one_generation(variant, &dir);
        let model = dir.join("models/gen-0001.safetensors");
        assert!(model.exists(), "{variant}: no gen-0001 model");
        let ratings = std::fs::read_to_string(dir.join("ratings.csv")).unwrap();
        assert!(ratings.contains("gen-0001"), "{variant}: {ratings}");

        // The model plays its own variant.
        let out = root.join(format!("{variant}-match"));
        let o = loazero(&[
            "match".into(),
            "--variant".into(),
            variant.into(),
            "--a".into(),
            format!("model:path={},sims=8", model.display()),
            "--b".into(),
            "random".into(),
            "--games".into(),
            "2".into(),
            "--out".into(),
            out.display().to_string(),
        ]);
        assert!(o.status.success(), "{variant}: {}", text(&o));
        let results = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
        assert_eq!(results.lines().count(), 2, "{variant}: {results}");

        // Its export describes the variant.
        let export = root.join(format!("{variant}-export"));
        let o = loazero(&[
            "export".into(),
            model.display().to_string(),
            "--out".into(),
            export.display().to_string(),
        ]);
        assert!(o.status.success(), "{variant}: {}", text(&o));
        let json = std::fs::read_to_string(export.join("model.json")).unwrap();
        assert!(
            json.contains(&format!("\"{variant}\"")),
            "{variant}: {json}"
        );

        // Another layout is refused with a message naming both variants, not a panic.
        let o = loazero(&[
            "bestmove".into(),
            "--variant".into(),
            "6x6".into(),
            "--player".into(),
            format!("model:path={},sims=8", model.display()),
        ]);
        assert!(
            !o.status.success(),
            "{variant}: a 6x6 search with its model ran"
        );
        let err = text(&o);
        assert!(err.contains(variant) && !err.contains("panicked"), "{err}");
    }
    // A run keeps its variant.
    let o = loazero(&[
        "run".into(),
        "--variant".into(),
        "gemma".into(),
        "--dir".into(),
        root.join("alveole").display().to_string(),
        "--generations".into(),
        "1".into(),
    ]);
    assert!(!o.status.success());
    assert!(text(&o).contains("alveole run"), "{}", text(&o));

    // `loazero ratings RUN` rates a run directory as its loop does, and several runs
    // together (their models named RUN/gen-NNNN, joined by the anchors they share).
    let gemma = root.join("gemma");
    let o = loazero(&["ratings".into(), gemma.display().to_string()]);
    assert!(o.status.success(), "{}", text(&o));
    let table = common::stdout(&o);
    for name in ["gen-0000", "gen-0001", "random"] {
        assert!(table.contains(name), "{name}: {table}");
    }
    assert!(
        !table.contains("written:"),
        "a run's ratings.csv is the loop's: {table}"
    );
    let o = loazero(&[
        "ratings".into(),
        gemma.display().to_string(),
        root.join("parachute").display().to_string(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let table = common::stdout(&o);
    for name in ["gemma/gen-0001", "parachute/gen-0001", "random"] {
        assert!(table.contains(name), "{name}: {table}");
    }
}
