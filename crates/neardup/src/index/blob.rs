//! Shared, immutable byte arrays: owned by the process or mapped from an
//! index file. Segments read their tables through these, so an opened index
//! file is used in place, never copied onto the heap.

use std::sync::Arc;

/// A byte range of a shared buffer.
#[derive(Clone)]
pub(crate) struct Blob {
    owner: Arc<dyn AsRef<[u8]> + Send + Sync>,
    start: usize,
    len: usize,
}

impl Blob {
    pub fn from_vec(v: Vec<u8>) -> Blob {
        let len = v.len();
        Blob { owner: Arc::new(v), start: 0, len }
    }

    /// A range of a shared owner; the caller has checked that it is in bounds.
    pub fn slice_of(owner: Arc<dyn AsRef<[u8]> + Send + Sync>, start: usize, len: usize) -> Blob {
        debug_assert!(start + len <= (*owner).as_ref().len());
        Blob { owner, start, len }
    }

    /// A range of this blob; the caller has checked that it is in bounds.
    pub fn sub(&self, start: usize, len: usize) -> Blob {
        debug_assert!(start + len <= self.len);
        Blob { owner: self.owner.clone(), start: self.start + start, len }
    }

    #[inline]
    pub fn bytes(&self) -> &[u8] {
        &(*self.owner).as_ref()[self.start..self.start + self.len]
    }

    pub fn len(&self) -> usize {
        self.len
    }
}

impl std::fmt::Debug for Blob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Blob({} bytes)", self.len)
    }
}

#[inline(always)]
pub(crate) fn read_u32(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().expect("4 bytes"))
}

#[inline(always)]
pub(crate) fn read_u64(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().expect("8 bytes"))
}

/// Buffers at least this large are asked to live on huge pages.
const HUGE_MIN: usize = 4 << 20;

/// An empty vector with room for `cap` items, which the kernel is asked to
/// back with transparent huge pages (Linux, `MADV_HUGEPAGE`) before any of
/// it is touched. Index tables are read at random: on 4 KiB pages nearly
/// every probe of a large index misses the TLB and waits for a page walk,
/// which also keeps prefetches from overlapping; 2 MiB pages cover the
/// tables with a few thousand TLB entries. Elsewhere (or if the kernel
/// declines) it is an ordinary vector.
pub(crate) fn huge_vec<T>(cap: usize) -> Vec<T> {
    let v = Vec::with_capacity(cap);
    let bytes = cap * std::mem::size_of::<T>();
    #[cfg(target_os = "linux")]
    if bytes >= HUGE_MIN {
        const HUGE: usize = 2 << 20;
        let start = v.as_ptr() as usize;
        let first = start.next_multiple_of(HUGE);
        let end = (start + bytes) / HUGE * HUGE;
        if end > first {
            // SAFETY: madvise only changes the kernel's paging policy for
            // the range, which lies inside this vector's allocation; it
            // neither reads nor writes memory. A failure is harmless.
            unsafe { libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE) };
        }
    }
    v
}
