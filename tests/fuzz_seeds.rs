//! Every fuzz target's committed seeds (`fuzz/seeds/TARGET/`) replayed through the target's
//! own code, on stable and inside `make test`: each `fuzz/fuzz_targets/TARGET.rs` is
//! compiled in with `#[path]`, and a stand-in for libfuzzer-sys's `fuzz_target!` turns its
//! body into a function `run(data)` that each seed is given once. So a change that breaks
//! what a target checks (a round trip, a legal replay, an error instead of a panic) on a
//! seed from a file loazero wrote fails here, not only in a `make fuzz` campaign
//! (docs/fuzzing.md), and a target that no longer compiles against the code fails too.

// The targets say `use libfuzzer_sys::fuzz_target;` and `use loazero_fuzz::…`: both names
// stand for this crate, whose root holds the stand-in macro and the fuzz crate's helpers.
extern crate self as libfuzzer_sys;
extern crate self as loazero_fuzz;

#[allow(dead_code)]
#[path = "../fuzz/src/lib.rs"]
mod fuzz_helpers;
pub use fuzz_helpers::*;

mod common;

/// libfuzzer-sys's `fuzz_target!(|data: &[u8]| { … })`, as a function of the target's
/// module that runs the body on one input.
#[macro_export]
macro_rules! fuzz_target {
    (|$data:ident: &[u8]| $body:block) => {
        /// The fuzz target's body, run on one input.
        pub fn run($data: &[u8]) $body
    };
}

/// One module per target, each its file in `fuzz/fuzz_targets/`, and a test that replays
/// its seeds.
macro_rules! targets {
    ($($name:ident: $file:literal),* $(,)?) => {
        $(
            // `unused_imports`: the stand-in macro is in scope by its definition above, so
            // the target's `use libfuzzer_sys::fuzz_target;` is not needed here.
            #[allow(unused_attributes, unused_imports, dead_code, clippy::all)]
            #[path = $file]
            mod $name;

            #[test]
            fn $name() {
                replay_seeds(stringify!($name), $name::run);
            }
        )*
    };
}

targets! {
    engine: "../fuzz/fuzz_targets/engine.rs",
    game_record: "../fuzz/fuzz_targets/game_record.rs",
    learned_eval: "../fuzz/fuzz_targets/learned_eval.rs",
    model_info: "../fuzz/fuzz_targets/model_info.rs",
    move_text: "../fuzz/fuzz_targets/move_text.rs",
    player_spec: "../fuzz/fuzz_targets/player_spec.rs",
    position_text: "../fuzz/fuzz_targets/position_text.rs",
    rules_spec: "../fuzz/fuzz_targets/rules_spec.rs",
    run_config: "../fuzz/fuzz_targets/run_config.rs",
    serve_api: "../fuzz/fuzz_targets/serve_api.rs",
    sgf: "../fuzz/fuzz_targets/sgf.rs",
    shard: "../fuzz/fuzz_targets/shard.rs",
    tensor_file: "../fuzz/fuzz_targets/tensor_file.rs",
}

/// Runs `target` on every seed of `fuzz/seeds/NAME/` (at least one), naming the seed
/// whose run panics.
fn replay_seeds(name: &str, target: fn(&[u8])) {
    let dir = common::repo_path("fuzz/seeds").join(name);
    let mut seeds: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_file())
        .collect();
    seeds.sort();
    assert!(!seeds.is_empty(), "{} holds no seed", dir.display());
    for seed in &seeds {
        let data = std::fs::read(seed).unwrap();
        if let Err(panic) = std::panic::catch_unwind(|| target(&data)) {
            let why = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("(no message)");
            panic!("fuzz target {name} fails on seed {}: {why}", seed.display());
        }
    }
    eprintln!("fuzz target {name}: {} seeds replayed", seeds.len());
}
