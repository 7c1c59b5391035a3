"""The page of `neardup serve` in a real browser (headless Chromium, driven
by Playwright), and the same spans from the page, `POST /v1/report` and
`neardup report --against DIR` on 50 planted copies (the method of
bench/report_accuracy.py: a block of 2-8 sentences of an indexed document
pasted between two paragraphs of a document that is not indexed).

One screenshot per view is kept under target/page-shots/ for people to
look at. Needs NEARDUP_BIN (a release `neardup`) and Chromium
(`apt-get install chromium`; CHROMIUM names another); without Chromium
the browser tests skip, unless NEARDUP_REQUIRE_CHROMIUM=1 (CI).

    NEARDUP_BIN=target/release/neardup python -m pytest tests/page
"""
import http.client
import io
import json
import os
import pathlib
import random
import re
import shutil
import subprocess
import time
import urllib.request
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("NEARDUP_BIN", str(ROOT / "target" / "release" / "neardup"))
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
SHOTS = ROOT / "target" / "page-shots"
TRIALS = 50


def docs(lang):
    return [json.loads(l) for l in open(ROOT / "testdata" / f"docs_{lang}.jsonl", encoding="utf-8")]


# Sentences by a simple rule (as bench/report_accuracy.py cuts them).
STARTS = {"en": re.compile(r"(?<=[.!?])\s+(?=[A-Z])|\n\s*\n"), "zh": re.compile(r"(?<=[。！？])\s*|\n\s*\n")}


def sentences(text, lang):
    cuts = [0] + [m.end() for m in STARTS[lang].finditer(text)] + [len(text)]
    out = []
    for a, b in zip(cuts, cuts[1:]):
        body = text[a:b].strip()
        if len(body) >= 10:
            out.append(body)
    return out


def plant(rng, lang, hosts, sources):
    """A host (not indexed) with a block of a source's sentences pasted
    between two of its paragraphs."""
    while True:
        h, s = rng.choice(hosts), rng.choice(sources)
        ss = sentences(s["text"], lang)
        if len(ss) < 4:
            continue
        n = rng.randint(2, min(8, len(ss)))
        at = rng.randrange(0, len(ss) - n + 1)
        block = (" " if lang == "en" else "").join(ss[at : at + n])
        paras = [p for p in h["text"].split("\n\n") if p.strip()]
        cut = rng.randrange(0, len(paras) + 1)
        text = "\n\n".join(paras[:cut] + [block] + paras[cut:])
        return {"text": text, "block": block, "source": s["id"], "lang": lang}


