//! Memory the allocator holds but the process no longer uses.

/// Hands the heap memory that is free but still held by the allocator back to the system
/// (glibc's `malloc_trim`; nothing elsewhere). Without it glibc keeps what a long-lived
/// process freed in its per-thread arenas, and resident memory creeps up for hours
/// although nothing leaks. Measured: the loop of a default run, 1159 MiB resident before
/// a trim, 725 MiB after (generation 36); `serve` under 8 clients, 535 MiB before, 402 MiB
/// after. The run loop calls it once a generation, `serve` every 10 s. Thread-safe
/// (glibc takes each arena's lock); takes milliseconds.
pub fn release_free_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages to the system.
    unsafe {
        libc::malloc_trim(0);
    }
}
