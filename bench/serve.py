#!/usr/bin/env python3
"""`neardup serve` under load, every figure of issue 5 in one run.

Run through bench/serve.sh (which builds the release binary). Loads N
random 64-bit fingerprints into a data directory with `neardup index add`,
starts `neardup serve` on 127.0.0.1, drives it with wrk (Lua scripts in
bench/serve/), then measures start-up from the snapshot and from a rebuild,
at N and at the larger start-up size. Writes (durable, fsync per commit)
are real: redb with immediate durability, group commit.

Prints one JSON line per measurement and a table with the targets; writes
bench/out/serve.jsonl.
"""

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "neardup")
LUA = os.path.join(ROOT, "bench", "serve")
WORK = os.path.join(ROOT, "target", "servebench")
OUT = os.path.join(ROOT, "bench", "out", "serve.jsonl")


def log(rec, out):
    line = json.dumps(rec)
    print(line, flush=True)
    out.write(line + "\n")
    out.flush()


def fingerprints(n, seed):
    """A list of n random (id, fingerprint) lines, made once and kept."""
    path = os.path.join(WORK, f"fps-{n}-{seed}.tsv")
    rng = random.Random(seed)
    return made_once(path, ("d%d\t%016x\n" % (i, rng.getrandbits(64)) for i in range(n)))


def made_once(path, lines):
    """`path`, written from `lines` (in chunks, atomically) unless it exists."""
    if not os.path.exists(path):
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            chunk = []
            for line in lines:
                chunk.append(line)
                if len(chunk) == 50_000:
                    f.write("".join(chunk))
                    chunk = []
            f.write("".join(chunk))
        os.replace(tmp, path)
    return path


