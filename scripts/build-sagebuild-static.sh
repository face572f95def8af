#!/usr/bin/env bash
# sagebuild's tool wheels: what the release workflow's plan job builds once
# and every other job installs (`pip install sagebuild-*.whl`) instead of
# compiling sagebuild itself.
#   build-sagebuild-static.sh [linux|windows]     (default: linux)
# linux:   tools/sagebuild/wine/build.sh . build-static linux-static: libzip,
#          yaml-cpp, fmt, lz4, zstd and libdeflate from Debian's source
#          packages, built static (kept in build-static/deps), and sagebuild
#          linked with -static (glibc and libstdc++ included; zlib and
#          libcrypto are Debian's static archives), so it runs on any x86_64
#          Linux, the manylinux_2_28 container included; then
#          `sagebuild package-self --out OUT`: the wheel, tagged with the
#          manylinux level verify derives from the executable, verified.
# windows: the mingw-w64 cross build of the Windows tests (build.sh, into
#          WINDOWS_BUILD_DIR, default build/tools/sagebuild/wine: the
#          directory CTest's Windows tests use, so it is built once), only
#          sagebuild.exe; then `sagebuild.exe package-self` under wine: the
#          win_amd64 wheel.
# OUT: where the wheel goes (default dist-tool/).  Needs what
# scripts/install-deps.sh installs (SAGE_WITH_WINE=1 for windows).
set -euo pipefail
cd "$(dirname "$0")/.."
platform="${1:-linux}"
OUT="${OUT:-dist-tool}"
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
case "$platform" in
  linux)
    sh tools/sagebuild/wine/build.sh "$PWD" build-static linux-static
    exe=build-static/sagebuild/tools/sagebuild/cli/sagebuild
    echo "==> $exe package-self --out $OUT"
    "$exe" package-self --out "$OUT"
    ;;
  windows)
    dir="${WINDOWS_BUILD_DIR:-build/tools/sagebuild/wine}"
    ONLY_SAGEBUILD=1 sh tools/sagebuild/wine/build.sh "$PWD" "$dir" windows
    wine=$(command -v wine || command -v wine64 || echo /usr/lib/wine/wine64)
    exe="$dir/sagebuild/tools/sagebuild/cli/sagebuild.exe"
    echo "==> wine $exe package-self --out $OUT"
    mkdir -p "$OUT"
    WINEPREFIX="$(cd "$dir" && pwd)/wineprefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml=" \
      "$wine" "$exe" package-self --out "$OUT" | tr -d '\r'
    ls "$OUT"/sagebuild-*-py3-none-win_amd64.whl >/dev/null
    ;;
  *) echo "build-sagebuild-static.sh: expected linux or windows, got '$platform'" >&2; exit 2 ;;
esac
