"""``python -m neardup.spark dedup --input PATH --output PATH ...``

Also runs under ``spark-submit`` (``spark-submit --py-files ...
-m``-style: ``spark-submit $(python -c 'import neardup.spark.__main__ as m;
print(m.__file__)') dedup ...``); see docs/SPARK.md.
"""

import sys


def _run() -> int:
    try:
        from neardup.spark.cli import main
    except ImportError as e:  # a missing package: one line, not a traceback
        print(e, file=sys.stderr)
        return 2
    return main()


if __name__ == "__main__":
    raise SystemExit(_run())
