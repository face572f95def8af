#!/usr/bin/env bash
# `pip install --no-build-isolation .` on the GPU machine, as a user with a CUDA
# torch would run it: pyproject.toml's backend (tools/sagebuild/pep517) runs the
# carried sagebuild for the machine's Python and torch, archs from the GPU
# nvidia-smi reports; the wheel is verified and installed (--target, beside the
# machine's torch), then the GPU tests run against it.
#   here:   bash scripts/gpu-build-upstream.sh --pack      (.devcarry: sagebuild)
#   carry:  .devcarry
#   run:    bash scripts/gpu-pip-install-dot.sh
# Logs under $OUT: pip-install-dot.log, pytest-gpu.log.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-/tmp/out}"; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
start=$(date +%s)
LD_LIBRARY_PATH="$PWD/.devcarry/lib" SAGEBUILD="$PWD/.devcarry/sagebuild" \
  python3 -m pip install -v --no-build-isolation --no-deps --no-index --target /tmp/pipsite . \
  > "$OUT/pip-install-dot.log" 2>&1
echo "pip install --no-build-isolation . : rc=$? in $(( $(date +%s) - start )) s"
grep -E "sagebuild: for|archs from|\] ok|Successfully|rror" "$OUT/pip-install-dot.log" | cut -c1-220 | head -12
rm -rf /tmp/t && mkdir -p /tmp/t/tests && cp -r tests/gpu tests/python /tmp/t/tests/ && cp pytest.ini /tmp/t/
(cd /tmp/t && PYTHONPATH=/tmp/pipsite timeout 300 python3 -m pytest -q -p no:cacheprovider -o addopts="" tests/gpu 2>&1) \
  > "$OUT/pytest-gpu.log"
tail -2 "$OUT/pytest-gpu.log"
