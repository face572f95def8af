#!/usr/bin/env bash
# The clean room: runs a command, as root, inside a fresh minimal Debian 12
# (bookworm) root, so that what it proves holds on a fresh machine.
#
#   bash scripts/cleanroom.sh [--keep-base] -- COMMAND [ARGS...]
#
# COMMAND runs with the checkout (this script's repository) as its working
# directory, bound read-write at its own absolute path; `../shared` beside the
# checkout, when present, is bound read-only at the same place.  The exit
# status is COMMAND's.
#
# The root: `debootstrap --variant=minbase bookworm`, made once and cached in
# $SAGE_CLEANROOM_CACHE (default /var/cache/sage-cleanroom/), keyed by this
# script's hash; a base older than $SAGE_CLEANROOM_MAX_AGE_DAYS (default 7) is
# made again, as a fresh machine would get the archive's current packages;
# --keep-base uses the cached one whatever its age.  Every run mounts it as the
# lower layer of an overlay whose upper layer is a temporary directory on disk
# ($SAGE_CLEANROOM_TMP, default /var/tmp): every run starts from the pristine
# base and nothing it installs persists.
#
# Of the host, only these reach inside: the CA certificates
# (/etc/ssl/certs/ca-certificates.crt, /usr/local/share/ca-certificates),
# DNS (/etc/resolv.conf), apt's configuration (sources, keyrings, apt.conf.d,
# preferences), pip's (/etc/pip.conf and the PIP_* variables that say where and
# how to download: index URLs, certificate, timeouts, proxies; not
# PIP_FIND_LINKS, PIP_CACHE_DIR or anything else naming host directories), the
# http(s)_proxy variables, and read-only views of the download caches (apt's
# /var/cache/apt/archives and pip's cache of the invoking root, or
# $SAGE_CLEANROOM_PIP_CACHE): COMMAND reads them through an overlay, and what
# it downloads stays in its own layer.  No
# compiler, CUDA, Python package, PATH or other cache of the host.
#
# Inside: a private mount and PID namespace (unshare; every process and mount
# ends with the run, whatever way it ends, Ctrl-C included), /proc, a minimal
# /dev (null, zero, full, random, urandom, tty, a private devpts and /dev/shm),
# /sys read-only, a private /tmp on disk.  The environment is fixed: HOME=/root,
# a standard PATH, LANG=C.UTF-8, SAGE_CLEANROOM=1 and the variables above;
# pass others through COMMAND (e.g. `env CI=true bash ...`).
set -euo pipefail

die() {
  echo "cleanroom: $*" >&2
  exit 2
}

SELF="$(readlink -f "${BASH_SOURCE[0]}")"
SUITE=bookworm

