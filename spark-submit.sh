#!/usr/bin/env bash
# The one command users run: ./spark-submit.sh <job> [job flags] [-- spark-submit flags]
# First use creates .venv with the pinned dependencies; later runs reuse it, re-installing
# the dependencies only when setup.cfg (or the extras a job needs) changed, and the
# project itself (no dependencies, seconds) when src/ changed.
set -euo pipefail

project="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${FLEET_VENV:-$project/.venv}"
min_java=17

die() { echo "spark-submit.sh: $*" >&2; exit 1; }

java_bin="java"
[ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ] && java_bin="$JAVA_HOME/bin/java"
command -v "$java_bin" >/dev/null 2>&1 ||
  die "Java $min_java or newer is required but 'java' was not found (install OpenJDK $min_java and put it on PATH or set JAVA_HOME)"
java_version=$("$java_bin" -version 2>&1 | awk -F'"' '/version/ {print $2; exit}')
java_major=${java_version%%.*}
[ "$java_major" = "1" ] && java_major=$(echo "$java_version" | cut -d. -f2)
[[ "$java_major" =~ ^[0-9]+$ ]] && [ "$java_major" -ge "$min_java" ] ||
  die "Java $min_java or newer is required, found '${java_version:-unknown}' at $(command -v "$java_bin")"

# The interpreter only creates the venv: once it exists, its own python is the one used.
python_bin="${FLEET_PYTHON:-}"
[ -z "$python_bin" ] && [ -x "$venv/bin/python" ] && python_bin="$venv/bin/python"
if [ -z "$python_bin" ]; then
  for candidate in python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
      python_bin="$candidate"; break
    fi
  done
fi
[ -n "$python_bin" ] || die "Python 3.11 is required (python3.11 or python3 on PATH, or set FLEET_PYTHON)"

# Extras the job needs beyond the runtime dependencies.
job=""
for arg in "$@"; do case "$arg" in -*) ;; *) job="$arg"; break ;; esac; done
extras="job,cluster"
[ "$job" = "test" ] && extras="job,cluster,test"

hash_of() { sha256sum | cut -c1-16; }
deps_hash="$(cat "$project/setup.cfg" "$project/pyproject.toml" | hash_of)"
# Names and contents of src/ (one sha256sum over every file, not a process per file).
src_hash="$( cd "$project" && find src -type f \( -name '*.py' -o -name 'py.typed' \) -print0 |
  LC_ALL=C sort -z | xargs -0 sha256sum | hash_of)"

if [ ! -x "$venv/bin/python" ]; then
  echo "creating $venv (first run: installs pyspark, delta and friends; a minute or two)" >&2
  "$python_bin" -m venv "$venv"
fi
# A developer's editable install (pip install -e .) already runs src/ as it is: it is never
# replaced by a copy (that would freeze src/ for everyone using the venv, tests included).
editable=""
for direct_url in "$venv"/lib/python*/site-packages/fleet_rebalance-*.dist-info/direct_url.json; do
  [ -f "$direct_url" ] && grep -q '"editable": *true' "$direct_url" &&
    grep -qF "\"file://$project\"" "$direct_url" && editable="-e"
done
# pip builds the project in-tree, and setuptools' build/ keeps modules src/ no longer has
# (a moved module would be installed under both names): each install starts without it.
# .fleet-deps holds "<setup.cfg hash> <extras>"; an install with the test extra serves every job.
have_hash=""; have_extras=""
[ -f "$venv/.fleet-deps" ] && read -r have_hash have_extras < "$venv/.fleet-deps"
if [ "$have_hash" != "$deps_hash" ] ||
   { [ "$have_extras" != "$extras" ] && [ "$have_extras" != "job,cluster,test" ]; }; then
  echo "installing dependencies into $venv (first run, or setup.cfg changed)" >&2
  rm -rf "$project/build"
  "$venv/bin/python" -m pip install --quiet $editable "$project[$extras]" >&2
  echo "$deps_hash $extras" > "$venv/.fleet-deps"
  echo "$src_hash" > "$venv/.fleet-src"
  touch "$venv/.fleet-installed"
elif [ -z "$editable" ] && [ "$(cat "$venv/.fleet-src" 2>/dev/null || true)" != "$src_hash" ]; then
  echo "re-installing fleet_rebalance into $venv (src/ changed)" >&2
  rm -rf "$project/build"
  "$venv/bin/python" -m pip install --quiet --no-deps --force-reinstall "$project" >&2
  echo "$src_hash" > "$venv/.fleet-src"
  touch "$venv/.fleet-installed"
fi

export FLEET_PROJECT_DIR="$project"
exec "$venv/bin/python" -m fleet_rebalance.cli "$@"
