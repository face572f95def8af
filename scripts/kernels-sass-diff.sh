#!/usr/bin/env bash
# Checks that a refactoring of kernels/ leaves the generated device code alone:
# compiles every kernel family of kernels/families.json, at BASE_REV and in the
# working tree, for each arch it is built for, and compares the SASS of every
# kernel (cuobjdump -sass, instruction text and encoding, addresses stripped,
# functions sorted by name).  Prints one line per (family, arch) and exits 1 on
# any difference.
#
#   scripts/kernels-sass-diff.sh BASE_REV
#   ARCHS="80 90a" scripts/kernels-sass-diff.sh HEAD~1   # a subset of archs
#   SASS_CACHE=/tmp/sass scripts/kernels-sass-diff.sh BASE_REV  # keep BASE_REV's SASS for reruns
#   SASS_CACHE=/tmp/sass BASE_ONLY=1 scripts/kernels-sass-diff.sh BASE_REV  # fill the cache only
#
# Families are compiled as sagebuild compiles them (families.json's nvcc_flags
# and include_dirs, one gencode per arch), but to a cubin only: no host pass.
# The default archs are the default row's (sm_80, sm_86, sm_89, sm_90, sm_120:
# every min_arch family at or above its minimum) plus sm_90a (the sm90
# family's target; the min_arch families too, as a row listing 9.0a builds
# them).  nvcc is slow; ARCHS narrows the run while iterating.
set -euo pipefail
base=${1:?usage: $0 BASE_REV}
archs=${ARCHS:-"80 86 89 90 90a 120"}
ptx_arch=${PTX_ARCH:-120}
root=$(git rev-parse --show-toplevel)
base_sha=$(git -C "$root" rev-parse --verify "$base^{commit}")
nvcc=${NVCC:-nvcc}
# cuobjdump: $CUOBJDUMP, else on PATH or beside nvcc, else the copy triton ships.
cuobjdump=${CUOBJDUMP:-$(command -v cuobjdump || true)}
[[ -n $cuobjdump ]] || cuobjdump=$(dirname "$(command -v "$nvcc")")/cuobjdump
if [[ ! -x $cuobjdump ]]; then
  cuobjdump=$(python3 -c 'import os, triton; print(os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/cuobjdump"))' 2>/dev/null || true)
