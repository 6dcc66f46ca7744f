//! The learned alpha-beta evaluation end to end: `train-eval` writes a weights file from
//! alpha-beta games, `bestmove` and `bench alphabeta` play it, and a file that is not one,
//! or a variant it does not cover, is refused with a message naming it.

mod common;
use common::{loazero, stdout, text, tiny_model_at};

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
            "--epochs",
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