@pytest.fixture(scope="session")
def corpus(tmp_path_factory):
    """The passage data directory (every other document of testdata, texts
    kept), and the 50 planted copies."""
    work = tmp_path_factory.mktemp("page")
    indexed, hosts = [], {}
    for lang in ("en", "zh"):
        all_docs = docs(lang)
        indexed += all_docs[0::2]
        hosts[lang] = (all_docs[1::2], all_docs[0::2])
    src = work / "indexed.jsonl"
    src.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in indexed), encoding="utf-8")
    data = work / "data"
    data.mkdir()
    subprocess.run([BIN, "index", "build", "--passages", str(src), "-o", str(data)],
                   check=True, capture_output=True)
    rng = random.Random(20261129)
    planted = [plant(rng, lang, *hosts[lang]) for lang in ("en", "zh") for _ in range(TRIALS // 2)]
    # The command line's reports, before a server holds the library (it
    # opens it to write: `neardup report --against` then says to ask it).
    cli = [cli_report({"work": work, "data": data}, i, p["text"]) for i, p in enumerate(planted)]
    return {"work": work, "data": data, "planted": planted, "cli": cli}


class Server:
    def __init__(self, data, *extra):
        # Its messages go to a file beside the data (shown when it fails).
        self.log = pathlib.Path(str(data) + f".serve{len(extra)}.log")
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen([BIN, "serve", "--data", str(data), "--listen", "127.0.0.1:0", *extra],
                                         stderr=log)
        for _ in range(200):
            m = re.search(r"http://127\.0\.0\.1:(\d+)", self.log.read_text())
            if m or self.proc.poll() is not None:
                break
            time.sleep(0.05)
        assert m, self.log.read_text()
        self.port = int(m.group(1))
        self.url = f"http://127.0.0.1:{self.port}"

    def post(self, path, body, headers=None):
        req = urllib.request.Request(self.url + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(req) as r:
                return r.status, json.loads(r.read()), dict(r.headers)
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read()), dict(e.headers)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


@pytest.fixture(scope="session")
def server(corpus):
    s = Server(corpus["data"])
    yield s
    s.stop()


def spans_of(report):
    """(A start, A end, source, B start, B end) of each match."""
    return [(m["a"]["start"], m["a"]["end"], m["b"]["id"], m["b"]["start"], m["b"]["end"]) for m in report["matches"]]


def cli_report(corpus, i, text):
    path = corpus["work"] / f"planted{i}.txt"
    path.write_text(text, encoding="utf-8")
    out = subprocess.run([BIN, "report", str(path), "--against", str(corpus["data"]), "--format", "json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def test_api_and_cli_give_the_same_spans_on_planted_copies(corpus, server):
    found = 0
    for i, p in enumerate(corpus["planted"]):
        status, api, headers = server.post("/v1/report", {"text": p["text"], "name": f"planted{i}"})
        assert status == 200, api
        cli = corpus["cli"][i]
        assert spans_of(api) == spans_of(cli), (i, p)
        assert api["similarity"] == cli["similarity"]
        assert api["ratios"] == cli["ratios"]
        # Both sides' texts, from the kept texts.
        for m in api["matches"]:
            assert m["a"]["text"] == p["text"].encode()[m["a"]["start"]:m["a"]["end"]].decode()
            assert m["b"]["text"]
        raw = p["text"].encode()
        start = raw.find(p["block"].encode())
        end = start + len(p["block"].encode())
        found += any(m["b"]["id"] == p["source"] and m["a"]["start"] < end and start < m["a"]["end"]
                     for m in api["matches"])
    # Most planted blocks are found in their source (those of short
    # sentences make no window of 40 characters, as for the CLI).
    print(f"planted blocks found in their source: {found} of {TRIALS}")
    assert found >= TRIALS * 0.8, found


def test_a_report_while_the_server_holds_the_library_says_to_ask_it(corpus, server):
    path = corpus["work"] / "while.txt"
    path.write_text(corpus["planted"][0]["text"], encoding="utf-8")
    run = subprocess.run([BIN, "report", str(path), "--against", str(corpus["data"])], capture_output=True, text=True)
    assert run.returncode != 0 and "POST /v1/report" in run.stderr and "panicked" not in run.stderr, run.stderr


def test_report_needs_passages_and_says_so(tmp_path):
    s = Server(tmp_path)
    try:
        status, body, headers = s.post("/v1/report", {"text": "Some text to check. It has two sentences."})
        assert status == 409 and body["error"]["code"] == "no_passages", body
        assert "index build --passages" in body["error"]["message"]
        assert "default-src 'none'" in headers["content-security-policy"]
    finally:
        s.stop()


def upload(server, name, data):
    req = urllib.request.Request(f"{server.url}/v1/extract?name={name}", data=data, method="POST",
                                 headers={"Content-Type": "application/octet-stream"})
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def docx(paragraphs):
    def esc(t):
        return t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    body = "".join(f'<w:p><w:r><w:t xml:space="preserve">{esc(p)}</w:t></w:r></w:p>' for p in paragraphs)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>')
        z.writestr("word/document.xml", '<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
                   f"<w:body>{body}</w:body></w:document>")
    return out.getvalue()


def zip_bomb():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("word/document.xml", "<w:document><w:body><w:p><w:r><w:t>" + "a" * (200 << 20) + "</w:t></w:r></w:p></w:body></w:document>")
    return out.getvalue()


def test_bad_files_get_clear_errors_from_the_api(server):
    cases = {
        "program.pdf": (b"MZ\x90\x00\x03\x00\x00\x00\x04\x00" + bytes(64), 422, "not a PDF: it is a program"),
        "photo.docx": (b"\x89PNG\r\n\x1a\n" + bytes(64), 422, "it is an image"),
        "broken.pdf": (b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 9 0 R >> endobj\nxref\n0 2\nbroken\ntrailer\n<< /Root 1 0 R >>\nstartxref\n999999\n%%EOF\n", 422, "cannot be read"),
        "bomb.docx": (zip_bomb(), 422, "inflates past the limit"),
        "empty.txt": (b"", 400, "empty"),
        "gbk.txt": ("中文".encode("gb18030"), 422, "not UTF-8"),
    }
    for name, (data, status, words) in cases.items():
        got, body = upload(server, name, data)
        assert got == status and words in body["error"]["message"], (name, got, body)
    # 200 MB announced: refused at once, before it is read.
    c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    c.putrequest("POST", "/v1/extract?name=huge.pdf")
    c.putheader("Content-Type", "application/octet-stream")
    c.putheader("Content-Length", str(200 << 20))
    c.endheaders()
    c.send(b"%PDF-1.4\n" + bytes(1 << 16))
    r = c.getresponse()
    body = json.loads(r.read())
    assert r.status == 413 and body["error"]["code"] == "upload_too_large", body
    assert "200 MiB" in body["error"]["message"] and "--max-upload" in body["error"]["message"]
    # The server still answers.
    assert upload(server, "ok.md", b"# Fine\n\nStill here.")[0] == 200


# ---- in the browser ----

@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM:
        if os.environ.get("NEARDUP_REQUIRE_CHROMIUM") == "1":
            pytest.fail("Chromium is required (NEARDUP_REQUIRE_CHROMIUM=1) but not found: apt-get install chromium")
        pytest.skip("needs Chromium (apt-get install chromium)")
    playwright = pytest.importorskip("playwright.sync_api")
    SHOTS.mkdir(parents=True, exist_ok=True)
    with playwright.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture()
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    p = context.new_page()
    p.console_errors = []
    p.on("console", lambda m: m.type == "error" and p.console_errors.append(m.text))
    yield p
    context.close()


# Predicates are functions, not expression strings: Playwright evaluates a
# string with eval, which the page's Content-Security-Policy forbids.


def check(page, text=None):
    """Submits the form (after filling the text, if given) and waits for the results."""
    if text is not None:
        page.fill("#text", text)
    before = page.evaluate("document.body.dataset.checked || ''")
    page.click("#go")
    page.wait_for_function(f"() => (document.body.dataset.checked || '') !== {json.dumps(before)} || !document.getElementById('error').hidden")
    assert page.is_hidden("#error"), page.inner_text("#error") + "".join(
        pathlib.Path(f).read_text() for f in pathlib.Path(ROOT / "target").glob("pytest-tmp-page/*/*.log"))


MATCH = re.compile(r"A (\d+)\.\.(\d+) ↔ (.*) B (\d+)\.\.(\d+) \(distance \d+\)")


def page_spans(page):
    """The matches the page lists, and the highlighted texts of each, both sides."""
    spans, a_texts, b_texts = [], [], []
    items = page.locator("#report ol.matches li").all_inner_texts()
    for i, item in enumerate(items):
        m = MATCH.fullmatch(item.strip())
        assert m, item
        spans.append((int(m[1]), int(m[2]), m[3], int(m[4]), int(m[5])))
        title = f'a.hl[title="match {i + 1}"]'
        a_texts.append("".join(page.locator(f"#doc-a {title}").all_text_contents()))
        b_texts.append("".join(page.locator(f"#doc-b {title}").all_text_contents()))
    return spans, a_texts, b_texts


def shown(matches, side, doc_of):
    """The text the view highlights for each match on `side`: its range
    less the bytes an earlier match in the same document covers (the view
    wraps every character once, in the first match covering it)."""
    out = []
    for i, m in enumerate(matches):
        r, doc = m[side], doc_of(m)
        taken = set()
        for e in matches[:i]:
            if doc_of(e) == doc:
                taken.update(range(e[side]["start"], e[side]["end"]))
        raw = r["text"].encode()
        out.append(b"".join(raw[k - r["start"]:k - r["start"] + 1]
                            for k in range(r["start"], r["end"]) if k not in taken).decode())
    return out


def test_page_gives_the_api_spans_on_planted_copies(corpus, server, page):
    page.goto(server.url)
    page.wait_for_selector("#check:not([hidden])")
    page.screenshot(path=str(SHOTS / "form.png"), full_page=True)
    for i, p in enumerate(corpus["planted"]):
        check(page, p["text"])
        status, api, _ = server.post("/v1/report", {"text": p["text"], "name": "the pasted text"})
        spans, a_texts, b_texts = page_spans(page)
        assert spans == spans_of(api), i
        # Highlights: both sides, the exact texts of each span (less what
        # an earlier match covers: every character is highlighted once).
        assert a_texts == shown(api["matches"], "a", lambda m: None), i
        assert b_texts == shown(api["matches"], "b", lambda m: m["b"]["id"]), i
        if i == 0:
            page.screenshot(path=str(SHOTS / "results-en.png"), full_page=True)
        if i == TRIALS - 1:
            page.screenshot(path=str(SHOTS / "results-zh.png"), full_page=True)
    # Links jump between the sides.
    page.locator("#doc-a a.hl").first.click()
    assert page.evaluate("location.hash").startswith("#b")
    assert page.console_errors == []


def test_page_reads_a_docx_and_a_pdf(corpus, server, page, tmp_path):
    en = next(p for p in corpus["planted"] if p["lang"] == "en")
    zh = next(p for p in corpus["planted"] if p["lang"] == "zh")
    page.goto(server.url)
    page.wait_for_selector("#check:not([hidden])")
    # A .docx: its paragraphs are the text, checked as pasted text is.
    paper = tmp_path / "paper.docx"
    paper.write_bytes(docx(en["text"].split("\n\n")))
    page.set_input_files("#file", str(paper))
    page.wait_for_function("() => document.getElementById('status').textContent.startsWith('Read ')")
    assert page.input_value("#text") == en["text"]
    check(page)
    status, api, _ = server.post("/v1/report", {"text": en["text"], "name": "paper.docx"})
    assert page_spans(page)[0] == spans_of(api)
    assert "paper.docx" in page.inner_text("#doc-a h2")
    page.screenshot(path=str(SHOTS / "results-docx.png"), full_page=True)
    # A .pdf printed by Chromium (Chinese text, fonts with ToUnicode maps):
    # its text layer is read, and the planted block found in its source.
    printer = page.context.new_page()
    paras = "".join(f"<p>{t}</p>" for t in zh["text"].split("\n\n"))
    printer.set_content(f'<html lang="zh"><meta charset="utf-8"><body style="font-size:14px">{paras}</body></html>')
    pdf = tmp_path / "论文.pdf"
    printer.pdf(path=str(pdf))
    printer.close()
    page.set_input_files("#file", str(pdf))
    page.wait_for_function("() => document.getElementById('status').textContent.includes('(pdf)')")
    check(page)
    spans = page_spans(page)[0]
    assert any(s[2] == zh["source"] for s in spans), (spans, zh["source"])
    page.screenshot(path=str(SHOTS / "results-pdf.png"), full_page=True)
    # A phone: one column, nothing wider than the screen.
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=str(SHOTS / "phone.png"), full_page=False)
    assert page.console_errors == []


def test_page_shows_clear_errors_for_bad_files(server, page, tmp_path):
    page.goto(server.url)
    page.wait_for_selector("#check:not([hidden])")
    bad = tmp_path / "thesis.pdf"
    bad.write_bytes(b"MZ\x90\x00\x03\x00\x00\x00" + bytes(256))
    page.set_input_files("#file", str(bad))
    page.wait_for_selector("#error:not([hidden])")
    assert "thesis.pdf: not a PDF: it is a program" in page.inner_text("#error")
    page.screenshot(path=str(SHOTS / "error-bad-file.png"), full_page=True)
    # 200 MB: refused before it is sent.
    huge = tmp_path / "huge.pdf"
    with open(huge, "wb") as f:
        f.truncate(200 << 20)
    page.set_input_files("#file", str(huge))
    page.wait_for_function("() => document.getElementById('error').textContent.includes('over this server')")
    assert "huge.pdf is 200 MiB" in page.inner_text("#error")
    # Nothing to check.
    page.fill("#text", "   ")
    page.click("#go")
    assert "Paste a text" in page.inner_text("#error")
    # The only console errors: the browser's note of the 422 answer.
    assert [e for e in page.console_errors if "status of 422" not in e] == []


def test_page_logs_in_with_the_token_into_an_httponly_cookie(corpus, page, tmp_path):
    token = tmp_path / "token"
    token.write_text("s3cret-token-of-32-bytes-or-so-xyz\n")
    # A data directory of its own (the session's server holds the other's
    # store), with the same passages.
    data = tmp_path / "data"
    data.mkdir()
    # (the library is closed: the session's server holds its own copy)
    shutil.copytree(corpus["data"] / "passages", data / "passages")
    s = Server(data, "--token-file", str(token))
    try:
        # The API refuses without the token.
        status, body, _ = s.post("/v1/report", {"text": "x"})
        assert status == 401, body
        page.goto(s.url)
        page.wait_for_selector("#login:not([hidden])")
        page.screenshot(path=str(SHOTS / "login.png"), full_page=True)
        page.fill("#token", "wrong")
        page.click("#login button")
        page.wait_for_selector("#error:not([hidden])")
        assert "Wrong token" in page.inner_text("#error")
        page.fill("#token", token.read_text().strip())
        page.click("#login button")
        page.wait_for_selector("#check:not([hidden])")
        cookie = next(c for c in page.context.cookies() if c["name"] == "neardup_session")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict", cookie
        assert page.evaluate("document.cookie") == ""
        check(page, corpus["planted"][0]["text"])
        assert page.locator("#report a.hl").count() > 0
        # Logging out ends the session.
        page.click("#logout")
        page.wait_for_selector("#login:not([hidden])")
        assert not any(c["name"] == "neardup_session" for c in page.context.cookies())
        # The only console errors: the browser's notes of the 401 answers.
        assert [e for e in page.console_errors if "status of 401" not in e] == []
    finally:
        s.stop()


def test_page_weight_and_policy(server):
    total = 0
    import gzip
    for path in ("/", "/assets/app.js", "/assets/app.css", "/assets/report.css"):
        with urllib.request.urlopen(server.url + path) as r:
            body = r.read()
            csp = r.headers["Content-Security-Policy"]
            assert "script-src 'self'" in csp and "'unsafe-inline'" not in csp
            assert r.headers["X-Content-Type-Options"] == "nosniff"
            total += len(gzip.compress(body))
    # Scripts and styles included, compressed: far under 150 KB.
    assert total < 150_000, total
    html = urllib.request.urlopen(server.url + "/").read().decode()
    assert "<script>" not in html and "style=" not in html and "<style" not in html
