//! Player specs (`PlayerSpec::parse`: `match`, `engine`, `serve`, rating anchors): a spec
//! that parses is named by a text that parses to the same spec. `weights=FILE` reads a
//! file and is left out (the harness must not read arbitrary paths).
#![no_main]
use eval::PlayerSpec;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if text.to_ascii_lowercase().contains("weights") {
        return;
    }
    let Ok(spec) = PlayerSpec::parse(text) else {
        return;
    };
    let name = spec.name();
    let again = PlayerSpec::parse(&name).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(again, spec, "{name}");
    assert_eq!(again.name(), name);
    let _ = eval::player::SearchOptions::of(&spec).mcts_configs(true);
    let _ = PlayerSpec::parse_for_client(text);
});
