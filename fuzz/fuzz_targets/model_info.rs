//! The JSON description of model and checkpoint files (`ModelInfo::parse`, with the
//! checkpoint's `trainer` state): a description that is accepted round-trips through its
//! JSON form, and its network is bounded (the weight count it implies is checked against
//! the file before any network is allocated).
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;
use train::ModelInfo;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("fuzz.safetensors");
    let Ok(info) = ModelInfo::parse(text, path) else {
        return;
    };
    let json = serde_json::to_string(&info).expect("serialises");
    let again = ModelInfo::parse(&json, path).unwrap_or_else(|e| panic!("{json}: {e}"));
    // `trainer` is opaque JSON here (the trainer reads it into its typed state); serde_json
    // parses float literals to within an ulp (no `float_roundtrip` feature), so its
    // numbers may move by an ulp: it is left out of the comparison.
    let strip = |i: &ModelInfo| ModelInfo {
        trainer: None,
        ..i.clone()
    };
    assert_eq!(strip(&again), strip(&info));
    let min = info.net.min_weights();
    assert!(min > 0);
    assert!(info.check_weight_count(min, path).is_ok());
    assert!(info.check_weight_count(min - 1, path).is_err());
});
