#!/usr/bin/env bash
# Configures and builds sagebuild into build/: everything (sagebuild and its
# unit tests), or only TARGET (e.g. TARGET=sagebuild: what the main job and the
# release workflow's jobs run, without the unit tests they never run).
# CMAKE_ARGS adds configure options (e.g. a vcpkg toolchain file).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${BUILD_DIR:-build}"
JOBS="${JOBS:-$(nproc)}"
TARGET="${TARGET:-}"
# ccache keys on paths relative to the checkout, so a fresh clone elsewhere
# (CI) reuses what an earlier build compiled.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
echo "==> cmake configure ($BUILD_DIR)"
# shellcheck disable=SC2086  # CMAKE_ARGS is a list of options
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} >/dev/null
echo "==> cmake build (-j$JOBS${TARGET:+, target $TARGET})"
cmake --build "$BUILD_DIR" -j "$JOBS" ${TARGET:+--target "$TARGET"}
