#!/usr/bin/env python3
"""Hostile uploads against a live `neardup serve` (issue 67's figures).

Run through bench/hostile_documents.sh (which builds the release binary and
writes the hostile files with neardup-testkit's `hostile` example). Starts
`neardup serve` at its default limits over a data directory of real
documents, then, in ROUNDS rounds, SECONDS of searches alone ("idle")
followed by SECONDS of the same searches while UPLOADERS clients upload
hostile files back to back (GiB bombs, self-drawing forms, self-listing and
10^5-deep page trees, a 10^6-deep HTML). Meanwhile it samples the resident
memory of the server and of its reader children every 20 ms, and uploads a
normal PDF once a second. Then, alone: each bomb and a normal PDF right
after its 422, REPEAT times.

Prints one JSON line per round and a summary: p50/p99 of /v1/search idle
and under hostile load and their ratio (the median over rounds), peak RSS of
the server and of server plus readers, normal uploads during the load and
right after a bomb, and every status seen. Exits 1 if a target is missed.

    python3 bench/hostile_documents.py BINARY HOSTILE_DIR DOCS.jsonl... \
        [--rounds 3] [--seconds 15] [--uploaders 8] [--searchers 2] [--rate 1000]
"""

import argparse
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import multiprocessing as mp
import time
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve  # noqa: E402  (status_kb, rss_kb)

HOSTILE = [
    "flate-bomb.pdf",
    "object-stream-bomb.pdf",
    "docx-bomb.docx",
    "self-drawing-form.pdf",
    "form-lattice.pdf",
    "self-listing-pages.pdf",
    "deep-page-tree.pdf",
    "deep.html",
]
BOMBS = ["flate-bomb.pdf", "object-stream-bomb.pdf", "docx-bomb.docx"]
# What the normal PDF says (neardup-testkit's hostile example writes it).
NORMAL_TEXT = b"near-duplicate detection"


def tree_rss_kb(pid):
    """RSS of `pid` and of its children (the readers), in KiB."""
    own = rss_kb(pid)
    kids = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        tasks = []
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                kids += sum(rss_kb(int(child)) for child in f.read().split())
        except OSError:
            pass
    return own, own + kids


def rss_kb(pid):
    """RSS of `pid` now, in KiB (0 when it is gone)."""
    return serve.status_kb(pid, "VmRSS") or 0


# An upload is sent this many bytes per call. A client on this machine
# that hands the kernel a whole 11 MB file in one call holds a CPU for
# milliseconds inside it (loopback TCP does the receiver's work in the
# sender's call, where no other task gets the CPU, whatever the sender's
# priority: perf sched showed an uploader's send delaying the server's
# async workers by 2.6 ms). A remote client costs the server none of that.
SEND_CHUNK = 64 << 10


def chunks(body):
    view = memoryview(body)
    for at in range(0, len(view), SEND_CHUNK):
        yield view[at:at + SEND_CHUNK]


class Client:
    """One keep-alive connection; reconnects when the server closes it."""

    def __init__(self, addr, timeout=60):
        self.host, self.port = addr.rsplit(":", 1)
        self.timeout = timeout
        self.conn = None

    def post(self, path, body, ctype="application/octet-stream"):
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, int(self.port), timeout=self.timeout)
            try:
                headers = {"Content-Type": ctype, "Content-Length": str(len(body))}
                self.conn.request("POST", path, body=chunks(body), headers=headers)
                r = self.conn.getresponse()
                data = r.read()
                if r.getheader("connection", "").lower() == "close":
                    self.conn.close()
                    self.conn = None
                return r.status, data
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = None
                if attempt:
                    return 0, b""
        return 0, b""


def search_histogram(addr):
    """The server's own latency histogram of /v1/search: {le: count}."""
    host, port = addr.rsplit(":", 1)
    c = http.client.HTTPConnection(host, int(port), timeout=10)
    c.request("GET", "/metrics")
    text = c.getresponse().read().decode()
    c.close()
    out = {}
    for line in text.splitlines():
        if line.startswith("neardup_http_request_duration_seconds_bucket") and 'route="/v1/search"' in line:
            le = line.split('le="')[1].split('"')[0]
            out[float("inf") if le == "+Inf" else float(le)] = int(line.rsplit(" ", 1)[1])
    return out


