"""The Spark job without its packages: one line naming them and the fix."""

import subprocess
import sys

# Runs `python -m neardup.spark dedup …` with pyarrow and pandas hidden.
HIDDEN = """
import importlib.abc, runpy, sys
class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('pyarrow', 'pandas'):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Hide())
sys.argv = ['neardup.spark', 'dedup', '--input', 'x.jsonl', '--output', 'out']
runpy.run_module('neardup.spark', run_name='__main__', alter_sys=True)
"""


def test_a_missing_package_is_one_line_naming_it_and_the_extra(tmp_path):
    run = subprocess.run([sys.executable, "-c", HIDDEN], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    assert "pyarrow is not installed" in lines[0] and "pandas is not installed" in lines[0]
    assert "pip install 'neardup[spark]'" in lines[0]
    assert not (tmp_path / "out").exists()


def test_the_package_imports_without_them():
    code = HIDDEN.split("sys.argv")[0] + "import neardup.spark\ntry:\n    neardup.spark.dedup\n" \
        "except ImportError as e:\n    print(e)\n"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "neardup.spark needs" in run.stdout and "neardup[spark]" in run.stdout


def test_the_extra_names_what_the_check_requires():
    import tomllib
    from pathlib import Path

    from neardup.spark import _requires

    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    extra = pyproject["project"]["optional-dependencies"]["spark"]
    assert sorted(extra) == sorted(f"{d}>={'.'.join(map(str, v))}" for _, d, v in _requires.REQUIRED)
