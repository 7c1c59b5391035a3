//! SimHash batch dedup of N generated 64-bit fingerprints, in memory
//! (`Dedup::batch`) or out of core (`OutOfCore`), for issue 52's 10^9
//! target: seconds, seconds a million records, peak RSS and a checksum of
//! the clusters (equal in both modes for the same N and K).
//!
//! Usage: `cargo run --release -p neardup --example outofcorebench -- N K memory|MEMORY_MB [TMP_DIR]`
//! or `… -- N K list FILE`: writes the same records as a fingerprint list
//! (`HEX` lines) for `neardup dedup --fingerprints`.
//!
//! `memory`: the in-memory batch. `MEMORY_MB`: out of core within that
//! budget, fingerprints beyond a quarter of it in a file in TMP_DIR
//! (default the system's temporary folder). The records, made without
//! holding any: 87 % random, 10 % within 1–3 bits of an earlier record's
//! random value, 3 % exact copies of one.

use std::time::Instant;

use neardup::dedup::{Cluster, Dedup, OutOfCore, Records, SpillColumn, SpillTo};
use neardup::index::Words;
use neardup::Radius;

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Record `i`'s fingerprint.
fn fingerprint(i: u64) -> u64 {
    let h = splitmix(i ^ 0x5151_5151);
    let roll = h % 100;
    if i == 0 || roll >= 13 {
        return splitmix(i);
    }
    let earlier = (h >> 8) % i;
    let mut fp = splitmix(earlier);
    if roll < 10 {
        for b in 0..=(h >> 40) % 3 {
            fp ^= 1 << ((h >> (44 + 6 * b)) & 63);
        }
    }
    fp
}

fn status_kb(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with(field)).and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: u64 = args.first().map_or(10_000_000, |a| a.parse().expect("N"));
    let k: u32 = args.get(1).map_or(3, |a| a.parse().expect("K"));
    let mode = args.get(2).map_or("memory", String::as_str).to_string();
    let tmp = args.get(3).map_or_else(std::env::temp_dir, std::path::PathBuf::from);
    if mode == "list" {
        use std::io::Write;
        let path = args.get(3).expect("list FILE");
        let mut out =
            std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path).expect("create FILE"));
        for i in 0..n {
            writeln!(out, "{:016x}", fingerprint(i)).expect("write FILE");
        }
        out.flush().expect("write FILE");
        return;
    }
    let t0 = Instant::now();
    let mut sum = 0u64;
    let mut clusters = 0u64;
    let mut removed = 0u64;
    let mut check = |c: &Cluster| {
        clusters += 1;
        removed += c.members.len() as u64 - 1;
        let mut h = splitmix(u64::from(c.kept));
        for &m in &c.members {
            h = splitmix(h ^ u64::from(m));
        }
        sum = sum.wrapping_add(h);
    };
    let (stages, extra) = if mode == "memory" {
        let words: Vec<u64> = (0..n).map(fingerprint).collect();
        let made = t0.elapsed().as_secs_f64();
        let records = Records::from_words(Words::B64(words));
        let radius = Radius::fixed(k);
        let found = Dedup::new(&radius).batch(&records).expect("dedup");
        found.clusters.iter().for_each(&mut check);
        let mut stages = vec![("generate", made)];
        stages.extend(found.timings.iter().copied());
        (stages, format!("\"layout\":\"{}\"", found.layout))
    } else {
        let memory: u64 = mode.parse::<u64>().expect("memory or MEMORY_MB") << 20;
        let mut col = SpillColumn::spilling(2, SpillTo { dir: tmp.clone(), limit: memory / 4 });
        for i in 0..n {
            let fp = fingerprint(i);
            col.push(&[fp as u32, (fp >> 32) as u32]).expect("spill");
        }
        let made = t0.elapsed().as_secs_f64();
        let found = OutOfCore::new(Radius::fixed(k), &tmp)
            .memory(memory)
            .run(&col, &mut |c| {
                check(c);
                Ok(())
            })
            .expect("dedup");
        let mut stages = vec![("generate", made)];
        stages.extend(found.timings.iter().copied());
        (
            stages,
            format!(
                "\"layout\":\"{}\",\"partitions\":{},\"mapped\":{},\"spilled_gb\":{:.2}",
                found.layout,
                found.partitions,
                found.mapped,
                found.spilled_bytes as f64 / 1e9
            ),
        )
    };
    let secs = t0.elapsed().as_secs_f64();
    let dedup_secs: f64 = stages.iter().skip(1).map(|s| s.1).sum();
    println!(
        "{{\"n\":{n},\"k\":{k},\"mode\":\"{mode}\",\"seconds\":{secs:.1},\"dedup_seconds\":{dedup_secs:.1},\
         \"us_per_record\":{:.3},\"peak_rss_mb\":{},\"bytes_per_record\":{:.1},\"clusters\":{clusters},\
         \"removed\":{removed},\"checksum\":\"{sum:016x}\",{extra},\"stages\":{{{}}}}}",
        dedup_secs * 1e6 / n as f64,
        status_kb("VmHWM:") / 1024,
        status_kb("VmHWM:") as f64 * 1024.0 / n as f64,
        stages.iter().map(|(s, t)| format!("\"{s}\":{t:.1}")).collect::<Vec<_>>().join(",")
    );
}