def status_kb(pid, field):
    """A KiB field of /proc/PID/status (VmHWM: peak RSS; VmRSS: RSS now),
    or None when the process is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def rss_kb(pid):
    """Peak RSS of `pid` in KiB (VmHWM)."""
    return status_kb(pid, "VmHWM")


class Server:
    """`neardup serve` on a free port; start-up timed to its 'serving' line."""

    def __init__(self, data, extra=()):
        t = time.perf_counter()
        self.proc = subprocess.Popen(
            [BIN, "serve", "--data", data, "--listen", "127.0.0.1:0", *extra],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.line = self.proc.stderr.readline()
        self.ready_s = time.perf_counter() - t
        if "http://" not in self.line:
            raise SystemExit(f"serve did not start: {self.line}{self.proc.stderr.read()}")
        self.addr = self.line.split("http://")[1].split()[0]
        self.source = "snapshot" if "loaded from its snapshot" in self.line else "rebuilt"

    def stop(self):
        """SIGTERM; returns (seconds to exit, what it printed)."""
        t = time.perf_counter()
        self.proc.send_signal(signal.SIGTERM)
        rest = self.proc.stderr.read()
        self.proc.wait()
        return time.perf_counter() - t, rest


def wrk(script, addr, seconds, connections, threads=2, **env):
    e = dict(os.environ, BENCH_DIR=LUA, **{k: str(v) for k, v in env.items()})
    cmd = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s",
           "-s", os.path.join(LUA, script), f"http://{addr}"]
    r = subprocess.run(cmd, env=e, capture_output=True, text=True, check=True)
    last = [l for l in r.stdout.splitlines() if l.startswith("{")]
    if not last:
        raise SystemExit(f"wrk printed no summary:\n{r.stdout}\n{r.stderr}")
    return json.loads(last[-1])


def load(n, seed, out):
    """A fresh data directory holding n documents; the import timed."""
    data = os.path.join(WORK, f"data-{n}")
    shutil.rmtree(data, ignore_errors=True)
    os.makedirs(data)
    fps = fingerprints(n, seed)
    t = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-f", "%M", BIN, "index", "add", data, "--fingerprints", fps],
                       check=True, stderr=subprocess.PIPE, text=True)
    secs = time.perf_counter() - t
    peak_kb = int(r.stderr.strip().splitlines()[-1])
    store = os.path.getsize(os.path.join(data, "store.redb"))
    snap = os.path.getsize(os.path.join(data, "index.ndx"))
    log({"bench": "import", "docs": n, "seconds": round(secs, 2), "docs_per_s": round(n / secs),
         "peak_rss_mb": round(peak_kb / 1024),
         "store_mb": round(store / 2**20, 1), "snapshot_mb": round(snap / 2**20, 1)}, out)
    return data, fps


def startup(data, out, extra=()):
    """Start-up from the snapshot, then (snapshot removed) from a rebuild."""
    rows = []
    for how in ("snapshot", "rebuild"):
        if how == "rebuild":
            os.remove(os.path.join(data, "index.ndx"))
        s = Server(data, extra)
        rss = rss_kb(s.proc.pid)
        stop_s, said = s.stop()
        assert s.source == ("snapshot" if how == "snapshot" else "rebuilt"), s.line
        served = int(s.line.split("serving ")[1].split()[0])
        rec = {"bench": "startup", "docs": served, "from": how, "ready_s": round(s.ready_s, 2),
               "rss_mb": round(rss / 1024) if rss else None, "stop_s": round(stop_s, 2),
               "says": s.line.strip()}
        log(rec, out)
        rows.append(rec)
    return rows


def post(addr, path, body):
    import http.client

    host, port = addr.rsplit(":", 1)
    c = http.client.HTTPConnection(host, int(port), timeout=60)
    c.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    if r.status != 200:
        raise SystemExit(f"{path}: {r.status} {data[:300]}")
    return json.loads(data)


def rule_runs(args, out, results):
    """The pipeline's radius rule (the default without -k): n documents,
    half short (100 features: in the k = 8 tables too) and half long (5,000),
    loaded over HTTP; searches by short and by long documents without k,
    and with k = 3; insert-if-unique singles by the rule."""
    data = os.path.join(WORK, "data-rule")
    shutil.rmtree(data, ignore_errors=True)
    os.makedirs(data)
    s = Server(data)
    rng = random.Random(4)
    queries = {100: [], 5000: []}
    t = time.perf_counter()
    for start in range(0, args.docs, 1000):
        docs = []
        for i in range(start, min(start + 1000, args.docs)):
            fp = "%016x" % rng.getrandbits(64)
            feats = 100 if i % 2 else 5000
            docs.append({"id": f"r{i}", "fingerprint": fp, "features": feats})
            if i % 97 == 0:
                queries[feats].append(fp)
        post(s.addr, "/v1/documents:batch", {"mode": "insert", "documents": docs})
    secs = time.perf_counter() - t
    log({"bench": "rule-load", "docs": args.docs, "seconds": round(secs, 1), "docs_per_s": round(args.docs / secs)}, out)
    files = {}
    for feats, fps in queries.items():
        files[feats] = os.path.join(WORK, f"rule-queries-{feats}.txt")
        with open(files[feats], "w") as f:
            f.write("\n".join(fps) + "\n")
    runs = [
        ("rule: search by short docs, 64 connections", "search.lua", 64, {"QUERIES": files[100], "K": "rule", "FEATURES": 100}),
        ("rule: search by long docs, 64 connections", "search.lua", 64, {"QUERIES": files[5000], "K": "rule", "FEATURES": 5000}),
        ("rule: search k=3, 64 connections", "search.lua", 64, {"QUERIES": files[100], "K": 3}),
        ("rule: search by short docs, 1 connection", "search.lua", 1, {"QUERIES": files[100], "K": "rule", "FEATURES": 100}),
        ("rule: insert-if-unique short single, 64 connections", "insert.lua", 64, {"RUN": "rs", "K": "rule", "FEATURES": 100}),
        ("rule: insert-if-unique short batches of 1,000, 4 connections", "insert.lua", 4,
         {"RUN": "rb", "K": "rule", "FEATURES": 100, "BATCH": 1000}),
    ]
    for name, script, conns, env in runs:
        r = wrk(script, s.addr, args.seconds, conns, threads=min(2, conns), **env)
        r.update({"bench": "load", "name": name, "docs": args.docs, "connections": conns})
        log(r, out)
        results[name] = r
    stats = post(s.addr, "/v1/search", {"fingerprint": "0" * 16, "limit": 1})
    rss = rss_kb(s.proc.pid)
    stop_s, _ = s.stop()
    log({"bench": "rule-after-load", "peak_rss_mb": round(rss / 1024) if rss else None, "radius": stats.get("radius"),
         "stop_s": round(stop_s, 2)}, out)
    results["rule startup"] = startup(data, out)
    shutil.rmtree(data, ignore_errors=True)


def main():
    global BIN
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=1_000_000, help="documents served under load (10^6)")
    ap.add_argument("--startup-docs", type=int, default=10_000_000,
                    help="documents for the start-up measurement (10^7; 0 skips it)")
    ap.add_argument("--seconds", type=int, default=15, help="seconds per load run")
    ap.add_argument("--bin", default=BIN, help="the neardup binary (another build, to compare)")
    ap.add_argument("--serve-arg", action="append", default=[],
                    help="extra `neardup serve` arguments for the standard runs (e.g. --serve-arg=-k --serve-arg=3)")
    ap.add_argument("--rule", action="store_true",
                    help="also measure the radius rule (short and long documents without k; needs a build that has it)")
    ap.add_argument("--out", default=OUT, help="where the JSON lines go")
    args = ap.parse_args()
    BIN = os.path.abspath(args.bin)
    if not shutil.which("wrk"):
        sys.exit("bench/serve.py needs wrk: apt-get install wrk")
    os.makedirs(WORK, exist_ok=True)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    results = {}
    with open(args.out, "w") as out:
        log({"bench": "machine", "bin": BIN, "serve_args": args.serve_arg, "cpus": os.cpu_count(),
             "uname": " ".join(os.uname()),
             "wrk": subprocess.run(["wrk", "-v"], capture_output=True, text=True).stdout.splitlines()[0]}, out)
        data, fps = load(args.docs, 1, out)
        # Queries: stored fingerprints (each finds at least itself).
        with open(fps) as f:
            lines = f.readlines()
        queries = os.path.join(WORK, "queries.txt")
        with open(queries, "w") as f:
            for line in random.Random(2).sample(lines, 10_000):
                f.write(line.split("\t")[1])
        del lines
        s = Server(data, args.serve_arg)
        runs = [
            ("search k=3, 64 connections", "search.lua", 64, {"QUERIES": queries, "K": 3}),
            ("search k=3, 1 connection", "search.lua", 1, {"QUERIES": queries, "K": 3}),
            ("insert-if-unique single, 64 connections", "insert.lua", 64, {"RUN": "s64"}),
            ("insert-if-unique single, 1 connection", "insert.lua", 1, {"RUN": "s1"}),
            ("insert-if-unique batches of 1,000, 4 connections", "insert.lua", 4, {"RUN": "b4", "BATCH": 1000}),
        ]
        for name, script, conns, env in runs:
            r = wrk(script, s.addr, args.seconds, conns, threads=min(2, conns), **env)
            r.update({"bench": "load", "name": name, "docs": args.docs, "connections": conns})
            log(r, out)
            results[name] = r
        # Reads while writes go on: search latency with a batch loader running.
        e = dict(os.environ, BENCH_DIR=LUA, RUN="mixed", BATCH="1000")
        writer = subprocess.Popen(["wrk", "-t1", "-c2", f"-d{args.seconds + 2}s", "--timeout", "10s", "-s",
                                   os.path.join(LUA, "insert.lua"), f"http://{s.addr}"],
                                  env=e, stdout=subprocess.PIPE, text=True)
        time.sleep(1)
        name = "search k=3, 32 connections, during batch inserts"
        r = wrk("search.lua", s.addr, args.seconds, 32, QUERIES=queries, K=3)
        w = [l for l in writer.communicate()[0].splitlines() if l.startswith("{")]
        r.update({"bench": "load", "name": name, "docs": args.docs, "connections": 32,
                  "writer": json.loads(w[-1]) if w else None})
        log(r, out)
        results[name] = r
        rss = rss_kb(s.proc.pid)
        stop_s, said = s.stop()
        log({"bench": "after-load", "peak_rss_mb": round(rss / 1024) if rss else None,
             "stop_s": round(stop_s, 2), "says": said.strip()}, out)
        results["startup"] = startup(data, out, args.serve_arg)
        if args.rule:
            rule_runs(args, out, results)
        if args.startup_docs:
            big, _ = load(args.startup_docs, 3, out)
            results["startup_big"] = startup(big, out, args.serve_arg)
            shutil.rmtree(big, ignore_errors=True)
    print()
    print(f"{'measurement':52} {'figure':>14} {'p99 ms':>8} {'target':>10} {'ratio':>7}")
    targets = {
        "search k=3, 64 connections": ("rps", 20_000),
        "insert-if-unique single, 64 connections": ("docs_per_s", 5_000),
        "insert-if-unique batches of 1,000, 4 connections": ("docs_per_s", 50_000),
    }
    for name, r in results.items():
        if name.startswith("startup") or name.endswith("startup"):
            for row in r:
                print(f"{name.replace('startup', 'start-up').replace('_big', '') + ', ' + format(row['docs'], ',') + ' docs, from ' + row['from']:52} "
                      f"{row['ready_s']:>12.2f} s {'':>8} {'report':>10} {'':>7}")
            continue
        key, target = targets.get(name, ("rps", None))
        fig = r[key]
        unit = "req/s" if key == "rps" else "docs/s"
        ratio = f"{fig / target:.2f}x" if target else ""
        print(f"{name:52} {fig:>8,.0f} {unit:>6} {r['p99_ms']:>8.2f} {target or '':>10} {ratio:>7}")


if __name__ == "__main__":
    main()
