//! torch's intra-op thread count on a CPU that other processes share.
//!
//! torch's OpenMP threads split each operation into one equal slice per thread and spin
//! while they wait for the slowest. When another process takes one of the cores, one
//! slice waits for its thread to be scheduled again and every operation runs at the pace
//! of that thread, while the others burn their cores spinning: with one single-threaded
//! busy loop beside it on 2 cores, 2 threads lost far more of a quiet machine's speed
//! than 1 thread did, and spinning less (`OMP_WAIT_POLICY=passive`) cost speed on a quiet
//! machine (`docs/experiments.md`, batch 11, has the figures).
//!
//! So the threads that run torch on the CPU with `threads = 0` (auto) follow the cores the
//! other processes leave: [`AutoThreads::update`], called by the thread that runs the
//! operations before its work, reads every [`CHECK_INTERVAL`] how many cores the rest of
//! the machine kept busy since the previous reading ([`CpuLoad`]) and sets torch's count to
//! [`threads_beside`] that load. On a quiet machine nothing changes.

use std::time::{Duration, Instant};

/// How often [`AutoThreads::update`] reads the machine's load (two small `/proc` files).
pub const CHECK_INTERVAL: Duration = Duration::from_millis(500);

/// Busy and total CPU time of the whole machine, in clock ticks summed over its cores,
/// from the first (`cpu`) line of `/proc/stat`: busy = user + nice + system + irq +
/// softirq (guest time is inside user), total = busy + idle + iowait + steal. `None` if
/// the line is missing or malformed.
pub fn parse_proc_stat(text: &str) -> Option<(u64, u64)> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    if v.len() < 8 {
        return None;
    }
    let (user, nice, system, idle, iowait, irq, softirq, steal) =
        (v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
    let busy = user + nice + system + irq + softirq;
    Some((busy, busy + idle + iowait + steal))
}