# ---------------------------------------------------------------- inside ----
# Second stage: run by the first one under `unshare --mount --pid --fork`,
# as PID 1 of the new namespace: mount the root and run COMMAND in it.
if [ "${1:-}" = "--inside-namespace" ]; then
  shift
  base="$1" run="$2" checkout="$3"
  shift 3
  root="$run/root"
  mkdir -p "$run/upper" "$run/work" "$root" "$run/tmp"
  mount --make-rprivate /
  mount -t overlay overlay -o "lowerdir=$base,upperdir=$run/upper,workdir=$run/work" "$root"

  mount -t proc proc "$root/proc"
  mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$root/sys"
  mount -t tmpfs -o nosuid,mode=0755,size=16m dev "$root/dev"
  while read -r name major minor; do
    mknod -m 0666 "$root/dev/$name" c "$major" "$minor"
  done <<<$'null 1 3\nzero 1 5\nfull 1 7\nrandom 1 8\nurandom 1 9\ntty 5 0'
  mkdir -p "$root/dev/pts" "$root/dev/shm"
  mount -t devpts -o newinstance,ptmxmode=0666,mode=0620,nosuid,noexec devpts "$root/dev/pts"
  ln -s pts/ptmx "$root/dev/ptmx"
  mount -t tmpfs -o nosuid,nodev,mode=1777 shm "$root/dev/shm"
  ln -s /proc/self/fd "$root/dev/fd"
  ln -s /proc/self/fd/0 "$root/dev/stdin"
  ln -s /proc/self/fd/1 "$root/dev/stdout"
  ln -s /proc/self/fd/2 "$root/dev/stderr"
  # /tmp: private and on disk (torch's wheel alone is 3.5 GB).
  chmod 1777 "$run/tmp"
  mount --bind "$run/tmp" "$root/tmp"

  # Host configuration, copied into this run's layer (the base stays pristine).
  etc="$root/etc"
  cp -L /etc/resolv.conf "$etc/resolv.conf"
  printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$etc/hosts"
  mkdir -p "$etc/ssl/certs" "$root/usr/local/share/ca-certificates"
  cp -L /etc/ssl/certs/ca-certificates.crt "$etc/ssl/certs/ca-certificates.crt"
  if [ -d /usr/local/share/ca-certificates ]; then
    cp -rL /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/"
  fi
  rm -f "$etc/apt/sources.list"
  rm -rf "$etc/apt/sources.list.d"
  mkdir -p "$etc/apt/sources.list.d"
  [ -f /etc/apt/sources.list ] && cp -L /etc/apt/sources.list "$etc/apt/sources.list"
  for f in /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && cp -L "$f" "$etc/apt/sources.list.d/"
  done
  for d in apt.conf.d preferences.d trusted.gpg.d keyrings auth.conf.d; do
    if [ -d "/etc/apt/$d" ]; then
      mkdir -p "$etc/apt/$d"
      cp -rL "/etc/apt/$d/." "$etc/apt/$d/"
    fi
  done
  [ -f /etc/apt/trusted.gpg ] && cp -L /etc/apt/trusted.gpg "$etc/apt/trusted.gpg"
  # Keyrings the sources name outside /etc/apt (Signed-By: /usr/share/keyrings/X).
  { grep -rhoE '(Signed-By:|signed-by=)[[:space:]]*/[^] ]+' /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
      /etc/apt/sources.list.d/*.sources 2>/dev/null || true; } | sed -E 's/^(Signed-By:|signed-by=)[[:space:]]*//' |
    sort -u | while read -r key; do
      if [ -f "$key" ] && [ ! -e "$root$key" ]; then
        mkdir -p "$root$(dirname "$key")"
        cp -L "$key" "$root$key"
      fi
    done
  [ -f /etc/pip.conf ] && cp -L /etc/pip.conf "$etc/pip.conf"
  # The checkout may belong to another user than the room's root (a CI
  # clone): git would refuse it as of "dubious ownership", as a runner's
  # actions/checkout declares it safe, so does the room.
  # (its .git too: a clone from it checks that path)
  printf '[safe]\n\tdirectory = %s\n\tdirectory = %s/.git\n' "$checkout" "$checkout" >>"$etc/gitconfig"

  # Download caches: the host's, read through an overlay; writes stay here.
  cache_overlay() { # HOST_DIR PATH_INSIDE NAME
    [ -d "$1" ] || return 0
    mkdir -p "$root$2" "$run/$3.upper" "$run/$3.work"
    mount -t overlay overlay -o "lowerdir=$1,upperdir=$run/$3.upper,workdir=$run/$3.work" "$root$2"
  }
  cache_overlay /var/cache/apt/archives /var/cache/apt/archives apt-archives
  cache_overlay "${SAGE_CLEANROOM_PIP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pip}" /root/.cache/pip pip-cache

  # The checkout, and ../shared beside it.
  mkdir -p "$root$checkout"
  mount --bind "$checkout" "$root$checkout"
  shared="$(dirname "$checkout")/shared"
  if [ -e "$shared" ]; then
    target="$(readlink -f "$shared")"
    mkdir -p "$root$shared"
    mount --bind "$target" "$root$shared"
    mount -o remount,bind,ro "$root$shared"
  fi

  envs=(HOME=/root USER=root LOGNAME=root LANG=C.UTF-8 TERM="${TERM:-dumb}" SAGE_CLEANROOM=1
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
  for v in PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_TRUSTED_HOST PIP_CERT PIP_CLIENT_CERT PIP_DEFAULT_TIMEOUT \
    PIP_TIMEOUT PIP_RETRIES PIP_PROXY PIP_DISABLE_PIP_VERSION_CHECK PIP_PROGRESS_BAR \
    http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY; do
    if [ -n "${!v+x}" ]; then envs+=("$v=${!v}"); fi
  done
  # Not `exec`: this shell stays PID 1 of the namespace (PID 1 ignores
  # signals it has no handler for; COMMAND, as its child, keeps the defaults).
  chroot "$root" /usr/bin/env -i "${envs[@]}" /bin/sh -c 'cd "$1" && shift && exec "$@"' sh "$checkout" "$@"
  exit $?
fi

# ---------------------------------------------------------------- outside ---
keep_base=0
while [ $# -gt 0 ]; do
  case "$1" in
  --keep-base) keep_base=1 ;;
  --) shift; break ;;
  -h | --help) sed -n '2,/^set -euo/p' "$SELF" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  *) die "unknown argument '$1': usage: bash scripts/cleanroom.sh [--keep-base] -- COMMAND [ARGS...]" ;;
  esac
  shift
