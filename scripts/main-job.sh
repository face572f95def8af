#!/usr/bin/env bash
# The main job: on a fresh machine, install the Debian packages sagebuild
# needs, build sagebuild, then build, verify and smoke-test the `default`
# profile's wheel into dist/.
#
# It leaves the user's Python alone: nothing is pip-installed into it.  The
# torch the smoke test imports (the default profile's, 2.11.0 for CUDA 13.0
# from PyPI) goes, with its dependencies, into a private venv that sagebuild
# makes in its cache (`--provision-torch`: <cache>/torch-env/, made once and
# reused), installed while sagebuild compiles the kernels; the same code
# path the Windows jobs take.  To keep torch's download (3.5 GB with its
# NVIDIA libraries) off the critical path on a cold machine, it is fetched
# into pip's own cache while sagebuild itself compiles (`pip download`, which
# installs nothing); sagebuild's pip then finds it there.
# Extra arguments go to sagebuild (e.g. --row ID, --jobs 16).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
step() { echo "==> $* [$(($(date +%s) - start)) s]"; }

step "Debian packages"
SAGE_SYSTEM_ONLY=1 bash scripts/install-deps.sh

TORCH=2.11.0  # the default profile's torch (sagebuild matrix --profile default)
prefetch="${XDG_CACHE_HOME:-$HOME/.cache}/sagebuild/main-job/prefetch"
step "torch $TORCH into pip's cache (in the background; log $prefetch.log)"
rm -rf "$prefetch"
mkdir -p "$prefetch"
python3 -m pip download --disable-pip-version-check --progress-bar off --dest "$prefetch" "torch==$TORCH" \
  >"$prefetch.log" 2>&1 &
prefetch_pid=$!

step "sagebuild"
TARGET=sagebuild bash scripts/build-sagebuild.sh
SAGEBUILD=build/tools/sagebuild/cli/sagebuild

step "waiting for the torch download"
# A failed prefetch only costs time: sagebuild downloads what is missing.
wait "$prefetch_pid" || echo "main-job: prefetching torch failed (log: $prefetch.log); sagebuild downloads it" >&2
rm -rf "$prefetch"

step "sagebuild --profile default --provision-torch $*"
"$SAGEBUILD" --profile default --out dist --provision-torch "$@"
step "sagebuild verify dist/*.whl"
"$SAGEBUILD" verify dist/*.whl
step "done"
