#!/usr/bin/env bash
# Configures and builds sagebuild (and its unit tests) into build/.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${BUILD_DIR:-build}"
JOBS="${JOBS:-$(nproc)}"
# ccache keys on paths relative to the checkout, so a fresh clone elsewhere
# (CI) reuses what an earlier build compiled.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
echo "==> cmake configure ($BUILD_DIR)"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
echo "==> cmake build (-j$JOBS)"
cmake --build "$BUILD_DIR" -j "$JOBS"
