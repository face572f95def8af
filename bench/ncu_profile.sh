#!/usr/bin/env bash
# The evidence behind the kernel targets that are not met, in one device call:
#   1. ceilings: mma.sync throughput per MMA shape (bench/mma_peak.cu) and the
#      wgmma-class GEMM throughput torch reaches (int8 torch._int_mm, e4m3
#      torch._scaled_mm, fp16 mm), and the copy bandwidth of the GPU;
#   2. ncu of the kernels of a sageattn call at the points that miss: every
#      kernel of a call (quantization and attention) at head dim 128, N = 1k;
#      the sm90 attention kernel at 16k and at head dim 256 causal 4k; the
#      mma.sync kernels (SAGEATTN_SM90=0) at head dim 128 and 64, N = 8k;
#      upstream's own kernels at the same points where UPSTREAM names a folder
#      holding its installed package.
# Needs a build of ours on PYTHONPATH (scripts/gpu-dev-check.sh build, or an
# installed wheel).  Results: $OUT/ceilings.txt, $OUT/ncu_*.txt, $OUT/summary.txt.
#   3. (step sass) where the warps of the attention kernels stall, per SASS
#      instruction: ncu's source counters over the torch-free kernel benchmark
#      built from this tree (sm90 fp8 at head dim 128, 16k; the mma.sync fp16
#      at 8k), as CSV ($OUT/sass_*.csv) for bench/sass_stalls.py.
#   bench/ncu_profile.sh [ceilings] [call1k] [sm90] [mma] [upstream] [sass]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
STALLS="regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
SECTIONS=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats
          --section Occupancy --section MemoryWorkloadAnalysis --section LaunchStats --section InstructionStats)

# headline of one ncu report: duration, issue, pipes, occupancy, top stalls
digest() {
  local f=$1
  grep -E "^  [a-zA-Z_:<>,0-9 ]+\(|^ +Duration|Issue Slots Busy|Eligible Warps Per|Achieved Occupancy|Registers Per|DRAM Throughput|Memory Throughput|Compute \(SM\) Throughput|Block Limit Registers|L2 Hit Rate" "$f" |
    sed 's/  */ /g' | cut -c1-160
  grep -E "stalled_.*ratio" "$f" | awk '{print $1, $NF}' | sort -k2 -g -r | head -6 |
    sed 's/smsp__average_warps_issue_stalled_/  stall /; s/_per_issue_active.ratio//'
}

profile() {  # name, kernel regex, skip, count, command...
  local name=$1 kern=$2 skip=$3 count=$4; shift 4
  local f="$OUT/ncu_$name.txt"
  timeout 240 ncu --kernel-name "regex:$kern" --launch-skip "$skip" --launch-count "$count" "${SECTIONS[@]}" \
    --metrics "$STALLS,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_tensor_op_hmma.sum,sm__inst_executed_pipe_tensor_op_imma.sum,smsp__inst_executed.sum" \
    "$@" > "$f" 2>&1
  echo "== $name (rc $?)"
  digest "$f"
}

for step in "$@"; do
  case $step in
    ceilings)
      "$NVCC" -O3 -std=c++17 -arch=sm_90 -Ikernels/include -Ikernels/src bench/mma_peak.cu -o /tmp/mma_peak &&
        /tmp/mma_peak | tee "$OUT/ceilings.txt"
      python3 - <<'EOF' 2>&1 | tee -a "$OUT/ceilings.txt"
import torch
def t(f, reps=20):
    for _ in range(3): f()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    best = 1e9
    for _ in range(5):
        s.record()
        for _ in range(reps): f()
        e.record(); torch.cuda.synchronize()
        best = min(best, s.elapsed_time(e) / reps)
    return best
