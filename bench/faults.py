"""A full disk under a live `neardup serve`, as an operator would see it.

Mounts a small tmpfs (root only), serves a data directory on it, and has 8
threads insert documents (100 per batch, 1 KB of metadata each) until the
disk is full and past it; checks that writes answer 507, reads go on and
/healthz says degraded; grows the tmpfs while the server runs; checks that
writes resume; then kills the server with SIGKILL, restarts it, and counts
acknowledged documents against those present. Prints one JSON line.

    sudo python3 bench/faults.py target/release/neardup [SIZE_MB]
"""

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request


def call(base, method, path, body=None, timeout=30):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method,
                                 headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def start(binary, data):
    # SimHash: the requests send fingerprints.
    p = subprocess.Popen([binary, "serve", "--data", data, "--listen", "127.0.0.1:0", "--preset", "default"],
                         stderr=subprocess.PIPE, text=True)
    line = p.stderr.readline()
    m = re.search(r"http://[0-9.:]+", line)
    if not m:
        sys.exit("server did not start: " + line)
    threading.Thread(target=p.stderr.read, daemon=True).start()
    return p, m.group(0)


def main():
    binary = sys.argv[1]
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    mnt = tempfile.mkdtemp()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}m", "tmpfs", mnt], check=True)
    try:
        data = os.path.join(mnt, "data")
        os.mkdir(data)
        server, base = start(binary, data)
        acked, statuses, lock = set(), {}, threading.Lock()
        phase = {"stop": False}

        def writer(w):
            rng = random.Random(w)
            n = 0
            while not phase["stop"]:
                ids = [f"w{w}-{n + i}" for i in range(100)]
                n += 100
                docs = [{"id": i, "fingerprint": f"{rng.getrandbits(64):016x}",
                         "metadata": {"pad": "x" * 1000}} for i in ids]
                s, _ = call(base, "POST", "/v1/documents:batch", {"documents": docs, "mode": "insert"})
                with lock:
                    statuses[s] = statuses.get(s, 0) + 1
                    if s == 200:
                        acked.update(ids)
                if s != 200:
                    time.sleep(0.05)

        threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
        for t in threads:
            t.start()
        while statuses.get(507, 0) < 20:
            time.sleep(0.1)
        full_at = len(acked)
        health_full, _ = call(base, "GET", "/healthz")
        some = next(iter(acked))
        read_full, _ = call(base, "GET", "/v1/documents/" + some)
        time.sleep(2)
        subprocess.run(["mount", "-o", f"remount,size={size * 8}m", mnt], check=True)
        grown = time.time()
        while True:
            s, _ = call(base, "GET", "/healthz")
            if s == 200:
                break
            time.sleep(0.05)
        recovered_in = time.time() - grown
        before = len(acked)
        time.sleep(2)
        phase["stop"] = True
        for t in threads:
            t.join()
        after_freeing = len(acked) - before
        server.send_signal(signal.SIGKILL)
        server.wait()
        server, base = start(binary, data)
        present = call(base, "GET", "/v1/stats")[1]["documents"]
        missing = sum(1 for i in acked if call(base, "GET", "/v1/documents/" + i)[0] != 200)
        server.send_signal(signal.SIGTERM)
        server.wait()
        print(json.dumps({
            "tmpfs_mb": size, "statuses": statuses, "acknowledged_before_full": full_at,
            "healthz_while_full": health_full, "read_while_full": read_full,
            "healthy_again_s": round(recovered_in, 3), "acknowledged_after_freeing": after_freeing,
            "acknowledged": len(acked), "present_after_kill_9": present, "lost": missing,
        }))
    finally:
        subprocess.run(["umount", "-l", mnt])
        shutil.rmtree(mnt, ignore_errors=True)


if __name__ == "__main__":
    main()
