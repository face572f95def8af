#!/usr/bin/env bash
# A change that must leave the kernels as they were, checked on the GPU machine
# in one `device` call: the carried sagebuild builds the default row twice on
# the machine's cores, from this tree and from BASE (a tree of the commit
# before the change, with kernels/, python/ and matrix/), and the two wheels'
# kernel outputs are recorded and compared bit for bit
# (scripts/kernel_outputs.py), for the sm90 family and, with SAGEATTN_SM90=0,
# for the mma.sync family.  The new wheel is left in dist/ and $OUT for the
# GPU tests (scripts/gpu-dropin-tests.sh) to install.
#
#   here:   bash scripts/gpu-build-upstream.sh --pack        (.devcarry: sagebuild)
#           mkdir base && git archive REV kernels python matrix LICENSE README.md | tar -x -C base
#   carry:  .devcarry base
#   run:    bash scripts/gpu-equivalence.sh base
set -uo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
OUT="${OUT:-/tmp/out}"; mkdir -p "$OUT"
BASE="${1:?usage: $0 BASE_TREE}"
export PYTHONUNBUFFERED=1 LD_LIBRARY_PATH="$REPO/.devcarry/lib"
SB="$REPO/.devcarry/sagebuild"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
rc=0
for side in base new; do
  src=$REPO; [ "$side" = base ] && src=$(cd "$BASE" && pwd)
  rm -rf "/tmp/eq-$side" "/tmp/eq-site-$side"
  "$SB" --profile default --source-dir "$src" --python python3 --launcher none --no-smoke-test \
    --cache-dir "/tmp/eq-cache-$side" --out "/tmp/eq-$side" --jobs "$(nproc)" > "$OUT/build-$side.log" 2>&1 ||
    { echo "build $side failed (build-$side.log)"; tail -5 "$OUT/build-$side.log"; exit 1; }
  python3 -m pip install -q --no-deps --no-index --target "/tmp/eq-site-$side" /tmp/eq-$side/*.whl
  for fam in sm90 mma; do
    env $([ "$fam" = mma ] && echo SAGEATTN_SM90=0) PYTHONPATH="/tmp/eq-site-$side" \
      python3 scripts/kernel_outputs.py record "/tmp/eq-$side-$fam.pt" > "$OUT/record-$side-$fam.log" 2>&1 ||
      { echo "record $side $fam failed"; tail -5 "$OUT/record-$side-$fam.log"; rc=1; }
  done
done
for fam in sm90 mma; do
  echo "== $fam: $(ls /tmp/eq-base/*.whl | xargs basename) (base) vs this tree"
  python3 scripts/kernel_outputs.py compare "/tmp/eq-base-$fam.pt" "/tmp/eq-new-$fam.pt" | tee "$OUT/compare-$fam.log" |
    grep -v "^same" || true
done
mkdir -p dist && rm -f dist/sageattention-*.whl && cp /tmp/eq-new/*.whl dist/ && cp /tmp/eq-new/*.whl "$OUT/"
exit "$rc"
