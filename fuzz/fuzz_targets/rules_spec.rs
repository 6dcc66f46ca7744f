//! Rule specs (`Rules::parse`: `--rules`, SGF `LZ`, record headers, shards): a spec that
//! parses round-trips through its `Display` form.
#![no_main]
use libfuzzer_sys::fuzz_target;
use loa::Rules;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(rules) = Rules::parse(text) else {
        return;
    };
    let shown = rules.to_string();
    assert_eq!(Rules::parse(&shown).ok(), Some(rules), "{shown}");
});
