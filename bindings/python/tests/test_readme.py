"""Every ```python block of the package README and of the top README runs."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
READMES = [ROOT / "bindings" / "python" / "README.md", ROOT / "README.md"]


def blocks():
    for path in READMES:
        if not path.exists():
            continue
        text = path.read_text(encoding="utf-8")
        for n, m in enumerate(re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M)):
            line = text[: m.start()].count("\n") + 1
            yield pytest.param(m.group(1), id=f"{path.relative_to(ROOT)}:{line}")


@pytest.mark.parametrize("code", list(blocks()))
def test_readme_block_runs(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "<README>", "exec"), {"__name__": "__readme__"})


def test_there_are_blocks():
    assert len(list(blocks())) >= 5
