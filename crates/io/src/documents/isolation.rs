//! Documents read in child processes, so that no file can take the
//! reading program down.
//!
//! A hostile PDF can overflow a reader's stack (a drawing that draws
//! itself), inflate a few megabytes into gigabytes, or spin: in a server,
//! any of these takes every client with it, and a thread cannot be
//! stopped. So a program that reads files from strangers (the `neardup`
//! binary: `serve`, and the CLI's folders of documents) [`install`]s an
//! [`Isolation`]: from then on [`super::extract`] sends each document to
//! a child process, a re-run of the program itself that only reads
//! documents ([`serve_requests`]), and
//!
//! - the child reads under rlimits it sets before each document: its
//!   address space (its size then plus [`memory_allowance`]: room for the
//!   file, its parse and its inflated streams), CPU time (the time left to
//!   the deadline, plus a second), no files written, no core dumps,
//!   and at a lower CPU priority than the parent (nice 10: a server's
//!   searches go first while a document is read);
//! - the parent reads the child's answer up to the text limit and kills
//!   the child (`SIGKILL`) at the deadline or past that size, so the
//!   caller gets its answer at the deadline and the work stops with it;
//! - a child that dies (out of memory, a crash) is a document that cannot
//!   be read ([`Unreadable::ReaderDied`]), like any other;
//! - children are kept for the next document (a small pool: starting one
//!   costs a few milliseconds), and retired after [`REUSES`] documents,
//!   any failure, or a document that left them holding over
//!   [`RETIRE_RESIDENT`] bytes (a reader that parsed a deep HTML file
//!   keeps 200–400 MB it no longer needs).
//!
//! The protocol is private to one binary (the parent runs its own
//! executable as the child): a request is `NDR1`, the kind, the text limit,
//! the time limit, the memory allowance and the file; the answer is a tag
//! and the text or the [`Unreadable`]'s fields. Without an isolation
//! (library users, Python, the fuzz targets) documents are read in the
//! calling process, a reader's panic still caught.

use std::borrow::Cow;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::{DocumentKind, Limits, Unreadable};

/// A child reads at most this many documents before it is replaced
/// (memory a long-lived reader fragments is given back).
pub const REUSES: u32 = 64;

/// A child resident in more memory than this after a document is replaced
/// rather than kept: idle readers hold little, whatever they read.
pub const RETIRE_RESIDENT: u64 = 128 << 20;

/// How much nicer than their parent readers run (`nice`): a service's
/// own requests come first while a document is read, which still gets a
/// share of a busy CPU (about a tenth against one busy thread).
const READER_NICE: libc::c_int = 10;

/// What a request starts with.
const MAGIC: &[u8; 4] = b"NDR1";

/// The one isolation of this process, once installed.
static INSTALLED: OnceLock<Isolation> = OnceLock::new();

/// Reading documents in child processes: the program to run as the
/// child (with its arguments), and the children kept between documents.
#[derive(Debug)]
pub struct Isolation {
    program: PathBuf,
    args: Vec<OsString>,
    idle: Mutex<Vec<Worker>>,
    keep: usize,
}

/// Makes every later [`super::extract`] in this process read in a child:
/// `program args…` must run [`serve_requests`] (the `neardup` binary: its
/// own path and a hidden argument). The first call wins; later ones are
/// ignored.
pub fn install(program: PathBuf, args: Vec<OsString>) {
    let _ = INSTALLED.set(Isolation::new(program, args));
}

/// The isolation installed in this process, if any.
pub fn installed() -> Option<&'static Isolation> {
    INSTALLED.get()
}

/// The memory a child may use for one document beyond what it holds
/// already: 256 MiB, plus 8 times the file (its parse), plus 3 times the
/// inflation limit (inflated streams and their parse).
pub fn memory_allowance(file_bytes: usize, limits: &Limits) -> u64 {
    (256u64 << 20)
        .saturating_add((file_bytes as u64).saturating_mul(8))
        .saturating_add(limits.inflation().saturating_mul(3))
}

