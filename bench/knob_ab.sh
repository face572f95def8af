#!/usr/bin/env bash
# One call on the GPU machine (the `device` tool): one wheel, a run-time knob at several values, side by
# side.  dist/*.whl is installed apart; then, twice, each value in turn (the first is the base):
# bench/quant_ops.py (each value's outputs compared with the base's) and bench/compare.py with the
# arguments given (upstream from anchor/src when anchor/ is carried; its tables' lines only).
#   bash bench/knob_ab.sh SAGEATTN_SM90_QUANT_Q "1 0" --tables d128,d64 --seqs 1024,2048
# Carry: dist (and anchor).  Logs under $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
OUT="${OUT:-/tmp/out}"; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
var="$1"; read -r -a vals <<< "$2"; shift 2
rm -rf /tmp/knob-ab
python3 -m pip install -q --no-deps --no-index --target /tmp/knob-ab dist/*.whl || exit 1
up=()
if [ -d anchor/lib ]; then
  cp anchor/lib/*.so anchor/src/sageattention/ && up=(--upstream "$REPO/anchor/src")
fi
cd /tmp
for round in 1 2; do
  for val in "${vals[@]}"; do
    args=(--against /tmp/knob-ab-base.pt --seqs 1024,2048,4096)
    [ "$val" = "${vals[0]}" ] && args=(--save /tmp/knob-ab-base.pt --seqs 1024,2048,4096)
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
