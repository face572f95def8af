#!/usr/bin/env bash
# Installs CUDA toolkit VERSION (e.g. 12.8) on a GitHub runner, for a row whose
# CUDA sagebuild does not provision itself (`sagebuild matrix --format github`
# gives it cuda_provision "install": every CUDA 12 row, Linux or Windows, whose
# PyPI wheels have no nvcc; a CUDA 13 row's toolkit sagebuild unpacks from
# NVIDIA's PyPI wheels itself, on Windows too, so the CUDA 13 releases below
# serve only a toolkit installed by hand and passed with --cuda-home).
# Only what a row compiles and links with:
#   - nvcc, with cicc, ptxas, fatbinary and its crt/ headers;
#   - the CUDA runtime: headers (cuda_fp16.h, cuda_bf16.h, cuda_fp8.h, ...),
#     libcudart_static.a on Linux, cudart.lib on Windows;
#   - CCCL's headers: the runtime's headers include <nv/target> from there.
# Linux:   NVIDIA's network repository for the machine's distribution: apt
#          (cuda-keyring; cuda-nvcc-X-Y cuda-cudart-dev-X-Y cuda-cccl-X-Y) on
#          Debian/Ubuntu, dnf (cuda-rhelN.repo; cuda-cudart-devel-X-Y) on
#          AlmaLinux/RHEL (the manylinux_2_28 container), in /usr/local/cuda-X.Y.
# Windows: NVIDIA's network installer, silent (-s), no reboot (-n), only the
#          sub-packages nvcc_X.Y cudart_X.Y thrust_X.Y (thrust = the CCCL
#          headers), plus crt_X.Y nvvm_X.Y from CUDA 13 on (where NVIDIA split
#          them out of nvcc), installed in the default C:\Program Files\...\CUDA\vX.Y.
# Then appends CUDA_HOME (and on Windows CUDA_PATH) to $GITHUB_ENV: the build
# step passes it to sagebuild as --cuda-home.
# DRY_RUN=1 prints the commands instead of running them (tests/ci runs it so);
# GITHUB_ENV is written either way.
# Usage: install-cuda.sh VERSION      (RUNNER_OS: Linux or Windows)
set -euo pipefail
version="${1:?usage: install-cuda.sh VERSION (e.g. 12.8)}"
if [[ ! "$version" =~ ^[0-9]+\.[0-9]+$ ]]; then
  echo "install-cuda.sh: expected a CUDA version MAJOR.MINOR such as 12.8, got '$version'" >&2; exit 2
fi
: "${GITHUB_ENV:?install-cuda.sh: GITHUB_ENV is not set; it runs as a GitHub Actions step}"
dashed="${version/./-}"   # 12.8 -> 12-8, as NVIDIA's deb packages name it
home=""                   # where it lands: set by install_linux / install_windows

run() {
  echo "+ $*"
  if [ "${DRY_RUN:-0}" != 1 ]; then "$@"; fi
}

install_linux() {
  # NVIDIA names its repositories after the distribution: ubuntu2204, debian12,
  # rhel8 (for AlmaLinux 8, the manylinux_2_28 image the build jobs run in).
  # OS_RELEASE: another os-release file (tests/ci checks the dnf path so).
  # shellcheck disable=SC1090,SC1091  # the machine's own file
  . "${OS_RELEASE:-/etc/os-release}"
  # The repository's machine directory: x86_64, or sbsa for 64-bit ARM
  # servers (GitHub's ARM runners; the Linux aarch64 rows, whose CUDA 13
  # sagebuild does not take from PyPI). UNAME_M: another machine (tests/ci).
  local arch
  arch="${UNAME_M:-$(uname -m)}"
  case "$arch" in
    x86_64) ;;
    aarch64) arch=sbsa ;;
    *) echo "install-cuda.sh: no NVIDIA repository chosen for machine $arch; the Linux rows are" \
            "x86_64 or aarch64" >&2; exit 2 ;;
  esac
  local sudo=()
  if [ "$(id -u)" != 0 ]; then sudo=(sudo); fi
  case " ${ID:-} ${ID_LIKE:-} " in
    *" rhel "*|*" fedora "*|*" centos "*) install_linux_dnf ;;
    *) install_linux_apt ;;
  esac
  run "$home/bin/nvcc" --version
  echo "CUDA_HOME=$home" >> "$GITHUB_ENV"
}