impl Isolation {
    /// Children running `program args…`, which must run
    /// [`serve_requests`]; as many kept idle as there are CPUs (at least
    /// 2).
    pub fn new(program: PathBuf, args: Vec<OsString>) -> Isolation {
        let keep = std::thread::available_parallelism().map_or(2, |n| n.get()).max(2);
        Isolation { program, args, idle: Mutex::new(Vec::new()), keep }
    }

    /// The text of one document, read by a child within `limits` (see the
    /// module's description).
    ///
    /// # Errors
    ///
    /// [`Unreadable`] saying why there is no text, including a child that
    /// died on it or could not be started.
    pub fn extract(&self, kind: DocumentKind, bytes: &[u8], limits: &Limits) -> Result<String, Unreadable> {
        let memory = memory_allowance(bytes.len(), limits);
        let reused = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let mut worker = match reused {
            Some(w) => w,
            None => self.spawn()?,
        };
        let answer = worker.read(kind, bytes, limits, memory);
        if answer.reusable && worker.served < REUSES && !worker.grew() {
            let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
            if idle.len() < self.keep {
                idle.push(worker);
            }
        }
        answer.result
    }

    fn spawn(&self) -> Result<Worker, Unreadable> {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(|e| Unreadable::ReaderDied {
            how: format!("could not start the reader {} ({e})", self.program.display()),
        })?;
        let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
        match (stdin, stdout, stderr) {
            (Some(stdin), Some(stdout), Some(stderr)) => {
                Ok(Worker { child, stdin, stdout, stderr, served: 0 })
            }
            _ => Err(Unreadable::ReaderDied { how: "could not talk to the reader".into() }),
        }
    }
}

/// One child reader and its pipes.
#[derive(Debug)]
struct Worker {
    child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
    stderr: ChildStderr,
    served: u32,
}

/// A child's answer, and whether it may read again.
struct Answer {
    result: Result<String, Unreadable>,
    reusable: bool,
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Worker {
    /// Whether this child holds over [`RETIRE_RESIDENT`] bytes now.
    fn grew(&self) -> bool {
        resident_bytes(self.child.id()).is_some_and(|b| b > RETIRE_RESIDENT)
    }

    fn read(&mut self, kind: DocumentKind, bytes: &[u8], limits: &Limits, memory: u64) -> Answer {
        self.served += 1;
        let timeout_ms = limits
            .deadline
            .map_or(u64::MAX, |d| d.saturating_duration_since(Instant::now()).as_millis() as u64);
        let mut head = Vec::with_capacity(37);
        head.extend_from_slice(MAGIC);
        head.push(kind_code(kind));
        for v in [limits.max_text_bytes, timeout_ms, memory, bytes.len() as u64] {
            head.extend_from_slice(&v.to_le_bytes());
        }
        // The child reads its whole request before it reads the document,
        // so these writes end; a child that died makes them fail.
        let sent = self
            .stdin
            .write_all(&head)
            .and_then(|_| self.stdin.write_all(bytes))
            .and_then(|_| self.stdin.flush());
        // The answer: at most the text limit, plus room for a message.
        let cap = limits.max_text_bytes.saturating_add(1 << 16);
        let got = match sent {
            Ok(()) => unix::read_answer(&mut self.stdout, &mut self.stderr, limits.deadline, cap),
            Err(_) => Got::Closed(Vec::new()),
        };
        match got {
            Got::Answer(frame) => match decode(&frame) {
                Some(result) => Answer { result, reusable: true },
                None => self.dead("gave a garbled answer".into()),
            },
            Got::Late => {
                let _ = self.child.kill();
                let _ = self.child.wait();
                Answer { result: Err(Unreadable::TimedOut), reusable: false }
            }
            Got::TooMuch => {
                let _ = self.child.kill();
                let _ = self.child.wait();
                let limit = limits.max_text_bytes;
                Answer {
                    result: Err(Unreadable::TooLarge { what: "its text".into(), limit }),
                    reusable: false,
                }
            }
            Got::Closed(stderr) => {
                // Its output closed; a child that lives on regardless is
                // stopped here.
                let status = match settled(&mut self.child) {
                    Some(status) => status,
                    _ => {
                        let _ = self.child.kill();
                        return self.dead("closed its answer without giving one".into());
                    }
                };
                let how = died_how(Some(status), &String::from_utf8_lossy(&stderr), memory);
                match how {
                    None => Answer { result: Err(Unreadable::TimedOut), reusable: false },
                    Some(how) => self.dead(how),
                }
            }
        }
    }

    fn dead(&mut self, how: String) -> Answer {
        let _ = self.child.kill();
        let _ = self.child.wait();
        Answer { result: Err(Unreadable::ReaderDied { how }), reusable: false }
    }
}

/// A child's status once it has ended, waiting a little for one whose
/// pipes have closed as it exits (`None`: it lives on).
fn settled(child: &mut Child) -> Option<ExitStatus> {
    for _ in 0..50 {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) => std::thread::sleep(Duration::from_millis(4)),
            Err(_) => return None,
        }
    }
    None
}

