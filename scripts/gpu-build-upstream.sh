#!/usr/bin/env bash
# Upstream SageAttention 2.2's own tree built by sagebuild on the GPU machine,
# checked against the anchor build.  One `device` call:
#   1. the carried sagebuild (.devcarry/sagebuild, its libraries in
#      .devcarry/lib) builds anchor/src (upstream at d1a57a5) for arch 9.0 on
#      every core, the `upstream` profile's row (torch 2.11.0, CUDA 13.0,
#      cp312), timed; verify and its smoke test run as in every build;
#   2. the wheel is installed with pip (--target a fresh folder, put on
#      PYTHONPATH beside the machine's torch);
#   3. upstream's `sageattn` from the anchor build (anchor/lib/*.so copied
#      into anchor/src/sageattention/, as anchor/README.md says) and from the
#      wheel run on the same inputs (scripts/upstream_compare.py: several
#      shapes, fp16 and bf16, causal and not) and are compared bit for bit.
# Nothing is downloaded: torch's and pybind11's headers come from the
# machine's torch, and sageattention 2.2 needs no CUTLASS.
#
# Here, before the call:  bash scripts/gpu-build-upstream.sh --pack
#   (copies build/tools/sagebuild/cli/sagebuild and the libraries it needs
#   beyond glibc into .devcarry/), then carry [".devcarry", "anchor"] (anchor/:
#   a copy of ../shared/anchors/upstream-sageattention, git-ignored).
# Results: $OUT/summary.txt, sagebuild.log, build.json, compare.log, the wheel.
# Development runs without a GPU: SKIP_GPU=1 (steps 1-2 only); ARCHS, ROW,
# PYTHON and SB_CACHE override the arch list, the row, the Python and the
# cache directory.
set -uo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"

if [ "${1:-}" = "--pack" ]; then
  sb="build/tools/sagebuild/cli/sagebuild"
  [ -x "$sb" ] || { echo "no $sb: build sagebuild first (scripts/build-sagebuild.sh)" >&2; exit 2; }
  rm -rf .devcarry/lib && mkdir -p .devcarry/lib
  cp "$sb" .devcarry/sagebuild
  # ninja too, for a machine without one on PATH (used only then).
  mkdir -p .devcarry/bin && cp -L "$(command -v ninja)" .devcarry/bin/ninja
  # Everything it links but glibc and the C++ runtime, which the GPU machine
  # has (newer than this machine's: a carried libstdc++ on LD_LIBRARY_PATH
  # would reach the smoke test's Python and fail the extensions built there
  # with its newer g++ -- GLIBCXX_3.4.32 not found, measured 2026-11-24).
  ldd "$sb" | awk '$3 ~ /^\// {print $3}' |
    grep -Ev '/(libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so' |
    xargs -r -I{} cp -L {} .devcarry/lib/
  echo "packed: .devcarry/sagebuild ($(git rev-parse --short HEAD)) and $(ls .devcarry/lib | wc -l) libraries;" \
       "carry [\".devcarry\", \"anchor\"]"
  exit 0
fi

OUT="${OUT:-/tmp/out}"; mkdir -p "$OUT"
ARCHS="${ARCHS:-9.0}"
ROW="${ROW:-upstream-sageattention-2.2.0-torch2.11.0-cu130-cp312-linux_x86_64}"
PYTHON="${PYTHON:-python3}"
SB_CACHE="${SB_CACHE:-/tmp/sb-upstream-cache}"
export PYTHONUNBUFFERED=1
summary=()
say() { summary+=("$*"); echo "$*"; }
finish() { printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"; exit "$1"; }

for need in .devcarry/sagebuild anchor/src/setup.py; do
  [ -e "$need" ] || { say "FAILED: $need is missing (see this script's header: --pack, carry .devcarry and anchor)"; finish 2; }
done
"$PYTHON" -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)'
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
say "machine: $(nproc) cores; row $ROW, archs $ARCHS"

# No network there: the toolkit must be found, not provisioned.
if [ -z "${CUDA_HOME:-}" ] && ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export CUDA_HOME=/usr/local/cuda
fi
command -v ninja >/dev/null || export PATH="$PATH:$REPO/.devcarry/bin"
say "tools: nvcc $(${CUDA_HOME:+$CUDA_HOME/bin/}nvcc --version 2>/dev/null | grep -o 'release [0-9.]*' || echo 'not found'), ninja $(ninja --version 2>/dev/null || echo 'not found')"