fi
[[ -x $cuobjdump ]] || { echo "$0: no cuobjdump (set CUOBJDUMP=/path/to/cuobjdump)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cache=${SASS_CACHE:-$work/cache}
mkdir -p "$work/base" "$cache/$base_sha"
git -C "$root" archive "$base_sha" kernels | tar -x -C "$work/base"

# "family source arch" for each source of each family and each arch (of $2, else
# ARCHS) it is built for.
units() {
  python3 - "$1/kernels/families.json" "${2:-$archs}" <<'PY'
import json, sys
fams = json.load(open(sys.argv[1]))["families"]
def num(a):  # "9.0a" / "90a" -> 90
    return int(a.replace(".", "").rstrip("a"))
for arch in sys.argv[2].split():
    for name, f in sorted(fams.items()):
        if "min_arch" in f:
            ok = num(arch) >= num(f["min_arch"])
        else:
            ok = arch in [a.replace(".", "") for a in f["archs"]]
        if ok:
            for s in f["sources"]:
                print(name, s, arch)
PY
}

flags() {
  python3 - "$1/kernels/families.json" "$1" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
print(" ".join(m["nvcc_flags"] + ["-I%s/%s" % (sys.argv[2], d) for d in m["include_dirs"]]))
PY
}

# cuobjdump -sass text -> one block per function, sorted by name: each
# instruction as its text and encoding (a cubin's header lines end the
# function before them, so a family of several sources compares its kernels
# alone); addresses and the scheduling
# annotations some cuobjdump versions print (&wr=, ?trans) dropped (the
# encoding carries the control bits).
normalize() {
  python3 -c '
import re, sys
funcs, cur = {}, None
for line in sys.stdin:
    m = re.match(r"\s*Function : (\S+)", line)
    if m:
        cur = m.group(1); funcs[cur] = []; continue
    if re.match(r"\s*(code for sm_|\.target\s)", line):  # the next cubin of the family (e.g. quant: abi.cu)
        cur = None; continue
    if cur is None: continue
    line = re.sub(r"/\*[0-9a-f]{4,}\*/", "", line)
    line = re.sub(r"\s(&\w+=\S+|\?\w+)(?=[\s;])", " ", line)
    line = " ".join(line.split())
    if line: funcs[cur].append(line)
for name in sorted(funcs):
    print("Function :", name)
    print("\n".join(funcs[name]))
'
}

# compile TREE OUT_DIR: one cubin per (family, arch, source), named
# family.arch.N.cubin (N: the source's place in the family); a unit already
# there is kept (the BASE_REV cache).  Cubins, not SASS text, are cached, so
# both sides are disassembled by the same cuobjdump.
compile_tree() {
  local tree=$1 out=$2 fam src arch f n prev=
  f=$(flags "$tree")
  while read -r fam src arch; do
    [[ $prev == "$fam.$arch" ]] && n=$((n + 1)) || n=0
    prev="$fam.$arch"
    local dst="$out/$fam.$arch.$n.cubin"
    [[ -e $dst ]] && continue
    # shellcheck disable=SC2086
    (cd "$tree" && "$nvcc" $f -gencode "arch=compute_$arch,code=sm_$arch" -cubin -o "$dst.tmp" "$src")
    mv "$dst.tmp" "$dst"
  done < <(units "$tree")
  # the PTX of every family built for ptx_arch
  while read -r fam src arch; do
    [[ $arch == "$ptx_arch" ]] || continue
    local dst="$out/$fam.ptx$arch.${src//\//_}.ptx"
    [[ -e $dst ]] && continue
    # shellcheck disable=SC2086
    (cd "$tree" && "$nvcc" $f -arch="compute_$arch" -ptx -o "$dst.tmp" "$src")
    mv "$dst.tmp" "$dst"
  done < <(units "$tree" "$ptx_arch")
}

# sass DIR KEY: the SASS of every cubin of (family, arch) KEY, normalized.
sass() {
  for c in "$1/$2".*.cubin; do "$cuobjdump" -sass "$c"; done | normalize
}

mkdir -p "$work/head"
compile_tree "$work/base" "$cache/$base_sha"
[[ -z ${BASE_ONLY:-} ]] || exit 0
compile_tree "$root" "$work/head"

status=0
keys=$(cd "$work/head" && ls ./*.cubin "$cache/$base_sha"/*.cubin | sed 's@.*/@@; s@\.[0-9]*\.cubin$@@' | sort -u)
for key in $keys; do
  b=$(sass "$cache/$base_sha" "$key") || true
  h=$(sass "$work/head" "$key") || true
  if [[ -z $b || -z $h ]]; then
    echo "DIFF $key: built only at $([[ -n $b ]] && echo "$base" || echo 'the working tree')"
    status=1
  elif [[ $b == "$h" ]]; then
    echo "same $key: $(grep -c '^Function :' <<<"$h") kernels, $(wc -l <<<"$h") SASS lines"
  else
    echo "DIFF $key: $(diff <(echo "$b") <(echo "$h") | grep -c '^[<>]') lines differ"
    diff <(echo "$b") <(echo "$h") | head -20 || true
    status=1
  fi
done
for b in "$cache/$base_sha"/*.ptx; do
  [[ -e $b ]] || continue
  key=$(basename "$b")
  if [[ ! -e $work/head/$key ]]; then
    echo "DIFF $key: built only at $base"
    status=1
  elif cmp -s "$b" "$work/head/$key"; then
    echo "same $key: $(wc -l <"$b") PTX lines"
  else
    echo "DIFF $key: $(diff "$b" "$work/head/$key" | grep -c '^[<>]') PTX lines differ"
    status=1
  fi
done
exit $status
