//! Progress bars on a terminal, silence in pipes.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

/// A progress bar over input bytes, shown only when stderr is a terminal;
/// `total_bytes` (which walks the inputs) is called only then.
pub fn bar(total_bytes: impl FnOnce() -> Option<u64>, what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = match total_bytes() {
        Some(n) => ProgressBar::new(n).with_style(
            ProgressStyle::with_template(
                "{msg} [{bar:30}] {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}",
            )
            .expect("valid template")
            .progress_chars("=> "),
        ),
        None => ProgressBar::new_spinner().with_style(
            ProgressStyle::with_template("{spinner} {msg} {bytes} {binary_bytes_per_sec}")
                .expect("valid template"),
        ),
    };
    pb.set_message(what.to_owned());
    pb
}

/// A spinner naming a stage, shown only when stderr is a terminal.
pub fn stage(what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new_spinner()
        .with_style(ProgressStyle::with_template("{spinner} {msg} {elapsed}").expect("valid template"));
    pb.set_message(what.to_owned());
    pb.enable_steady_tick(std::time::Duration::from_millis(120));
    pb
}

/// A progress bar over `n` items, with an ETA, shown only when stderr is
/// a terminal.
pub fn count_bar(n: u64, what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(n).with_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {human_pos}/{human_len} {per_sec} eta {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb.set_message(what.to_owned());
    pb
}
