#!/usr/bin/env bash
# Fuzzes what sagebuild reads (tools/sagebuild/fuzz): each libFuzzer harness
# built with clang under AddressSanitizer and UBSan, seeded from a wheel the
# pack writer makes, a cc-built (and, with nvcc, a CUDA) library, the build
# matrix, and ../shared/wheel-corpus when it is there; every input that ever
# failed (tools/sagebuild/fuzz/regressions/<harness>/) is run first.
#
#   bash scripts/fuzz.sh                 # the CI step: 20 s per harness
#   bash scripts/fuzz.sh 3600            # a maintainer's run: an hour each
#   bash scripts/fuzz.sh 600 verify zip  # some harnesses only
#
# Limits per input: -rss_limit_mb (the process, sanitizers included) and
# -timeout (seconds).  A failure leaves the input in build-fuzz/artifacts/
# <harness>/ and exits 1: fix the bug, then copy the input into
# tools/sagebuild/fuzz/regressions/<harness>/ (CTest replays that folder in
# every build).  The corpus the fuzzers grew is kept in build-fuzz/corpus/.
# Prints per harness: executions, coverage (edges), features, corpus size
# and the RSS high-water mark (libFuzzer's final stats).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
SECONDS_EACH="${1:-20}"
shift || true
HARNESSES=("$@")
[ "${#HARNESSES[@]}" -gt 0 ] || HARNESSES=(zip record metadata entry_points elf pe fatbin verify matrix matrix_rows index previous writers)
BUILD="${FUZZ_BUILD_DIR:-build-fuzz}"
JOBS="${JOBS:-$(nproc)}"
# Under ASan a process holds several times what the release build does (its
# quarantine, shadow memory); verify's own bound, 256 MiB in release, is
# checked by CTest (fuzz: hostile wheels).  A single allocation over
# MALLOC_LIMIT_MB is a failure too.
RSS_LIMIT_MB="${FUZZ_RSS_LIMIT_MB:-2048}"
MALLOC_LIMIT_MB="${FUZZ_MALLOC_LIMIT_MB:-256}"
TIMEOUT_S="${FUZZ_TIMEOUT_S:-10}"
SHARED="${SAGEBUILD_SHARED_DIR:-$ROOT/../shared}"
CXX_FUZZ="${CXX_FUZZ:-clang++}"

if ! command -v "$CXX_FUZZ" >/dev/null; then
  echo "fuzz: $CXX_FUZZ not found (Debian: apt-get install clang libclang-rt-dev)"
  exit 1
fi

export CCACHE_BASEDIR="$ROOT" CCACHE_NOHASHDIR=true
echo "==> fuzz: configure and build ($BUILD, $CXX_FUZZ, ASan+UBSan+libFuzzer, -j$JOBS)"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$CXX_FUZZ" \
  -DSAGEBUILD_FUZZ=ON -DSAGEBUILD_TESTS=OFF -DSAGEBUILD_SHARED_DIR="$SHARED" >/dev/null || exit 1
cmake --build "$BUILD" -j "$JOBS" --target sb_fuzz_all || exit 1
BIN="$BUILD/tools/sagebuild/fuzz"

echo "==> fuzz: seeds"
SEEDS="$BUILD/seeds"
rm -rf "$SEEDS"
mkdir -p "$SEEDS/libs"
LIBS=()
if cc -shared -fPIC -O1 tools/sagebuild/fuzz/seed_lib.c -o "$SEEDS/libs/seed_lib.so" 2>/dev/null; then
  LIBS+=("$SEEDS/libs/seed_lib.so")
