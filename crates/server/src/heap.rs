//! Giving freed memory back: glibc's allocator keeps what a burst of large requests
//! freed in its per-thread arenas, so without this the process stays at its peak
//! resident size long after the burst (docs/benchmarks.md, "Memory of the server
//! process"). A background task asks it to return free pages every `TRIM_EVERY`.
use std::time::Duration;

use tokio_util::sync::CancellationToken;

/// How often free heap pages go back to the system: often enough that a burst's
/// memory is returned within seconds, rarely enough that the walk over the arenas costs
/// nothing measurable.
pub const TRIM_EVERY: Duration = Duration::from_secs(5);

/// Buffers at least this large are mapped on their own and unmapped when freed.
const MMAP_THRESHOLD_BYTES: i32 = 256 * 1024;

/// Sets the allocator up for a server, before its threads start: a buffer of
/// MMAP_THRESHOLD_BYTES or more (a large message, a request body) gets pages of its own,
/// returned when it is freed. glibc's default raises that threshold to the size of the
/// first such buffer freed (up to 32 MiB), after which large buffers land in the arenas
/// and fragment them.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn configure() {
    // SAFETY: mallopt takes two integers and changes a setting of the allocator.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn configure() {}

/// Returns free heap pages to the system every `TRIM_EVERY` until `shutdown`.
pub fn start(shutdown: CancellationToken) {
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = tokio::time::sleep(TRIM_EVERY) => {}
            }
            trim();
        }
    });
}

/// Returns the free pages of every arena to the system (glibc's `malloc_trim`).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim() {
    // SAFETY: malloc_trim takes no pointers and only releases pages the allocator holds
    // free; it is safe to call from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Other allocators return memory themselves.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}