/// What ended a child, in words (`None`: its CPU limit, which is the
/// deadline's).
fn died_how(status: Option<ExitStatus>, stderr: &str, memory: u64) -> Option<String> {
    let limit = crate::units(memory);
    if stderr.contains("memory allocation of") || stderr.contains("capacity overflow") {
        return Some(format!("needed more than the reader's memory limit ({limit} for this file)"));
    }
    if stderr.contains("overflowed its stack") {
        return Some("nested deeper than the reader's stack".into());
    }
    match status.and_then(|s| unix::signal(&s)) {
        Some(unix::SIGXCPU) => None,
        Some(sig) => Some(format!("crashed the reader (signal {sig}; its memory limit was {limit})")),
        None => {
            Some(format!("stopped the reader ({})", status.map_or("no status".into(), |s| s.to_string())))
        }
    }
}

fn kind_code(kind: DocumentKind) -> u8 {
    match kind {
        DocumentKind::Docx => 0,
        DocumentKind::Pdf => 1,
        DocumentKind::Html => 2,
        DocumentKind::Markdown => 3,
    }
}

fn kind_of(code: u8) -> Option<DocumentKind> {
    Some(match code {
        0 => DocumentKind::Docx,
        1 => DocumentKind::Pdf,
        2 => DocumentKind::Html,
        3 => DocumentKind::Markdown,
        _ => return None,
    })
}

/// What the parent got from a child.
enum Got {
    /// A whole answer frame.
    Answer(Vec<u8>),
    /// The deadline passed first.
    Late,
    /// More than the text limit.
    TooMuch,
    /// The child closed its output (died): what it said on stderr.
    Closed(Vec<u8>),
}

/// An answer frame: the tag, then its fields (`u64` little-endian, strings
/// as a `u64` length and UTF-8 bytes).
fn encode(result: &Result<String, Unreadable>) -> Vec<u8> {
    let mut out = Vec::new();
    let s = |out: &mut Vec<u8>, s: &str| {
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    };
    let n = |out: &mut Vec<u8>, v: u64| out.extend_from_slice(&v.to_le_bytes());
    match result {
        Ok(text) => {
            out.push(0);
            s(&mut out, text);
        }
        Err(Unreadable::NotA { expected, found }) => {
            out.push(1);
            s(&mut out, expected);
            s(&mut out, found);
        }
        Err(Unreadable::Damaged(m)) => {
            out.push(2);
            s(&mut out, m);
        }
        Err(Unreadable::NoTextLayer { pages }) => {
            out.push(3);
            n(&mut out, *pages as u64);
        }
        Err(Unreadable::TooLarge { what, limit }) => {
            out.push(4);
            s(&mut out, what);
            n(&mut out, *limit);
        }
        Err(Unreadable::Bomb { what, limit }) => {
            out.push(5);
            s(&mut out, what);
            n(&mut out, *limit);
        }
        Err(Unreadable::Unsupported(what)) => {
            out.push(6);
            s(&mut out, what);
        }
        Err(Unreadable::TimedOut) => out.push(7),
        Err(Unreadable::ReaderDied { how }) => {
            out.push(8);
            s(&mut out, how);
        }
    }
    let mut frame = (out.len() as u64).to_le_bytes().to_vec();
    frame.extend_from_slice(&out);
    frame
}

