#!/usr/bin/env bash
# Sequence parallelism on the multi-GPU machine (device kind nvidia-h100-x2, or x4):
# yunchang's LongContextAttention with SageAttention against full attention
# (tests/gpu/test_seqpar.py), the single-GPU caller tests (tests/gpu/test_callers_gpu.py:
# flash-attn keywords, the ring LSE merge, fp32, empty inputs, autograd), their CPU/meta twins
# with yunchang importable (tests/python/test_callers.py), and
# bench/bench_seqpar.py (ours beside yunchang's TORCH_CUDNN and TORCH_FLASH, one run),
# against the INSTALLED sageattention wheel.  About 3-5 minutes.
#
#   carry:  dist   the sageattention wheel built from this tree (scripts/main-job.sh)
#           .whl   yunchang, pure Python, needing only torch (flash-attn is an optional extra that it
#                  imports inside try/except), fetched on a machine with PyPI:
#                    python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#                      -d .whl yunchang==0.6.4
#                  = yunchang-0.6.4-py3-none-any.whl
#                    (sha256 cce4295058e9de2c0592d69cfe1e3e679711def5f315fd1b68dbed2d54bc9255)
#   run:    bash scripts/gpu-seqpar.sh
# Logs under $OUT: pytest.log, seqpar_cases.log (every case's cosine), bench_seqpar.md, summary.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
OUT="${OUT:-/tmp/out}"; mkdir -p "$OUT"
SITE="${SITE:-/tmp/site}"
WORK="${WORK:-/tmp/t}"
export PYTHONUNBUFFERED=1
summary=()
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
GPUS=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
python3 -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)'

echo "== 1. install the carried wheels and sageattention into $SITE"
rm -rf "$SITE"
if ! ls .whl/yunchang-*.whl >/dev/null 2>&1; then
  echo "no yunchang wheel in .whl/ (see the header for the download command)" >&2; exit 2
fi
if ! ls dist/sageattention-*.whl >/dev/null 2>&1; then
  echo "no sageattention wheel in dist/ (carry the main job's wheel)" >&2; exit 2
fi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$SITE" .whl/*.whl
summary+=("carried wheels: rc=$? ($(ls .whl/*.whl | xargs -n1 basename | tr '\n' ' '))")
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$SITE" --upgrade \
  dist/sageattention-*.whl
summary+=("sageattention wheel: rc=$? ($(ls dist/sageattention-*.whl | xargs -n1 basename))")
PYTHONPATH=$SITE python3 -c 'import sageattention as s, yunchang
from yunchang.globals import HAS_SAGE_ATTENTION
print("sageattention from", s.__file__, "| yunchang", yunchang.__version__, "sees it:", HAS_SAGE_ATTENTION)' \
  2>&1 | grep -v Warning

echo "== 2. tests: tests/gpu/test_seqpar.py (${GPUS} GPUs), tests/gpu/test_callers_gpu.py, tests/python/test_callers.py"
# a copy of the tests without python/ beside them, so that the installed wheel is what runs
rm -rf "$WORK" && mkdir -p "$WORK/tests" && cp -r tests/gpu tests/python "$WORK/tests/" && cp pytest.ini "$WORK/"
: > "$OUT/seqpar_cases.log"
(cd "$WORK" && PYTHONPATH=$SITE SEQPAR_LOG="$OUT/seqpar_cases.log" timeout 300 python3 -m pytest -q \
   -p no:cacheprovider -o addopts="-ra" --durations=5 tests/gpu/test_seqpar.py tests/gpu/test_callers_gpu.py \
   tests/python/test_callers.py 2>&1) \
   > "$OUT/pytest.log"
echo "pytest rc=$?"
grep -E "^(FAILED|ERROR)|passed|failed|skipped" "$OUT/pytest.log" | tail -25
summary+=("pytest: $(grep -E '[0-9]+ (passed|failed|skipped)' "$OUT/pytest.log" | tail -1)")
summary+=("seqpar cases: $(grep -c 'error=None' "$OUT/seqpar_cases.log") ran; lowest cosine $(grep -o 'cos=[0-9.]*' \
  "$OUT/seqpar_cases.log" | sort -t= -k2 -g | head -1)")

echo "== 3. bench/bench_seqpar.py"
: > "$OUT/bench_seqpar.md"
for world in 2 4; do
  [ "$GPUS" -ge "$world" ] || continue
  (cd /tmp && PYTHONPATH=$SITE timeout 150 python3 "$REPO/bench/bench_seqpar.py" --world "$world" 2>&1) \
    | grep -v -E "Warning|_conversion_method" >> "$OUT/bench_seqpar.md"
  summary+=("bench world $world: rc=${PIPESTATUS[0]}")
done
cat "$OUT/bench_seqpar.md"

printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
