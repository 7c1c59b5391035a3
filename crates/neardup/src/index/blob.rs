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
