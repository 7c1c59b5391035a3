//! Where uploads are read: a few threads of their own, below the async
//! workers' CPU priority.
//!
//! Reading an upload is bulk work: its bytes go to a reader process, its
//! text (megabytes, for a large file) is checked, counted and written out
//! as JSON. Done on the async workers, a few large uploads at once hold
//! them for tens of milliseconds and every search waits behind them (on a
//! 2-core machine, 8 uploads of an 11 MB HTML file took the p99 of
//! `/v1/search` from 0.7 ms to 35–50 ms). So uploads are read on
//! [`Uploads`]: as many threads as uploads read at once, each under
//! `SCHED_IDLE` (the reader processes they start inherit it), behind a
//! queue that lets no more in. On a machine whose CPUs searches keep
//! busy, uploads wait for them, up to the parse time (`parse_timeout`).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{oneshot, Semaphore};

use crate::error::ApiError;

/// How much nicer than the server upload threads run.
pub(crate) const NICE: libc::c_int = 10;

/// The threads that read uploads, and the queue in front of them.
pub(crate) struct Uploads {
    slots: Arc<Semaphore>,
    pool: rayon::ThreadPool,
}

impl Uploads {
    /// `at_once` threads (at least 1), and as many slots.
    pub(crate) fn new(at_once: usize) -> Uploads {
        let at_once = at_once.max(1);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(at_once)
            .thread_name(|i| format!("neardup-upload-{i}"))
            .start_handler(|_| lower_priority())
            // A panic is the work's error (its answer's sender dropped),
            // not the server's end.
            .panic_handler(|_| {})
            .build()
            .expect("the upload threads could not be started");
        Uploads { slots: Arc::new(Semaphore::new(at_once)), pool }
    }

    /// `work`'s answer, run on an upload thread once one is free; `None`
    /// when it is not there within `within` (the work goes on to its own
    /// deadline, and frees its slot then).
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        within: Duration,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<Option<T>, ApiError> {
        let permit =
            self.slots.clone().acquire_owned().await.map_err(|_| ApiError::unavailable("shutting down"))?;
        let (tx, rx) = oneshot::channel();
        self.pool.spawn(move || {
            let _permit = permit;
            let _ = tx.send(work());
        });
        match tokio::time::timeout(within, rx).await {
            Ok(Ok(answer)) => Ok(Some(answer)),
            Ok(Err(_)) => Err(ApiError::internal("the upload's reader failed")),
            Err(_) => Ok(None),
        }
    }
}

/// This thread (and the reader processes it starts, which inherit it)
/// under `SCHED_IDLE`, at nice [`NICE`] where that is refused: it runs on
/// the CPU the server's requests leave. Measured on 2 cores with two
/// CPU-bound processes beside the server: the p99 of `/v1/search` stayed
/// at 0.4 ms under `SCHED_IDLE`, and went to 3.2 ms at nice 19.
fn lower_priority() {
    // SAFETY: plain calls on this thread alone (gettid names it).
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::pid_t;
        let idle = libc::sched_param { sched_priority: 0 };
        if libc::sched_setscheduler(tid, libc::SCHED_IDLE, &idle) != 0 {
            libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, NICE);
        }
    }
}
