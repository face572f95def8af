#!/usr/bin/env bash
# One call on the GPU machine (the `device` tool): one wheel, a run-time knob off and on, side by side.
# dist/*.whl is installed apart; then, twice, VAR=0 then VAR=1: bench/quant_ops.py (the
# knob-on outputs compared with the knob-off ones) and bench/compare.py with the arguments given
# (upstream from anchor/src when anchor/ is carried, its tables' lines only).
#   bash bench/knob_ab.sh SAGEATTN_QUANT_CLUSTER --tables d128,d64 --seqs 1024,2048
# Carry: dist (and anchor).  Logs under $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
OUT="${OUT:-/tmp/out}"; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
var="$1"; shift
rm -rf /tmp/knob-ab
python3 -m pip install -q --no-deps --no-index --target /tmp/knob-ab dist/*.whl || exit 1
up=()
if [ -d anchor/lib ]; then
  cp anchor/lib/*.so anchor/src/sageattention/ && up=(--upstream "$REPO/anchor/src")
fi
cd /tmp
for round in 1 2; do
  for val in 0 1; do
    args=(--save /tmp/knob-ab-0.pt --seqs 1024,2048,4096)
    [ "$val" = 1 ] && args=(--against /tmp/knob-ab-0.pt --seqs 1024,2048,4096)
    echo "== round $round, $var=$val: quant_ops"
    env "$var=$val" PYTHONPATH=/tmp/knob-ab timeout 120 python3 "$REPO/bench/quant_ops.py" "${args[@]}" \
      > "$OUT/quant-$val-$round.log" 2>&1
    echo "rc=$?"; grep -v "^device\|^B=\|^$" "$OUT/quant-$val-$round.log"
    echo "== round $round, $var=$val: compare.py $*"
    env "$var=$val" PYTHONPATH=/tmp/knob-ab timeout 240 python3 "$REPO/bench/compare.py" "${up[@]}" "$@" \
      > "$OUT/compare-$val-$round.log" 2>&1
    echo "rc=$?"; grep "^|\|^#" "$OUT/compare-$val-$round.log"
  done
done
