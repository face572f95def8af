#!/bin/sh
# Runs WindowsProcessRunner's test executable (built with mingw-w64) under
# wine, in a wine prefix of its own beside it.  Exit 77 (CTest: skipped) when
# there is no wine, or when wine cannot run a 64-bit Windows program here,
# with the reason; otherwise the test executable's own exit status.
#   run_wine_test.sh WINE DIR    (WINE may be empty: not found at configure time)
wine=$1
dir=$2
if [ -z "$wine" ] || [ ! -x "$wine" ]; then
  echo "skipped: process_win32.cc compiled with mingw-w64, but not run: no wine (Debian: apt-get install wine64, then re-run cmake)"
  exit 77
fi
export WINEPREFIX="$dir/wineprefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
# The first run creates the prefix.  The child alone, not the runner under
# test: if this fails, wine itself cannot run the program.
if ! probe=$("$wine" "$dir/sb_win_child.exe" exit 0 2>&1); then
  echo "skipped: $wine cannot run a 64-bit Windows program here (mingw-w64 compiled process_win32.cc):"
  echo "$probe" | tail -5
  exit 77
fi
exec "$wine" "$dir/process_win32_tests.exe"
