//! `neardup`, the command-line tool, as a library: `src/main.rs` calls
//! [`run`]. Only [`input`] (the document readers) and [`args`] (the flags
//! they take) are public, for the fuzz targets (`fuzz/`); nothing here is
//! a stable API.

pub mod args;
mod cmd;
mod datadir;
mod fplist;
pub mod input;
mod output;
mod progress;

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
            out.push_str(": ");
            out.push_str(&text);
        }
    }
    out
}

/// Parses the command line, runs the command, prints any error and
/// returns the exit code (0 ok, 1 input errors, 2 usage or configuration).
pub fn run() -> ExitCode {
    let cli = Cli::parse();
    if let Some(j) = cli.threads {
        if let Err(e) = rayon::ThreadPoolBuilder::new().num_threads(j).build_global() {
            eprintln!("neardup: cannot start {j} threads: {e}");
            return ExitCode::from(2);
        }
    }
    let result = match cli.command {
        Command::Fingerprint(a) => cmd::fingerprint::run(a),
        Command::Compare(a) => cmd::compare::run(a),
        Command::Config(a) => cmd::config::run(a),
        Command::Idf(a) => cmd::idf::run(a),
        Command::Dedup(a) => cmd::dedup::run(a),
        Command::Pairs(a) => cmd::pairs::run(a),
        Command::Index(a) => cmd::index::run(a),
        Command::Eval(a) => cmd::eval::run(a),
        Command::Report(a) => cmd::report::run(a),
        Command::Serve(a) => cmd::serve::run(a),
    };
    match result {
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
            eprintln!("neardup: {}", message_of(&e));
            if e.downcast_ref::<UsageError>().is_some() {
                ExitCode::from(2)
            } else {
                ExitCode::from(1)
            }
        }
    }
}
