//! The torch-free command line: the subcommands that the `loazero` binary runs itself
//! ([`commands`]) and what every command of both binaries shares: [`args`] (flags declared
//! once), [`players`] (where a command's players come from), [`interrupt`] (Ctrl-C and
//! SIGTERM), [`progress`] (progress lines for people), [`torch_binary`] (where
//! `loazero-torch` is) and [`usage`] (command-line mistakes explained).
//!
//! Two binaries: `loazero` (this package, `src/main.rs`) depends on no crate that links
//! torch, so the compiler keeps it free of libtorch; `loazero-torch` (the workspace's root
//! package) runs every subcommand, these included, and the ones that need torch (`run`,
//! `bench`, `serve`, …).

pub mod args;
pub mod commands;
pub mod interrupt;
pub mod players;
pub mod progress;
pub mod torch_binary;
pub mod usage;
