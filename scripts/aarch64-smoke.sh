#!/usr/bin/env bash
# A linux_aarch64 sageattention wheel, smoke-tested under emulation on an
# x86_64 Linux host: a minimal Debian 12 arm64 root (debootstrap --arch=arm64;
# Debian's qemu-user-static runs its programs through binfmt_misc), in which
# pip installs torch's aarch64 wheel with its dependencies, then the wheel;
# Python imports sageattention, loads its extension (sageattention._C, which
# registers the ops) and runs the Python layer's tests on the meta device
# (tests/python/test_python_layer.py; no GPU anywhere).  Slow: every program in
# the root runs under qemu.  Needs root (debootstrap, mount, chroot).
#
#   scripts/aarch64-smoke.sh WHEEL [--torch-wheel FILE] [--keep]
#
#   WHEEL              a sageattention-*-manylinux_*_aarch64.whl (sagebuild --profile default-aarch64)
#   --torch-wheel FILE torch's aarch64 wheel, installed instead of downloading it (its
#                      dependencies still come from PyPI)
#   --keep             leave the root in place (its path is printed)
#
# Packages (scripts/install-deps.sh with SAGE_WITH_AARCH64_SMOKE=1): debootstrap,
# qemu-user-static, binfmt-support.  The root's base system is cached in
# /var/cache/sage-arm64/base.tar (delete it to refetch); pip's downloads in the
# invoking user's pip cache.  Prints each step's time and ends with one summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
die() { echo "aarch64-smoke: $*" >&2; exit 2; }

wheel="" torch_wheel="" keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --torch-wheel) [ $# -ge 2 ] || die "--torch-wheel needs a file"; torch_wheel="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1 (expected --torch-wheel FILE or --keep)" ;;
    *) [ -z "$wheel" ] || die "one wheel at a time (got $wheel and $1)"; wheel="$1"; shift ;;
  esac
done
[ -n "$wheel" ] || die "usage: scripts/aarch64-smoke.sh WHEEL [--torch-wheel FILE] [--keep]"
[ -f "$wheel" ] || die "$wheel: no such file"
case "$(basename "$wheel")" in
  sageattention-*_aarch64.whl) ;;
  *) die "$wheel: not a sageattention aarch64 wheel (its name must end in _aarch64.whl)" ;;
esac
[ -z "$torch_wheel" ] || [ -f "$torch_wheel" ] || die "--torch-wheel $torch_wheel: no such file"
[ "$(id -u)" = 0 ] || die "needs root (debootstrap, mount, chroot): run it as root or with sudo"
for tool in debootstrap chroot; do
  command -v "$tool" >/dev/null || die "$tool not found: apt-get install debootstrap (or run scripts/install-deps.sh with SAGE_WITH_AARCH64_SMOKE=1)"
done
[ -x /usr/bin/qemu-aarch64-static ] ||
  die "qemu-aarch64-static not found: apt-get install qemu-user-static binfmt-support"

step_t0=0
step() { step_t0=$(date +%s); echo "== $*"; }
took() { echo "   $(($(date +%s) - step_t0)) s"; }

# binfmt_misc: the kernel hands aarch64 ELF files to qemu.
step "binfmt_misc: aarch64 programs through qemu-aarch64-static"
if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
  mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc ||
    die "cannot mount binfmt_misc (a container without the privilege?): run it on a host or a VM"
fi
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
  command -v update-binfmts >/dev/null || die "update-binfmts not found: apt-get install binfmt-support"
  update-binfmts --enable qemu-aarch64 || die "update-binfmts --enable qemu-aarch64 failed"
fi
grep -q '^enabled' /proc/sys/fs/binfmt_misc/qemu-aarch64 || die "binfmt_misc's qemu-aarch64 entry is disabled"
took

# The root: Debian 12 arm64 minbase with Python, cached as a tarball.
CACHE=/var/cache/sage-arm64
mkdir -p "$CACHE"
ROOT="$(mktemp -d /var/tmp/sage-arm64.XXXXXX)"
mounted=()
cleanup() {
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -R -l "${mounted[$i]}" 2>/dev/null || true; done
  # Never delete through a mount that is still there (/dev is bound in).
  if grep -q " $ROOT/" /proc/mounts; then
    echo "aarch64-smoke: $ROOT still has mounts (see /proc/mounts); not deleting it" >&2
  elif [ "$keep" = 1 ]; then
    echo "aarch64-smoke: root kept at $ROOT"
  else
    rm -rf --one-file-system "$ROOT"
  fi
}
trap cleanup EXIT
if [ -f "$CACHE/base.tar" ]; then
  step "the arm64 root from $CACHE/base.tar"
  tar -xf "$CACHE/base.tar" -C "$ROOT"
else
  step "debootstrap --arch=arm64 bookworm (once; cached in $CACHE/base.tar)"
  mirror="$(sed -n 's/^URIs: *\(http[^ ]*debian\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)"
  debootstrap --arch=arm64 --variant=minbase --include=python3,python3-venv,ca-certificates \
    bookworm "$ROOT" "${mirror:-http://deb.debian.org/debian}" > "$ROOT.debootstrap.log" 2>&1 ||
    { tail -20 "$ROOT.debootstrap.log" >&2; die "debootstrap failed (log above)"; }
  rm -f "$ROOT.debootstrap.log"
  tar -cf "$CACHE/base.tar.tmp" -C "$ROOT" . && mv "$CACHE/base.tar.tmp" "$CACHE/base.tar"
