//! Marks the tests that need what this machine may lack, so that elsewhere
//! they are reported as ignored with their reason: cfg `neardup_tmpfs`
//! where this process may mount a tmpfs (Linux CAP_SYS_ADMIN, as root has)
//! and `neardup_chromium` where Chromium is installed (its path goes to the
//! tests as `NEARDUP_CHROMIUM`). `NEARDUP_REQUIRE_TMPFS` and
//! `NEARDUP_REQUIRE_CHROMIUM` (set in CI) turn them on regardless, so a
//! missing requirement fails. Self-contained, so the package builds from
//! its own tarball.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(neardup_tmpfs, neardup_chromium)");
    for var in ["NEARDUP_REQUIRE_TMPFS", "NEARDUP_REQUIRE_CHROMIUM", "CHROMIUM", "PATH"] {
        println!("cargo::rerun-if-env-changed={var}");
    }
    let required = |what: &str| std::env::var_os(format!("NEARDUP_REQUIRE_{what}")).is_some();
    if required("TMPFS") || can_mount() {
        println!("cargo::rustc-cfg=neardup_tmpfs");
    }
    let chromium = chromium();
    if required("CHROMIUM") || chromium.is_some() {
        println!("cargo::rustc-cfg=neardup_chromium");
    }
    let path = chromium.map(|p| p.display().to_string()).unwrap_or_default();
    println!("cargo::rustc-env=NEARDUP_CHROMIUM={path}");
}

/// Whether CAP_SYS_ADMIN is among this process's effective capabilities.
fn can_mount() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let caps = status.lines().find_map(|l| l.strip_prefix("CapEff:"));
    caps.and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok()).is_some_and(|c| c >> 21 & 1 == 1)
}

/// `CHROMIUM`, else `chromium`, `chromium-browser` or `google-chrome` on `PATH`.
fn chromium() -> Option<std::path::PathBuf> {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return Some(p.into());
    }
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|p| p.is_file())
}
