//! The trie's slots in memory the OS may back with huge pages.
//!
//! Segmentation reads the 5.5 MB trie at random, a slot or two per
//! character; on 4 KiB pages nearly every read misses the TLB as well as
//! the cache. On Linux the slots are allocated aligned to 2 MiB and marked
//! `MADV_HUGEPAGE` before they are written, so transparent huge pages
//! (on by default, or in `madvise` mode) back them with a few 2 MiB pages:
//! segmentation ~1.07× on the sample documents (bench/RESULTS.md). Where
//! the OS declines, or elsewhere, they are ordinary memory.

use std::alloc::{self, Layout};
use std::ops::Deref;
use std::ptr::NonNull;

/// A huge page, and the alignment and granularity of the allocation.
const HUGE: usize = 2 << 20;

/// An immutable array of u64, allocated for huge pages.
pub(crate) struct HugeSlice {
    ptr: NonNull<u64>,
    len: usize,
    layout: Layout,
}

// SAFETY: a HugeSlice owns its memory, as a Box<[u64]> does, and never
// changes it after construction.
unsafe impl Send for HugeSlice {}
// SAFETY: as above; shared access only reads.
unsafe impl Sync for HugeSlice {}

impl HugeSlice {
    /// A copy of `values`.
    pub(crate) fn copy_of(values: &[u64]) -> HugeSlice {
        let bytes = std::mem::size_of_val(values).div_ceil(HUGE).max(1) * HUGE;
        let layout = Layout::from_size_align(bytes, HUGE).expect("a valid layout");
        // SAFETY: the layout's size is not zero.
        let raw = unsafe { alloc::alloc(layout) };
        let Some(ptr) = NonNull::new(raw.cast::<u64>()) else { alloc::handle_alloc_error(layout) };
        #[cfg(target_os = "linux")]
        // SAFETY: the range is the allocation just made; the advice only
        // asks the kernel how to back it and changes no contents. A
        // failure (no THP support) leaves ordinary pages, which is fine.
        unsafe {
            libc::madvise(raw.cast(), bytes, libc::MADV_HUGEPAGE);
        }
        // SAFETY: the allocation holds at least `values.len()` u64 and is
        // aligned for them; the source is a distinct live slice.
        unsafe { std::ptr::copy_nonoverlapping(values.as_ptr(), ptr.as_ptr(), values.len()) };
        HugeSlice { ptr, len: values.len(), layout }
    }
}

impl Deref for HugeSlice {
    type Target = [u64];

    fn deref(&self) -> &[u64] {
        // SAFETY: the first `len` u64 were written in `copy_of` and live
        // until `drop`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for HugeSlice {
    fn drop(&mut self) {
        // SAFETY: allocated in `copy_of` with this layout, freed once.
        unsafe { alloc::dealloc(self.ptr.as_ptr().cast(), self.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_reads_back_equal() {
        for n in [1usize, 7, HUGE / 8, HUGE / 8 + 1, 700_000] {
            let v: Vec<u64> = (0..n as u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
            let h = HugeSlice::copy_of(&v);
            assert_eq!(&*h, &v[..]);
        }
    }
}
