"""The stubs describe the compiled module (mypy's stubtest) and type-check
typical use under `mypy --strict`, catching a wrong call."""

import subprocess
import sys
import textwrap
from pathlib import Path

from conftest import need

GOOD = textwrap.dedent(
    """
    import neardup
    from neardup.compat import Simhash, SimhashIndex

    fingerprinter = neardup.Fingerprinter("default")
    values: list[int] = fingerprinter.fingerprint_batch(["a b c", "d e f"])
    one: int = fingerprinter.fingerprint("a b c")
    d: int = neardup.distance(values[0], values[1])
    s: float = neardup.similarity(values[0], one)
    index = neardup.Index(k=3)
    index.insert_batch(["x", "y"], values)
    hits: list[tuple[str | int, int]] = index.query(one)
    batches = index.query_batch(values, k=2)
    clusters: list[list[object]] = neardup.dedup(["a b c", "a b c"], k=3, ids=["p", "q"])
    close: list[tuple[int, int, int]] = neardup.pairs(values, k=3)
    minhasher = neardup.MinHasher("minhash", threshold=0.6)
    sig: list[int] = minhasher.signature("a b c d")
    sigs = minhasher.signature_of_features_batch([["a b", "b c"]])
    lsh = minhasher.index()
    lsh.insert("x", sig)
    similar: list[tuple[str | int, float]] = lsh.query(sig, threshold=0.8)
    j: float = neardup.jaccard(sig, sig)
    loose: list[list[object]] = neardup.dedup(["a b c", "a b c"], method="minhash", threshold=0.7)
    sh = Simhash("How are you?")
    near: list[str] = SimhashIndex([("1", sh)], k=3).get_near_dups(sh)
    """
)

BAD = "import neardup\nneardup.Index(k='3')\n"


def mypy(*args, input_dir=None):
    return subprocess.run([sys.executable, "-m", "mypy", *args], capture_output=True, text=True, cwd=input_dir)


def test_stubtest_finds_no_mismatch(tmp_path):
    need("mypy")
    # `neardup` and its submodules (_neardup, compat, spark), as installed.
    config = Path(__file__).with_name("mypy.ini")
    run = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "--mypy-config-file", str(config), "neardup"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert run.returncode == 0 and "Success" in run.stdout, run.stdout + run.stderr


def test_typical_use_checks_strict_and_a_wrong_call_is_caught(tmp_path):
    need("mypy")
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "bad.py").write_text(BAD)
    good = mypy("--strict", "--no-incremental", "good.py", input_dir=tmp_path)
    assert good.returncode == 0, good.stdout + good.stderr
    bad = mypy("--strict", "--no-incremental", "bad.py", input_dir=tmp_path)
    assert bad.returncode == 1 and 'incompatible type "str"' in bad.stdout, bad.stdout
