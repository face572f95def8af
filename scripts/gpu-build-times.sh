#!/usr/bin/env bash
# Cold build times on the GPU machine's host, side by side in one `device`
# call, and the kernel outputs of the wheel built there.
#
#   bash scripts/gpu-build-times.sh ours       # our default row
#   bash scripts/gpu-build-times.sh upstream   # upstream SageAttention 2.2's tree, arch 9.0
#
# ours: the default row built cold twice, each from an empty cache with
#   `--launcher none`: (1) all cores, nvcc one thread per unit
#   (--nvcc-threads 1: how sagebuild compiled before the option existed),
#   (2) all cores, nvcc threads (the default); the SASS of the two wheels
#   must be the same.  (Kernel outputs of two trees compared bit for bit:
#   scripts/gpu-equivalence.sh.)
# upstream: anchor/src (upstream at d1a57a5, carried) built cold for 9.0 by
#   upstream's own `setup.py build_ext` (MAX_JOBS = cores), then by sagebuild
#   (scripts/gpu-build-upstream.sh: the `upstream` profile's row, --source-dir,
#   verify, smoke test, pip install, and sageattn bit for bit against the
#   anchor build), one after the other.  The AC7 ratio sets sagebuild's build
#   span alone (compile, link, pack, verify, smoke test) beside setup.py's
#   build_ext; the script's whole span (pip install and the GPU comparison
#   too) is printed on its own line and is not a build time.
#
# Here, before the call: bash scripts/gpu-build-upstream.sh --pack (the carried
# sagebuild in .devcarry/), and for `upstream` a copy of
# ../shared/anchors/upstream-sageattention in anchor/; carry .devcarry (and anchor).
set -uo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
OUT="${OUT:-/tmp/out}"; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 LD_LIBRARY_PATH="$REPO/.devcarry/lib"
SB="$REPO/.devcarry/sagebuild"
CORES="$(nproc)"
[ -x "$SB" ] || { echo "no $SB: run scripts/gpu-build-upstream.sh --pack here first" >&2; exit 2; }
echo "host: $CORES cores, $(lscpu | sed -n 's/^Model name: *//p'), $(nvcc --version | tail -1)"

timed() {  # timed NAME CMD...: wall and CPU seconds of CMD into $OUT/times.txt
  local name="$1"; shift
  local t0 t1 rc
  t0=$(date +%s%N)
  /usr/bin/time -f "%U %S" -o "/tmp/time.$name" "$@" > "$OUT/$name.log" 2>&1
  rc=$?
  t1=$(date +%s%N)
  awk -v n="$name" -v rc="$rc" -v t0="$t0" -v t1="$t1" '{printf "%-28s rc=%d wall %6.1f s  cpu %6.1f s\n", n, rc, (t1 - t0) / 1e9, $1 + $2}' \
    "/tmp/time.$name" | tee -a "$OUT/times.txt"
}

ours() {
  local base=(--profile default --python python3 --launcher none --no-smoke-test)
  rm -rf /tmp/sb1 /tmp/sb2 /tmp/d1 /tmp/d2
  timed ours-j${CORES}-nvcc1 "$SB" "${base[@]}" --cache-dir /tmp/sb1 --out /tmp/d1 --jobs "$CORES" --nvcc-threads 1
  timed ours-j${CORES}-threads "$SB" "${base[@]}" --cache-dir /tmp/sb2 --out /tmp/d2 --jobs "$CORES"
  # The device code of the two wheels: the same SASS for every kernel.
  for d in d1 d2; do
    rm -rf /tmp/x$d && python3 -m zipfile -e /tmp/$d/*.whl /tmp/x$d
    cuobjdump -sass /tmp/x$d/sageattention/_C*.so | grep -v '^\s*$' | sed 's@/\*[0-9a-f]*\*/@@' > /tmp/$d.sass
  done
  if [ ! -s /tmp/d1.sass ]; then echo "SASS of the wheels: not read (cuobjdump printed nothing)"
  elif cmp -s /tmp/d1.sass /tmp/d2.sass; then echo "SASS of both wheels: identical ($(wc -l < /tmp/d1.sass) lines)"
  else echo "SASS differs: $(diff /tmp/d1.sass /tmp/d2.sass | wc -l) lines"; fi | tee -a "$OUT/times.txt"
  find /tmp/sb2 -name .ninja_log -exec cp {} "$OUT/ninja_log_threads.txt" \; -quit
  find /tmp/sb1 -name .ninja_log -exec cp {} "$OUT/ninja_log_nvcc1.txt" \; -quit
}

upstream() {
  [ -e anchor/src/setup.py ] || { echo "no anchor/src: carry anchor (../shared/anchors/upstream-sageattention)"; exit 2; }
  rm -rf /tmp/up && cp -r anchor/src /tmp/up && rm -rf /tmp/up/build
  (cd /tmp/up && TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS="$CORES" timed upstream-setup.py-9.0 python3 setup.py build_ext)
  # sagebuild's build of the same tree, timed, then its sageattn compared bit
  # for bit with the anchor build's (scripts/gpu-build-upstream.sh).
  # The script also installs the wheel with pip and runs the GPU comparison:
  # its whole span is reported, but the figure set beside setup.py (which
  # compiles and links only) is the sagebuild build's own span, written by
  # the script (compile, link, pack, verify, smoke test: more work than
  # setup.py does, never less).
  rm -f "$OUT/build_seconds.txt"
  SB_CACHE=/tmp/sbu timed upstream-sagebuild-9.0-script bash scripts/gpu-build-upstream.sh
  cat "$OUT/summary.txt"
  local setup build
  setup=$(awk '$1 == "upstream-setup.py-9.0" {sub("rc=", "", $2); if ($2 == 0) print $4}' "$OUT/times.txt")
  build=$(cat "$OUT/build_seconds.txt" 2>/dev/null)
  if [ -n "$setup" ] && [ -n "$build" ]; then
    awk -v s="$setup" -v b="$build" 'BEGIN {printf "%-28s wall %6.1f s (the build alone; the script line above adds pip install and the GPU comparison)\nAC7 ratio, sagebuild build / setup.py build_ext: %.2f\n", "upstream-sagebuild-9.0", b, b / s}' |
      tee -a "$OUT/times.txt"
  else
    echo "AC7 ratio: not computed (setup.py ${setup:-failed}, sagebuild build ${build:-failed})" | tee -a "$OUT/times.txt"
  fi
  find /tmp/sbu -name .ninja_log -exec cp {} "$OUT/ninja_log_upstream.txt" \; -quit
}

case "${1:-}" in
  ours) ours ;;
  upstream) upstream ;;
  *) echo "usage: $0 ours|upstream" >&2; exit 2 ;;
esac
cat "$OUT/times.txt"