/// CPU time (user + system, in clock ticks) of the process whose `/proc/PID/stat` is
/// `text`: fields 14 and 15, counted after the command name, which may itself hold spaces
/// and parentheses (it ends at the last `)`).
pub fn parse_process_stat(text: &str) -> Option<u64> {
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3 (the state): field N is fields[N - 3].
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// The number of cores the machine's other processes kept busy, measured between
/// successive calls of [`CpuLoad::others`] (Linux; elsewhere it reads nothing).
#[derive(Debug, Default)]
pub struct CpuLoad {
    /// (machine busy, machine total, this process) at the previous reading.
    last: Option<(u64, u64, u64)>,
}

impl CpuLoad {
    /// A load meter; its first [`CpuLoad::others`] only starts the measurement.
    pub fn new() -> CpuLoad {
        CpuLoad::default()
    }

    fn read() -> Option<(u64, u64, u64)> {
        let (busy, total) = parse_proc_stat(&std::fs::read_to_string("/proc/stat").ok()?)?;
        let ours = parse_process_stat(&std::fs::read_to_string("/proc/self/stat").ok()?)?;
        Some((busy, total, ours))
    }

    /// Cores that processes other than this one kept busy, on average, since the previous
    /// call (see [`others_between`]); `None` on the first call, when too little time
    /// passed to tell (under one tick per core), or where `/proc` cannot be read.
    pub fn others(&mut self) -> Option<f64> {
        let now = CpuLoad::read()?;
        let last = self.last.replace(now)?;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let others = others_between(last, now, cores);
        if others.is_none() {
            self.last = Some(last);
        }
        others
    }
}

/// Cores that processes other than this one kept busy between two readings `(machine
/// busy, machine total, this process)` of a machine with `cores` cores: the machine's busy
/// time less this process's, over the time that passed per core, clamped to `0..=cores`.
/// `None` when under one tick per core passed.
pub fn others_between(last: (u64, u64, u64), now: (u64, u64, u64), cores: usize) -> Option<f64> {
    let cores = cores.max(1) as f64;
    let busy = now.0.saturating_sub(last.0);
    let total = now.1.saturating_sub(last.1);
    let ours = now.2.saturating_sub(last.2);
    if (total as f64) < cores {
        return None;
    }
    Some((busy.saturating_sub(ours) as f64 / total as f64 * cores).clamp(0.0, cores))
}

/// The torch threads to run beside other processes that keep `others` cores busy, for a
/// process that would use `max` threads on a quiet machine: `max` less the cores the
/// others hold (rounded: a process that keeps half a core busy takes one), at least 1.
pub fn threads_beside(max: usize, others: f64) -> usize {
    let held = others.max(0.0).round() as usize;
    max.saturating_sub(held).max(1)
}

/// torch's intra-op thread count of the calling thread, following the machine's load (see
/// the module doc). One per thread that runs torch operations on the CPU (the trainer's,
/// the inference thread); it sets the count of the thread that calls
/// [`AutoThreads::update`] (OpenMP keeps one per thread).
#[derive(Debug)]
pub struct AutoThreads {
    max: usize,
    current: usize,
    load: CpuLoad,
    next_check: Instant,
}

impl AutoThreads {
    /// Follows the load with at most `max` threads (torch's count on a quiet machine).
    pub fn new(max: usize) -> AutoThreads {
        let mut load = CpuLoad::new();
        let _ = load.others();
        AutoThreads {
            max: max.max(1),
            current: max.max(1),
            load,
            next_check: Instant::now() + CHECK_INTERVAL,
        }
    }

    /// Follows the load with at most torch's thread count on a quiet machine: the count
    /// torch had when the process first asked (later calls get the same, although torch's
    /// count for new threads follows the last [`AutoThreads::update`] of any thread).
    pub fn from_torch() -> AutoThreads {
        static QUIET: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        AutoThreads::new(*QUIET.get_or_init(|| tch::get_num_threads().max(1) as usize))
    }

    /// The thread count now in force.
    pub fn current(&self) -> usize {
        self.current
    }

    /// Re-reads the machine's load when [`CHECK_INTERVAL`] has passed and sets the calling
    /// thread's torch thread count to [`threads_beside`] it when that changed; returns
    /// the count in force. Costs nothing between checks, about 20 µs at one.
    pub fn update(&mut self) -> usize {
        if self.max > 1 && Instant::now() >= self.next_check {
            self.next_check = Instant::now() + CHECK_INTERVAL;
            if let Some(others) = self.load.others() {
                let want = threads_beside(self.max, others);
                if want != self.current {
                    tch::set_num_threads(want as i32);
                    self.current = want;
                }
            }
        }
        self.current
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat_gives_busy_and_total_ticks() {
        let text = "cpu  100 5 50 1000 20 3 2 7 0 0\ncpu0 50 2 25 500 10 1 1 3 0 0\n";
        assert_eq!(parse_proc_stat(text), Some((160, 1187)));
        assert_eq!(parse_proc_stat("cpu0 1 2 3 4 5 6 7 8\n"), None);
        assert_eq!(parse_proc_stat("cpu  1 2 x 4 5 6 7 8\n"), None);
        assert_eq!(parse_proc_stat("cpu  1 2 3\n"), None);
    }

    #[test]
    fn process_stat_reads_past_a_command_name_with_spaces_and_parentheses() {
        let text = "4242 (loazero (x) y) S 1 4242 4242 0 -1 4194560 5 0 0 0 731 69 0 0 20 0 9";
        assert_eq!(parse_process_stat(text), Some(800));
        assert_eq!(parse_process_stat("4242 (short) S 1 2"), None);
        assert_eq!(parse_process_stat("no parenthesis"), None);
    }

    #[test]
    fn other_processes_take_whole_threads() {
        assert_eq!(threads_beside(2, 0.0), 2);
        assert_eq!(threads_beside(2, 0.3), 2);
        assert_eq!(threads_beside(2, 0.6), 1);
        assert_eq!(threads_beside(2, 1.0), 1);
        assert_eq!(threads_beside(2, 2.0), 1);
        assert_eq!(threads_beside(8, 2.6), 5);
        assert_eq!(threads_beside(1, 5.0), 1);
        assert_eq!(threads_beside(4, -0.1), 4);
    }

    #[test]
    fn our_own_time_is_not_the_others_load() {
        // 2 cores, 200 ticks passed in all (100 per core): the machine was busy 150
        // ticks, 100 of them ours.
        let others = others_between((1000, 5000, 300), (1150, 5200, 400), 2).unwrap();
        assert!((others - 0.5).abs() < 1e-9, "{others}");
        // All of the busy time ours: no one else.
        assert_eq!(others_between((0, 0, 0), (200, 200, 200), 2), Some(0.0));
        // Counters that went backwards (a reading racing a CPU going offline) read 0.
        assert_eq!(
            others_between((500, 900, 10), (400, 1100, 20), 2),
            Some(0.0)
        );
        // Too little time passed.
        assert_eq!(others_between((0, 0, 0), (1, 1, 0), 2), None);
    }

    /// A busy child process is seen as another process's load.
    #[test]
    fn the_load_of_another_process_is_measured() {
        let mut load = CpuLoad::new();
        assert_eq!(load.others(), None, "the first reading only starts");
        let mut child = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let _ = load.others();
        std::thread::sleep(Duration::from_millis(1500));
        let with_child = load.others();
        child.kill().unwrap();
        child.wait().unwrap();
        let with_child = with_child.expect("a reading after 1.5 s");
        // The child holds a core, less what a loaded machine takes from it.
        assert!(
            with_child >= 0.4,
            "busy child measured as {with_child} cores"
        );
    }

    /// Beside a busy child process, the count drops below its quiet maximum.
    #[test]
    fn auto_threads_give_up_a_thread_to_a_busy_process() {
        let max = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
        let mut child = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        let mut auto = AutoThreads::new(max);
        let deadline = Instant::now() + Duration::from_secs(5);
        while auto.update() == max && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let during = auto.current();
        tch::set_num_threads(1);
        assert!(
            during < max,
            "{during} of {max} threads beside a busy process"
        );
    }
}
