//! Position text of every variant (`Position::from_text`): a position that parses
//! round-trips through `to_text`, and move generation, game end and transforms of any
//! parsed position do not panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use loa::Position;
use loazero_fuzz::{assert_same, rules_of, variant_of};

fuzz_target!(|data: &[u8]| {
    let Some((&v, rest)) = data.split_first() else {
        return;
    };
    let variant = variant_of(v);
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let Ok(p) = Position::from_text(text, variant) else {
        return;
    };
    let t = p.to_text();
    let q = Position::from_text(&t, variant)
        .unwrap_or_else(|e| panic!("to_text output '{t}' does not parse: {e}"));
    assert_same(&p, &q, "from_text(to_text(p))");
    assert_eq!(q.to_text(), t);
    let _ = p.to_diagram();
    let rules = rules_of(v / 7);
    let _ = p.outcome(&rules);
    for &mv in p.legal_moves(&rules).iter() {
        let after = p.after(mv);
        let _ = after.outcome(&rules);
        assert_eq!(p.parse_move(&mv.to_string(), &rules).ok(), Some(mv));
    }
    for s in 0..8 {
        let _ = p.transformed(s);
    }
});
