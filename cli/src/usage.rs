//! Command-line mistakes that clap explains badly, explained: an option a command does not
//! have but a newcomer reaches for (`benchmark --dir`, `export --model`), for which clap's
//! own hint ("to pass '--dir' as a value, use '-- --dir'") points the wrong way. Both
//! binaries parse through [`parse_or_exit`].

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::Parser;
use std::ffi::OsString;

/// For `loazero SUBCOMMAND … OPTION`: what to write instead.
const MISTAKES: &[(&str, &str, &str)] = &[
    (
        "benchmark",
        "--dir",
        "`benchmark` plays one model file against alpha-beta: `loazero benchmark MODEL` \
         (e.g. runs/default/models/gen-0067.safetensors); the models of a run folder are \
         compared by `loazero ladder --dir RUN_DIR`",
    ),
    (
        "export",
        "--model",
        "`export` takes the model file as its argument: `loazero export MODEL --out DIR`",
    ),
    (
        "bestmove",
        "--model",
        "a model plays as a player spec: `--player model:path=MODEL`",
    ),
    (
        "engine",
        "--model",
        "a model plays as a player spec: `--player model:path=MODEL`",
    ),
];

/// What to write instead of `option` after `subcommand`, when it is a known mistake.
pub fn advice(subcommand: &str, option: &str) -> Option<&'static str> {
    let option = option.split('=').next().unwrap_or(option);
    MISTAKES
        .iter()
        .find(|(s, o, _)| *s == subcommand && *o == option)
        .map(|(_, _, advice)| *advice)
}

/// `C` parsed from `args` (the program name first); on a known mistake ([`advice`]) an
/// error that says what to write instead, exiting with clap's usage status 2; on any
/// other error clap's own message.
pub fn parse_or_exit<C: Parser>(args: Vec<OsString>) -> C {
    match C::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(err) => {
            if err.kind() == ErrorKind::UnknownArgument {
                let subcommand = args.get(1).and_then(|a| a.to_str()).unwrap_or("");
                if let Some(ContextValue::String(option)) = err.get(ContextKind::InvalidArg) {
                    if let Some(advice) = advice(subcommand, option) {
                        eprintln!("error: `loazero {subcommand}` has no option {option}: {advice}");
                        std::process::exit(2);
                    }
                }
            }
            err.exit()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::advice;

    #[test]
    fn known_mistakes_are_advised_and_others_are_not() {
        assert!(advice("benchmark", "--dir")
            .unwrap()
            .contains("ladder --dir"));
        assert!(advice("benchmark", "--dir=runs/default").is_some());
        assert!(advice("export", "--model")
            .unwrap()
            .contains("export MODEL"));
        assert_eq!(advice("benchmark", "--model"), None);
        assert_eq!(advice("ladder", "--dir"), None);
    }
}
