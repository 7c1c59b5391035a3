//! The memory of a dedup run: how the budget (by default
//! [`crate::machine::default_memory`]) is shared among the parts that grow
//! with the corpus, and the peak the run reached.

/// How a budget is shared.
#[derive(Clone, Copy, Debug)]
pub struct Shares {
    /// Held records (ids and JSON) before they move to `--tmp-dir`.
    pub records: u64,
    /// MinHash signatures before they move to `--tmp-dir`.
    pub signatures: u64,
    /// MinHash band keys of one read of spilled signatures.
    pub band_keys: u64,
    /// SimHash's all-pairs tables (its fingerprints, 20 bytes a document,
    /// stay in memory).
    pub tables: u64,
    /// The exact pass's table of the texts seen ([`neardup::dedup::SeenTexts`]).
    pub exact: u64,
    /// Verification shingles kept while signing, before they move to
    /// `--tmp-dir`.
    pub shingles: u64,
}

impl Shares {
    /// The shares of `budget` bytes. Records, signatures, shingles to verify
    /// and the exact pass's table live while the corpus is read, band keys and tables
    /// while pairs are found; the rest is left for what every document
    /// keeps (SimHash: about 50 bytes with its fingerprint; MinHash: about
    /// 30: feature count, length, cluster link, kept mark) and the signing
    /// threads.
    pub fn of(budget: u64) -> Shares {
        Shares {
            records: budget / 4,
            signatures: budget / 4,
            band_keys: budget / 4,
            tables: budget / 2,
            exact: budget / 8,
            shingles: budget / 8,
        }
    }
}

/// The most resident memory this process has had, in bytes (Linux; None
/// elsewhere).
pub fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb = status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?.trim().trim_end_matches("kB").trim();
    kb.parse::<u64>().ok().map(|k| k * 1024)
}
