//! A global allocator for the no-allocation tests: the system's, counting the allocations made
//! on threads that asked to be counted. A binary installs it with
//! `#[global_allocator] static GLOBAL: count_alloc::Counting = count_alloc::Counting;`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting allocations on counted threads.
pub struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    // Only the thread under test is counted: the test harness's main thread does its own
    // bookkeeping (the running-test table) right after it starts the test thread, and under
    // load that landed inside the counted steps now and then.
    static COUNTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Counts this thread's allocations from now on.
pub fn count_this_thread() {
    COUNTED.with(|c| c.set(true));
}

/// Allocations counted so far, on every counted thread.
pub fn allocations() -> usize {
    ALLOCATIONS.load(Ordering::Relaxed)
}

/// Counts an allocation made on a counted thread.
fn count() {
    if COUNTED.with(|c| c.get()) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: forwards every call unchanged to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}
