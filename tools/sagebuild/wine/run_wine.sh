#!/bin/sh
# Runs the Windows build (build.sh) under wine, in a wine prefix of its own:
#   run_wine.sh WINE OUT suite NAME            the unit's Catch2 suite, sb_NAME_tests.exe
#   run_wine.sh WINE OUT matrix LINUX_SAGEBUILD SOURCE_DIR
#        `matrix` of every profile, each format: byte for byte what Linux's says
#   run_wine.sh WINE OUT verify LINUX_SAGEBUILD CORPUS_DIR
#        `verify --json` of every corpus wheel: the same verdicts and findings
#   run_wine.sh WINE OUT tool-wheel LINUX_SAGEBUILD
#        `sagebuild.exe package-self`: the win_amd64 tool wheel, verified by
#        Linux's sagebuild too, installed by real pip for win_amd64 (--target),
#        and the installed sagebuild.exe run
#   run_wine.sh WINE OUT plan SOURCE_DIR
#        the win_amd64 row's plan (--dry-run) on a "Windows host" without
#        Visual Studio or CUDA: discovery fails by name, the plan prints
# Exit 77 (skipped) with the reason when wine cannot run a Windows program here.
set -u
wine=$1
out=$2
mode=$3
shift 3
exe_dir=$out/sagebuild/tools/sagebuild
if [ -z "$wine" ] || [ ! -x "$wine" ]; then
  echo "skipped: no wine (Debian: apt-get install wine64, then re-run cmake)"
  exit 77
fi
export WINEPREFIX="$out/wineprefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
# The first run creates the prefix.  The child alone: if this fails, wine
# itself cannot run a 64-bit Windows program here.  CTest runs the suites in
# parallel, and two wines creating one prefix at once race on its server
# directory ("chdir to /tmp/wine-*/server-*: No such file or directory", seen
# in a clean-clone CI run): the probe holds a lock, so one creates the prefix
# while the others wait, and a failed probe is tried once more.
probe() {
  if command -v flock >/dev/null 2>&1; then
    flock "$out/.wineprefix.lock" "$wine" "$exe_dir/run/sb_win_child.exe" exit 0 2>&1
  else
    "$wine" "$exe_dir/run/sb_win_child.exe" exit 0 2>&1
  fi
}
if ! probe=$(probe) && ! { sleep 2; probe=$(probe); }; then
  echo "skipped: $wine cannot run a 64-bit Windows program here:"
  echo "$probe" | tail -5
  exit 77
fi
sagebuild_exe=$exe_dir/cli/sagebuild.exe
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# wine_to FILE EXE ARGS...: wine runs EXE ARGS into FILE.crlf, its exit
# status in $rc.  Wine itself now and then fails under load, not reproducible
# with the same input: it faults while a process exits (a null read inside
# wine, "wine: Unhandled page fault"), the client loses its wineserver ("wine
# client error:0: recvmsg: Connection reset by peer", the only output of a
# clean-clone CI run's `matrix` on 2026-11-30, with the suites running beside
# it), or the loader cannot map a system DLL ("wine: could not load
# kernel32.dll, status c0000135", the only output of a clean-clone CI run's
# pack suite, 2026-11-30).  Such a run is repeated once, and the log says so.
wine_to() {
  file=$1
  exe=$2
  shift 2
  "$wine" "$exe" "$@" >"$file.crlf" 2>&1
  rc=$?
  if grep -qE "^wine: (Unhandled|could not load)|^wine client error" "$file.crlf"; then
    echo "note: wine itself failed running $(basename "$exe") $* ($(head -n 1 "$file.crlf" | tr -d '\r')); run again"
    "$wine" "$exe" "$@" >"$file.crlf" 2>&1
    rc=$?
  fi
}

# sagebuild.exe ARGS... > FILE (CRs dropped), its exit status in $rc.
sagebuild_to() {
  file=$1
  shift
  wine_to "$file" "$sagebuild_exe" "$@"
  tr -d '\r' <"$file.crlf" >"$file"
}

case "$mode" in
suite)
  # Test cases tagged [posix] drive the Linux host's tools (cc, sh scripts on
  # a POSIX PATH) or POSIX file semantics (exec bits, unprivileged symlinks).
  wine_to "$tmp/suite" "$exe_dir/$1/sb_$1_tests.exe" "~[posix]"
  cat "$tmp/suite.crlf"
  exit $rc
  ;;
