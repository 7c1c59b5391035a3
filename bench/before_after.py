#!/usr/bin/env python3
"""Speed of two builds of the core's benchmark examples, side by side.

    python3 bench/before_after.py OLD_EXAMPLES_DIR NEW_EXAMPLES_DIR [ROUNDS]

Runs fpbench (default and python-simhash on English, default on Chinese)
and minhashbench (Chinese) from both folders at the same time, one build
pinned to each of two cores (swapped every round), so that both see the
same moment of a shared host whose clock wanders; checks that both builds
give the same check value (the same fingerprints and signatures); and
prints the median of the per-round ratios (new / old), with the medians
of each build. Run sequentially, one build after the other, the figures
moved by 30% between rounds on our VMs and the ratio was noise.

A build of an earlier commit, for example:

    git worktree add /tmp/old COMMIT
    (cd /tmp/old && CARGO_TARGET_DIR=/tmp/old-target cargo build --release -p neardup \\
        --example fpbench --example minhashbench)
    cargo build --release -p neardup --example fpbench --example minhashbench
    python3 bench/before_after.py /tmp/old-target/release/examples target/release/examples
"""
import json
import os
import statistics
import subprocess
import sys

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")
EN, ZH = os.path.join(DATA, "docs_en.jsonl"), os.path.join(DATA, "docs_zh.jsonl")
CASES = [
    ("default en", ["fpbench", "default", EN, "1", "5", "3"], "mb_per_s"),
    ("python-simhash en", ["fpbench", "python-simhash", EN, "1", "5", "3"], "mb_per_s"),
    ("default zh", ["fpbench", "default", ZH, "1", "5", "3"], "mb_per_s"),
    ("minhash zh", ["minhashbench", ZH, "5", "3"], "minhash_mb_per_s"),
]


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    old, new = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    if not os.path.exists(EN):
        print(f"needs {DATA} (the team's shared sample data)", file=sys.stderr)
        return 2
    got = {name: {"old": [], "new": [], "ratio": []} for name, _, _ in CASES}
    for r in range(rounds):
        for name, argv, key in CASES:
            cores = ("0", "1") if r % 2 == 0 else ("1", "0")
            procs = {
                which: subprocess.Popen(
                    ["taskset", "-c", core, os.path.join(folder, argv[0])] + argv[1:],
                    stdout=subprocess.PIPE, text=True)
                for which, folder, core in (("old", old, cores[0]), ("new", new, cores[1]))
            }
            res = {w: json.loads(p.communicate()[0].strip().splitlines()[-1]) for w, p in procs.items()}
            if any(p.returncode for p in procs.values()):
                print(f"{name}: a build failed")
                return 1
            if res["old"].get("check") != res["new"].get("check"):
                print(f"{name}: the builds disagree (check {res['old'].get('check')} against {res['new'].get('check')})")
                return 1
            for w in ("old", "new"):
                got[name][w].append(res[w][key])
            got[name]["ratio"].append(res["new"][key] / res["old"][key])
    print(f"{'case':<20} {'old MB/s':>9} {'new MB/s':>9} {'new/old':>8}  (per-round ratios: min..max)")
    for name, _, _ in CASES:
        g = got[name]
        print(f"{name:<20} {statistics.median(g['old']):>9.1f} {statistics.median(g['new']):>9.1f} "
              f"{statistics.median(g['ratio']):>8.3f}  ({min(g['ratio']):.3f}..{max(g['ratio']):.3f})")
    print(f"({rounds} rounds, both builds at once on two cores; medians; MB/s on one thread each)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
