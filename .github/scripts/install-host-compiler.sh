#!/usr/bin/env bash
# Installs a host C++ compiler that CUDA VERSION's nvcc accepts, in a Linux
# build job, when the machine's own g++ is newer than that release accepts:
# the manylinux_2_28 image's default GCC is gcc-toolset-14, and CUDA 12.4 and
# 12.6 accept GCC <= 13.  It installs gcc-toolset-N (AlmaLinux's AppStream,
# dnf), N the newest GCC major the release accepts; sagebuild then finds it
# (/opt/rh/gcc-toolset-N) and checks it against the release itself.
# The limits are sagebuild's own table (tools/sagebuild/toolchain/
# host_compiler.cc, from each release's crt/host_config.h); tests/ci keeps
# the two in step.
# DRY_RUN=1 prints the commands instead of running them; GXX: the compiler to
# compare (default g++).
# Usage: install-host-compiler.sh VERSION
set -euo pipefail
version="${1:?usage: install-host-compiler.sh CUDA_VERSION (e.g. 12.4)}"
case "$version" in
  12.4|12.6) max=13 ;;
  12.8|12.9) max=14 ;;
  13.0|13.2) max=15 ;;
  *) echo "install-host-compiler.sh: no GCC limit known for CUDA '$version'; add it from that release's" \
          "crt/host_config.h (and sagebuild's table, tools/sagebuild/toolchain/host_compiler.cc)" >&2; exit 2 ;;
esac
run() {
  echo "+ $*"
  if [ "${DRY_RUN:-0}" != 1 ]; then "$@"; fi
}
gxx="${GXX:-g++}"
have=""
if command -v "$gxx" >/dev/null; then have=$("$gxx" -dumpversion); have="${have%%.*}"; fi
if [ -n "$have" ] && [ "$have" -le "$max" ]; then
  echo "CUDA $version accepts GCC <= $max: $gxx is GCC $have, nothing to install"
  exit 0
fi
if ! command -v dnf >/dev/null && [ "${DRY_RUN:-0}" != 1 ]; then
  echo "install-host-compiler.sh: $gxx is GCC ${have:-(none)}, CUDA $version needs GCC <= $max, and this machine" \
       "has no dnf for gcc-toolset-$max; install g++-$max (or older) and pass --host-compiler" >&2
  exit 1
fi
run dnf install -y -q "gcc-toolset-$max-gcc-c++"
run "/opt/rh/gcc-toolset-$max/root/usr/bin/g++" --version
echo "CUDA $version: gcc-toolset-$max in /opt/rh/gcc-toolset-$max (the image's $gxx is GCC ${have:-none})"
