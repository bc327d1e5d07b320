#!/usr/bin/env bash
# Set up everything the test suite needs on a fresh machine, then run it.
#   bash tests/run.sh [pytest args...]
# Creates .venv/, installs portcheck with its test and docs extras (tests/test_docs.py builds the
# documentation site with `mkdocs build --strict`), a CPU build of torch (for the tests that run fixed
# code), and Debian's chromium (for the HTML report test) when apt-get is available. The lint and
# type checks (ruff, mypy; pinned in the test extra) run inside pytest: tests/test_self_check.py.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
VPY=.venv/bin/python
"$VPY" -m pip install -q --disable-pip-version-check --upgrade pip >/dev/null 2>&1 || true
"$VPY" -m pip install -q --disable-pip-version-check -e '.[test,docs]'
# CPU build of torch for the runtime proof of `portcheck fix` (see docs/development.md, "Testing").
if ! "$VPY" -c 'import torch' >/dev/null 2>&1; then
  "$VPY" -m pip install -q --disable-pip-version-check "torch==2.13.0" ${TORCH_INDEX:+--index-url "$TORCH_INDEX"} \
    || echo "tests/run.sh: could not install torch; runtime-proof tests will be skipped" >&2
fi
# testaccel (tests/accel), the C++ test accelerator, builds once here; the tests reuse the build.
export PATH="$PWD/.venv/bin:$PATH"  # torch.utils.cpp_extension runs `ninja` from PATH
command -v ninja >/dev/null 2>&1 || "$VPY" -m pip install -q --disable-pip-version-check ninja
"$VPY" -c 'import sys, time; sys.path.insert(0, "tests"); import accel; t = time.perf_counter(); p = accel.build(); print(f"tests/run.sh: testaccel built or reused in {time.perf_counter() - t:.0f}s: {p}")' \
  || echo "tests/run.sh: could not build testaccel; the tests that use it will fail" >&2
# Headless Chromium for the HTML report test.
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  ($SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null) \
    || echo "tests/run.sh: could not install chromium; the browser test will be skipped" >&2
fi
exec "$VPY" -m pytest -q -p no:cacheprovider "$@"
