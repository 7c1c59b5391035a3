// Marks the tests that need what this machine may lack (see
// crates/testkit/src/probe.rs): cfg neardup_tmpfs where a tmpfs can be
// mounted and neardup_chromium where Chromium is installed; without them
// those tests are reported as ignored.
include!("../testkit/src/probe.rs");

fn main() {
    println!("cargo::rerun-if-env-changed=PATH");
    println!("cargo::rerun-if-env-changed=CHROMIUM");
    emit_cfg("tmpfs", can_mount);
    emit_cfg("chromium", || chromium().is_some());
}
