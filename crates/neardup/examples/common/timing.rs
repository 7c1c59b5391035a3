//! Shared by the bench examples: the median wall time of repeated runs.

use std::time::Instant;

/// The median of `runs` timings of `f`, in seconds.
pub fn median_secs(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut t: Vec<f64> = (0..runs)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[runs / 2]
}
