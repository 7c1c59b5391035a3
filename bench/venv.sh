# Sourced by the bench scripts (run from the repository root).
#
#   tdir      the cargo target directory, absolute ($CARGO_TARGET_DIR or target)
#   bench_venv NAME "IMPORTS" PKG...
#             make sure $tdir/NAME is a virtualenv in which `import IMPORTS`
#             works, installing PKG... from PyPI if not; sets $venv to it.
tdir="${CARGO_TARGET_DIR:-target}"
case "$tdir" in /*) ;; *) tdir="$PWD/$tdir" ;; esac

bench_venv() {
  venv="$tdir/$1"
  local imports="$2"
  shift 2
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import $imports" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "$@"
  fi
}
