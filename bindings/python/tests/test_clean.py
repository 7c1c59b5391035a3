"""Corpus cleaning from Python: exact dedup, boilerplate and substrings
give what the CLI gives for the same input (both call the core), and each
keeps its promises (first copies stay, no broken characters).

The CLI comes from NEARDUP_BIN (else target/release/neardup)."""

import json
import subprocess

import pytest
from test_spark import TESTDATA, neardup_bin

import neardup


def records(n_en=40, n_zh=40):
    recs = []
    for name, n in (("docs_en.jsonl", n_en), ("docs_zh.jsonl", n_zh)):
        for line in (TESTDATA / name).read_text(encoding="utf-8").splitlines()[:n]:
            r = json.loads(line)
            recs.append({"id": r["id"], "text": r["text"]})
    return recs


def with_repeats():
    """The test documents, some repeated exactly or in upper case, with a
    banner paragraph and a Chinese footer sentence in some."""
    base = records(15, 15)
    recs = []
    for i in range(60):
        text = base[(i * 7) % len(base)]["text"]
        if i % 5 == 0:
            text = text.upper()
        if i % 3 == 0:
            text += "\n\nAccept all cookies to continue reading this site.\n\n本文转载自网络，版权归原作者所有。如有侵权请联系删除！"
        recs.append({"id": f"r{i}", "text": text, "n": i})
    return recs


def run_cli(tmp_path, command, recs, *flags):
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding="utf-8")
    out = tmp_path / command
    subprocess.run([neardup_bin(), command, str(src), "-o", str(out), *flags], check=True, capture_output=True)
    return out, [json.loads(line) for line in (out / "kept.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("mode", ["normalized", "raw"])
def test_exact_dedup_same_as_cli(tmp_path, mode):
    recs = with_repeats()
    texts = [r["text"] for r in recs]
    ids = [r["id"] for r in recs]
    _, kept = run_cli(tmp_path, "dedup", recs, "--method", "exact", "--exact", mode)
    clusters = neardup.dedup(texts, ids=ids, method="exact", exact=mode)
    removed = {i for c in clusters for i in c[1:]}
    assert [r["id"] for r in kept] == [i for i in ids if i not in removed]
    seen = set()
    want = []
    for r in recs:
        key = r["text"] if mode == "raw" else r["text"].lower()
        if key not in seen:
            seen.add(key)
            want.append(r["id"])
    assert [r["id"] for r in kept] == want
    with pytest.raises(ValueError, match="identical texts"):
        neardup.dedup(texts, method="exact", k=3)


@pytest.mark.parametrize(
    "flags,kw",
    [
        ((), {}),
        (("--unit", "line", "--repeats"), {"unit": "line", "repeats": True}),
        (("--unit", "sentences:1", "--min-docs", "5"), {"unit": "sentences:1", "min_docs": 5}),
        (("--unit", "sentences:3", "--min-chars", "200"), {"unit": "sentences:3", "min_chars": 200}),
    ],
)
def test_boilerplate_same_as_cli(tmp_path, flags, kw):
    recs = with_repeats()
    out, kept = run_cli(tmp_path, "boilerplate", recs, *flags)
    got = neardup.boilerplate([r["text"] for r in recs], **kw)
    want = [{**r, "text": t} for r, t in zip(recs, got["texts"]) if t is not None]
    assert kept == want
    removed = [json.loads(line) for line in (out / "removed.jsonl").read_text(encoding="utf-8").splitlines()]
    assert removed == got["removed"]
    if not kw:
        assert got["removed"][0]["text"] == "Accept all cookies to continue reading this site."
        assert all("Accept all cookies" not in (t or "") for t in got["texts"])


@pytest.mark.parametrize(
    "flags,kw",
    [
        (("--min-bytes", "60"), {"min_bytes": 60}),
        (("--min-tokens", "12", "--keep", "none"), {"min_tokens": 12, "keep": "none"}),
    ],
)
def test_substrings_same_as_cli(tmp_path, flags, kw):
    recs = with_repeats()
    out, kept = run_cli(tmp_path, "substrings", recs, *flags)
    texts = [r["text"] for r in recs]
    got = neardup.substrings(texts, **kw)
    want = [{**r, "text": t} for r, t in zip(recs, got["texts"]) if t is not None]
    assert kept == want
    # The side file's byte spans are the Python result's character spans.
    spans = [json.loads(line) for line in (out / "removed.jsonl").read_text(encoding="utf-8").splitlines()]
    by_id = {r["id"]: i for i, r in enumerate(recs)}
    flat = []
    for s in spans:
        t = texts[by_id[s["id"]]]
        b = t.encode("utf-8")
        start = len(b[: s["start"]].decode("utf-8"))
        end = len(b[: s["end"]].decode("utf-8"))
        flat.append((by_id[s["id"]], start, end))
    assert flat == [(i, a, b) for i, sp in enumerate(got["spans"]) for (a, b) in sp]
    for t, sp in zip(texts, got["spans"]):
        for a, b in sp:
            assert t[a:b].strip() == t[a:b]
    if kw.get("keep", "first") == "first":
        assert got["texts"][0] == texts[0], "the first copy stays"
