# CMake toolchain file: sagebuild for this Linux host as one static executable
# (glibc, libstdc++ and every library linked in), so that the tool wheel
# (`sagebuild package-self`) runs on any x86_64 Linux: the manylinux_2_28
# build container as well as Debian and Ubuntu hosts.  libzip, yaml-cpp, fmt,
# lz4, zstd and libdeflate come from build.sh (Debian's sources, built static;
# Debian ships no libzip.a or libfmt.a); zlib and OpenSSL's libcrypto are
# Debian's static archives.  Nothing in sagebuild resolves host names or
# users (no NSS), which is what a static glibc cannot do.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
set(CMAKE_FIND_LIBRARY_SUFFIXES .a)
set(OPENSSL_USE_STATIC_LIBS TRUE)
set(ZLIB_USE_STATIC_LIBS ON)
