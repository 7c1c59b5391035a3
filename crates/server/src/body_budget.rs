//! A bound on the request bodies held at once, in bytes.
//!
//! Each request's body is limited (`--max-body`, `--max-upload`), but
//! without a bound on them all, many connections sending large bodies at
//! once hold them all: 100 uploads of 32 MiB are 3.2 GB. So a request
//! reserves its body's size (its `Content-Length`, or the largest body its
//! route takes when it does not say) from [`BodyBudget`] before its body
//! is read, and gives it back with its answer; over the budget, requests
//! wait for it (within the request timeout, then 503).

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Bytes are counted in units of this size (a request takes at least one).
const UNIT: u64 = 64 << 10;

/// The bytes of request bodies that may be held at once.
pub(crate) struct BodyBudget {
    units: Arc<Semaphore>,
    total: u32,
}

impl BodyBudget {
    /// A budget of `bytes` (at least one unit).
    pub(crate) fn new(bytes: u64) -> BodyBudget {
        let total = u32::try_from(bytes.div_ceil(UNIT)).unwrap_or(u32::MAX >> 3).clamp(1, u32::MAX >> 3);
        BodyBudget { units: Arc::new(Semaphore::new(total as usize)), total }
    }

    /// Waits for `bytes` of the budget (all of it when `bytes` is over
    /// it); held until the returned permit is dropped. Bodiless requests
    /// (`bytes` 0) take nothing and do not wait.
    pub(crate) async fn reserve(&self, bytes: u64) -> Option<OwnedSemaphorePermit> {
        if bytes == 0 {
            return None;
        }
        let units = u32::try_from(bytes.div_ceil(UNIT)).unwrap_or(u32::MAX).min(self.total);
        self.units.clone().acquire_many_owned(units).await.ok()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn bodies_wait_for_the_budget_and_none_is_refused_for_size() {
        let budget = BodyBudget::new(1 << 20);
        let first = budget.reserve(768 << 10).await.expect("within the budget");
        // 512 KiB more does not fit beside the first: it waits for it.
        let waits = tokio::time::timeout(Duration::from_millis(50), budget.reserve(512 << 10)).await;
        assert!(waits.is_err(), "over the budget, a body waits");
        // A bodiless request never waits.
        assert!(budget.reserve(0).await.is_none());
        drop(first);
        let second = tokio::time::timeout(Duration::from_secs(5), budget.reserve(512 << 10)).await;
        let second = second.expect("the budget given back");
        assert!(second.is_some());
        drop(second);
        // A body over the whole budget takes all of it, and still goes.
        let big = tokio::time::timeout(Duration::from_secs(5), budget.reserve(10 << 20)).await;
        assert!(big.expect("a body over the budget alone").is_some());
    }
}
