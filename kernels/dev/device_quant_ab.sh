#!/usr/bin/env bash
# Session 5 device call: quantization variants (.devcarry/v_NAME, built with
# SA_VARIANT_SRC=quant kernels/dev/build_ext_variant.sh) against the main job's
# wheel (dist/, installed to /tmp/base): ncu time and DRAM throughput of the two
# quantization kernels, then compare.py end to end, base and variants in turn.
#   SA_QAB_PKGS="qcp qkv6" kernels/dev/device_quant_ab.sh
set -o pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/sa_out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-deps --target /tmp/base dist/*.whl 2>&1 | grep -v WARN | tail -2
pkgs="/tmp/base"
for n in ${SA_QAB_PKGS:-qcp}; do pkgs="$pkgs $PWD/.devcarry/v_$n"; done
mkdir -p "$OUT/quant_ncu"
for v in $pkgs; do
  for shape in "128 1024 0" "128 4096 0" "64 2048 0"; do
    f="$OUT/quant_ncu/$(basename $v)_$(echo $shape | tr ' ' _).csv"
    PYTHONPATH=$v timeout 60 ncu --kernel-name regex:qkv_ --launch-skip 4 --launch-count 2 --csv --page raw \
      --metrics gpu__time_duration.sum,gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active \
      python3 kernels/dev/ncu_one.py fp8 $shape > "$f" 2>/dev/null
    python3 - "$f" <<'PY' | tee -a "$OUT/quant_ncu.log"
import os, sys
sys.path.insert(0, "bench")
from profile_points import num, read_csv, short_kernel
f = sys.argv[1]
for r in read_csv(f):
    print(f"{os.path.basename(f)[:-4]:24s} {short_kernel(r['Kernel Name']):40s} {num(r, 'gpu__time_duration.sum') / 1e3:7.1f} us"
          f"  DRAM {num(r, 'gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed'):5.1f} %"
          f"  regs {num(r, 'launch__registers_per_thread'):3.0f}  occupancy {num(r, 'sm__warps_active.avg.pct_of_peak_sustained_active'):5.1f} %")
PY
  done
done
for r in 1 2; do
  for v in $pkgs; do
    echo "== $(basename $v) round $r" | tee -a "$OUT/ab.log"
    PYTHONPATH=$v timeout 200 python3 bench/compare.py --tables ${SA_AB_TABLES:-d128,causal,d64,models} \
      --seqs ${SA_AB_SEQS:-1024,2048,4096} 2>&1 | grep -E "^\| (ours|cudnn|Flux|Wan|LLM)" | tee -a "$OUT/ab.log"
  done
done
