#!/usr/bin/env bash
# Installs of ptsbench as users make them, each into a fresh venv used from a folder outside the source tree:
#   1. the wheel (`pip wheel`, with the compiled log parser and launcher of fio): ptsbench --version, ptsbench plot of
#      a fio log and the demo's dry run;
#   2. `CC=/bin/false pip install .` (no C compiler): the install succeeds, says in one line each that the fast parser
#      and the launcher of fio were not built, ptsbench plot of the same log gives the same summary with the numpy
#      parser, and a run of fio started with a fork instead of the launcher works;
#   3. scripts/install.sh run by a user without root on a machine without fio: it says to install fio and stops;
#   4. `pipx install .`: ptsbench on PATH in a venv of its own (pipx itself installed into a throwaway venv).
# Dependencies come from a wheel folder (the versions of constraints.txt) filled from PyPI on the first run and used
# offline after that (PTSBENCH_WHEELS sets where; default ~/.cache/ptsbench/wheels). About a minute (1.5 minutes on
# a 2-CPU machine loaded by other test runs); --no-compile spares byte-compiling the dependencies twice.
set -euo pipefail
cd "$(dirname "$0")/.."
source_dir=$PWD
python=$(.venv/bin/python -c 'import sys; print(sys._base_executable)')  # the interpreter install.sh chose
wheels=${PTSBENCH_WHEELS:-${XDG_CACHE_HOME:-$HOME/.cache}/ptsbench/wheels}
PIPX_VERSION=1.18.4
PIPX_PIP_VERSION=26.3  # the pip pipx 1.18 wants (>= 26.1) in its shared venv
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$wheels"
step() { echo "check-install: $*" >&2; }
fail() { echo "check-install: FAILED: $*" >&2; exit 1; }

# A copy of the tree as git sees it (tracked and new files, not .venv, build/ or a compiled parser built in place),
# so that no build left over from development reaches the wheel.
copy_source() {
  mkdir -p "$1"
  git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' file; do
    [ -e "$file" ] && printf '%s\0' "$file"
  done | xargs -0 cp --parents -t "$1"
}

offline=(--no-index --find-links "$wheels")
# pip install from the wheel folder alone; when something is missing there, fetch it (and what it needs) first
pip_install() {
  local venv=$1; shift
  if ! "$venv/bin/pip" install --no-compile "${offline[@]}" "$@" >"$work/pip.out" 2>&1; then
    step "fetching wheels into $wheels"
    .venv/bin/pip download -q -d "$wheels" -c constraints.txt setuptools "$@" >/dev/null
    rm -f "$wheels"/ptsbench-*.whl  # only what ptsbench needs: its own wheel is built fresh each time
    "$venv/bin/pip" install --no-compile "${offline[@]}" "$@" >"$work/pip.out" 2>&1 || { cat "$work/pip.out" >&2; return 1; }
  fi
}

fresh_venv() {
  "$python" -m venv "$1"
  "$1/bin/python" -c 'import sys; sys.exit(sys.prefix == sys.base_prefix)' || fail "$1 is not a venv"
}

# a small fio latency log, one line per IO, and a windowed bandwidth log
logs=$work/logs
mkdir -p "$logs"
(cd "$logs" && fio --name=check --ioengine=null --rw=randrw --bs=4k --size=8m --write_lat_log=check \
  --write_bw_log=check --per_job_logs=0 --output=/dev/null)

# 1. the wheel
copy_source "$work/src-wheel"
step "building the wheel"
if ! .venv/bin/pip wheel -q --no-deps "${offline[@]}" -w "$work/dist" "$work/src-wheel" 2>"$work/pip.err"; then
  .venv/bin/pip download -q -d "$wheels" -c constraints.txt setuptools >/dev/null
  .venv/bin/pip wheel -q --no-deps "${offline[@]}" -w "$work/dist" "$work/src-wheel"
fi
wheel=$(ls "$work"/dist/ptsbench-*.whl)
"$python" -c 'import sys, zipfile; sys.exit(not any(name.startswith("ptsbench/fio/_logparse.") and
  name.endswith(".so") for name in zipfile.ZipFile(sys.argv[1]).namelist()))' "$wheel" \
  || fail "the wheel has no compiled log parser"
"$python" -c 'import sys, zipfile; sys.exit(not any(info.filename == "ptsbench/fio/_bound_exec" and
  info.external_attr >> 16 & 0o111 for info in zipfile.ZipFile(sys.argv[1]).infolist()))' "$wheel" \
  || fail "the wheel has no executable launcher of fio"
fresh_venv "$work/venv-wheel"
step "installing $(basename "$wheel") into a fresh venv"
pip_install "$work/venv-wheel" "$wheel"
mkdir -p "$work/elsewhere"
cd "$work/elsewhere"
ptsbench=$work/venv-wheel/bin/ptsbench
"$ptsbench" --version | grep -q "ptsbench" || fail "ptsbench --version"
"$ptsbench" info . --json | grep -q '"fio_start": "compiled launcher (vfork)"' \
  || fail "ptsbench info does not say fio is started by the compiled launcher"
"$work/venv-wheel/bin/python" -c 'import ptsbench, sys; sys.exit(not ptsbench.__file__.startswith(sys.prefix))' \
  || fail "ptsbench was imported from outside the venv"
