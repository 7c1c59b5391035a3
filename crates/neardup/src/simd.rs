//! Which SIMD kernels run: chosen once at run time from the CPU, and
//! overridable with the `NEARDUP_SIMD` environment variable.
//!
//! Every kernel with a SIMD form (MD5 of short features, the SimHash vote,
//! unit-vote counting, the ASCII word tokenizer) has a portable form too,
//! and each SIMD form is tested bit-equal to it. Which one runs is one
//! process-wide [`Level`]:
//!
//! | `NEARDUP_SIMD` | kernels used |
//! |---|---|
//! | unset, `auto` | the best the CPU has |
//! | `avx512` | AVX-512 (F and BW), else the best the CPU has below it |
//! | `avx2` | AVX2 at most, even on an AVX-512 CPU |
//! | `portable` | no SIMD intrinsics at all |
//!
//! (in any case: `AVX2` is `avx2`).
//!
//! A level the CPU lacks falls back to the best it has (the answer is the
//! same on every level; only the speed differs). The command-line tool
//! checks the variable at start-up with [`from_env`] and refuses a value it
//! does not know; the library never fails over it.
//!
//! Tests and benchmarks run a closure on another level with [`scoped`],
//! which holds for the calling thread only.

use std::cell::Cell;
use std::fmt;
use std::sync::OnceLock;

/// A set of SIMD kernels, from the least to the most capable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Plain Rust: runs on every CPU (the reference every other level is
    /// tested against).
    Portable,
    /// x86-64 AVX2 (8 × 32-bit lanes): AMD since Zen, Intel since Haswell.
    Avx2,
    /// x86-64 AVX-512 F and BW (16 × 32-bit lanes): Intel Xeon since
    /// Skylake-SP, AMD since Zen 4.
    Avx512,
}

impl Level {
    /// Every level, least capable first.
    pub const ALL: [Level; 3] = [Level::Portable, Level::Avx2, Level::Avx512];

    /// The name `NEARDUP_SIMD` takes for this level.
    pub fn name(self) -> &'static str {
        match self {
            Level::Portable => "portable",
            Level::Avx2 => "avx2",
            Level::Avx512 => "avx512",
        }
    }

    /// Whether this CPU can run this level's kernels.
    pub fn is_supported(self) -> bool {
        self <= detected()
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Level {
    type Err = UnknownLevel;

    fn from_str(s: &str) -> Result<Level, UnknownLevel> {
        Level::ALL
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownLevel(s.to_owned()))
    }
}

/// A `NEARDUP_SIMD` value that names no level.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("NEARDUP_SIMD={0:?} is not a SIMD level: use auto, avx512, avx2 or portable (or leave it unset)")]
pub struct UnknownLevel(pub String);

/// The most capable level this CPU supports, whatever `NEARDUP_SIMD` says.
pub fn detected() -> Level {
    static DETECTED: OnceLock<Level> = OnceLock::new();
    *DETECTED.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
            {
                return Level::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                return Level::Avx2;
            }
        }
        Level::Portable
    })
}

/// The levels this CPU can run, least capable first: what tests and
/// benchmarks iterate over.
pub fn supported() -> Vec<Level> {
    Level::ALL.into_iter().filter(|l| l.is_supported()).collect()
}

/// What `NEARDUP_SIMD` asks for: `Ok(None)` when unset, empty or `auto`.
///
/// # Errors
///
/// [`UnknownLevel`] for any other value that names no level.
pub fn from_env() -> Result<Option<Level>, UnknownLevel> {
    match std::env::var("NEARDUP_SIMD") {
        Ok(v) if v.trim().is_empty() || v.trim().eq_ignore_ascii_case("auto") => Ok(None),
        Ok(v) => v.parse().map(Some),
        Err(_) => Ok(None),
    }
}

/// The level the process runs: `NEARDUP_SIMD` if set (an unknown value
/// counts as unset), capped at what the CPU supports.
fn process_level() -> Level {
    static LEVEL: OnceLock<Level> = OnceLock::new();
    *LEVEL.get_or_init(|| from_env().ok().flatten().map_or(detected(), |l| l.min(detected())))
}

thread_local! {
    static SCOPED: Cell<Option<Level>> = const { Cell::new(None) };
}

/// The level kernels run at on this thread: the one [`scoped`] set, else
/// the process's (`NEARDUP_SIMD`, capped at what the CPU supports).
#[inline]
pub fn level() -> Level {
    SCOPED.with(Cell::get).unwrap_or_else(process_level)
}

/// Runs `f` with kernels at `level` (capped at what the CPU supports) on
/// this thread, then restores the level before (also if `f` panics).
/// Work that `f` sends to other threads runs at their own level.
pub fn scoped<R>(level: Level, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Level>);
    impl Drop for Restore {
        fn drop(&mut self) {
            SCOPED.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(SCOPED.with(|c| c.replace(Some(level.min(detected())))));
    f()
}

/// Asks the CPU to bring the cache line at `p` into the nearest cache: a
/// hint with no effect on results (nothing on other architectures than
/// x86-64). The one home of the hint for every table lookup that fetches
/// ahead of its reads, so that cache misses overlap.
#[inline(always)]
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and reads nothing into the program,
    // whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_refused() {
        for l in Level::ALL {
            assert_eq!(l.name().parse::<Level>(), Ok(l));
            assert_eq!(l.name().to_uppercase().parse::<Level>(), Ok(l), "any case");
        }
        let e = "sse9".parse::<Level>().unwrap_err();
        assert!(e.to_string().contains("use auto, avx512, avx2 or portable"), "{e}");
    }

    #[test]
    fn scoped_sets_and_restores_the_level_capped_at_the_cpu() {
        let before = level();
        scoped(Level::Portable, || {
            assert_eq!(level(), Level::Portable);
            scoped(Level::Avx512, || assert_eq!(level(), detected()));
            assert_eq!(level(), Level::Portable);
        });
        assert_eq!(level(), before);
        assert!(supported().contains(&Level::Portable));
        assert_eq!(supported().last(), Some(&detected()));
    }
}
