//! A data directory's passage library (`DIR/passages/`): made by `index
//! build --passages INPUTS -o DIR`, added to by `index add DIR --passages
//! INPUTS`. The library itself is `neardup_store::library`; this reads
//! the inputs into it.

use std::path::Path;

use anyhow::Result;
use neardup::passage::{LibraryKeys, PassageConfig};
use neardup_store::library::{LibraryOptions, LibrarySettings, PassageLibrary, LIBRARY_DIR};

use crate::args::{InputArgs, PipelineArgs};
use crate::input::BadRecord;
use crate::records::{batches, ErrorPolicy};
use crate::targets::entries::id_text;

/// The settings of a new library: the pipeline given (SimHash; `default`
/// if none) and the passage configuration.
pub fn settings(pipeline: &PipelineArgs, passages: PassageConfig) -> Result<LibrarySettings> {
    Ok(LibrarySettings {
        keys: LibraryKeys::default(),
        pipeline: pipeline.load()?.config().clone(),
        passages,
    })
}

/// Reads `input` into `lib` (documents too short to key are bad records,
/// unless `--allow-empty`); how many were added. Everything added is on
/// disk when this returns.
pub fn fill(lib: &PassageLibrary, input: &InputArgs) -> Result<u64> {
    let errors = ErrorPolicy::new(input.on_error);
    let pb = crate::progress::bar(|| crate::input::total_bytes(input), "keying passages");
    let mut added = 0u64;
    let total = batches(input, &errors, &pb, |batch| {
        let mut docs = Vec::with_capacity(batch.len());
        for r in batch.drain(..) {
            if let Some(why) = lib.too_short(&r.text).filter(|_| !input.allow_empty) {
                errors.bad(&BadRecord {
                    rest_lost: false,
                    origin: r.origin.clone(),
                    message: format!("{why}: pass --allow-empty to keep it"),
                })?;
                continue;
            }
            docs.push((id_text(&r.id), r.text));
        }
        added += docs.len() as u64;
        lib.add(&docs)?;
        Ok(())
    })?;
    lib.flush()?;
    pb.finish_and_clear();
    errors.summary(total);
    Ok(added)
}

/// `index build --passages INPUTS -o DIR`: a new library for `dir`, built
/// beside it and renamed into place (the old one, if any, replaced only
/// when the new one is complete).
pub fn build(dir: &Path, input: &InputArgs, settings: LibrarySettings) -> Result<u64> {
    let building = dir.join(".passages.building");
    let _ = std::fs::remove_dir_all(&building);
    std::fs::create_dir_all(&building)?;
    let made = (|| -> Result<u64> {
        let lib = PassageLibrary::open(&building, Some(settings), LibraryOptions::default())?;
        let n = fill(&lib, input)?;
        drop(lib);
        Ok(n)
    })();
    let n = match made {
        Ok(n) => n,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&building);
            return Err(e);
        }
    };
    let target = dir.join(LIBRARY_DIR);
    let old = dir.join(".passages.old");
    let _ = std::fs::remove_dir_all(&old);
    if target.exists() {
        std::fs::rename(&target, &old)?;
    }
    std::fs::rename(building.join(LIBRARY_DIR), &target)?;
    let _ = std::fs::remove_dir_all(&building);
    let _ = std::fs::remove_dir_all(&old);
    // Windows of neardup 0.x give way to the library.
    for f in [neardup_store::passages::PASSAGES_FILE, neardup_store::passages::TEXTS_FILE] {
        let _ = std::fs::remove_file(dir.join(f));
    }
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(n)
}

/// `index add DIR --passages INPUTS`: the documents added to the library
/// of `dir` (made with `pipeline` if it has none).
pub fn add(dir: &Path, input: &InputArgs, pipeline: &PipelineArgs, passages: PassageConfig) -> Result<u64> {
    let given = if PassageLibrary::exists(dir) { None } else { Some(settings(pipeline, passages)?) };
    let lib = PassageLibrary::open(dir, given, LibraryOptions::default())?;
    fill(&lib, input)
}
