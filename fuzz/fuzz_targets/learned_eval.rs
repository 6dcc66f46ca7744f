//! Learned evaluation files (`eval::learned::Weights::from_bytes`, what `alphabeta:eval=FILE`
//! reads): a file that parses writes back to bytes that parse to the same weights; made
//! into an evaluation (or refused for oversized weights, never a panic), it values every
//! position of a short game inside the evaluation's range, on the scalar path and the
//! fastest one alike within rounding.
#![no_main]
use eval::learned::{LearnedEval, Simd, Weights};
use libfuzzer_sys::fuzz_target;
use loa::{Position, Rules, Variant};

fuzz_target!(|data: &[u8]| {
    let Ok(w) = Weights::from_bytes(data) else {
        return;
    };
    assert_eq!(Weights::from_bytes(&w.to_bytes()).expect("round trip"), w);
    let Ok(scalar) = LearnedEval::new(w.clone(), Simd::Scalar) else {
        return;
    };
    let fast = LearnedEval::new(w, Simd::detected()).expect("the scalar path accepted it");
    let rules = Rules::classic();
    let mut pos = Position::start(Variant::Standard, &rules);
    for _ in 0..12 {
        if pos.outcome(&rules).is_some() {
            break;
        }
        let (a, b) = (scalar.evaluate(&pos), fast.evaluate(&pos));
        assert!(a.abs() <= eval::evaluation::EVAL_LIMIT);
        assert!((a - b).abs() <= 2 || a.abs() == eval::evaluation::EVAL_LIMIT, "{a} {b}");
        let moves = pos.legal_moves(&rules);
        pos.play(moves[moves.len() / 2]);
    }
});