/// A frame's body back as the result (`None`: garbled).
fn decode(body: &[u8]) -> Option<Result<String, Unreadable>> {
    struct Cursor<'a>(&'a [u8]);
    impl Cursor<'_> {
        fn n(&mut self) -> Option<u64> {
            let (h, t) = self.0.split_first_chunk::<8>()?;
            self.0 = t;
            Some(u64::from_le_bytes(*h))
        }
        fn s(&mut self) -> Option<String> {
            let len = usize::try_from(self.n()?).ok()?;
            if len > self.0.len() {
                return None;
            }
            let (h, t) = self.0.split_at(len);
            self.0 = t;
            String::from_utf8(h.to_vec()).ok()
        }
        fn cow(&mut self) -> Option<Cow<'static, str>> {
            self.s().map(Cow::Owned)
        }
    }
    let (&tag, rest) = body.split_first()?;
    let mut c = Cursor(rest);
    Some(match tag {
        0 => Ok(c.s()?),
        1 => Err(Unreadable::NotA { expected: c.cow()?, found: c.s()? }),
        2 => Err(Unreadable::Damaged(c.s()?)),
        3 => Err(Unreadable::NoTextLayer { pages: usize::try_from(c.n()?).ok()? }),
        4 => Err(Unreadable::TooLarge { what: c.cow()?, limit: c.n()? }),
        5 => Err(Unreadable::Bomb { what: c.cow()?, limit: c.n()? }),
        6 => Err(Unreadable::Unsupported(c.cow()?)),
        7 => Err(Unreadable::TimedOut),
        8 => Err(Unreadable::ReaderDied { how: c.s()? }),
        _ => return None,
    })
}

/// The child's side: reads requests from standard input and answers each
/// on standard output, until standard input closes. What the hidden
/// argument of the `neardup` binary runs; returns when the parent is gone.
///
/// # Errors
///
/// A request that is not one (someone ran the hidden argument by hand).
pub fn serve_requests() -> std::io::Result<()> {
    unix::forbid_files_and_cores();
    let mut input = std::io::stdin().lock();
    // Answers go to the pipe the parent reads; anything a library prints
    // goes to stderr, not into an answer.
    let mut output = unix::private_stdout()?;
    loop {
        let mut head = [0u8; 37];
        match input.read_exact(&mut head) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e),
        }
        let field = |i: usize| u64::from_le_bytes(head[5 + 8 * i..13 + 8 * i].try_into().expect("8 bytes"));
        let bad = || std::io::Error::new(std::io::ErrorKind::InvalidData, "not a neardup reader request");
        if &head[..4] != MAGIC {
            return Err(bad());
        }
        let kind = kind_of(head[4]).ok_or_else(bad)?;
        let (max_text, timeout_ms, memory, len) = (field(0), field(1), field(2), field(3));
        let mut bytes = vec![0u8; usize::try_from(len).map_err(|_| bad())?];
        input.read_exact(&mut bytes)?;
        let timeout = (timeout_ms != u64::MAX).then(|| Duration::from_millis(timeout_ms));
        unix::arm(memory, timeout);
        let limits = Limits { max_text_bytes: max_text, deadline: timeout.map(|t| Instant::now() + t) };
        let result = super::extract_here(kind, &bytes, &limits);
        drop(bytes);
        output.write_all(&encode(&result))?;
        output.flush()?;
    }
}

