//! Game records (`GameRecord::parse`, as `loazero replay` reads them): header lines give
//! variant, rules and start; a record that parses and replays legally round-trips through
//! `GameRecord::format` and its header.
#![no_main]
use libfuzzer_sys::fuzz_target;
use loa::{GameRecord, Position, Rules, Variant};
use loazero_fuzz::replay_texts;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(record) = GameRecord::parse(text) else {
        return;
    };
    let Ok(variant) = record
        .header
        .variant
        .as_deref()
        .unwrap_or("standard")
        .parse::<Variant>()
    else {
        return;
    };
    let Ok(rules) = Rules::parse(record.header.rules.as_deref().unwrap_or("classic")) else {
        return;
    };
    let start = match record.header.start.as_deref() {
        Some(t) => match Position::from_text(t, variant) {
            Ok(p) => p,
            Err(_) => return,
        },
        None => Position::start(variant, &rules),
    };
    let Ok(game) = replay_texts(start, rules, &record.moves) else {
        return;
    };
    let header = loa::RecordHeader {
        variant: Some(variant.name().into()),
        rules: Some(rules.to_string()),
        start: Some(start.to_text()),
        end: None,
    };
    let out = header.format() + &GameRecord::format(game.moves(), record.result.as_deref());
    let again = GameRecord::parse(&out).unwrap_or_else(|e| panic!("{out}: {e}"));
    assert_eq!(again.header, header);
    assert_eq!(again.result, record.result);
    let replayed = replay_texts(start, rules, &again.moves).expect("formatted record replays");
    assert_eq!(replayed.moves(), game.moves());
});
