"""neardup.datasketch against datasketch 2.0.0, side by side in one run.

Usage: python bench/datasketch_bench.py DOCS.jsonl [MB] [LSH_N] [MEM_N]

- update_batch: MinHash() + update_batch(word 3-shingles as bytes) per
  document, one thread, on the first MB megabytes of text (default 3);
- bulk: MinHash.bulk of the same documents (the drop-in on every core);
- LSH: insert then query LSH_N (default 10^5) sketches, threshold 0.5;
- memory: RSS growth of MinHashLSH(0.5) holding MEM_N (default 10^6)
  entries, each in a fresh process (resident bytes after minus before the
  inserts, the sketches themselves freed).
Prints medians of 3 runs and the ratios.
"""

import json
import os
import resource
import statistics
import subprocess
import sys
import time


def shingles(path, mb):
    docs, size = [], 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            text = json.loads(line)["text"]
            words = text.split()
            docs.append([" ".join(words[i : i + 3]).encode() for i in range(max(1, len(words) - 2))])
            size += len(text.encode())
            if size >= mb * 1e6:
                break
    return docs, size


def best(f, runs=3):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def sketches(mod, n, k=128, seed=0):
    """n sketches, a third of them near copies of another (LSH has answers)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    rows = rng.integers(0, 2**32, size=(n, k), dtype=np.uint32)
    rows[1::3] = rows[0::3][: len(rows[1::3])]
    rows[1::3, : k // 4] = rng.integers(0, 2**32, size=(len(rows[1::3]), k // 4), dtype=np.uint32)
    return [mod.LeanMinHash(seed=1, hashvalues=r, scheme="affine32") for r in rows]


def lsh_time(mod, sk):
    def run():
        lsh = mod.MinHashLSH(threshold=0.5, num_perm=128)
        if hasattr(lsh, "insert_many"):
            lsh.insert_many(enumerate(sk))
            lsh.query_many(sk)
        else:
            for i, m in enumerate(sk):
                lsh.insert(i, m)
            for m in sk:
                lsh.query(m)

    return best(run, 3)


def memory_child(modname, n):
    import numpy as np

    mod = __import__(modname, fromlist=["MinHashLSH"])
    lsh = mod.MinHashLSH(threshold=0.5, num_perm=128)
    rng = np.random.default_rng(1)
    chunk = 10_000
    base = rss()
    probe = mod.LeanMinHash(seed=1, hashvalues=np.ones(128, dtype=np.uint32), scheme="affine32")
    for start in range(0, n, chunk):
        rows = rng.integers(0, 2**32, size=(chunk, 128), dtype=np.uint32)
        items = []
        for i, r in enumerate(rows):
            m = probe.copy()
            m.hashvalues = r
            items.append((start + i, m))
        if hasattr(lsh, "insert_many"):
            lsh.insert_many(items)
        else:
            for key, m in items:
                lsh.insert(key, m)
        del items, rows
    import gc

    gc.collect()
    print(rss() - base)


def rss():
    """Resident bytes now (/proc/self/statm)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--memory-child":
        memory_child(sys.argv[2], int(sys.argv[3]))
        return
    path = sys.argv[1]
    mb = float(sys.argv[2]) if len(sys.argv) > 2 else 3
    lsh_n = int(sys.argv[3]) if len(sys.argv) > 3 else 100_000
    mem_n = int(sys.argv[4]) if len(sys.argv) > 4 else 1_000_000
    import datasketch as ds
    import neardup.datasketch as nd

    docs, size = shingles(path, mb)
    n_sh = sum(map(len, docs))
    print(f"{len(docs)} documents, {size / 1e6:.2f} MB, {n_sh} word 3-shingles; CPU: {cpu()}; cores: {os.cpu_count()}")

    def per_doc(mod):
        return lambda: [mod.MinHash().update_batch(d) for d in docs]

    t_ds = best(per_doc(ds), 1 if size > 5e6 else 3)
    t_nd = best(per_doc(nd))
    print(f"update_batch, one thread: datasketch {size / t_ds / 1e6:.2f} MB/s, neardup {size / t_nd / 1e6:.1f} MB/s = {t_ds / t_nd:.1f}x")
    t_ndb = best(lambda: nd.MinHash.bulk(docs))
    t_dsb = best(lambda: ds.MinHash.bulk(docs), 1 if size > 5e6 else 3)
    print(f"bulk: datasketch {size / t_dsb / 1e6:.2f} MB/s, neardup {size / t_ndb / 1e6:.1f} MB/s ({os.cpu_count()} cores) = {t_dsb / t_ndb:.1f}x")
    print(f"  (SHA-1 per shingle: {n_sh / t_ndb / 1e6:.2f} M shingles/s in bulk, {n_sh / t_nd / 1e6:.2f} M/s one thread)")

    sk_ds, sk_nd = sketches(ds, lsh_n), sketches(nd, lsh_n)
    t_l_ds, t_l_nd = lsh_time(ds, sk_ds), lsh_time(nd, sk_nd)
    print(f"MinHashLSH insert + query of {lsh_n}: datasketch {t_l_ds:.2f} s, neardup {t_l_nd:.2f} s = {t_l_ds / t_l_nd:.1f}x")
    del sk_ds, sk_nd
    mem = {}
    for name in ("datasketch", "neardup.datasketch"):
        out = subprocess.run([sys.executable, __file__, "--memory-child", name, str(mem_n)], capture_output=True, text=True, check=True)
        mem[name] = int(out.stdout.strip())
    print(
        f"memory of {mem_n} LSH entries: datasketch {mem['datasketch'] / 2**20:.0f} MiB, "
        f"neardup {mem['neardup.datasketch'] / 2**20:.0f} MiB = 1/{mem['datasketch'] / mem['neardup.datasketch']:.1f}"
    )


def cpu():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


if __name__ == "__main__":
    main()
