#!/usr/bin/env python3
"""Whole processes side by side: `neardup fingerprint --preset python-simhash -j 1`
against a Python process running PyPI `simhash` on the same JSONL records.

Usage: process_ratio.py NEARDUP_BIN PEER_PYTHON DOCS.jsonl MAX_MB [RUNS]

Takes the first records of DOCS.jsonl holding at most MAX_MB MB of text,
checks that both print the same fingerprints, alternates the two commands
RUNS times (neardup at every SIMD level this CPU has, plus auto; the order
turns from run to run) and prints
one JSON line per command with its median seconds and MB/s, and the ratio
of the medians.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

PEER = r'''
import json, sys
from simhash import Simhash
for line in open(sys.argv[1], encoding='utf-8'):
    r = json.loads(line)
    print(r['id'], format(Simhash(r['text']).value, '016x'))
'''


def main():
    neardup, peer_python, docs, max_mb = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    runs = int(sys.argv[5]) if len(sys.argv) > 5 else 5
    max_bytes = int(max_mb * 1e6)
    total, lines = 0, []
    with open(docs, encoding='utf-8') as f:
        for line in f:
            n = len(json.loads(line)['text'].encode('utf-8'))
            if total + n > max_bytes:
                break
            total += n
            lines.append(line)
    tmp = tempfile.NamedTemporaryFile('w', suffix='.jsonl', delete=False, encoding='utf-8')
    tmp.writelines(lines)
    tmp.close()
    try:
        levels = ['auto'] + supported_levels(neardup)
        cmds = {f'neardup {lvl}': ([neardup, 'fingerprint', '--preset', 'python-simhash', '-j', '1',
                                    '--format', 'tsv', tmp.name], dict(os.environ, NEARDUP_SIMD=lvl))
                for lvl in levels}
        cmds['pypi simhash'] = ([peer_python, '-c', PEER, tmp.name], dict(os.environ))
        outs = {name: run(cmd, env)[1] for name, (cmd, env) in cmds.items()}
        want = outs['pypi simhash'].split()
        for name, out in outs.items():
            if out.split() != want:
                sys.exit(f'process_ratio.py: {name} prints other fingerprints than PyPI simhash')
        times = {name: [] for name in cmds}
        # The order turns every run: a process started right after the
        # seconds-long Python one runs measurably slower (25% here), so no
        # command may always take that place.
        names = list(cmds)
        for i in range(runs):
            for name in names[i % len(names):] + names[:i % len(names)]:
                cmd, env = cmds[name]
                times[name].append(run(cmd, env)[0])
        peer = statistics.median(times['pypi simhash'])
        for name, ts in times.items():
            med = statistics.median(ts)
            print(json.dumps({'process': name, 'docs': len(lines), 'bytes': total, 'runs': runs,
                              'median_s': med, 'mb_per_s': total / 1e6 / med, 'ratio_vs_pypi': peer / med}))
    finally:
        os.unlink(tmp.name)


def supported_levels(neardup):
    """The NEARDUP_SIMD levels this CPU runs (the CLI notes the ones it lacks)."""
    out = []
    for lvl in ['avx512', 'avx2', 'portable']:
        r = subprocess.run([neardup, 'config', 'show', 'python-simhash'], capture_output=True,
                           env=dict(os.environ, NEARDUP_SIMD=lvl))
        if b'does not support it' not in r.stderr:
            out.append(lvl)
    return out


def run(cmd, env):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - t0, r.stdout


if __name__ == '__main__':
    main()
