// What this machine can run, for tests that need more than Rust. The test
// crates' build scripts read this file (`include!`, so it uses nothing but
// std and has no inner attributes) and turn each answer into a cfg: a test
// that cannot run here is then reported by the runner as ignored, with its
// reason, instead of passing without testing. `NEARDUP_REQUIRE_<WHAT>`
// (set in CI) turns the cfg on regardless, so a missing requirement fails.

/// Whether `NEARDUP_REQUIRE_<what>` is set: the tests needing it must run.
#[allow(dead_code)]
pub fn required(what: &str) -> bool {
    std::env::var_os(format!("NEARDUP_REQUIRE_{what}")).is_some()
}

/// The Chromium to run: `CHROMIUM`, else `chromium`, `chromium-browser`
/// or `google-chrome` on `PATH`.
#[allow(dead_code)]
pub fn chromium() -> Option<std::path::PathBuf> {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return Some(p.into());
    }
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|p| p.is_file())
}

/// Whether this process may mount a filesystem (Linux: `CAP_SYS_ADMIN`
/// among its effective capabilities, as root has outside a restricted
/// container), which the tmpfs tests need.
#[allow(dead_code)]
pub fn can_mount() -> bool {
    const CAP_SYS_ADMIN: u32 = 21;
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else { return false };
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .is_some_and(|caps| caps >> CAP_SYS_ADMIN & 1 == 1)
}

/// Prints the build-script lines that set cfg `neardup_<name>` where
/// `available`, or where `NEARDUP_REQUIRE_<NAME>` is set.
#[allow(dead_code)]
pub fn emit_cfg(name: &str, available: impl FnOnce() -> bool) {
    let upper = name.to_uppercase();
    println!("cargo::rustc-check-cfg=cfg(neardup_{name})");
    println!("cargo::rerun-if-env-changed=NEARDUP_REQUIRE_{upper}");
    if required(&upper) || available() {
        println!("cargo::rustc-cfg=neardup_{name}");
    }
}
