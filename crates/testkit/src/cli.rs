//! Running a command-line binary in a temporary directory and checking
//! what it did.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// What a run of the binary did.
pub struct Run {
    /// Its exit status and output.
    pub out: Output,
}

impl Run {
    /// The exit code (panics if it was killed by a signal).
    pub fn code(&self) -> i32 {
        self.out.status.code().expect("exited")
    }

    /// Standard output as UTF-8.
    pub fn stdout(&self) -> String {
        String::from_utf8(self.out.stdout.clone()).expect("UTF-8 stdout")
    }

    /// Standard error as UTF-8.
    pub fn stderr(&self) -> String {
        String::from_utf8(self.out.stderr.clone()).expect("UTF-8 stderr")
    }

    /// Asserts success without a panic message; returns the run.
    pub fn ok(self) -> Run {
        assert_eq!(self.code(), 0, "stderr: {}", self.stderr());
        assert!(!self.stderr().contains("panicked"), "{}", self.stderr());
        self
    }

    /// Asserts exit code `code` with `needle` on stderr and no panic.
    pub fn fails(self, code: i32, needle: &str) -> Run {
        assert_eq!(self.code(), code, "stdout: {}\nstderr: {}", self.stdout(), self.stderr());
        assert!(self.stderr().contains(needle), "expected {needle:?} in stderr: {}", self.stderr());
        assert!(!self.stderr().contains("panicked"), "{}", self.stderr());
        self
    }

    /// Standard output as JSON lines.
    pub fn jsonl(&self) -> Vec<serde_json::Value> {
        self.stdout().lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect()
    }
}

/// Runs `bin` with `args` in `dir`, feeding `stdin` (or none), without
/// `RUST_BACKTRACE` (so error output is what users see).
pub fn run(bin: &Path, args: &[&str], dir: &Path, stdin: Option<&[u8]>) -> Run {
    run_with_env(bin, args, dir, stdin, &[])
}

/// [`run`] with environment variables set.
pub fn run_with_env(
    bin: &Path,
    args: &[&str],
    dir: &Path,
    stdin: Option<&[u8]>,
    env: &[(&str, &str)],
) -> Run {
    let mut cmd = Command::new(bin);
    cmd.args(args).current_dir(dir).stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.envs(env.iter().copied());
    cmd.env_remove("RUST_BACKTRACE");
    cmd.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
    let mut child = cmd.spawn().expect("the binary starts");
    if let Some(data) = stdin {
        child.stdin.take().expect("piped").write_all(data).expect("stdin written");
    }
    Run { out: child.wait_with_output().expect("the binary runs") }
}

/// Writes `data` to `dir/name` (creating folders); returns the path.
pub fn write(dir: &Path, name: &str, data: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().expect("a parent")).expect("folders");
    std::fs::write(&p, data).expect("written");
    p
}