def server_p99_ms(before, after):
    """The bucket bound the server's own p99 falls under, between two
    histograms (cumulative counts)."""
    delta = {le: after.get(le, 0) - before.get(le, 0) for le in after}
    total = delta.get(float("inf"), 0)
    for le in sorted(delta):
        if total and delta[le] >= 0.99 * total:
            return le * 1000
    return None


def pct(xs, q):
    if not xs:
        return None
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def ms(x):
    return None if x is None else round(x * 1000, 2)


def searcher(addr, queries, first, rate, done, out):
    """Searches on one connection, `rate` a second on a fixed schedule (0:
    back to back), until `done`: (when due, latency, status) of each. A
    latency counts from when the search was due, so a stall delays every
    search behind it and shows."""
    c, k, got = Client(addr), first, []
    due = time.perf_counter()
    while not done.is_set():
        if rate:
            due += 1.0 / rate
            wait = due - time.perf_counter()
            if wait > 0:
                time.sleep(wait)
        else:
            due = time.perf_counter()
        q = queries[k % len(queries)]
        k += 1
        s, _ = c.post("/v1/search", q, "application/json")
        got.append((due, time.perf_counter() - due, s))
    out.put(("search", got))


def in_background(nice, sched):
    """Lowers this client: SCHED_IDLE (`sched` "idle"; runs only on a CPU
    no one else wants, as if on a machine of its own) or else `nice`."""
    if sched == "idle":
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    else:
        os.nice(nice)


def uploader(addr, files, first, low, on, done, out):
    """Hostile files back to back, each on its turn, while `on`:
    (when sent, seconds, status) of each."""
    in_background(*low)
    c, k, got = Client(addr), first, []
    names = sorted(files)
    while not done.is_set():
        if not on.wait(0.05):
            continue
        name = names[k % len(names)]
        k += 1
        t = time.perf_counter()
        s, _ = c.post(f"/v1/extract?name={name}", files[name])
        got.append((t, time.perf_counter() - t, s))
    out.put(("hostile", got))


def normal_uploader(addr, normal, low, on, done, out):
    """A normal PDF once a second while `on`: (when sent, seconds,
    status, and 'wrong text' when it was not read right)."""
    in_background(*low)
    c, got = Client(addr), []
    while not done.wait(1.0):
        if not on.is_set():
            continue
        t = time.perf_counter()
        s, data = c.post("/v1/extract?name=normal.pdf", normal)
        got.append((t, time.perf_counter() - t, s if s != 200 or NORMAL_TEXT in data else "wrong text"))
    out.put(("normal", got))


