"""Index peers on the same data as indexbench: FAISS IndexBinaryMultiHash
(radius search) and PyPI simhash's SimhashIndex.

    python bench/index_peers.py faiss DIR K [QUERIES]
    python bench/index_peers.py simhash DIR K [QUERIES]

DIR holds base.u64 and queries.u64 written by `indexbench gen`. Prints one
JSON line: queries/s (one thread), total hits (to check against neardup).
"""
import json
import sys
import time

import numpy as np


def load(d):
    base = np.fromfile(f"{d}/base.u64", dtype="<u8")
    queries = np.fromfile(f"{d}/queries.u64", dtype="<u8")
    return base, queries


def faiss_bench(d, k, nq):
    import faiss

    faiss.omp_set_num_threads(1)
    base, queries = load(d)
    queries = queries[:nq]
    # FAISS stores codes as bytes; byte order does not change Hamming distances.
    xb = base.view(np.uint8).reshape(-1, 8)
    xq = queries.view(np.uint8).reshape(-1, 8)
    t = time.perf_counter()
    # 64 bits, k = 3: 4 hash tables on 16-bit substrings (pigeonhole: exact at radius 3).
    index = faiss.IndexBinaryMultiHash(64, 4, 16)
    index.add(xb)
    build = time.perf_counter() - t
    t = time.perf_counter()
    lims, dist, ids = index.range_search(xq, k + 1)  # radius is exclusive: d < k + 1
    s = time.perf_counter() - t
    print(json.dumps({"peer": "faiss.IndexBinaryMultiHash(64, 4, 16)", "n": len(base), "k": k,
                      "queries": len(xq), "hits": int(lims[-1]), "build_s": build, "qps_1thread": len(xq) / s}))


def simhash_bench(d, k, nq):
    from simhash import Simhash, SimhashIndex

    base, queries = load(d)
    queries = queries[:nq]
    t = time.perf_counter()
    index = SimhashIndex([(str(i), Simhash(int(v))) for i, v in enumerate(base)], k=k)
    build = time.perf_counter() - t
    t = time.perf_counter()
    hits = 0
    for q in queries:
        hits += len(index.get_near_dups(Simhash(int(q))))
    s = time.perf_counter() - t
    print(json.dumps({"peer": "simhash.SimhashIndex", "n": len(base), "k": k, "queries": len(queries),
                      "hits": hits, "build_s": build, "qps_1thread": len(queries) / s}))


if __name__ == "__main__":
    which, d, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
    nq = int(sys.argv[4]) if len(sys.argv) > 4 else 10**9
    {"faiss": faiss_bench, "simhash": simhash_bench}[which](d, k, nq)
