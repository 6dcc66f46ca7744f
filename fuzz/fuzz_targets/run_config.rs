//! Run configs (`loazero run --config FILE --set key=value`): `src/run/config.rs` compiled
//! in with `#[path]`, with the two modules of the binary crate it names (`super::algorithm`,
//! `super::net_schedule`). The input is the TOML
//! file, then `--set` values separated by NUL bytes. An accepted config round-trips
//! through `to_toml`.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[allow(dead_code, missing_docs)]
#[path = "../../src/run/algorithm.rs"]
mod algorithm;
#[allow(dead_code, missing_docs)]
#[path = "../../src/run/config.rs"]
mod config;
#[allow(dead_code, missing_docs)]
#[path = "../../src/run/net_schedule.rs"]
mod net_schedule;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut parts = text.split('\0');
    let file = parts.next().unwrap_or("");
    let sets: Vec<String> = parts.take(8).map(str::to_string).collect();
    let Ok(c) = config::RunConfig::from_toml_str(file, "fuzz.toml", &sets) else {
        return;
    };
    let out = c.to_toml();
    let again = config::RunConfig::from_toml_str(&out, "saved.toml", &[])
        .unwrap_or_else(|e| panic!("{out}\n{e:#}"));
    assert_eq!(again.to_toml(), out);
});
