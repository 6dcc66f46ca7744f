//! The options of the subcommands, as `--help` shows them and as a user types them: one
//! default for what several commands share (the games of a match: `MatchConfig`'s), one
//! name per concept (`--sims` for simulations, `--set` for `KEY=VALUE`, `--dir` for a run
//! directory), and the old names still accepted, hidden.

mod common;
use common::{loazero, text};

/// The `[default: …]` that `loazero ARGS --help` states for `--flag`.
fn default_of(args: &[&str], flag: &str) -> String {
    let mut all = args.to_vec();
    all.push("--help");
    let o = loazero(&all);
    assert!(o.status.success(), "{args:?}: {}", text(&o));
    let help = text(&o);
    let start = help
        .find(&format!("{flag} <"))
        .unwrap_or_else(|| panic!("{args:?}: no {flag} in\n{help}"));
    let rest = &help[start..];
    // The option's own text ends where the next option starts.
    let end = rest[2..].find("\n  -").map_or(rest.len(), |e| e + 2);
    let own = &rest[..end];
    let d = own
        .find("[default: ")
        .unwrap_or_else(|| panic!("{args:?}: {flag} states no default: {own}"));
    own[d + 10..].split(']').next().unwrap().to_string()
}

/// `match`, `benchmark` and `ladder` play the same number of games with the same
/// openings, ply cap and seed unless told otherwise (the defaults of `MatchConfig`).
#[test]
fn match_benchmark_and_ladder_share_one_default_each() {
    let commands: [&[&str]; 3] = [&["match"], &["benchmark"], &["ladder"]];
    for flag in ["--games", "--openings", "--max-plies", "--seed"] {
        let defaults: Vec<String> = commands.iter().map(|c| default_of(c, flag)).collect();
        assert!(
            defaults.iter().all(|d| d == &defaults[0]),
            "{flag}: {defaults:?}"
        );
    }
    assert_eq!(default_of(&["match"], "--games"), "100");
    assert_eq!(default_of(&["match"], "--openings"), "random:4");
}

/// One name for one thing: `--sims` in `bench mcts` and `selfplay` (as `sims=` in a player
/// spec and `--sims` in `benchmark`), `--set` only for `KEY=VALUE` (`heldout` takes
/// `--positions FILE` and `--records DIR`); the old names are hidden but still parse.
#[test]
fn one_name_per_concept_and_old_names_hidden() {
    let help = |args: &[&str]| {
        let mut all = args.to_vec();
        all.push("--help");
        let o = loazero(&all);
        assert!(o.status.success(), "{args:?}: {}", text(&o));
        text(&o)
    };
    for args in [&["bench", "mcts"][..], &["selfplay"], &["benchmark"]] {
        let h = help(args);
        assert!(h.contains("--sims <"), "{args:?}: {h}");
        assert!(!h.contains("--simulations"), "{args:?}: {h}");
    }
    let heldout = help(&["heldout"]);
    for (shown, hidden) in [
        ("--positions <FILE>", "--set"),
        ("--records <DIR>", "--games"),
    ] {
        assert!(heldout.contains(shown), "{heldout}");
        assert!(!heldout.contains(hidden), "{hidden}: {heldout}");
    }
    assert!(help(&["run"]).contains("--set <"));
    for args in [&["run"][..], &["serve"], &["selfplay"]] {
        assert!(help(args).contains("--dir <RUN_DIR>"), "{args:?}");
    }
    // The old names parse (a missing model file is the error, not the option).
    let o = loazero(&[
        "heldout",
        "--score",
        "/no/m.safetensors",
        "--set",
        "/no/set.txt",
    ]);
    assert!(!o.status.success());
    assert!(!text(&o).contains("unexpected argument"), "{}", text(&o));
}

/// An option a command lacks but a newcomer reaches for gets an error that says what to
/// write instead, not clap's hint to pass it as a value after `--`; both binaries say it
/// (`benchmark` and `export` run in `loazero-torch`, `bestmove` here).
#[test]
fn options_a_command_lacks_are_explained() {
    for (args, says) in [
        (
            &["benchmark", "--dir", "runs/default"][..],
            "ladder --dir RUN_DIR",
        ),
        (
            &["export", "--model", "m.safetensors", "--out", "x"][..],
            "export MODEL --out DIR",
        ),
        (
            &["bestmove", "--model", "m.safetensors"][..],
            "--player model:path=MODEL",
        ),
    ] {
        let o = loazero(args);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {t}");
        assert!(t.contains(says) && !t.contains("-- --"), "{args:?}: {t}");
    }
    // Other mistakes keep clap's message.
    let o = loazero(&["ladder", "--frobnicate"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("unexpected argument '--frobnicate'"),
        "{}",
        text(&o)
    );
}