fi
NVCC="$(command -v nvcc || true)"
[ -n "$NVCC" ] || { [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc; }
if [ -n "$NVCC" ] && "$NVCC" -shared -Xcompiler -fPIC -gencode arch=compute_90,code=sm_90 \
     -gencode arch=compute_80,code=compute_80 tools/sagebuild/fuzz/seed_kernels.cu \
     -o "$SEEDS/libs/seed_kernels.so" 2>/dev/null; then
  LIBS+=("$SEEDS/libs/seed_kernels.so")
fi
# The default wheel, when the main job (scripts/main-job.sh) left one in
# dist/, and every wheel that once took verify down (../shared/fuzz-findings).
shopt -s nullglob
WHEELS=(dist/sageattention-*.whl "$SHARED"/fuzz-findings/*/*.whl ${FUZZ_SEED_WHEELS:-})
shopt -u nullglob
CORPUS_DIR="$SHARED/wheel-corpus"
[ -d "$CORPUS_DIR" ] || echo "fuzz: no $CORPUS_DIR; seeding without the shared corpus"
"$BIN/sb_fuzz_seeds" "$SEEDS" "$ROOT" "$CORPUS_DIR" "${LIBS[@]}" "${WHEELS[@]}" || exit 1

failed=()
failures=()
summary="$BUILD/fuzz-summary.txt"
printf "%-13s %10s %8s %8s %7s %8s  %s\n" harness execs cov ft corpus rss_mb result > "$summary"
for h in "${HARNESSES[@]}"; do
  corpus="$BUILD/corpus/$h"
  artifacts="$BUILD/artifacts/$h/"
  mkdir -p "$corpus" "$artifacts" "$SEEDS/$h"
  log="$BUILD/fuzz-$h.log"
  regressions=()
  [ -d "tools/sagebuild/fuzz/regressions/$h" ] && regressions=("tools/sagebuild/fuzz/regressions/$h")
  echo "==> fuzz: $h (${SECONDS_EACH} s)"
  started="$BUILD/.started-$h"
  touch "$started"
  max_len=1048576
  case "$h" in zip|verify|index) max_len=4194304 ;; esac
  "$BIN/sb_fuzz_$h" -max_total_time="$SECONDS_EACH" -rss_limit_mb="$RSS_LIMIT_MB" -malloc_limit_mb="$MALLOC_LIMIT_MB" \
    -timeout="$TIMEOUT_S" -max_len="$max_len" -print_final_stats=1 -artifact_prefix="$artifacts" \
    "$corpus" "$SEEDS/$h" "${regressions[@]}" >"$log" 2>&1
  rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  rss=$(grep -o 'stat::peak_rss_mb: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
  result=ok
  if [ "$rc" -ne 0 ]; then
    result="FAILED (rc $rc)"
    failed+=("$h")
    echo "fuzz: $h failed; the log's end ($log):"
    tail -n 40 "$log"
    ls "$artifacts" | sed "s|^|fuzz: input kept: $artifacts|"
    # What the summary (the part of a CI log people see) needs to act on it:
    # the cause, and a small input's bytes, since a CI's artifacts are gone
    # with its machine.
    cause=$(grep -E -m1 '^invariant broken: |ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer): |runtime error: |^terminate called' "$log")
    failures+=("$h: ${cause:-see $log}")
    for f in "$artifacts"*; do
      [ -f "$f" ] && [ "$f" -nt "$started" ] || continue  # this run's, not an earlier one's
      n=$(stat -c %s "$f")
      if [ "$n" -le 2048 ]; then
        failures+=("$h: input $(basename "$f") ($n bytes, base64): $(base64 -w0 "$f")")
      else
        failures+=("$h: input $(basename "$f") ($n bytes): in $artifacts")
      fi
    done
  fi
  printf "%-13s %10s %8s %8s %7s %8s  %s\n" "$h" "${execs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "${rss:-?}" "$result" >> "$summary"
done

echo
echo "==> fuzz summary (${SECONDS_EACH} s per harness, -rss_limit_mb=$RSS_LIMIT_MB -malloc_limit_mb=$MALLOC_LIMIT_MB -timeout=$TIMEOUT_S)"
cat "$summary"
if [ "${#failed[@]}" -gt 0 ]; then
  printf 'fuzz: %s\n' "${failures[@]}"
  echo "fuzz: FAILED: ${failed[*]}: fix, then copy the input from $BUILD/artifacts/<harness>/ into tools/sagebuild/fuzz/regressions/<harness>/"
  exit 1
fi
echo "fuzz: OK"
