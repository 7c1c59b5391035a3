//! Facts about the machine the CLI runs on.

/// The memory this process may use: the machine's, or its control
/// group's limit where that is lower; `None` where neither can be read.
pub fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let total = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())?
        * 1024;
    let limit =
        std::fs::read_to_string("/sys/fs/cgroup/memory.max").ok().and_then(|s| s.trim().parse::<u64>().ok());
    Some(limit.map_or(total, |l| l.min(total)))
}

/// What `--memory` defaults to, as `--help` shows it: half the memory this
/// process may use (the machine's, or its control group's limit if lower),
/// at least 1 GiB; 4 GiB where neither can be read.
pub fn default_memory() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        let bytes = available_memory().map_or(4 << 30, |b| (b / 2).max(1 << 30));
        format!("{}M", bytes >> 20)
    })
}