/// The Unix calls: rlimits, polling the child's pipes.
mod unix {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    use std::os::unix::process::ExitStatusExt;
    use std::process::{ChildStderr, ChildStdout, ExitStatus};
    use std::time::{Duration, Instant};

    use super::Got;

    pub(super) const SIGXCPU: i32 = libc::SIGXCPU;

    /// This process (a child reader, before it reads anything) writes no
    /// files, dumps no core, and runs below its parent's requests on a
    /// busy CPU (searches answer while uploads are read; still a share of
    /// it). Set by the child itself rather than between fork and exec, so
    /// that the parent starts it with `posix_spawn`: a fork of a large,
    /// busy server copies its page tables and stalls its threads (the
    /// p99 of its searches doubled while bombs' readers were replaced).
    pub(super) fn forbid_files_and_cores() {
        let zero = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: plain calls on this process's own limits and priority.
        unsafe {
            libc::setrlimit(libc::RLIMIT_FSIZE, &zero);
            libc::setrlimit(libc::RLIMIT_CORE, &zero);
            libc::setpriority(libc::PRIO_PROCESS, 0, super::READER_NICE);
        }
    }

    /// Standard output moved to a private descriptor, and standard output
    /// itself pointed at standard error.
    pub(super) fn private_stdout() -> std::io::Result<std::fs::File> {
        use std::os::fd::FromRawFd;
        // SAFETY: dup and dup2 on the process's own standard descriptors;
        // the new descriptor is owned by the File alone.
        unsafe {
            let fd = libc::dup(1);
            if fd < 0 || libc::dup2(2, 1) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(std::fs::File::from_raw_fd(fd))
        }
    }

    /// The signal that ended a process, if one did.
    pub(super) fn signal(status: &ExitStatus) -> Option<i32> {
        status.signal()
    }

    /// In the child, before a document: its address space may grow by
    /// `memory` from its size now, its CPU time by the time left plus a
    /// second (none: no limit).
    pub(super) fn arm(memory: u64, timeout: Option<Duration>) {
        let now = std::fs::read_to_string("/proc/self/statm")
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
            .map_or(0, |pages| pages * 4096);
        set_soft(libc::RLIMIT_AS, now.saturating_add(memory));
        let cpu = timeout.map_or(libc::RLIM_INFINITY, |t| used_cpu_secs() + t.as_secs() + 2);
        set_soft(libc::RLIMIT_CPU, cpu);
    }

    fn set_soft(resource: libc::__rlimit_resource_t, value: u64) {
        let mut r = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: plain calls with a valid pointer to a local.
        unsafe {
            if libc::getrlimit(resource, &mut r) == 0 {
                r.rlim_cur = value.min(r.rlim_max);
                libc::setrlimit(resource, &r);
            }
        }
    }

    fn used_cpu_secs() -> u64 {
        // SAFETY: rusage is plain integers, for which zero is valid.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: getrusage fills the struct it is given.
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
        (u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1).max(0) as u64
    }

    /// The answer once `frame` holds all of it (a `u64` length, then that
    /// many bytes); [`Got::TooMuch`] as soon as the length is over `cap`.
    fn complete(frame: &mut Vec<u8>, cap: u64) -> Option<Got> {
        let want = u64::from_le_bytes(frame.get(..8)?.try_into().expect("8 bytes"));
        if want > cap {
            return Some(Got::TooMuch);
        }
        if ((frame.len() - 8) as u64) < want {
            return None;
        }
        frame.drain(..8);
        Some(Got::Answer(std::mem::take(frame)))
    }

