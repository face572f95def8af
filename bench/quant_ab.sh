#!/usr/bin/env bash
# One call on the GPU machine (the `device` tool): two builds of the wheel side by side on the calls a
# change to the quantization touches.  dist/old/*.whl (the base) and dist/*.whl (the change) are
# installed apart; then, twice, base then change: bench/quant_ops.py (the one-part ops; the change's
# outputs compared with the base's) and bench/bench_varlen.py (sageattn_varlen end to end).
# Carry: dist.  Logs under $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
OUT="${OUT:-/tmp/out}"; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
for side in old new; do
  rm -rf "/tmp/ab-$side"
  whl=$([ "$side" = old ] && ls dist/old/*.whl || ls dist/*.whl)
  python3 -m pip install -q --no-deps --no-index --target "/tmp/ab-$side" $whl || exit 1
done
cd /tmp
for round in 1 2; do
  for side in old new; do
    args=(--save "/tmp/ab-old.pt")
    [ "$side" = new ] && args=(--against "/tmp/ab-old.pt")
    [ "$round" = 2 ] && args=()
    echo "== round $round, $side: quant_ops"
    PYTHONPATH="/tmp/ab-$side" timeout 120 python3 "$REPO/bench/quant_ops.py" "${args[@]}" > "$OUT/quant-$side-$round.log" 2>&1
    echo "rc=$?"; grep -v "^device\|^B=\|^$" "$OUT/quant-$side-$round.log"
    echo "== round $round, $side: bench_varlen"
    PYTHONPATH="/tmp/ab-$side" timeout 150 python3 "$REPO/bench/bench_varlen.py" > "$OUT/varlen-$side-$round.log" 2>&1
    echo "rc=$?"; grep "^| [0-9]" "$OUT/varlen-$side-$round.log"
  done
done
