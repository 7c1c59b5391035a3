//! `neardup config`: show presets, check files.

use std::process::ExitCode;

use anyhow::Result;
use neardup::detector::Detector;
use neardup::minhash::MinHasher;
use neardup::presets;

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
                match Detector::new(c.clone()).map_err(|e| UsageError(e.to_string()))? {
                    Detector::MinHash(m) => print_lsh(&m),
                    Detector::SimHash(f) => {
                        println!("# near duplicates: {} (the [radius] table; --k overrides it)", f.radius())
                    }
                }
                print!("{}", c.to_toml());
            }
        }
        ConfigCommand::Check { file } => {
            let detector = Detector::from_file(&file).map_err(|e| UsageError(e.to_string()))?;
            let c = detector.config();
            let same: Vec<&str> = presets::NAMES
                .iter()
                .chain(&presets::MINHASH_NAMES)
                .copied()
                .filter(|n| presets::config(n).is_ok_and(|p| p.same_fingerprints(c)))
                .collect();
            let what = match &detector {
                Detector::SimHash(f) => format!("{} bits, hash {}", f.bits(), c.hash.name()),
                Detector::MinHash(m) => format!("MinHash of {} values", m.permutations()),
            };
            println!(
                "{}: ok: format {}, {what}, config id {:016x}, near duplicates at {}{}",
                file.display(),
                c.format_version,
                c.id(),
                detector.rule(),
                if same.is_empty() {
                    String::new()
                } else {
                    format!(" (same as preset {})", same.join(", "))
                }
            );
        }
        ConfigCommand::List => {
            for n in presets::NAMES.iter().chain(&presets::MINHASH_NAMES) {
                println!("{n}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The rule of a MinHash pipeline as comment lines: threshold, banding and
/// the S-curve (the chance that a pair of each similarity becomes a
/// candidate).
fn print_lsh(m: &MinHasher) {
    let b = m.banding();
    let how = match (m.lsh().bands, m.lsh().false_negative_weight) {
        (Some(_), _) => "set in [lsh]".to_string(),
        (None, Some(w)) => {
            format!("chosen for the threshold, a missed pair weighed {w} against a needless candidate")
        }
        (None, None) => "chosen for the threshold".to_string(),
    };
    println!(
        "# near duplicates: estimated Jaccard ≥ {} (the [lsh] table; --threshold overrides it)",
        m.threshold()
    );
    println!(
        "# candidates by LSH: {b} of the {} values ({how}); the S-curve is steepest near {:.2}",
        m.permutations(),
        b.knee()
    );
    println!(
        "#   false-positive mass (area under the S-curve below the threshold) {:.4}, false-negative mass {:.4}",
        b.false_positive_mass(m.threshold()),
        b.false_negative_mass(m.threshold())
    );
    println!("#   similarity   P(candidate)");
    for (s, p) in b.s_curve() {
        println!("#   {s:>10.1}   {p:>12.4}");
    }
}