done
[ $# -gt 0 ] || die "no command: usage: bash scripts/cleanroom.sh [--keep-base] -- COMMAND [ARGS...]"
[ "$(id -u)" = 0 ] || die "needs root (debootstrap, mount, chroot): run it as root or with sudo"
command -v unshare >/dev/null && command -v chroot >/dev/null || die "needs unshare and chroot (util-linux, coreutils)"
if ! grep -qw overlay /proc/filesystems; then
  modprobe overlay 2>/dev/null || true
  grep -qw overlay /proc/filesystems ||
    die "the kernel has no overlay filesystem (not in /proc/filesystems; modprobe overlay failed): the clean room needs it"
fi

checkout="$(cd "$(dirname "$SELF")/.." && pwd -P)"
cache="${SAGE_CLEANROOM_CACHE:-/var/cache/sage-cleanroom}"
# The mirror: the host's first Debian archive for bookworm, as apt has it.
mirror="$({ grep -hE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}'
  grep -hE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk '{for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) {print $i; break}}'
} | grep -vE 'security|updates' | head -1 || true)"
mirror="${mirror:-http://deb.debian.org/debian}"
# The base's key: the hash of the part of this script that makes it (between
# the two `base:` markers) and of the mirror; other edits keep the cache.
key="$( (sed -n '/^# ---- base: begin/,/^# ---- base: end/p' "$SELF"; echo "$mirror") | sha256sum | cut -c1-16)"

base="$cache/base-$SUITE-$key"
mkdir -p "$cache"

# A base that a running clean room (of any mount namespace) has as its lower
# layer is not removed.
in_use() { grep -qsF "lowerdir=$1," /proc/[0-9]*/mountinfo; }

# ---- base: begin
(
  flock 9
  if [ -f "$base/.complete" ] && [ "$keep_base" = 0 ] && ! in_use "$base" &&
    [ -n "$(find "$base/.complete" -mtime +"${SAGE_CLEANROOM_MAX_AGE_DAYS:-7}")" ]; then
    echo "cleanroom: the base $base is older than ${SAGE_CLEANROOM_MAX_AGE_DAYS:-7} days: made again" >&2
    rm -rf --one-file-system "$base"
  fi
  if [ ! -f "$base/.complete" ]; then
    if ! command -v debootstrap >/dev/null; then
      echo "cleanroom: apt-get install debootstrap" >&2
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null ||
        die "could not install debootstrap (apt-get install debootstrap)"
    fi
    echo "cleanroom: debootstrap --variant=minbase $SUITE from $mirror into $base" >&2
    t0=$(date +%s)
    rm -rf --one-file-system "$base.tmp" "$base"
    if ! debootstrap --variant=minbase "$SUITE" "$base.tmp" "$mirror" >"$cache/debootstrap.log" 2>&1; then
      tail -20 "$cache/debootstrap.log" >&2
      die "debootstrap --variant=minbase $SUITE $mirror failed (log: $cache/debootstrap.log)"
    fi
    # No service starts from a package's postinst; no downloaded .deb kept.
    printf '#!/bin/sh\nexit 101\n' >"$base.tmp/usr/sbin/policy-rc.d"
    chmod 755 "$base.tmp/usr/sbin/policy-rc.d"
    rm -f "$base.tmp"/var/cache/apt/archives/*.deb "$base.tmp/etc/resolv.conf" "$base.tmp/etc/hostname"
    touch "$base.tmp/.complete"
    mv "$base.tmp" "$base"
    echo "cleanroom: base ready in $(($(date +%s) - t0)) s" >&2
    # Bases of other versions of this script are not used again.
    for old in "$cache"/base-*; do
      [ "$old" = "$base" ] || in_use "$old" || rm -rf --one-file-system "$old"
    done
  fi
) 9>"$cache/.lock"
# ---- base: end

tmproot="${SAGE_CLEANROOM_TMP:-/var/tmp}"
run="$(mktemp -d "$tmproot/sage-cleanroom.XXXXXX")"
cleanup() {
  # The mounts live in the namespace, which ends with unshare; check anyway
  # before removing anything.
  if grep -qF " $run" /proc/self/mountinfo; then
    echo "cleanroom: mounts under $run remain; not removing it" >&2
    return
  fi
  rm -rf --one-file-system "$run"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

rc=0
unshare --mount --pid --fork --kill-child --propagation private \
  bash "$SELF" --inside-namespace "$base" "$run" "$checkout" "$@" || rc=$?
exit "$rc"