install_linux_dnf() {
  local repo="https://developer.download.nvidia.com/compute/cuda/repos/rhel${VERSION_ID%%.*}/$arch"
  run "${sudo[@]}" dnf config-manager --add-repo "$repo/cuda-rhel${VERSION_ID%%.*}.repo"
  run "${sudo[@]}" dnf install -y -q "cuda-nvcc-$dashed" "cuda-cudart-devel-$dashed" "cuda-cccl-$dashed"
  home="/usr/local/cuda-$version"
}

install_linux_apt() {
  local distro="${ID}${VERSION_ID//./}"
  local repo="https://developer.download.nvidia.com/compute/cuda/repos/$distro/$arch"
  local keyring="${RUNNER_TEMP:-/tmp}/cuda-keyring.deb"
  run curl -fsSL --retry 3 -o "$keyring" "$repo/cuda-keyring_1.1-1_all.deb"
  run "${sudo[@]}" dpkg -i "$keyring"
  run "${sudo[@]}" apt-get update -qq
  run "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "cuda-nvcc-$dashed" "cuda-cudart-dev-$dashed" "cuda-cccl-$dashed"
  home="/usr/local/cuda-$version"
}

install_windows() {
  # The network installer is published per update release; the newest update
  # of each minor the matrix builds on Windows (NVIDIA's CUDA Toolkit archive).
  local release
  # 13.0.2: the update torch 2.11's cuda-toolkit==13.0.2 requirement names;
  # 13.2.0: its network installer is published (developer.download.nvidia.com).
  # (NVIDIA's site is not reachable from the machine the tests run on: these
  # URLs are checked by the Windows jobs themselves, not by tests/ci.)
  case "$version" in
    12.4) release=12.4.1 ;;
    12.6) release=12.6.3 ;;
    12.8) release=12.8.1 ;;
    12.9) release=12.9.1 ;;
    13.0) release=13.0.2 ;;
    13.2) release=13.2.0 ;;
    *) echo "install-cuda.sh: no Windows installer release known for CUDA $version; add its newest" \
            "update (developer.nvidia.com/cuda-toolkit-archive) to install_windows" >&2; exit 2 ;;
  esac
  local url="https://developer.download.nvidia.com/compute/cuda/$release/network_installers/cuda_${release}_windows_network.exe"
  local tmp="${RUNNER_TEMP:-/tmp}"
  if command -v cygpath >/dev/null; then tmp="$(cygpath -u "$tmp")"; fi  # Git Bash: D:\a\_temp -> /d/a/_temp
  local installer="$tmp/cuda_${release}_windows_network.exe"
  local packages=("nvcc_$version" "cudart_$version" "thrust_$version")
  if [ "${version%%.*}" -ge 13 ]; then packages+=("crt_$version" "nvvm_$version"); fi
  run curl -fsSL --retry 3 -o "$installer" "$url"
  run "$installer" -s -n "${packages[@]}"
  home="C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v$version"
  run "${home//\\//}/bin/nvcc.exe" --version
  { echo "CUDA_HOME=$home"; echo "CUDA_PATH=$home"; } >> "$GITHUB_ENV"
}

case "${RUNNER_OS:-}" in
  Linux) install_linux ;;
  Windows) install_windows ;;
  *) echo "install-cuda.sh: RUNNER_OS is '${RUNNER_OS:-}'; expected Linux or Windows" >&2; exit 2 ;;
esac
if [ "${DRY_RUN:-0}" = 1 ]; then echo "CUDA $version: CUDA_HOME=$home (dry run: nothing installed)"
else echo "CUDA $version: CUDA_HOME=$home"; fi
