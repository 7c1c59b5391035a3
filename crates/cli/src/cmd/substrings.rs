use std::process::ExitCode;
pub fn run(_a: crate::args::SubstringsArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not yet")
}
