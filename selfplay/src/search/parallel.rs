//! Several batches of one search in flight at once: tickets of leaves
//! ([`Search::gather_leaves`], [`Search::absorb_leaves`], [`Search::abandon_leaves`]) and
//! [`Search::run_parallel`], several threads over one tree behind a mutex.

use super::{InFlight, Search};
use crate::evaluator::{EvalBatch, Evaluator};
use crate::Error;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

impl Search {
    /// Like [`Search::gather`], but the leaves are handed out as a ticket, so that the
    /// search can have several batches in flight: gather more (into other batches) before
    /// this one comes back, then give every ticket, in any order, to
    /// [`Search::absorb_leaves`] with its evaluated batch, or to
    /// [`Search::abandon_leaves`] when the evaluation failed. Every ticket with leaves must
    /// come back before the search can finish (or be re-rooted or begun again). An empty
    /// ticket (nothing to evaluate: every simulation ended at a terminal or proven node,
    /// or every simulation met a leaf of another batch, or a Gumbel phase waits for the
    /// batches in flight) may be dropped.
    ///
    /// A Gumbel root halves its candidates only when no other batch is in flight, so a
    /// phase ends once all its simulations are backed up, as with one batch at a time.
    pub fn gather_leaves(&mut self, batch: &mut EvalBatch) -> InFlight {
        let others_in_flight = self.batches_in_flight() > 0;
        let saved = std::mem::take(&mut self.current);
        self.gather_current(batch, others_in_flight);
        let leaves = std::mem::replace(&mut self.current, saved);
        if !leaves.is_empty() {
            self.tickets += 1;
        }
        leaves
    }

    /// Expands the leaves of `leaves` (a ticket of [`Search::gather_leaves`]) from the
    /// evaluated `batch` (the one they were gathered into) and backs their values up.
    /// Fails, as [`Search::absorb`] does, if the evaluator's answer has the wrong size
    /// (the leaves then become unexpanded again) or holds non-finite numbers.
    pub fn absorb_leaves(&mut self, batch: &EvalBatch, leaves: InFlight) -> Result<(), Error> {
        let had_leaves = !leaves.is_empty();
        let saved = std::mem::replace(&mut self.current, leaves);
        let result = self.absorb_current(batch);
        self.current = saved;
        if had_leaves {
            self.tickets -= 1;
        }
        result
    }

    /// Takes back the leaves of `leaves` (a ticket of [`Search::gather_leaves`]) without
    /// an evaluation (the evaluator failed): they become unexpanded again and their
    /// simulations are not counted, as when [`Search::absorb`] refuses a batch.
    pub fn abandon_leaves(&mut self, leaves: InFlight) {
        let had_leaves = !leaves.is_empty();
        let saved = std::mem::replace(&mut self.current, leaves);
        self.release_current();
        self.current = saved;
        if had_leaves {
            self.tickets -= 1;
        }
    }

    /// Runs the search with one thread per batch of `batches` (at least one) over this
    /// one tree, until it finishes or, with a `deadline`, until the deadline passes
    /// (as [`Search::run_until`] does: the clock is read between a thread's batches and
    /// the root is always expanded). Each thread loops: under the lock, gather up to
    /// `leaves_per_batch` leaves into its batch ([`Search::gather_leaves`]); evaluate
    /// them without the lock; under the lock, back them up. A thread that finds nothing
    /// to evaluate while other batches are in flight sleeps until one is backed up.
    /// An evaluator failure (or a refused answer) in any thread stops every thread; the
    /// first is returned, and the tree keeps every batch backed up before it.
    ///
    /// With one batch this is [`Search::run`] (no deadline) or [`Search::run_until`].
    /// With more, the order in which batches come back depends on timing, so the search
    /// is not reproducible.
    pub fn run_parallel(
        &mut self,
        evaluator: &dyn Evaluator,
        batches: &mut [EvalBatch],
        deadline: Option<Instant>,
    ) -> Result<(), Error> {
        match batches {
            [] => Err(Error::Config(
                "run_parallel needs at least one batch (one per thread)".into(),
            )),
            [batch] => match deadline {
                None => self.run(evaluator, batch),
                Some(d) => self.run_until(evaluator, batch, d),
            },
            [first, rest @ ..] => {
                let shared = Shared {
                    state: Mutex::new(SharedState {
                        search: self,
                        absorbed: 0,
                        error: None,
                        stop: false,
                    }),
                    wake: Condvar::new(),
                };
                std::thread::scope(|s| {
                    for batch in rest.iter_mut() {
                        let shared = &shared;
                        s.spawn(move || search_thread(shared, evaluator, batch, deadline));
                    }
                    search_thread(&shared, evaluator, first, deadline);
                });
                let state = shared
                    .state
                    .into_inner()
                    .unwrap_or_else(PoisonError::into_inner);
                match state.error {
                    Some(e) => Err(e),
                    None => Ok(()),
                }
            }
        }
    }
}

/// What the threads of [`Search::run_parallel`] share, behind the mutex.
struct SharedState<'a> {
    search: &'a mut Search,
    /// Batches backed up (or abandoned) so far: a sleeping thread wakes when it changes.
    absorbed: u64,
    /// The first failure; every thread stops at its next turn.
    error: Option<Error>,
    /// Set when the search is finished or a thread panicked: every thread stops.
    stop: bool,
}

struct Shared<'a> {
    state: Mutex<SharedState<'a>>,
    wake: Condvar,
}

impl<'a> Shared<'a> {
    fn lock(&self) -> MutexGuard<'_, SharedState<'a>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Stops the other threads of [`Search::run_parallel`] when its thread panics (so that
/// none sleeps for ever; the panic reaches the caller when the threads are joined).
struct StopOnPanic<'s, 'a>(&'s Shared<'a>);

impl Drop for StopOnPanic<'_, '_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.lock().stop = true;
            self.0.wake.notify_all();
        }
    }
}

/// One thread of [`Search::run_parallel`], with its own `batch`.
fn search_thread(
    shared: &Shared<'_>,
    evaluator: &dyn Evaluator,
    batch: &mut EvalBatch,
    deadline: Option<Instant>,
) {
    let _stop_on_panic = StopOnPanic(shared);
    let mut state = shared.lock();
    loop {
        if state.stop || state.error.is_some() {
            return;
        }
        let search = &mut *state.search;
        if search.is_finished() {
            state.stop = true;
            shared.wake.notify_all();
            return;
        }
        if deadline.is_some_and(|d| search.root_expanded() && Instant::now() >= d) {
            return;
        }
        batch.clear();
        let leaves = search.gather_leaves(batch);
        if leaves.is_empty() {
            // Nothing to evaluate: simulations that ended at once, simulations that met other
            // batches' leaves, or a Gumbel phase waiting for them. Sleep until a batch is
            // backed up if one is in flight; otherwise try again (the search progressed
            // or is finished).
            if search.batches_in_flight() > 0 {
                let seen = state.absorbed;
                state = shared
                    .wake
                    .wait_while(state, |s| {
                        s.absorbed == seen && !s.stop && s.error.is_none()
                    })
                    .unwrap_or_else(PoisonError::into_inner);
            }
            continue;
        }
        drop(state);
        let evaluated = evaluator.evaluate(batch);
        state = shared.lock();
        let search = &mut *state.search;
        let result = match evaluated {
            Ok(()) => search.absorb_leaves(batch, leaves),
            Err(e) => {
                search.abandon_leaves(leaves);
                Err(e)
            }
        };
        state.absorbed += 1;
        if let Err(e) = result {
            state.error.get_or_insert(e);
        }
        shared.wake.notify_all();
    }
}
