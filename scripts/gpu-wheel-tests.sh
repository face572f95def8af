#!/usr/bin/env bash
# One call on the GPU machine (the `device` tool): the default wheel built by
# the main job on a CPU machine (carried in dist/) is installed with real pip
# into the machine's Python (torch 2.11 / CUDA 13.0), the GPU tests run against
# the INSTALLED wheel, a short benchmark runs, and the carried sagebuild binary
# (.devcarry/) builds the same row on the machine's own cores, cold and again.
set -uo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
OUT="${OUT:-/tmp/out}"; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
summary=()
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)'
nproc

echo "== 1. pip install the wheel from dist/"
rm -rf /tmp/site && python3 -m pip install -q --no-deps --no-index --target /tmp/site dist/*.whl
rc=$?; summary+=("pip install dist wheel: rc=$rc ($(ls dist/*.whl | xargs -n1 basename))")

echo "== 2. GPU + Python-layer tests against the installed wheel"
rm -rf /tmp/t && mkdir -p /tmp/t/tests && cp -r tests/gpu tests/python /tmp/t/tests/ && cp pytest.ini /tmp/t/
(cd /tmp/t && PYTHONPATH=/tmp/site timeout 420 python3 -m pytest tests -q -p no:cacheprovider \
   -o addopts="" 2>&1) | tee "$OUT/pytest.log" | tail -4
python3 - <<'PY' 2>&1 | tee -a "$OUT/pytest.log"
import sys; sys.path.insert(0, "/tmp/site")
import sageattention, torch
print("imported from", sageattention.__file__)
q = torch.randn(1, 8, 1000, 128, device="cuda", dtype=torch.float16)
o = sageattention.sageattn(q, q, q)
r = torch.nn.functional.scaled_dot_product_attention(q, q, q)
print("sageattn vs SDPA cosine", torch.nn.functional.cosine_similarity(o.flatten().float(), r.flatten().float(), dim=0).item())
PY
summary+=("pytest (installed wheel): $(grep -E 'passed|failed' "$OUT/pytest.log" | tail -1)")

echo "== 3. short benchmark with the installed wheel"
(cd /tmp && PYTHONPATH=/tmp/site timeout 200 python3 "$REPO/bench/bench_attn.py" --seqs 2048,16384 --dims 128 --causal 0 2>&1) \
  | tee "$OUT/bench.log" | tail -10

echo "== 4. sagebuild on this machine's cores (default row, all archs)"
export LD_LIBRARY_PATH="$REPO/.devcarry/lib"
SB="$REPO/.devcarry/sagebuild"
python3 -c 'import sysconfig, os; p = sysconfig.get_paths()["include"]; print("Python.h:", os.path.exists(p + "/Python.h"), p)'
rm -rf /tmp/sbc /tmp/dist16
for pass in cold again; do
  TIMEFORMAT="$pass: wall %R s, user %U s, sys %S s"
  { time "$SB" --profile default --python python3 --cache-dir /tmp/sbc --out /tmp/dist16 \
      --jobs "$(nproc)" --launcher none > "$OUT/sagebuild-$pass.log" 2>&1; } 2>> "$OUT/timings.txt"
  echo "rc=$? $(tail -1 "$OUT/timings.txt")"
  grep -E '^kernels:|\] ok|\] failed|error' "$OUT/sagebuild-$pass.log" | cut -c1-220 | head -5
done
summary+=("sagebuild: $(tr '\n' ';' < "$OUT/timings.txt")")
printf '%s\n' "${summary[@]}"