matrix)
  linux=$1
  cd "$2" || exit 1
  rc=0
  # An unknown profile's error lists the valid ones.
  profiles=$("$linux" matrix --profile __none__ 2>&1 | sed -n 's/.*valid profiles: //p' | tr -d ',')
  for profile in $profiles; do
    for format in table json github; do
      "$linux" matrix --profile "$profile" --format "$format" >"$tmp/linux" 2>&1
      sagebuild_to "$tmp/windows" matrix --profile "$profile" --format "$format"
      if ! cmp -s "$tmp/linux" "$tmp/windows"; then
        echo "matrix --profile $profile --format $format differs:"
        diff "$tmp/linux" "$tmp/windows" | head -20
        rc=1
      fi
      n=$((${n:-0} + 1))
    done
  done
  [ "${n:-0}" -gt 0 ] || { echo "no profiles listed"; exit 1; }
  echo "matrix: $n outputs compared, $([ $rc = 0 ] && echo all equal || echo some differ)"
  exit $rc
  ;;
verify)
  linux=$1
  corpus=$2
  if [ ! -d "$corpus" ]; then
    echo "skipped: no wheel corpus at $corpus (../shared beside the checkout)"
    exit 77
  fi
  cd "$corpus" || exit 1
  wheels=$(find . -name '*.whl' | sort)
  n=0
  differ=0
  # the Windows run ($rc, $tmp/windows) gave Linux's exit code and output
  same_as_linux() { [ "$lrc" = "$rc" ] && cmp -s "$tmp/linux" "$tmp/windows"; }
  for w in $wheels; do
    "$linux" verify --json "$w" >"$tmp/linux" 2>&1
    lrc=$?
    sagebuild_to "$tmp/windows" verify --json "$w"
    if ! same_as_linux; then
      # A difference that is sagebuild's comes back on a second run; wine on a
      # loaded machine has failed a run once with a one-line message and exit 1
      # (a clean-clone CI run, 2026-11-27), which a second run did not repeat.
      first_rc=$rc
      first=$(head -c 200 "$tmp/windows" | head -n 1)
      sagebuild_to "$tmp/windows" verify --json "$w"
      if same_as_linux; then
        echo "note: $w: the first run under wine gave exit $first_rc (\"$first\"); a second run matched Linux"
      fi
    fi
    wrc=$rc
    n=$((n + 1))
    if ! same_as_linux; then
      echo "$w: Linux exit $lrc, Windows exit $wrc"
      diff "$tmp/linux" "$tmp/windows" | head -10
      differ=$((differ + 1))
    fi
  done
  echo "verify: $n corpus wheels, $((n - differ)) with the same verdict and findings on Windows as on Linux"
  [ $n -gt 0 ] && [ $differ = 0 ]
  exit $?
  ;;
tool-wheel)
  linux=$1
  sagebuild_to "$tmp/self.txt" package-self --out "$tmp/whl"
  cat "$tmp/self.txt"
  [ $rc = 0 ] || { echo "package-self exited $rc"; exit 1; }
  wheel=$(ls "$tmp"/whl/*.whl)
  [ "$(basename "$wheel")" = sagebuild-0.1.0-py3-none-win_amd64.whl ] || { echo "unexpected wheel: $wheel"; exit 1; }
  "$linux" verify "$wheel" || { echo "Linux's verify refuses $wheel"; exit 1; }
  python3 -m pip install --disable-pip-version-check --no-index --no-deps --only-binary=:all: \
    --platform win_amd64 --target "$tmp/site" "$wheel" || { echo "pip refuses $wheel for win_amd64"; exit 1; }
  exe=$(find "$tmp/site" -name sagebuild.exe | head -1)
  [ -n "$exe" ] || { echo "pip installed no sagebuild.exe:"; find "$tmp/site"; exit 1; }
  [ -f "$tmp/site/sagebuild/__init__.py" ] || { echo "pip installed no backend module"; exit 1; }
  version=$("$wine" "$exe" --version 2>&1 | tr -d '\r')
  [ "$version" = "sagebuild 0.1.0" ] || { echo "the installed $exe says: $version"; exit 1; }
  echo "the win_amd64 tool wheel: written under wine, verified, installed by pip as ${exe#"$tmp/site/"}, runs"
  ;;
plan)
  cd "$1" || exit 1
  row=sageattention-2.2.0-torch2.7.1-cu128-abi3-win_amd64
  sagebuild_to "$tmp/plan.txt" --dry-run --row "$row" --cache-dir "$tmp/cache"
  cat "$tmp/plan.txt"
  [ $rc = 0 ] || { echo "the dry run exited $rc"; exit 1; }
  for want in "vswhere.exe" 'cmd.exe /d /s /c ""<CUDA_PATH>\bin\nvcc.exe" -c ' '\cl.exe" /nologo /c ' \
    '\link.exe" /nologo /DLL ' 'cudart_static.lib' 'python3.lib' '&& move /y ' "$row: stage, pack"; do
    grep -qF -- "$want" "$tmp/plan.txt" || { echo "the plan lacks: $want"; exit 1; }
  done
  echo "the win_amd64 row planned under wine"
  ;;
*)
  echo "run_wine.sh: unknown mode $mode"
  exit 2
  ;;
esac
