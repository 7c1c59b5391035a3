//! Segment merges off the read and write paths.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, RwLock};

/// A stop flag that is never raised (merges run to the end).
pub(super) static NEVER: AtomicBool = AtomicBool::new(false);

use neardup::index::TableIndex;

use super::state::State;

/// Runs the segment merges the index is due for without blocking readers
/// or writers: plans under a read lock, sorts with no lock, swaps under a
/// short write lock; segments appended meanwhile do not spoil a merge. A
/// merge that cannot be built (it cannot fail on entries that were indexed
/// once) is skipped: answers stay exact, only slower.
pub(super) fn merge_due(state: &RwLock<State>, stop: &AtomicBool) {
    if state.read().expect("lock").disk().is_some() {
        // Errors leave the work for the next wake-up; answers stay exact.
        let _ = super::disk::maintain(state, stop, super::disk::Merges::Due);
        return;
    }
    loop {
        let mut merged_any = false;
        let passes = state.read().expect("lock").simhash().map_or(0, |d| d.indexes().count());
        for i in 0..passes {
            let plan = state
                .read()
                .expect("lock")
                .simhash()
                .and_then(|d| d.indexes().nth(i).and_then(TableIndex::merge_plan));
            let Some(Ok(merged)) = plan.map(|p| p.build()) else { continue };
            merged_any |= state
                .write()
                .expect("lock")
                .simhash_mut()
                .and_then(|d| d.index_mut(i))
                .is_some_and(|t| t.apply_merge(merged));
        }
        if !merged_any {
            return;
        }
    }
}

/// The thread that merges index segments after commits. Wake-ups coalesce;
/// dropping the handle stops the thread (after the merge in progress).
pub(super) struct Merger {
    wake: Option<mpsc::SyncSender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// Set if the thread could not be started: merges then run inline.
    inline: Option<Arc<RwLock<State>>>,
    /// Raised on drop: the thread stops after the merge in progress, not
    /// after every merge due (a close must not wait for minutes of them).
    stop: Arc<AtomicBool>,
}

impl Merger {
    pub(super) fn start(state: Arc<RwLock<State>>) -> Merger {
        let (wake, woken) = mpsc::sync_channel::<()>(1);
        let shared = state.clone();
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = std::thread::Builder::new()
            .name("neardup-merge".into())
            .spawn(move || {
                while woken.recv().is_ok() {
                    merge_due(&shared, &stopping);
                }
            })
            .ok();
        match thread {
            Some(t) => Merger { wake: Some(wake), thread: Some(t), inline: None, stop },
            None => Merger { wake: None, thread: None, inline: Some(state), stop },
        }
    }

    /// Asks for a merge pass (a no-op if one is already asked for).
    pub(super) fn wake(&self) {
        if let Some(w) = &self.wake {
            let _ = w.try_send(());
        } else if let Some(state) = &self.inline {
            merge_due(state, &NEVER);
        }
    }
}

impl Drop for Merger {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.wake = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
