"""``python -m neardup.spark dedup --input PATH --output PATH ...``

Also runs under ``spark-submit`` (``spark-submit --py-files ...
-m``-style: ``spark-submit $(python -c 'import neardup.spark.__main__ as m;
print(m.__file__)') dedup ...``); see docs/SPARK.md.
"""

from neardup.spark.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