n = 8192
a8 = torch.randint(-127, 127, (n, n), dtype=torch.int8, device="cuda")
b8 = torch.randint(-127, 127, (n, n), dtype=torch.int8, device="cuda").t()
ms = t(lambda: torch._int_mm(a8, b8)); print(f"torch._int_mm int8 {n}^3: {2*n**3/ms/1e9:.0f} TOPS")
af = torch.randn(n, n, device="cuda").to(torch.float8_e4m3fn)
bf = torch.randn(n, n, device="cuda").to(torch.float8_e4m3fn).t()
one = torch.tensor(1.0, device="cuda")
ms = t(lambda: torch._scaled_mm(af, bf, one, one, out_dtype=torch.bfloat16)); print(f"torch._scaled_mm e4m3 {n}^3: {2*n**3/ms/1e9:.0f} TOPS")
ah = torch.randn(n, n, device="cuda", dtype=torch.float16); bh = torch.randn(n, n, device="cuda", dtype=torch.float16)
ms = t(lambda: ah @ bh); print(f"torch fp16 mm {n}^3: {2*n**3/ms/1e9:.0f} TFLOPS")
x = torch.empty(1 << 28, dtype=torch.uint8, device="cuda"); y = torch.empty_like(x)
ms = t(lambda: y.copy_(x)); print(f"device copy 256 MiB: {2*x.numel()/ms/1e6:.0f} GB/s (read + write)")
EOF
      ;;
    call1k)  # every kernel of the third sageattn call (head dim 128, N = 1k, B4 H32)
      f="$OUT/ncu_call1k_all.txt"
      timeout 240 ncu --launch-skip 0 --launch-count 40 --section SpeedOfLight --section Occupancy --section LaunchStats \
        --metrics dram__bytes.sum,gpu__time_duration.sum python3 bench/ncu_call.py sageattn 128 1024 0 > "$f" 2>&1
      echo "== call1k (rc $?): every kernel launch, in order (name, duration, DRAM bytes, DRAM throughput)"
      awk '/^  [^ ].*\(/ {name=$1} /gpu__time_duration.sum/ {d=$NF" "$(NF-1)} /dram__bytes.sum/ {b=$NF" "$(NF-1)}
           /DRAM Throughput/ {print name, d, b, $NF"%"}' "$f" | tail -12
      profile sm90_d128_n1k attn_sm90 2 1 python3 bench/ncu_call.py sageattn 128 1024 0
      profile quant_d128_n1k "qkv_|quant" 4 2 python3 bench/ncu_call.py sageattn 128 1024 0
      ;;
    sm90)
      profile sm90_d128_n16k attn_sm90 2 1 python3 bench/ncu_call.py sageattn 128 16384 0
      profile sm90_d256_causal_n4k attn_sm90 2 1 python3 bench/ncu_call.py sageattn 256 4096 1
      ;;
    mma)
      SAGEATTN_SM90=0 profile mma_fp16_d128_n8k attn_pv 2 1 python3 bench/ncu_call.py fp16 128 8192 0
      SAGEATTN_SM90=0 profile mma_fp8_d128_n8k attn_pv 2 1 python3 bench/ncu_call.py fp8 128 8192 0
      SAGEATTN_SM90=0 profile mma_fp16_d64_n8k attn_pv 2 1 python3 bench/ncu_call.py fp16 64 8192 0
      ;;
    sass)
      bench/build_attn_bench.sh . /tmp/sass_bench -lineinfo || continue
      sass_profile() {  # name, kernel regex, env, bench args...
        local name=$1 kern=$2 envs=$3; shift 3
        env $envs timeout 300 ncu --kernel-name "regex:$kern" --launch-skip 1 --launch-count 1 \
          --section SourceCounters --section WarpStateStats --section SpeedOfLight --section MemoryWorkloadAnalysis \
          --import-source no -f -o "/tmp/sass_$name" /tmp/sass_bench/attn_bench "$@" > "$OUT/sass_$name.log" 2>&1
        echo "== sass $name (rc $?)"
        ncu -i "/tmp/sass_$name.ncu-rep" --page source --csv --print-source sass > "$OUT/sass_$name.csv" 2>&1
        ncu -i "/tmp/sass_$name.ncu-rep" --page details > "$OUT/sass_${name}_details.txt" 2>&1
        digest "$OUT/sass_${name}_details.txt"
      }
      sass_profile sm90_fp8_d128_n16k "attn_sm90_kernel" "SA_BENCH_SM90=1" 4 32 128 0 16384
      sass_profile mma_fp16_d128_n8k "attn_pv_fp16_kernel" "SAGEATTN_SM90=0 SA_BENCH_SM90=0" 4 32 128 0 8192
      ;;
    upstream)  # upstream's sm80 / sm89 kernels (built for 9.0) at the mma points
      [ -n "${UPSTREAM:-}" ] || { echo "upstream: set UPSTREAM to the folder of its package"; continue; }
      SA_NCU_UPSTREAM=$UPSTREAM profile up_fp16_d128_n8k qk_int_sv 2 1 python3 bench/ncu_call.py fp16 128 8192 0
      SA_NCU_UPSTREAM=$UPSTREAM profile up_fp8_d128_n8k qk_int_sv 2 1 python3 bench/ncu_call.py fp8 128 8192 0
      SA_NCU_UPSTREAM=$UPSTREAM profile up_fp16_d64_n8k qk_int_sv 2 1 python3 bench/ncu_call.py fp16 64 8192 0
      ;;
  esac
done
