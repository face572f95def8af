#!/usr/bin/env bash
# One call on the GPU machine (the `device` tool) for the drop-in layer:
# the GPU tests of the kernels, the drop-in layer and the transformers/diffusers
# integrations, then the varlen benchmark, against the INSTALLED wheel.
#
#   carry:  dist   the sageattention wheel built from this tree (scripts/main-job.sh)
#           .whl   the packages the machine lacks (below), fetched on a machine with PyPI:
#                    python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#                      -d .whl diffusers==0.42.1 "importlib_metadata<9"
#                  = diffusers-0.42.1-py3-none-any.whl, importlib_metadata-8.9.0-py3-none-any.whl
#                  (importlib_metadata 9+ needs lazy-importer, which the machine lacks too; transformers,
#                  huggingface-hub, safetensors, regex, requests, pillow, filelock, numpy, zipp are there)
#   run:    bash scripts/gpu-dropin-tests.sh [--no-bench | --bench-only]
#           (tests take a few minutes, the benchmark about two more: within one call's 10 minutes
#           together, or as two calls)
#
# Without a wheel in dist/ it falls back to the dev tree (python/, with a carried
# python/sageattention/_C.abi3.so): diffusers then cannot see sageattention (it
# reads the installed distribution's version) and its tests skip, saying so.
# Logs under $OUT: pytest.log, bench_varlen.log, summary.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
OUT="${OUT:-/tmp/out}"; mkdir -p "$OUT"
SITE="${SITE:-/tmp/site}"  # where the wheels are installed
WORK="${WORK:-/tmp/t}"     # the copy of the tests
export PYTHONUNBUFFERED=1
BENCH=1; TESTS=1
case "${1:-}" in
  --no-bench) BENCH=0 ;;
  --bench-only) TESTS=0 ;;
  "") ;;
  *) echo "usage: $0 [--no-bench | --bench-only]" >&2; exit 2 ;;
esac
summary=()
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)'

echo "== 1. install the carried wheels into $SITE"
rm -rf "$SITE"
wheels=(.whl/*.whl)
if [ -e "${wheels[0]}" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$SITE" .whl/*.whl
  summary+=("carried wheels: rc=$? ($(ls .whl/*.whl | xargs -n1 basename | tr '\n' ' '))")
else
  summary+=("carried wheels: none in .whl/ (the diffusers tests will skip)")
fi
PY_PATH=$SITE
if ls dist/sageattention-*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$SITE" --upgrade dist/sageattention-*.whl
  summary+=("sageattention wheel: rc=$? ($(ls dist/sageattention-*.whl | xargs -n1 basename))")
elif [ -f python/sageattention/_C.abi3.so ]; then
  PY_PATH=$SITE:$REPO/python
  summary+=("sageattention: the dev tree (no wheel in dist/): diffusers cannot see it, its tests skip")
else
  echo "no sageattention: carry dist/ (a wheel) or python/sageattention/_C.abi3.so" >&2
  exit 2
fi
PYTHONPATH=$PY_PATH python3 -c 'import sageattention as s, importlib.metadata as m
print("sageattention from", s.__file__)
try: print("installed distribution", m.version("sageattention"))
except m.PackageNotFoundError: print("no installed distribution (dev tree)")
try:
    import diffusers; print("diffusers", diffusers.__version__)
except Exception as e: print("diffusers not importable:", type(e).__name__, e)' 2>&1 | grep -v Warning

if [ "$TESTS" = 1 ]; then
echo "== 2. GPU and Python-layer tests"
# A copy of the tests without python/ beside them, so tests/gpu/conftest.py cannot put the dev tree first.
rm -rf "$WORK" && mkdir -p "$WORK/tests" && cp -r tests/gpu tests/python "$WORK/tests/" && cp pytest.ini "$WORK/"
(cd "$WORK" && PYTHONPATH=$PY_PATH timeout 540 python3 -m pytest tests -q -p no:cacheprovider -o addopts="-ra" \
   --durations=15 2>&1) > "$OUT/pytest.log"
echo "pytest rc=$?"
grep -E "^(FAILED|ERROR)|passed|failed|skipped" "$OUT/pytest.log" | tail -25
summary+=("pytest: $(grep -E '[0-9]+ (passed|failed)' "$OUT/pytest.log" | tail -1)")
fi

if [ "$BENCH" = 1 ]; then
  echo "== 3. bench/bench_varlen.py"
  (cd /tmp && PYTHONPATH=$PY_PATH timeout 240 python3 "$REPO/bench/bench_varlen.py" 2>&1) > "$OUT/bench_varlen.log"
  echo "bench rc=$?"
  tail -16 "$OUT/bench_varlen.log"
  summary+=("bench_varlen: $(grep -c '^| [0-9]' "$OUT/bench_varlen.log") rows (bench_varlen.log)")
fi
printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