    /// Reads one answer frame from `out` (a `u64` length, then the body),
    /// draining `err` meanwhile, until `deadline`; more than `cap` bytes is
    /// [`Got::TooMuch`].
    pub(super) fn read_answer(
        out: &mut ChildStdout,
        err: &mut ChildStderr,
        deadline: Option<Instant>,
        cap: u64,
    ) -> Got {
        let mut frame = Vec::new();
        let mut said = Vec::new();
        let mut buf = vec![0u8; 1 << 16];
        let mut err_open = true;
        // Once the answer's pipe closes, how long stderr may take to close
        // too (the child dying) before it is given up on.
        let mut closed_by: Option<Instant> = None;
        loop {
            if let Some(by) = closed_by {
                if !err_open || Instant::now() >= by {
                    return Got::Closed(said);
                }
            }
            if let Some(got) = complete(&mut frame, cap) {
                return got;
            }
            let until = match (deadline, closed_by) {
                (Some(d), Some(c)) => Some(d.min(c)),
                (d, c) => d.or(c),
            };
            let wait_ms = match until {
                None => -1,
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return if closed_by.is_some() { Got::Closed(said) } else { Got::Late };
                    }
                    left.as_millis().min(i32::MAX as u128) as i32 + 1
                }
            };
            let out_fd = if closed_by.is_none() { out.as_raw_fd() } else { -1 };
            let mut fds = [
                libc::pollfd { fd: out_fd, events: libc::POLLIN, revents: 0 },
                libc::pollfd {
                    fd: if err_open { err.as_raw_fd() } else { -1 },
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            // SAFETY: two valid pollfds.
            let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, wait_ms) };
            if n < 0 {
                if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Got::Closed(said);
            }
            if fds[1].revents != 0 {
                match err.read(&mut buf) {
                    Ok(0) | Err(_) => err_open = false,
                    Ok(k) => {
                        if said.len() < 1 << 16 {
                            said.extend_from_slice(&buf[..k]);
                        }
                    }
                }
            }
            if fds[0].revents != 0 {
                match out.read(&mut buf) {
                    Ok(0) | Err(_) => {
                        // Dying, most likely: what it says last, briefly.
                        closed_by = Some(Instant::now() + Duration::from_secs(1));
                    }
                    Ok(k) => frame.extend_from_slice(&buf[..k]),
                }
            }
        }
    }
}