class Run:
    """Every client as a process of its own, started once (no client
    shares another's interpreter lock, and none is started mid-window):
    searchers all along, uploaders switched on and off. Windows are
    measured by when each search was due."""

    def __init__(self, addr, pid, queries, files, normal, a):
        self.addr, self.pid = addr, pid
        self.on, self.done, self.out = mp.Event(), mp.Event(), mp.Queue()
        rate = a.rate / a.searchers
        self.procs = [mp.Process(target=searcher, args=(addr, queries, i * 7919, rate, self.done, self.out))
                      for i in range(a.searchers)]
        low = (a.uploader_nice, a.uploader_sched)
        self.procs += [mp.Process(target=uploader, args=(addr, files, i, low, self.on, self.done, self.out))
                       for i in range(a.uploaders)]
        self.procs.append(mp.Process(target=normal_uploader,
                                     args=(addr, normal, low, self.on, self.done, self.out)))
        for p in self.procs:
            p.start()
        self.windows = []

    def window(self, seconds, hostile):
        """`seconds` of searches, with the uploaders on when `hostile`:
        its span, memory peaks and the server's own search histogram."""
        hist = search_histogram(self.addr)
        if hostile:
            self.on.set()
        t0 = time.perf_counter()
        peak = [0, 0]
        while time.perf_counter() < t0 + seconds:
            own, tree = tree_rss_kb(self.pid)
            peak[0], peak[1] = max(peak[0], own), max(peak[1], tree)
            time.sleep(0.02)
        t1 = time.perf_counter()
        self.on.clear()
        w = {"hostile": hostile, "span": (t0, t1), "server_peak_rss_mb": round(peak[0] / 1024, 1),
             "with_readers_peak_rss_mb": round(peak[1] / 1024, 1),
             "server_search_p99_under_ms": server_p99_ms(hist, search_histogram(self.addr))}
        self.windows.append(w)
        return w

    def finish(self):
        """Stops every client; each window with its figures."""
        self.done.set()
        got = {"search": [], "hostile": [], "normal": []}
        for _ in self.procs:
            kind, records = self.out.get()
            got[kind].extend(records)
        for p in self.procs:
            p.join()
        for w in self.windows:
            t0, t1 = w.pop("span")
            inside = {k: [r for r in v if t0 <= r[0] < t1] for k, v in got.items()}
            search = [r[1] for r in inside["search"]]
            statuses = Counter(f"{k} {r[2]}" for k, v in inside.items() for r in v)
            w.update({
                "searches": len(search),
                "searches_per_s": round(len(search) / (t1 - t0)),
                "search_p50_ms": ms(pct(search, 0.50)),
                "search_p99_ms": ms(pct(search, 0.99)),
                "search_max_ms": ms(max(search, default=None)),
                "hostile_uploads": len(inside["hostile"]),
                "hostile_p50_s": None if not inside["hostile"] else round(pct([r[1] for r in inside["hostile"]], 0.5), 3),
                "normal_uploads_s": [round(r[1], 3) for r in inside["normal"]],
                "statuses": dict(statuses),
            })
        return self.windows


