#!/bin/sh
# The setup of the Windows test (CMakeLists.txt beside this file): sagebuild,
# its unit test suites and the process runner's child, cross-compiled for
# Windows x64 with mingw-w64, with every library they need:
#   - compiled from Debian's source packages (apt-get source, into OUT/src):
#     libzip, libdeflate, libzstd, lz4, yaml-cpp, fmtlib;
#   - zlib: Debian's libz-mingw-w64-dev (built from Debian's source for mingw);
#   - header-only: CLI11, nlohmann-json and Catch2, the Linux -dev packages'
#     headers (OUT/headers links to exactly those directories);
#   - SHA-2 digests: Windows' own CNG (bcrypt), instead of OpenSSL.
# The libraries are built once and kept in OUT/deps (a stamp names the source
# packages); the sagebuild build is incremental.  Exit 77 (skipped) with the
# reason when a tool is missing.
#   build.sh SOURCE_DIR OUT_DIR [TARGET]
# TARGET windows (the default): the above.  TARGET linux-static: the same
# libraries built for this Linux host, and sagebuild alone (no tests) linked
# into one static executable (linux-static.cmake), for the tool wheel
# (`sagebuild package-self`, scripts/build-sagebuild-static.sh).
set -eu
src=$1
out=$2
target=${3:-windows}
jobs=${JOBS:-2}
packages="libzip libdeflate libzstd lz4 yaml-cpp fmtlib"
case "$target" in
  windows)
    cc=x86_64-w64-mingw32-gcc-posix ar=x86_64-w64-mingw32-ar
    toolchain=$src/tools/sagebuild/wine/mingw-w64.cmake
    tools="x86_64-w64-mingw32-gcc-posix x86_64-w64-mingw32-g++-posix"
    hint="scripts/install-deps.sh with SAGE_WITH_WINE=1 installs the Windows test's tools" ;;
  linux-static)
    cc=gcc ar=ar
    toolchain=$src/tools/sagebuild/wine/linux-static.cmake
    tools="gcc g++"
    hint="apt-get install g++ dpkg-dev" ;;
  *) echo "build.sh: unknown target '$target' (windows or linux-static)" >&2; exit 2 ;;
esac
for tool in $tools apt-get dpkg-source cmake ninja; do
  if ! command -v "$tool" >/dev/null; then
    echo "skipped: $tool not found ($hint)"
    exit 77
  fi
done
if [ "$target" = windows ] && [ ! -f /usr/x86_64-w64-mingw32/lib/libz.a ]; then
  echo "skipped: no mingw-w64 zlib (Debian: apt-get install libz-mingw-w64-dev)"
  exit 77
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
deps=$out/deps
export SAGEBUILD_WIN_DEPS=$deps SAGEBUILD_STATIC_DEPS=$deps PKG_CONFIG_LIBDIR=$deps/lib/pkgconfig PKG_CONFIG_PATH=
export CCACHE_BASEDIR=$src CCACHE_NOHASHDIR=true
start=$(date +%s)

# Debian's source packages, through apt's own client with a private sources
# list and state under OUT/apt (the machine's apt configuration is untouched).
fetch_sources() {
  apt="$out/apt"
  mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$out/src"
  codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
  printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$codename" > "$apt/debian.sources"
  set -- -o Dir::Etc::SourceList="$apt/debian.sources" -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists="$apt/lists" \
    -o Dir::Cache="$apt/cache" -o Debug::NoLocking=1 -qq
  apt-get "$@" update
  # shellcheck disable=SC2086  # the package names are words
  (cd "$out/src" && apt-get "$@" source $packages >/dev/null 2>&1) || {
    echo "cannot fetch Debian's sources of: $packages"
    exit 1
  }
}

cmake_lib() {  # NAME SOURCE_DIR CMAKE_ARGS...
  name=$1
  dir=$2
  shift 2
  cmake -S "$dir" -B "$out/b/$name" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$toolchain" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$deps" -DBUILD_SHARED_LIBS=OFF "$@" >"$out/b-$name.log" 2>&1 &&
    cmake --build "$out/b/$name" -j "$jobs" >>"$out/b-$name.log" 2>&1 &&
    cmake --install "$out/b/$name" >>"$out/b-$name.log" 2>&1 || {
    tail -20 "$out/b-$name.log"
    echo "building $name for Windows failed (log: $out/b-$name.log)"
    exit 1
  }
}

