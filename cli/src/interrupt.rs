//! SIGINT (Ctrl-C) and SIGTERM for the long commands (`run`, `match`): the first signal
//! asks the command to stop at its next safe point (a finished game, a training chunk, a
//! phase boundary), where everything it committed is on disk and the same command
//! resumes; a second signal ends the process at once, which is as safe as `kill -9`
//! (every file is written atomically). Thread-safe: the flag is one atomic counter.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};

static SIGNALS: AtomicUsize = AtomicUsize::new(0);

extern "C" fn on_signal(_signal: libc::c_int) {
    // Only async-signal-safe work here: an atomic add and `_exit`.
    if SIGNALS.fetch_add(1, Ordering::SeqCst) > 0 {
        // SAFETY: `_exit` is async-signal-safe and never returns.
        unsafe { libc::_exit(130) };
    }
}

/// Installs the handlers of SIGINT and SIGTERM (idempotent). Commands that never poll
/// [`requested`] must not call it: they keep the default (immediate) termination.
pub fn install() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: the handler only touches an atomic and calls `_exit`.
    unsafe {
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
}

/// Whether a stop was asked for.
pub fn requested() -> bool {
    SIGNALS.load(Ordering::SeqCst) > 0
}

/// The error of a command that stopped because a signal asked it to.
#[derive(Debug)]
pub struct Interrupted;

impl fmt::Display for Interrupted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "stopped by a signal")
    }
}

impl std::error::Error for Interrupted {}

/// `Err(Interrupted)` once a stop was asked for.
pub fn check() -> anyhow::Result<()> {
    if requested() {
        Err(Interrupted.into())
    } else {
        Ok(())
    }
}

/// Whether `err` is, or was caused by, an [`Interrupted`].
pub fn is_interrupted(err: &anyhow::Error) -> bool {
    err.chain().any(|e| e.is::<Interrupted>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interrupted_errors_are_recognised_through_context() {
        let e = anyhow::Error::new(Interrupted).context("generation 3");
        assert!(is_interrupted(&e));
        assert!(!is_interrupted(&anyhow::anyhow!("disk full")));
        assert_eq!(Interrupted.to_string(), "stopped by a signal");
    }
}
