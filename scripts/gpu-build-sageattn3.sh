#!/usr/bin/env bash
# The matrix's sageattn3 row (10.0a + 12.0a in one wheel) built by sagebuild
# from upstream's checkout on the GPU machine's 16 cores and 128 GiB: this
# 2-core machine builds one arch at a time (10 GiB per api.cu compile).  One
# `device` call:
#   1. CUTLASS: that machine has no PyPI, so the cache entry sagebuild fills
#      from the pinned nvidia-cutlass wheel (<cache>/headers/nvidia-cutlass-
#      <version>, as its error message offers) comes from a cache sagebuild
#      provisioned here, carried as .devcarry/cutlass.tgz;
#   2. the carried sagebuild (gpu-build-upstream.sh --pack) builds the row from
#      anchor/src, with verify and the smoke test as in every build.
# Here, before the call:
#   bash scripts/gpu-build-upstream.sh --pack
#   bash scripts/gpu-build-sageattn3.sh --pack CACHE_DIR   (a sagebuild cache that holds CUTLASS)
#   then carry [".devcarry", "anchor"].
# Results: $OUT/summary.txt, sagebuild.log, build.json.  The wheel is not
# brought back (about 100 MiB); sageattn3 has never run on a Blackwell GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
CUTLASS=nvidia-cutlass-4.2.0.0

if [ "${1:-}" = "--pack" ]; then
  src="${2:?usage: --pack CACHE_DIR (a sagebuild cache whose headers/$CUTLASS is filled)}/headers"
  [ -d "$src/$CUTLASS" ] || { echo "no $src/$CUTLASS: build a sageattn3 row here first (it provisions CUTLASS)" >&2; exit 2; }
  mkdir -p .devcarry
  tar czf .devcarry/cutlass.tgz -C "$src" "$CUTLASS"
  echo "packed .devcarry/cutlass.tgz ($(du -h .devcarry/cutlass.tgz | cut -f1))"
  exit 0
fi

OUT="${OUT:-/tmp/out}"; mkdir -p "$OUT"
ROW="${ROW:-sageattn3-1.0.0-torch2.11.0-cu130-cp312-linux_x86_64}"
PYTHON="${PYTHON:-python3}"
SB_CACHE="${SB_CACHE:-/tmp/sb-sageattn3-cache}"
summary=()
say() { summary+=("$*"); echo "$*"; }
finish() { printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"; exit "$1"; }

for need in .devcarry/sagebuild .devcarry/cutlass.tgz anchor/src/sageattention3_blackwell; do
  [ -e "$need" ] || { say "FAILED: $need is missing (see this script's header)"; finish 2; }
done
export CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
[ -d .devcarry/bin ] && ! command -v ninja >/dev/null && export PATH="$REPO/.devcarry/bin:$PATH"
say "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB; row $ROW"

rm -rf "$SB_CACHE" && mkdir -p "$SB_CACHE/headers"
tar xzf .devcarry/cutlass.tgz -C "$SB_CACHE/headers"
start=$SECONDS
LD_LIBRARY_PATH="$REPO/.devcarry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout 560 \
  .devcarry/sagebuild build --source-dir anchor/src --matrix matrix/build-matrix.yaml --row "$ROW" \
  --python "$PYTHON" --jobs "$(nproc)" --launcher none --cache-dir "$SB_CACHE" \
  --out "$SB_CACHE/dist" --json "$OUT/build.json" > "$OUT/sagebuild.log" 2>&1
rc=$?
secs=$((SECONDS - start))
tail -4 "$OUT/sagebuild.log" | cut -c1-300
wheel=$(ls "$SB_CACHE"/dist/*.whl 2>/dev/null | head -1)
say "build: rc=$rc in ${secs} s on $(nproc) cores; wheel ${wheel:+$(basename "$wheel") ($(du -h "$wheel" | cut -f1))}"
[ "$rc" = 0 ] && [ -n "$wheel" ] || { say "FAILED: the build (see $OUT/sagebuild.log)"; finish 1; }
say "verify + smoke test: $(grep -o '\] ok: .*' "$OUT/sagebuild.log" | head -1)"
say "verify --json: $(LD_LIBRARY_PATH="$REPO/.devcarry/lib" .devcarry/sagebuild verify "$wheel" 2>&1 | tail -1 | cut -c1-200)"
finish 0
