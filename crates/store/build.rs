//! Marks the tests that need a tmpfs they can fill (crates/testkit's
//! `Tmpfs`): cfg `neardup_tmpfs` where this process may mount one (Linux
//! CAP_SYS_ADMIN, as root has) or where `NEARDUP_REQUIRE_TMPFS` is set (CI);
//! elsewhere those tests are reported as ignored, with their reason.
//! Self-contained, so the package builds from its own tarball.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(neardup_tmpfs)");
    println!("cargo::rerun-if-env-changed=NEARDUP_REQUIRE_TMPFS");
    if std::env::var_os("NEARDUP_REQUIRE_TMPFS").is_some() || can_mount() {
        println!("cargo::rustc-cfg=neardup_tmpfs");
    }
}

/// Whether CAP_SYS_ADMIN is among this process's effective capabilities.
fn can_mount() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let caps = status.lines().find_map(|l| l.strip_prefix("CapEff:"));
    caps.and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok()).is_some_and(|c| c >> 21 & 1 == 1)
}
