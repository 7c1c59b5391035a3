//! `neardup config`: show presets, check files.

use std::process::ExitCode;

use anyhow::Result;
use neardup::{presets, Fingerprinter};

use crate::args::{ConfigArgs, ConfigCommand};
use crate::UsageError;

pub fn run(args: ConfigArgs) -> Result<ExitCode> {
    match args.command {
        ConfigCommand::Show { preset, json } => {
            let c = presets::config(&preset).map_err(|e| UsageError(e.to_string()))?;
            if json {
                println!("{}", serde_json::to_string_pretty(&c)?);
            } else {
                println!("# neardup preset {preset:?}: save this file, edit it, and pass it with --config");
                println!("# near duplicates: {} (the [radius] table; --k overrides it)", c.radius());
                print!("{}", c.to_toml());
            }
        }
        ConfigCommand::Check { file } => {
            let fingerprinter = Fingerprinter::from_file(&file).map_err(|e| UsageError(e.to_string()))?;
            let c = fingerprinter.config();
            let same: Vec<&str> = presets::NAMES
                .iter()
                .copied()
                .filter(|n| presets::config(n).is_ok_and(|p| p.same_fingerprints(c)))
                .collect();
            println!(
                "{}: ok: format {}, {} bits, hash {}, config id {:016x}, near duplicates at {}{}",
                file.display(),
                c.format_version,
                c.bits,
                c.hash.name(),
                c.id(),
                fingerprinter.radius(),
                if same.is_empty() {
                    String::new()
                } else {
                    format!(" (same as preset {})", same.join(", "))
                }
            );
        }
        ConfigCommand::List => {
            for n in presets::NAMES {
                println!("{n}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