# libdeflate 1.14 builds with a Makefile whose Windows output is not what
# pkg-config names: its library sources, compiled here, and its .pc file.
build_libdeflate() {
  d=$(ls -d "$out"/src/libdeflate-*/)
  mkdir -p "$out/b/libdeflate" "$deps/lib/pkgconfig" "$deps/include"
  for c in "$d"lib/*.c "$d"lib/*/*.c; do
    $cc -O2 -fPIC -I"$d" -c "$c" -o "$out/b/libdeflate/$(basename "$(dirname "$c")")_$(basename "$c" .c).o"
  done
  $ar rcs "$deps/lib/libdeflate.a" "$out"/b/libdeflate/*.o
  cp "$d/libdeflate.h" "$deps/include/"
  printf 'prefix=%s\nName: libdeflate\nDescription: libdeflate\nVersion: 1.14\nLibs: -L${prefix}/lib -ldeflate\nCflags: -I${prefix}/include\n' \
    "$deps" > "$deps/lib/pkgconfig/libdeflate.pc"
}

stamp="$deps/.built-from"
if [ "$(cat "$stamp" 2>/dev/null)" != "$packages" ]; then
  rm -rf "$deps" "$out/src" "$out/b"
  echo "==> Debian source packages: $packages"
  fetch_sources
  src_of() { ls -d "$out"/src/"$1"-*/ | head -1; }
  echo "==> libraries for $target, into $deps"
  cmake_lib lz4 "$(src_of lz4)build/cmake" -DLZ4_BUILD_CLI=OFF -DLZ4_BUILD_LEGACY_LZ4C=OFF -DBUILD_STATIC_LIBS=ON
  cmake_lib zstd "$(src_of libzstd)build/cmake" -DZSTD_BUILD_PROGRAMS=OFF -DZSTD_BUILD_SHARED=OFF \
    -DZSTD_BUILD_STATIC=ON -DZSTD_BUILD_TESTS=OFF -DZSTD_MULTITHREAD_SUPPORT=OFF
  build_libdeflate
  cmake_lib fmt "$(src_of fmtlib)" -DFMT_DOC=OFF -DFMT_TEST=OFF
  cmake_lib yaml-cpp "$(src_of yaml-cpp)" -DYAML_CPP_BUILD_TESTS=OFF -DYAML_CPP_BUILD_TOOLS=OFF \
    -DYAML_CPP_BUILD_CONTRIB=OFF
  cmake_lib libzip "$(src_of libzip)" -DBUILD_TOOLS=OFF -DBUILD_REGRESS=OFF -DBUILD_EXAMPLES=OFF -DBUILD_DOC=OFF \
    -DENABLE_BZIP2=OFF -DENABLE_LZMA=OFF -DENABLE_ZSTD=OFF -DENABLE_GNUTLS=OFF -DENABLE_MBEDTLS=OFF \
    -DENABLE_OPENSSL=OFF -DENABLE_WINDOWS_CRYPTO=OFF -DENABLE_COMMONCRYPTO=OFF
  echo "$packages" > "$stamp"
  echo "==> libraries built in $(($(date +%s) - start)) s"
fi

# The header-only libraries' include directories, and nothing else of /usr/include.
mkdir -p "$out/headers"
for h in CLI nlohmann catch2; do ln -sfn "/usr/include/$h" "$out/headers/$h"; done

if [ "$target" = linux-static ]; then
  # Only the tool: the unit tests run from the ordinary build.
  set -- -DSAGEBUILD_TESTS=OFF
  build_target="--target sagebuild"
else
  # ONLY_SAGEBUILD=1: sagebuild.exe alone (the Windows tool wheel), in a
  # build configured as the tests' is, so that one directory serves both.
  set --
  build_target=${ONLY_SAGEBUILD:+--target sagebuild}
fi
echo "==> sagebuild for $target, into $out/sagebuild"
cmake -S "$src" -B "$out/sagebuild" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$toolchain" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$deps" -DSAGEBUILD_HEADER_ONLY_DIR="$out/headers" "$@" >"$out/sagebuild.log" 2>&1 || {
  tail -30 "$out/sagebuild.log"
  exit 1
}
# shellcheck disable=SC2086  # build_target is empty or two words
cmake --build "$out/sagebuild" -j "$jobs" $build_target -- -k 0 >>"$out/sagebuild.log" 2>&1 || {
  grep -E "error:|FAILED:" "$out/sagebuild.log" | head -40
  echo "(log: $out/sagebuild.log)"
  exit 1
}
echo "==> sagebuild ($target) built; setup took $(($(date +%s) - start)) s"