echo "== 1. sagebuild builds anchor/src"
rm -rf "$SB_CACHE/work" "$OUT/dist"
start=$SECONDS
LD_LIBRARY_PATH="$REPO/.devcarry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout 480 \
  .devcarry/sagebuild build --source-dir anchor/src --matrix matrix/build-matrix.yaml --row "$ROW" \
  --archs "$ARCHS" --python "$PYTHON" --jobs "$(nproc)" --launcher none --cache-dir "$SB_CACHE" \
  --out "$OUT/dist" --json "$OUT/build.json" > "$OUT/sagebuild.log" 2>&1
rc=$?
secs=$((SECONDS - start))
# The build span alone (compile, link, pack, verify, smoke test), for
# scripts/gpu-build-times.sh: what it sets beside upstream's setup.py.
echo "$secs" > "$OUT/build_seconds.txt"
grep -E '^kernels:|^  upstream|\] (ok|up to date|FAILED)|error' "$OUT/sagebuild.log" | cut -c1-300 | head -8
wheel=$(ls "$OUT"/dist/*.whl 2>/dev/null | head -1)
say "build: rc=$rc in ${secs} s on $(nproc) cores (upstream's setup.py: 250 s on 16 cores for 9.0, 2026-11-24);" \
    "wheel ${wheel:+$(basename "$wheel")}"
[ "$rc" = 0 ] && [ -n "$wheel" ] || { say "FAILED: the build (see $OUT/sagebuild.log)"; finish 1; }
say "verify + smoke test (sagebuild's own): $(grep -o '\] ok: .*' "$OUT/sagebuild.log" | sed 's/.*\.whl (\(.*\))$/\1/' | head -1)"

echo "== 2. pip install into a fresh site folder beside the machine's torch"
# The machine's torch lives in a virtual environment (/opt/torch/.venv), whose
# packages a --system-site-packages venv made from it would not see: the
# wheel goes into its own folder with pip install --target, put first on
# PYTHONPATH of the machine's Python, as a user's site-packages would be.
SITE=/tmp/upstream-site
rm -rf "$SITE"
"$PYTHON" -m pip install -q --no-deps --no-index --target "$SITE" "$wheel" > "$OUT/pip.log" 2>&1
rc=$?
PYTHONPATH="$SITE" "$PYTHON" -c 'import sageattention, os; d = os.path.dirname(sageattention.__file__); print("installed:", d, sorted(f for f in os.listdir(d) if f.endswith(".so")))' \
  2>&1 | tee -a "$OUT/pip.log"
say "pip install --target: rc=$rc; $(tail -1 "$OUT/pip.log")"

if [ "${SKIP_GPU:-0}" = 1 ]; then say "compare: skipped (SKIP_GPU=1)"; finish 0; fi

echo "== 3. sageattn: the anchor build and the wheel on the same inputs"
cp anchor/lib/*.so anchor/src/sageattention/
(cd /tmp && PYTHONPATH="$REPO/anchor/src" timeout 200 "$PYTHON" "$REPO/scripts/upstream_compare.py" run /tmp/upstream-anchor.pt) \
  > "$OUT/compare.log" 2>&1 &&
(cd /tmp && PYTHONPATH="$SITE" timeout 200 "$PYTHON" "$REPO/scripts/upstream_compare.py" run /tmp/upstream-ours.pt \
  --inputs /tmp/upstream-anchor.pt) >> "$OUT/compare.log" 2>&1 &&
(cd /tmp && "$PYTHON" "$REPO/scripts/upstream_compare.py" compare /tmp/upstream-anchor.pt /tmp/upstream-ours.pt) >> "$OUT/compare.log" 2>&1
rc=$?
cat "$OUT/compare.log" | tail -14
rm -f /tmp/upstream-anchor.pt /tmp/upstream-ours.pt
say "compare: rc=$rc; $(grep SUMMARY "$OUT/compare.log" || echo "no summary: see compare.log")"
finish "$rc"
