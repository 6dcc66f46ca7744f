//! The `loazero engine` line protocol (`eval::protocol::Session`, which `src/commands/
//! engine.rs` only feeds lines): every line of the input is a command. Each reply is
//! one or more single lines; errors are `error …` lines. The engine player is `random`
//! (searching players would make an execution take seconds): a `player` line naming a
//! valid non-random spec is skipped; invalid ones go to the session.
#![no_main]
use eval::protocol::{Reply, Session};
use eval::{PlayerFactory, PlayerSpec};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let factory = PlayerFactory::new();
    let random = PlayerSpec::parse("random:seed=1").expect("a fixed spec parses");
    let mut session = Session::new(&factory, random);
    for line in text.lines().take(64) {
        let t = line.trim();
        let (cmd, rest) = t.split_once(char::is_whitespace).unwrap_or((t, ""));
        if cmd.eq_ignore_ascii_case("player")
            && PlayerSpec::parse(rest).is_ok_and(|s| s.kind().name != "random")
        {
            continue;
        }
        let (lines, quit) = match session.handle(line) {
            Reply::Lines(l) => (l, false),
            Reply::Quit(l) => (l, true),
            // Only a session told to (`hand_over_networks`, as `loazero engine` is) hands
            // a network player over to another process.
            Reply::HandOver { player, .. } => {
                panic!("a session that keeps its players handed over (player {player})")
            }
        };
        for l in &lines {
            assert!(!l.contains('\n') && !l.is_empty(), "reply line {l:?}");
        }
        if quit {
            break;
        }
    }
});