/// The resident memory of process `pid`, in bytes (Linux: `/proc`;
/// `None` where it cannot be told).
fn resident_bytes(pid: u32) -> Option<u64> {
    let statm = std::fs::read_to_string(format!("/proc/{pid}/statm")).ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf only reads a constant of the system.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages.saturating_mul(u64::try_from(page).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_os = "linux")]
    fn resident_memory_is_read_and_grows_with_what_is_touched() {
        let before = resident_bytes(std::process::id()).expect("this process's /proc/self/statm");
        let touched = vec![1u8; 64 << 20];
        let after = resident_bytes(std::process::id()).unwrap();
        assert!(before > 0 && after >= before + (48 << 20), "{before} then {after}");
        assert_eq!(touched.iter().map(|&b| b as u64).sum::<u64>(), 64 << 20);
        assert_eq!(resident_bytes(u32::MAX), None);
    }

    #[test]
    fn every_answer_round_trips() {
        let all = [
            Ok("text, 中文".to_owned()),
            Err(Unreadable::NotA { expected: "a PDF".into(), found: "it is a program".into() }),
            Err(Unreadable::Damaged("damaged".into())),
            Err(Unreadable::NoTextLayer { pages: 3 }),
            Err(Unreadable::TooLarge { what: "its text".into(), limit: 7 }),
            Err(Unreadable::Bomb { what: "a stream".into(), limit: 9 }),
            Err(Unreadable::Unsupported("a PDF".into())),
            Err(Unreadable::TimedOut),
            Err(Unreadable::ReaderDied { how: "crashed".into() }),
        ];
        for r in all {
            let frame = encode(&r);
            assert_eq!(u64::from_le_bytes(frame[..8].try_into().unwrap()) as usize, frame.len() - 8);
            assert_eq!(decode(&frame[8..]), Some(r));
        }
        assert_eq!(decode(&[42]), None);
        assert_eq!(decode(&[0, 200, 0, 0, 0, 0, 0, 0, 0]), None);
    }

    /// A child that is `sh -c script`.
    fn shell(script: &str) -> Isolation {
        Isolation::new("/bin/sh".into(), vec!["-c".into(), script.into()])
    }

    fn html() -> &'static [u8] {
        b"<p>x</p>"
    }

    #[test]
    fn a_child_that_never_answers_is_killed_at_the_deadline() {
        let iso = shell("exec sleep 30");
        let start = Instant::now();
        let limits = Limits::default().within(Duration::from_millis(300));
        assert_eq!(iso.extract(DocumentKind::Html, html(), &limits), Err(Unreadable::TimedOut));
        let took = start.elapsed();
        assert!(took >= Duration::from_millis(300) && took < Duration::from_secs(3), "{took:?}");
        assert!(iso.idle.lock().unwrap().is_empty(), "a killed child is not kept");
    }

    #[test]
    fn a_child_that_dies_is_a_document_that_cannot_be_read() {
        let iso = shell(
            "head -c 45 >/dev/null; echo 'memory allocation of 8589934592 bytes failed' >&2; kill -ABRT $$",
        );
        let e = iso.extract(DocumentKind::Html, html(), &Limits::default()).unwrap_err();
        assert!(matches!(&e, Unreadable::ReaderDied { how } if how.contains("memory limit")), "{e}");
        let iso = shell("head -c 45 >/dev/null; kill -SEGV $$");
        let e = iso.extract(DocumentKind::Html, html(), &Limits::default()).unwrap_err().to_string();
        assert!(e.contains("crashed the reader (signal 11"), "{e}");
        let iso = shell("head -c 45 >/dev/null; printf '\\001\\000\\000\\000\\000\\000\\000\\000\\377'");
        let e = iso.extract(DocumentKind::Html, html(), &Limits::default()).unwrap_err().to_string();
        assert!(e.starts_with("reading it "), "{e}");
        let iso = Isolation::new("/nonexistent/neardup".into(), Vec::new());
        let e = iso.extract(DocumentKind::Html, html(), &Limits::default()).unwrap_err().to_string();
        assert!(e.contains("could not start the reader /nonexistent/neardup"), "{e}");
    }

    #[test]
    fn a_child_that_closes_its_answer_but_lives_is_stopped() {
        let iso = shell("exec 1>&-; exec sleep 30");
        let start = Instant::now();
        let e = iso.extract(DocumentKind::Html, html(), &Limits::default()).unwrap_err().to_string();
        assert!(e.contains("closed its answer without giving one"), "{e}");
        assert!(start.elapsed() < Duration::from_secs(5), "{:?}", start.elapsed());
    }

    #[test]
    fn a_child_that_says_too_much_is_stopped_at_the_text_limit() {
        // An answer frame claiming 1 GiB of text, against a 1 KiB limit.
        let iso = shell("head -c 45 >/dev/null; printf '\\000\\000\\000\\100\\000\\000\\000\\000'; sleep 5");
        let limits = Limits { max_text_bytes: 1024, deadline: None };
        let e = iso.extract(DocumentKind::Html, html(), &limits).unwrap_err();
        assert_eq!(e, Unreadable::TooLarge { what: "its text".into(), limit: 1024 });
    }

    #[test]
    fn a_death_is_told_by_its_cause() {
        let m = died_how(None, "memory allocation of 4294967296 bytes failed\n", 512 << 20).unwrap();
        assert!(m.contains("memory limit (512 MiB"), "{m}");
        let m = died_how(None, "thread 'main' has overflowed its stack\n", 1 << 30).unwrap();
        assert!(m.contains("stack"), "{m}");
    }
}
