//! A real filesystem that fills up: a small tmpfs mounted for a test.
//! It needs the right to mount (root): the tests that use it carry
//! `#[cfg_attr(not(neardup_tmpfs), ignore = …)]`, so elsewhere they are
//! reported as ignored (the cfg comes from each such crate's build.rs).

use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs mounted on a directory the test gives; unmounted on drop.
#[derive(Debug)]
pub struct Tmpfs {
    dir: PathBuf,
}

impl Tmpfs {
    /// Mounts a tmpfs of `size` (as `mount -o size=` takes it: `3m`) on
    /// `dir` (an empty directory).
    ///
    /// # Panics
    /// When it cannot: the test was built to run here (cfg `neardup_tmpfs`:
    /// this process may mount, or `NEARDUP_REQUIRE_TMPFS` is set).
    pub fn mount(dir: &Path, size: &str) -> Tmpfs {
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .status();
        assert!(
            status.as_ref().is_ok_and(|s| s.success()),
            "cannot mount a tmpfs on {} ({status:?}): the tmpfs tests need root; \
             they were built to run here (NEARDUP_REQUIRE_TMPFS, or this build could mount)",
            dir.display()
        );
        Tmpfs { dir: dir.to_path_buf() }
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
