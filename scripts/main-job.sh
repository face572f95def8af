#!/usr/bin/env bash
# The main job: on a fresh machine, install the Debian packages sagebuild
# needs, build sagebuild, then build, verify and smoke-test the `default`
# profile's wheel into dist/.
#
# It leaves the user's Python alone: nothing is pip-installed into it.  The
# torch the build compiles against and the smoke test imports (the default
# profile's, 2.11.0 for CUDA 13.0 from PyPI) goes into a private venv in
# sagebuild's cache, made once and reused ($XDG_CACHE_HOME/sagebuild/
# main-job/torch-2.11.0); its download runs while sagebuild and the kernels
# compile.
# Extra arguments go to sagebuild (e.g. --row ID, --jobs 16).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
step() { echo "==> $* [$(($(date +%s) - start)) s]"; }

step "Debian packages"
SAGE_BUILD_ONLY=1 bash scripts/install-deps.sh

TORCH=2.11.0
runtime="${XDG_CACHE_HOME:-$HOME/.cache}/sagebuild/main-job/torch-$TORCH"
py="$runtime/bin/python"
torch_pid=""
if [ -f "$runtime/.complete" ]; then
  step "torch $TORCH: the private venv $runtime"
else
  step "torch $TORCH into the private venv $runtime (in the background; log $runtime.log)"
  rm -rf "$runtime"
  mkdir -p "$(dirname "$runtime")"
  (python3 -m venv "$runtime" &&
    "$py" -m pip install --disable-pip-version-check --progress-bar off "torch==$TORCH" &&
    touch "$runtime/.complete") >"$runtime.log" 2>&1 &
  torch_pid=$!
fi

step "sagebuild"
TARGET=sagebuild bash scripts/build-sagebuild.sh
SAGEBUILD=build/tools/sagebuild/cli/sagebuild

# The kernels are torch-free: they compile while torch downloads, into a
# kernel-object directory the row then takes them from (checked against its
# keys; the wheel is byte-identical to one built in a single call).  The
# directory is a hand-over, not a cache (the build directory and ccache are):
# made afresh each run.
kernels="${XDG_CACHE_HOME:-$HOME/.cache}/sagebuild/main-job/kernel-objects"
step "the default row's kernels, while torch downloads ($kernels)"
rm -rf "$kernels"
"$SAGEBUILD" --profile default --kernels-only --kernel-objects "$kernels" "$@"

if [ -n "$torch_pid" ]; then
  step "waiting for torch $TORCH"
  if ! wait "$torch_pid"; then
    tail -20 "$runtime.log"
    echo "main-job: installing torch $TORCH into $runtime failed (log: $runtime.log)" >&2
    exit 1
  fi
fi

step "sagebuild --profile default --python $py --kernel-objects $kernels $*"
"$SAGEBUILD" --profile default --out dist --python "$py" --kernel-objects "$kernels" "$@"
step "sagebuild verify dist/*.whl"
"$SAGEBUILD" verify dist/*.whl
step "done"
