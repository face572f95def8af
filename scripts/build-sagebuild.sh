#!/usr/bin/env bash
# Configures and builds sagebuild (and its unit tests) into build/.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${BUILD_DIR:-build}"
JOBS="${JOBS:-$(nproc)}"
echo "==> cmake configure ($BUILD_DIR)"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
echo "==> cmake build (-j$JOBS)"
cmake --build "$BUILD_DIR" -j "$JOBS"