def after_bombs(addr, pid, files, normal, repeat):
    """Each bomb alone, then a normal PDF right after its 422: the normal
    upload's seconds, and the statuses."""
    c, took, statuses = Client(addr), [], Counter()
    for _ in range(repeat):
        for name in BOMBS:
            s, _ = c.post(f"/v1/extract?name={name}", files[name])
            statuses[f"{name} {s}"] += 1
            t = time.perf_counter()
            s, data = c.post("/v1/extract?name=normal.pdf", normal)
            took.append(time.perf_counter() - t)
            statuses[f"normal {s}{'' if NORMAL_TEXT in data else ' wrong text'}"] += 1
    return took, statuses


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("hostile_dir")
    ap.add_argument("docs", nargs="+")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=15)
    ap.add_argument("--uploaders", type=int, default=8)
    ap.add_argument("--searchers", type=int, default=2)
    ap.add_argument("--rate", type=float, default=1000, help="searches a second in all (0: back to back)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--uploader-nice", type=int, default=19,
                    help="the uploading clients' nice, under --uploader-sched nice")
    ap.add_argument("--uploader-sched", choices=["idle", "nice"], default="idle",
                    help="the uploading clients run under SCHED_IDLE (default: as if on machines of their own, "
                         "they take none of the server's CPU) or at --uploader-nice")
    ap.add_argument("--only", default="", help="upload only these hostile files (comma-separated names)")
    a = ap.parse_args()

    files = {n: open(os.path.join(a.hostile_dir, n), "rb").read() for n in HOSTILE}
    load_files = ({n: open(os.path.join(a.hostile_dir, n), "rb").read() for n in a.only.split(",")}
                  if a.only else files)
    normal = open(os.path.join(a.hostile_dir, "normal.pdf"), "rb").read()
    queries = []
    for path in a.docs:
        with open(path, encoding="utf-8") as f:
            for line in f:
                text = json.loads(line).get("text", "")
                if text:
                    queries.append(json.dumps({"text": text[:4000]}).encode())
                if len(queries) >= 2000:
                    break

    work = tempfile.mkdtemp(prefix="hostile-bench-")
    data = os.path.join(work, "data")
    os.makedirs(data)
    subprocess.run([a.binary, "index", "add", data, *a.docs], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server = subprocess.Popen([a.binary, "serve", "--data", data, "--listen", "127.0.0.1:0"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        line = server.stderr.readline()
        if "http://" not in line:
            raise SystemExit(f"serve did not start: {line}{server.stderr.read()}")
        addr = line.split("http://")[1].split()[0].rstrip("/")
        threading.Thread(target=server.stderr.read, daemon=True).start()
        run = Run(addr, server.pid, queries, load_files, normal, a)
        run.window(2, hostile=False)  # warm up
        for _ in range(a.rounds):
            run.window(a.seconds, hostile=False)
            run.window(a.seconds, hostile=True)
        windows = run.finish()[1:]
        rounds = []
        for r in range(a.rounds):
            idle, hostile = windows[2 * r], windows[2 * r + 1]
            rec = {"round": r + 1, "idle": idle, "hostile": hostile,
                   "p99_ratio": round(hostile["search_p99_ms"] / idle["search_p99_ms"], 2)}
            print(json.dumps(rec), flush=True)
            rounds.append(rec)
        took, statuses = after_bombs(addr, server.pid, files, normal, a.repeat)
        alive = server.poll() is None
        hwm = serve.rss_kb(server.pid) or 0
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)

    ratio = statistics.median(r["p99_ratio"] for r in rounds)
    peak_server = max(r["hostile"]["server_peak_rss_mb"] for r in rounds)
    peak_tree = max(r["hostile"]["with_readers_peak_rss_mb"] for r in rounds)
    errors = sum(n for r in rounds for w in (r["idle"], r["hostile"]) for k, n in w["statuses"].items()
                 if k.startswith("search") and k != "search 200")
    during = [x for r in rounds for x in r["hostile"]["normal_uploads_s"]]
    summary = {
        "cpu": cpu(),
        "search_p99_idle_ms": statistics.median(r["idle"]["search_p99_ms"] for r in rounds),
        "search_p99_hostile_ms": statistics.median(r["hostile"]["search_p99_ms"] for r in rounds),
        "p99_ratio_median": ratio,
        "search_errors": errors,
        "server_peak_rss_mb": peak_server,
        "server_vmhwm_mb": round(hwm / 1024, 1),
        "with_readers_peak_rss_mb": peak_tree,
        "normal_during_load_median_s": round(statistics.median(during), 3) if during else None,
        "normal_during_load_max_s": round(max(during), 3) if during else None,
        "normal_after_bomb_median_s": round(statistics.median(took), 3),
        "normal_after_bomb_max_s": round(max(took), 3),
        "after_bomb_statuses": dict(statuses),
        "server_alive": alive,
    }
    print(json.dumps(summary), flush=True)
    checks = [
        ("p99 of /v1/search under hostile uploads within 2x idle", ratio <= 2.0),
        ("no search failed", errors == 0),
        ("server under 1 GB", hwm < 1 << 20),
        ("server and readers under 1 GB", peak_tree < 1024),
        ("a normal upload within 2 s after a bomb's 422", max(took) < 2.0),
        ("every stream bomb a 422 (an object-stream bomb may be read without it), every normal upload read",
         all(k.endswith(" 422") or k in ("normal 200", "object-stream-bomb.pdf 200") for k in statuses)),
        ("the server stayed up", alive),
    ]
    for what, ok in checks:
        print(f"{'ok  ' if ok else 'MISS'} {what}")
    sys.exit(0 if all(ok for _, ok in checks) else 1)


def cpu():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        name = next(l.split(":", 1)[1].strip() for l in out.splitlines() if l.startswith("Model name"))
        flags = next((l for l in out.splitlines() if l.startswith("Flags")), "")
        return f"{name}, {os.cpu_count()} CPUs, {'AVX-512' if 'avx512f' in flags else 'AVX2'}"
    except (OSError, StopIteration):
        return "unknown"


if __name__ == "__main__":
    main()