"$ptsbench" plot "$logs/check_lat.log" "$logs/check_bw.log" --out "$work/plot-wheel" >/dev/null
[ -s "$work/plot-wheel/check_lat.png" ] || fail "ptsbench plot wrote no chart from the wheel install"
"$ptsbench" pts --profile demo --dry-run --verbose >"$work/dry-run.txt" || fail "the demo's dry run"
grep -q "^\[" "$work/dry-run.txt" || fail "the demo's dry run printed no job file"
cd "$source_dir"

# 2. no C compiler
copy_source "$work/src-nocc"
fresh_venv "$work/venv-nocc"
step "CC=/bin/false pip install . into a fresh venv"
cd "$work/elsewhere"
CC=/bin/false pip_install "$work/venv-nocc" -v "$work/src-nocc" || fail "pip install without a C compiler"
grep -c "ptsbench: the fast fio log parser (C) was not built" "$work/pip.out" | grep -qx 1 \
  || fail "the install without a compiler did not say once that the fast parser was not built"
grep -c "ptsbench: the launcher of fio (C) was not built" "$work/pip.out" | grep -qx 1 \
  || fail "the install without a compiler did not say once that the launcher of fio was not built"
ptsbench=$work/venv-nocc/bin/ptsbench
"$ptsbench" info . --json | grep -q '"fio_log_reader": "numpy (the compiled C parser was not built)"' \
  || fail "ptsbench info does not say the numpy reader is used"
"$ptsbench" info . --json | grep -q '"fio_start": "fork and preexec_fn' \
  || fail "ptsbench info does not say fio is started with a fork"
printf '[check]\nioengine=null\nsize=8m\nrw=randread\n' >"$work/null.fio"
"$ptsbench" run "$work/null.fio" --out "$work/run-nocc" >"$work/run-nocc.out" 2>&1 \
  && grep -q "randread" "$work/run-nocc.out" || { cat "$work/run-nocc.out" >&2; fail "a run of fio without the launcher"; }
"$ptsbench" plot "$logs/check_lat.log" "$logs/check_bw.log" --out "$work/plot-nocc" >/dev/null
cmp "$work/plot-wheel/summary.csv" "$work/plot-nocc/summary.csv" \
  || fail "the numpy reader's summary differs from the compiled reader's"
cd "$source_dir"

# 3. install.sh as a user without root on a machine without fio: it names the package instead of calling apt-get
as_nobody() { su nobody -s /bin/bash -c "$1"; }
system_python=""
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then  # a Python 3.11+ that another user can run
  system_python=$(as_nobody 'PATH=/usr/local/bin:/usr/bin:/bin; for p in python3.13 python3.12 python3.11 python3; do
    "$p" -c "import sys; sys.exit(sys.version_info < (3, 11))" 2>/dev/null && type -P "$p" && break; done' || true)
fi
if [ -n "$system_python" ]; then
  rootless=$work/rootless
  mkdir -p "$rootless/scripts" "$rootless/bin"
  cp scripts/install.sh scripts/programs.txt "$rootless/scripts/"
  for tool in dirname id xargs echo sudo; do  # what install.sh uses before it stops; no fio, no apt-get
    found=$(type -P "$tool") && ln -s "$found" "$rootless/bin/$tool"
  done
  ln -s "$system_python" "$rootless/bin/python3"
  chmod -R a+rX "$work"
  if as_nobody "PATH=$rootless/bin $BASH $rootless/scripts/install.sh" >"$work/rootless.out" 2>&1; then
    fail "install.sh without fio and without root did not stop"
  fi
  grep -q "install.sh: missing: fio. Install them as root" "$work/rootless.out" && ! grep -q "apt-get install -y" \
    "$work/rootless.out" || { cat "$work/rootless.out" >&2; fail "install.sh without root did not name what to install"; }
else
  step "left out: install.sh as another user (needs root to switch to nobody, and a Python 3.11+ nobody can run)"
fi
# 4. pipx install . (pipx pinned, so that the check means the same tomorrow)
fresh_venv "$work/venv-pipx"
pip_install "$work/venv-pipx" "pipx==$PIPX_VERSION" || fail "installing pipx $PIPX_VERSION"
ls "$wheels"/pip-"$PIPX_PIP_VERSION"-*.whl >/dev/null 2>&1 \
  || .venv/bin/pip download -q --no-deps -d "$wheels" "pip==$PIPX_PIP_VERSION"  # pipx upgrades its shared pip
step "pipx install . (pipx $PIPX_VERSION)"
cd "$work/elsewhere"
PIPX_HOME=$work/pipx PIPX_BIN_DIR=$work/pipx-bin "$work/venv-pipx/bin/pipx" install --quiet \
  --pip-args="--no-index --find-links $wheels" "$work/src-wheel" >"$work/pipx.out" 2>&1 \
  || { cat "$work/pipx.out" >&2; fail "pipx install ."; }
"$work/pipx-bin/ptsbench" --version | grep -q "ptsbench" || fail "ptsbench --version after pipx install"
"$work/pipx-bin/ptsbench" plot "$logs/check_lat.log" --out "$work/plot-pipx" >/dev/null
[ -s "$work/plot-pipx/check_lat.png" ] || fail "ptsbench plot wrote no chart from the pipx install"
cd "$source_dir"
step "ok in ${SECONDS} s: wheel install; install without a C compiler (numpy log reader, same summary; fio started with a fork); install.sh without root; pipx install ."
