//! A real filesystem that fills up: a small tmpfs mounted for a test
//! (needs root; [`Tmpfs::mount`] skips with a note elsewhere, and fails
//! where `NEARDUP_REQUIRE_TMPFS` is set, as in CI).

use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs mounted on a directory the test gives; unmounted on drop.
#[derive(Debug)]
pub struct Tmpfs {
    dir: PathBuf,
}

impl Tmpfs {
    /// Mounts a tmpfs of `size` (as `mount -o size=` takes it: `3m`) on
    /// `dir` (an empty directory); `None`, after a note on stderr, where
    /// this cannot be done (not root).
    ///
    /// # Panics
    /// When it cannot and `NEARDUP_REQUIRE_TMPFS` is set.
    pub fn mount(dir: &Path, size: &str) -> Option<Tmpfs> {
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            return Some(Tmpfs { dir: dir.to_path_buf() });
        }
        assert!(
            std::env::var_os("NEARDUP_REQUIRE_TMPFS").is_none(),
            "NEARDUP_REQUIRE_TMPFS is set but a tmpfs could not be mounted on {} (run as root)",
            dir.display()
        );
        eprintln!("skipped: cannot mount a tmpfs here (needs root); CI runs this test");
        None
    }

    /// Where it is mounted.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Grows (or shrinks) it while mounted, as an operator freeing space.
    ///
    /// # Panics
    /// When `mount -o remount` fails.
    pub fn resize(&self, size: &str) {
        let status =
            Command::new("mount").args(["-o", &format!("remount,size={size}")]).arg(&self.dir).status();
        assert!(status.is_ok_and(|s| s.success()), "remount {} at {size}", self.dir.display());
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        // Lazily where something still holds a file there (a server task
        // that outlives the test's body): detached now, freed when closed.
        let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
    }
}