fi
took
[ "$(chroot "$ROOT" dpkg --print-architecture)" = arm64 ] || die "the root is not arm64"

# Of the host, as in the clean room (scripts/cleanroom.sh): DNS, the CA
# certificates, pip's configuration and the variables that say where and how pip
# downloads (index, certificate, timeouts, proxies).
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
mkdir -p "$ROOT/etc/ssl/certs" "$ROOT/usr/local/share/ca-certificates"
cp -L /etc/ssl/certs/ca-certificates.crt "$ROOT/etc/ssl/certs/ca-certificates.crt"
[ ! -d /usr/local/share/ca-certificates ] || cp -rL /usr/local/share/ca-certificates/. "$ROOT/usr/local/share/ca-certificates/"
[ ! -f /etc/pip.conf ] || cp -L /etc/pip.conf "$ROOT/etc/pip.conf"
net_env=()
for v in PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_TRUSTED_HOST PIP_CERT PIP_DEFAULT_TIMEOUT PIP_TIMEOUT PIP_RETRIES \
  PIP_PROXY http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY; do
  [ -z "${!v:-}" ] || net_env+=("$v=${!v}")
done
for d in proc dev sys; do
  mkdir -p "$ROOT/$d"
  mount --rbind "/$d" "$ROOT/$d" && mounted+=("$ROOT/$d")
done
mkdir -p "$ROOT/in" "$ROOT/root/.cache/pip"
cp "$wheel" "$ROOT/in/"
[ -z "$torch_wheel" ] || cp "$torch_wheel" "$ROOT/in/"
mkdir -p "$ROOT/in/tests/python"
cp -r "$REPO/tests/python/." "$ROOT/in/tests/python/"
cp "$REPO/pytest.ini" "$ROOT/in/"
pip_cache="${XDG_CACHE_HOME:-$HOME/.cache}/pip"
if [ -d "$pip_cache" ]; then mount --bind "$pip_cache" "$ROOT/root/.cache/pip" && mounted+=("$ROOT/root/.cache/pip"); fi
in_root() { chroot "$ROOT" /usr/bin/env -i HOME=/root PATH=/venv/bin:/usr/bin:/bin LANG=C.UTF-8 \
  SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt "${net_env[@]}" "$@"; }

# The torch release the wheel was built against: its build tag (21100.130 = torch 2.11.0, CUDA 13.0).
torch_req="torch==$(python3 - "$(basename "$wheel")" <<'PY'
import re, sys
m = re.match(r"sageattention-[^-]+-(\d+)(\d\d)(\d\d)\.\d+-", sys.argv[1])
if not m:
    sys.exit(f"{sys.argv[1]}: no build tag of sagebuild's form (torch MmmPP.CUDA, e.g. 21100.130) in its name")
print(f"{int(m.group(1))}.{int(m.group(2))}.{int(m.group(3))}")
PY
)"
step "pip install torch's aarch64 wheel with its dependencies (${torch_wheel:+$(basename "$torch_wheel"), }$torch_req), under qemu"
in_root python3 -m venv /venv
if [ -n "$torch_wheel" ]; then
  in_root pip install -q --disable-pip-version-check --no-compile "/in/$(basename "$torch_wheel")" pytest
else
  in_root pip install -q --disable-pip-version-check --no-compile "$torch_req" pytest
fi
took

step "pip install $(basename "$wheel") (its torch is there: pip must not replace it)"
in_root pip install -q --disable-pip-version-check --no-compile --no-deps "/in/$(basename "$wheel")"
took

step "import sageattention and load its extension, under qemu"
t0=$(date +%s%N)
in_root python3 -c '
import importlib.metadata, platform, time
t = time.time(); import torch; t_torch = time.time() - t
t = time.time(); import sageattention, sageattention._C; t_sa = time.time() - t
assert platform.machine() == "aarch64", platform.machine()
sa_version = importlib.metadata.version("sageattention")
print(f"   {platform.machine()}: torch {torch.__version__} imported in {t_torch:.1f} s; sageattention {sa_version} and its extension in {t_sa:.1f} s")
ops = sorted(n.split("::", 1)[1] for n in torch._C._dispatch_get_all_op_names() if n.startswith("sageattention::"))
assert "attn_pv_fp16" in ops, ops
print(f"   {len(ops)} ops registered:", ", ".join(ops))
'
import_s=$(( ($(date +%s%N) - t0) / 1000000 ))
took

step "the Python layer's tests on the meta device (tests/python/test_python_layer.py), under qemu"
set +e
in_root bash -c 'set -o pipefail; cd /in && SAGE_TEST_WHEEL=/in/'"$(basename "$wheel")"' python3 -m pytest -q -p no:cacheprovider -o addopts="" tests/python/test_python_layer.py 2>&1 | tail -5'
rc=$?
set -e
took
echo "aarch64-smoke: $(basename "$wheel"): installed beside $torch_req, imported (python process ${import_s} ms), Python-layer tests rc=$rc"
exit $rc
