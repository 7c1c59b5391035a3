"""Hostile clients against a live `neardup serve`: many idle connections and
half-sent request heads, then more than the connection cap.

Starts the server (--header-timeout 5, --max-connections 2048), opens IDLE
idle connections and HALF that send half a request head (together under
the cap), times normal requests meanwhile, opens 200 more than the cap
allows and reads what they get, then measures how long until the server
closed them all and its RSS before, at the peak and after. Prints one JSON
line.

    python3 bench/hostile.py target/release/neardup [IDLE] [HALF]
"""

import json
import re
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def get(addr, path="/healthz"):
    t = time.perf_counter()
    s = socket.create_connection(addr, timeout=10)
    s.sendall(f"GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n".encode())
    data = b""
    while chunk := s.recv(4096):
        data += chunk
    s.close()
    return int(data[9:12] or 0), time.perf_counter() - t, data


def closed(s):
    try:
        s.setblocking(False)
        return s.recv(4096) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def main():
    binary = sys.argv[1]
    idle = int(sys.argv[2]) if len(sys.argv) > 2 else 1500
    half = int(sys.argv[3]) if len(sys.argv) > 3 else 500
    over = 200
    cap = 2048
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    data = tempfile.mkdtemp()
    p = subprocess.Popen([binary, "serve", "--data", data, "--listen", "127.0.0.1:0",
                          "--header-timeout", "5", "--max-connections", str(cap)],
                         stderr=subprocess.PIPE, text=True)
    line = p.stderr.readline()
    host, port = re.search(r"http://([0-9.]+):(\d+)", line).groups()
    addr = (host, int(port))
    threading.Thread(target=p.stderr.read, daemon=True).start()
    time.sleep(0.3)
    rss_before = rss_mb(p.pid)
    baseline = [get(addr)[1] for _ in range(50)]
    socks, refused = [], 0
    opened_at = time.time()
    for i in range(idle + half):
        try:
            s = socket.create_connection(addr, timeout=5)
        except OSError:
            refused += 1
            continue
        if i >= idle:
            s.sendall(b"POST /v1/documents HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n")
        socks.append(s)
    time.sleep(0.3)
    # Under the cap: normal requests are served meanwhile.
    during = [get(addr) for _ in range(20)]
    rss_peak = rss_mb(p.pid)
    # Fill the cap with idle connections, then every connection over it
    # gets a 503 and is closed.
    socks += [socket.create_connection(addr, timeout=5) for _ in range(cap - len(socks))]
    time.sleep(0.3)
    extra = [socket.create_connection(addr, timeout=5) for _ in range(over)]
    time.sleep(0.3)
    over_statuses = {}
    for s in extra:
        try:
            head = s.recv(64)
            code = head[9:12].decode() or "closed"
        except OSError:
            code = "reset"
        over_statuses[code] = over_statuses.get(code, 0) + 1
        s.close()
    while True:
        open_now = sum(1 for s in socks if not closed(s))
        if open_now == 0 or time.time() - opened_at > 60:
            break
        time.sleep(0.2)
    all_closed_s = time.time() - opened_at
    after = [get(addr)[1] for _ in range(50)]
    rss_after = rss_mb(p.pid)
    for s in socks:
        s.close()
    p.terminate()
    p.wait()
    print(json.dumps({
        "idle": idle, "half_heads": half, "connect_refused": refused,
        "served_meanwhile": sum(1 for d in during if d[0] == 200), "of": len(during),
        "served_meanwhile_ms_median": round(statistics.median(d[1] for d in during) * 1e3, 2),
        "cap": cap, "over_cap_connections": over, "over_cap_answers": over_statuses,
        "all_closed_after_s": round(all_closed_s, 2), "still_open": open_now,
        "healthz_ms_median_before": round(statistics.median(baseline) * 1e3, 2),
        "healthz_ms_median_after": round(statistics.median(after) * 1e3, 2),
        "rss_mb": {"before": round(rss_before, 1), "peak": round(rss_peak, 1), "after": round(rss_after, 1)},
    }))


if __name__ == "__main__":
    main()
