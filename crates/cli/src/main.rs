//! `neardup`: find near-duplicate texts with SimHash or MinHash.

fn main() -> std::process::ExitCode {
    neardup_cli::run()
}
