"""datasketch's default hash functions: the first 4 or 8 bytes of the SHA-1
digest, read little-endian. MinHash recognises these (and datasketch's own)
and hashes with neardup's batched SHA-1 kernels instead of calling them."""

import hashlib
import struct


def sha1_hash32(data):
    """A 32-bit hash of bytes: SHA-1's first 4 bytes, little-endian."""
    return struct.unpack("<I", hashlib.sha1(data).digest()[:4])[0]


def sha1_hash64(data):
    """A 64-bit hash of bytes: SHA-1's first 8 bytes, little-endian."""
    return struct.unpack("<Q", hashlib.sha1(data).digest()[:8])[0]
