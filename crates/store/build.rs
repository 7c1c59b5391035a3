// Marks the tests that need what this machine may lack (see
// crates/testkit/src/probe.rs): cfg neardup_tmpfs where a tmpfs can be
// mounted, else they are reported as ignored.
include!("../testkit/src/probe.rs");

fn main() {
    emit_cfg("tmpfs", can_mount);
}
