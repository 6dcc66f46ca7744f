//! [`Cancel`]: a request to stop long work early (a signal, a run's time budget), polled
//! by the work itself: self-play ([`crate::run_selfplay`], Descent's included) between
//! evaluator batches, matches (`eval::arena`) between moves. Work that
//! a cancel stops keeps what it finished (handed to its sink, written to its files) and
//! drops what was under way; it then fails with [`Error::Cancelled`], which callers tell
//! from other failures with [`is_cancelled`].

use crate::Error;
use std::fmt;
use std::sync::Arc;

/// Whether work should stop now: a shared predicate, cheap to clone and to poll (it is
/// polled about every 0.5 s by self-play and before every move of a match). The default
/// never asks.
#[derive(Clone, Default)]
pub struct Cancel(Option<Arc<dyn Fn() -> bool + Send + Sync>>);

impl Cancel {
    /// A cancel that never asks to stop.
    pub fn never() -> Cancel {
        Cancel(None)
    }

    /// A cancel that asks to stop whenever `asked` returns true.
    pub fn when(asked: impl Fn() -> bool + Send + Sync + 'static) -> Cancel {
        Cancel(Some(Arc::new(asked)))
    }

    /// Whether the work should stop now.
    pub fn requested(&self) -> bool {
        self.0.as_ref().is_some_and(|asked| asked())
    }
}

impl fmt::Debug for Cancel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "Cancel(when …)"
        } else {
            "Cancel(never)"
        })
    }
}

/// Whether `err`, or an error in its `source()` chain, is [`Error::Cancelled`].
pub fn is_cancelled(err: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(err);
    while let Some(e) = next {
        if matches!(e.downcast_ref::<Error>(), Some(Error::Cancelled)) {
            return true;
        }
        next = e.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[test]
    fn a_cancel_asks_when_its_predicate_does() {
        assert!(!Cancel::never().requested());
        assert!(!Cancel::default().requested());
        let flag = Arc::new(AtomicBool::new(false));
        let cancel = Cancel::when({
            let flag = flag.clone();
            move || flag.load(Ordering::Relaxed)
        });
        let copy = cancel.clone();
        assert!(!copy.requested());
        flag.store(true, Ordering::Relaxed);
        assert!(cancel.requested() && copy.requested());
    }

    #[test]
    fn cancelled_errors_are_recognised_and_others_are_not() {
        assert!(is_cancelled(&Error::Cancelled));
        assert!(!is_cancelled(&Error::Sink("disk full".into())));
        #[derive(Debug)]
        struct Wrapper(Error);
        impl fmt::Display for Wrapper {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "generation 3")
            }
        }
        impl std::error::Error for Wrapper {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        assert!(is_cancelled(&Wrapper(Error::Cancelled)));
        assert!(!is_cancelled(&Wrapper(Error::Config("x".into()))));
    }
}
