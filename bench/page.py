#!/usr/bin/env python3
"""The page's speed target (issue 55): a 20-page paper (a PDF of ~60 KB of
text, printed by Chromium) checked against a passage data directory of
10^5 documents; the time from choosing the file to the result on the page
(reading the PDF included), median of runs, with its parts: reading the
PDF (POST /v1/extract) and the report (POST /v1/report), each timed alone
over HTTP as well. Also the page's weight (gzip) and the passage
directory's build time and size.

The 10^5 documents are ../shared/data's texts (docs and pairs, English and
Chinese) cut into pieces of about 500 bytes at line ends; the paper is
held-out English text with 10 blocks of indexed documents pasted in.

Needs a venv with playwright (pip install playwright==1.57.0), Debian's
chromium, and a release build:
    target/page-venv/bin/python bench/page.py --bin target/release/neardup
"""
import argparse, gzip, json, os, pathlib, random, re, shutil, statistics, subprocess, sys, tempfile, time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from library_corpus import held_out_host, pieces, texts  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--bin", default="target/release/neardup")
p.add_argument("--data", default="../shared/data")
p.add_argument("--docs", type=int, default=100_000)
p.add_argument("--runs", type=int, default=5)
p.add_argument("--work", default="target/bench-page")
p.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
args = p.parse_args()

work = pathlib.Path(args.work)
work.mkdir(parents=True, exist_ok=True)
rng = random.Random(55)




host, held = held_out_host(args.data)  # the held-out English host, not indexed

corpus = work / "corpus.jsonl"
indexed = []
if not corpus.exists() or sum(1 for _ in open(corpus)) != args.docs:
    n = 0
    with open(corpus, "w", encoding="utf-8") as f:
        skip = held  # the host's documents are the first English ones
        for t in texts(args.data, repeat=False):
            if skip:
                skip -= 1
                continue
            for piece in pieces(t):
                f.write(json.dumps({"id": f"d{n}", "text": piece}, ensure_ascii=False) + "\n")
                n += 1
                if n == args.docs:
                    break
            if n == args.docs:
                break
    print(f"corpus: {n} documents", file=sys.stderr)
docs = [json.loads(l) for l in open(corpus, encoding="utf-8")]
assert len(docs) == args.docs, len(docs)

data = work / "data"
if not (data / "passages" / "MANIFEST.json").exists():
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir()
    t = time.time()
    built = subprocess.run([args.bin, "index", "build", "--passages", str(corpus), "-o", str(data),
                            "--on-error", "skip"], check=True, capture_output=True, text=True)
    print("\n".join(built.stderr.splitlines()[-2:]), file=sys.stderr)
    print(f"passage directory built in {time.time() - t:.1f} s", file=sys.stderr)
size = sum(f.stat().st_size for f in data.iterdir())

# The paper: the host with 10 blocks of indexed English documents pasted in.
paras = [x for x in host.split("\n\n") if x.strip()]
en_docs = [d for d in docs if d["text"].isascii() and len(d["text"]) > 400][:2000]
for _ in range(10):
    d = rng.choice(en_docs)
    paras.insert(rng.randrange(len(paras) + 1), d["text"].strip())
paper_text = "\n\n".join(paras)

from playwright.sync_api import sync_playwright

serve = subprocess.Popen([args.bin, "serve", "--data", str(data), "--listen", "127.0.0.1:0"], stderr=subprocess.PIPE, text=True)
line = serve.stderr.readline()
url = re.search(r"http://127\.0\.0\.1:\d+", line).group(0)


def post(path, body, raw=False):
    data_ = body if raw else json.dumps(body).encode()
    ctype = "application/octet-stream" if raw else "application/json"
    req = urllib.request.Request(url + path, data=data_, method="POST", headers={"Content-Type": ctype})
    t = time.perf_counter()
    with urllib.request.urlopen(req) as r:
        out = json.loads(r.read())
    return out, time.perf_counter() - t


try:
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
        page = browser.new_page()
        esc = lambda s: s.replace("&", "&amp;").replace("<", "&lt;")
        page.set_content('<html><meta charset="utf-8"><body style="font: 12pt/1.5 serif">' +
                         "".join(f"<p>{esc(x)}</p>" for x in paper_text.split("\n\n")) + "</body></html>")
        pdf = work / "paper.pdf"
        page.pdf(path=str(pdf), format="A4")
        pdf_bytes = pdf.read_bytes()
        pages = len(re.findall(rb"/Type\s*/Page[^s]", pdf_bytes))
        extracted, _ = post("/v1/extract?name=paper.pdf", pdf_bytes, raw=True)
        print(f"paper: {pages} pages, {len(pdf_bytes) / 1e3:.0f} KB PDF, {len(extracted['text'].encode()) / 1e3:.1f} KB of text read", file=sys.stderr)
        page.goto(url)
        page.wait_for_selector("#check:not([hidden])")
        totals, extracts, reports = [], [], []
        for run in range(args.runs):
            page.evaluate("document.getElementById('status').textContent = ''")
            page.set_input_files("#file", [])  # the same file again must be a change
            before = page.evaluate("document.body.dataset.checked || ''")
            t = time.perf_counter()
            page.set_input_files("#file", str(pdf))
            page.wait_for_function("() => document.getElementById('status').textContent.startsWith('Read ')")
            page.click("#go")
            page.wait_for_function(f"() => (document.body.dataset.checked || '') !== {json.dumps(before)}")
            totals.append(time.perf_counter() - t)
            _, te = post("/v1/extract?name=paper.pdf", pdf_bytes, raw=True)
            rep, tr = post("/v1/report", {"text": extracted["text"], "name": "paper.pdf", "html": True})
            extracts.append(te)
            reports.append(tr)
        shown = page.locator("#report ol.matches li").count()
        browser.close()
    weight = sum(len(gzip.compress(urllib.request.urlopen(url + a).read()))
                 for a in ("/", "/assets/app.js", "/assets/app.css", "/assets/report.css"))
finally:
    serve.terminate()
    serve.wait()

ms = lambda xs: f"{1000 * statistics.median(xs):.0f} ms"
print(f"page weight: {weight / 1e3:.1f} KB gzip (HTML, script, styles); target <= 150 KB")
print(f"passage directory: {args.docs} documents, {size / 1e6:.1f} MB (index and kept texts)")
print(f"page, choose the PDF to result shown: median {ms(totals)} of {args.runs} ({', '.join(f'{1000*x:.0f}' for x in totals)} ms); target <= 1000 ms")
print(f"  POST /v1/extract (the PDF read): median {ms(extracts)}")
print(f"  POST /v1/report (with the HTML view): median {ms(reports)}; {rep['similarity']*100:.1f}% of the paper found, {len(rep['sources'])} sources, {shown} matches shown")
