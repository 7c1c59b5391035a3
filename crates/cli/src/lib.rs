//! `neardup`, the command-line tool, as a library: `src/main.rs` calls
//! [`run`]. Only [`input`] (the document readers) and [`args`] (the flags
//! they take) are public, for the fuzz targets (`fuzz/`); nothing here is
//! a stable API.

/// `eprintln!` that never panics: a message to a closed stderr (`2>&1 |
/// head` after head has quit) is dropped, as ripgrep does, instead of
/// aborting the command with a panic.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub mod args;
mod cleaning;
mod cmd;
mod datadir;
mod fplist;
pub mod input;
mod kept;
mod machine;
mod output;
mod plot;
mod progress;
mod records;
mod targets;

use std::process::ExitCode;

use clap::Parser;

use crate::args::{Cli, Command};

/// An error in how neardup was called (flags, configuration): exit code 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Input records failed and `--on-error fail` stopped the run: exit code 1.
/// The message has been printed already.
#[derive(Debug)]
pub struct InputFailed;

impl std::fmt::Display for InputFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("input error")
    }
}

impl std::error::Error for InputFailed {}

/// An error and its causes, `: `-joined as `{:#}` does, leaving out a
/// cause the message already says (an I/O error a library quoted).
fn message_of(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.is_empty() {
            out = text;
        } else if !out.contains(&text) {
            // "cannot open the index a.ndx" + "a.ndx: checksum mismatch"
            // reads "cannot open the index a.ndx: checksum mismatch".
            let text = match text.split_once(": ") {
                Some((subject, rest)) if out.ends_with(subject) => rest,
                _ => &text,
            };
            out.push_str(": ");
            out.push_str(text);
        }
    }
    out
}

/// The hidden first argument that makes this binary a document reader
/// for its parent (see `neardup_io::documents::isolation`).
pub const READER: &str = "__read-documents";

/// Set to `off`, documents are read in the process itself (debugging a
/// reader); otherwise each is read by a child process of this binary.
pub const ISOLATION_ENV: &str = "NEARDUP_ISOLATION";

/// From here on, documents (.docx, .pdf, .html, .md) are read in child
/// processes of this binary, under memory, CPU and time limits: no file
/// can crash or exhaust `neardup serve` or a CLI run.
fn isolate_readers() {
    if std::env::var_os(ISOLATION_ENV).is_some_and(|v| v == "off") {
        return;
    }
    if let Ok(me) = std::env::current_exe() {
        neardup_io::documents::isolation::install(me, vec![READER.into()]);
    }
}

/// The child's side: read documents for the parent until it is gone.
fn read_documents() -> ExitCode {
    match neardup_io::documents::isolation::serve_requests() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            note!("neardup {READER}: {e} (this argument is for neardup itself)");
            ExitCode::from(2)
        }
    }
}

/// Parses the command line, runs the command, prints any error and
/// returns the exit code (0 ok, 1 input errors, 2 usage or configuration).
pub fn run() -> ExitCode {
    if std::env::args_os().nth(1).as_deref() == Some(std::ffi::OsStr::new(READER)) {
        return read_documents();
    }
    let cli = Cli::parse();
    isolate_readers();
    match neardup::simd::from_env() {
        Err(e) => {
            note!("neardup: {e}");
            return ExitCode::from(2);
        }
        Ok(Some(asked)) if !asked.is_supported() => note!(
            "neardup: NEARDUP_SIMD={asked}: this CPU does not support it; using {} (the answers are the same)",
            neardup::simd::detected()
        ),
        Ok(_) => {}
    }
    if let Some(j) = cli.threads {
        if let Err(e) = rayon::ThreadPoolBuilder::new().num_threads(j).build_global() {
            note!("neardup: cannot start {j} threads: {e}");
            return ExitCode::from(2);
        }
    }
    let result = match cli.command {
        Command::Fingerprint(a) => cmd::fingerprint::run(a),
        Command::Compare(a) => cmd::compare::run(a),
        Command::Config(a) => cmd::config::run(a),
        Command::Idf(a) => cmd::idf::run(a),
        Command::Dedup(a) => cmd::dedup::run(a),
        Command::Boilerplate(a) => cmd::boilerplate::run(a),
        Command::Substrings(a) => cmd::substrings::run(a),
        Command::Pairs(a) => cmd::pairs::run(a),
        Command::Index(a) => cmd::index::run(a),
        Command::Eval(a) => cmd::eval::run(a),
        Command::Report(a) => cmd::report::run(a),
        Command::Class(a) => cmd::class::run(a),
        Command::Serve(a) => cmd::serve::run(a),
    };
    match result {
        // A file cut short lost records: the outputs hold what was read,
        // and the exit code says the input was damaged.
        Ok(code) if records::input_cut_short() && code == ExitCode::SUCCESS => ExitCode::from(1),
        Ok(code) => code,
        Err(e) => {
            // Downstream closed the pipe (`neardup … | head`): not an error.
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
                    || c.downcast_ref::<serde_json::Error>()
                        .is_some_and(|j| j.io_error_kind() == Some(std::io::ErrorKind::BrokenPipe))
            }) {
                return ExitCode::SUCCESS;
            }
            if e.downcast_ref::<InputFailed>().is_some() {
                return ExitCode::from(1);
            }
            note!("neardup: {}", message_of(&e));
            if e.downcast_ref::<UsageError>().is_some() {
                ExitCode::from(2)
            } else {
                ExitCode::from(1)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::message_of;
    use anyhow::anyhow;

    #[test]
    fn a_message_names_each_thing_once() {
        let e = anyhow!("a.ndx: checksum mismatch").context("cannot open the index a.ndx");
        assert_eq!(message_of(&e), "cannot open the index a.ndx: checksum mismatch");
        let e = anyhow!("No such file or directory (os error 2)")
            .context("x.txt: No such file or directory (os error 2)");
        assert_eq!(message_of(&e), "x.txt: No such file or directory (os error 2)");
        let e = anyhow!("line 3: bad JSON").context("reading in.jsonl");
        assert_eq!(message_of(&e), "reading in.jsonl: line 3: bad JSON");
    }
}
