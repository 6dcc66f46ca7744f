//! Reading many objects at once. A store answers one GET in one round trip (milliseconds
//! from a local S3 server, tens of milliseconds from a cloud region), so reading thousands of
//! small objects one after another is bound by latency, not bandwidth; a few threads, each
//! with one request in flight, divide that time.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Requests in flight at once by default: enough to hide a store's latency, few enough that
/// the bytes held at once stay those of a handful of objects.
pub const READS_IN_FLIGHT: usize = 8;

/// `work` applied to every item of `items` on up to `threads` scoped threads (one when
/// `threads` is 0 or there is at most one item); the results in `items`' order. Every item
/// is worked on, whatever the others give, so a caller that stops at the first error sees
/// the error of the earliest item that failed.
pub fn map<T: Sync, R: Send>(items: &[T], threads: usize, work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = threads.min(items.len());
    if threads <= 1 {
        return items.iter().map(work).collect();
    }
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let result = work(item);
                *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
            });
        }
    });
    slots
        .into_iter()
        .map(|slot| {
            slot.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .expect("every item was worked on")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;

    #[test]
    fn results_come_in_order_and_the_work_overlaps() {
        let items: Vec<u64> = (0..40).collect();
        let running = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        let out = map(&items, 8, |&i| {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            // The first two items wait for each other (a bound, not a timing: on threads
            // that overlap they meet at once), and later items finish first, so the order
            // must come from the slots.
            let until = std::time::Instant::now() + Duration::from_secs(30);
            while i < 2 && running.load(Ordering::SeqCst) < 2 && std::time::Instant::now() < until {
                std::thread::sleep(Duration::from_millis(1));
            }
            std::thread::sleep(Duration::from_millis((40 - i) / 4));
            running.fetch_sub(1, Ordering::SeqCst);
            i * i
        });
        assert_eq!(out, items.iter().map(|i| i * i).collect::<Vec<_>>());
        let most = most.load(Ordering::SeqCst);
        assert!((2..=8).contains(&most), "{most} at once");
    }

    #[test]
    fn one_thread_or_one_item_runs_in_the_callers_thread() {
        let caller = std::thread::current().id();
        assert_eq!(
            map(&[1, 2, 3], 1, |_| std::thread::current().id()),
            vec![caller; 3]
        );
        assert_eq!(map(&[7], 8, |_| std::thread::current().id()), vec![caller]);
        assert!(map(&[] as &[u8], 8, |&b| b).is_empty());
    }
}
