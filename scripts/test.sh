#!/usr/bin/env bash
# All tests: on a fresh machine, install what is needed, build sagebuild, run
# the C++ unit tests (CTest / Catch2) and the Python tests (pytest: real pip in
# fresh venvs, the generated index over loopback HTTP, the workflows, the
# Python layer; GPU tests skip cleanly where there is no GPU).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
SAGE_WITH_WINE=1 bash scripts/install-deps.sh || exit 1
bash scripts/build-sagebuild.sh || exit 1
export SAGEBUILD="$ROOT/build/tools/sagebuild/cli/sagebuild"
# The Linux tool wheel (a static sagebuild, dist-tool/): tests/pep517 installs
# it with pip, the workflow's simulated plan job builds it again (up to date).
bash scripts/build-sagebuild-static.sh linux || exit 1

echo "==> ctest"
ctest --test-dir build --output-on-failure -j "${JOBS:-$(nproc)}" 2>&1 | tee build/ctest.log
ctest_rc=${PIPESTATUS[0]}
# Tests that need the shared wheel corpus say why they skipped (CTest keeps
# their output in its log only).
grep -h '^SKIPPED: ' build/Testing/Temporary/LastTest.log 2>/dev/null | sort | uniq -c | sed 's/^ */ctest: /'

echo "==> pytest"
# SAGE_TEST_BUILD=1: tests/python builds the extension with sagebuild for its fake-kernel tests
SAGE_TEST_BUILD=1 python3 -m pytest -q -rs tests 2>&1 | tee build/pytest.log
pytest_rc=${PIPESTATUS[0]}
# pytest exits 5 when it collected nothing: that is a failure of this script.

# Every harness under ASan+UBSan for FUZZ_SECONDS each (about 6 minutes in
# all on 2 cores, the sanitizer build included); a crash, a leak, an
# over-limit input fails the run.
echo "==> fuzz"
bash scripts/fuzz.sh "${FUZZ_SECONDS:-20}" 2>&1 | tee build/fuzz.log
fuzz_rc=${PIPESTATUS[0]}

echo
echo "==> summary"
grep -E 'tests passed|tests failed' build/ctest.log | tail -1 | sed 's/^/ctest:  /'
tail -1 build/pytest.log | sed 's/^/pytest: /'
tail -1 build/fuzz.log | sed 's/^/fuzz:   /'
if [ "$ctest_rc" -ne 0 ] || [ "$pytest_rc" -ne 0 ] || [ "$fuzz_rc" -ne 0 ]; then
  echo "FAILED (ctest rc=$ctest_rc, pytest rc=$pytest_rc, fuzz rc=$fuzz_rc)"
  exit 1
fi
echo "OK"
