#!/usr/bin/env bash
# The torch-free kernel benchmark (bench/attn_kernel_bench.cu) built from a
# tree's kernels/ and bench/, for the H100: quant, abi and the mma.sync families
# for sm_90, the sm90 family for sm_90a, each unit in parallel; ptxas's
# register and spill report of the mma.sync units in OUT/*.ptxas.
#   bench/build_attn_bench.sh TREE OUT [extra nvcc flags...]   -> OUT/attn_bench
set -uo pipefail
t=$1 o=$2; shift 2
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
flags=(-std=c++17 -O3 --use_fast_math --expt-relaxed-constexpr -I"$t/kernels/include" -I"$t/kernels/src" "$@")
mkdir -p "$o"
pids=()
units=(quant attn_pv_fp16 attn_pv_fp8)
# abi.cu: the C ABI's own part (error state, routing), in trees from its split out of quant.cu on
[ -f "$t/kernels/src/abi.cu" ] && units+=(abi)
for f in "${units[@]}"; do
  "$NVCC" "${flags[@]}" -gencode arch=compute_90,code=sm_90 -Xptxas=-v -c "$t/kernels/src/$f.cu" -o "$o/$f.o" \
    2> "$o/$f.ptxas" & pids+=($!)
done
"$NVCC" "${flags[@]}" -gencode arch=compute_90a,code=sm_90a -c "$t/kernels/src/attn_sm90.cu" -o "$o/attn_sm90.o" &
pids+=($!)
"$NVCC" "${flags[@]}" -gencode arch=compute_90,code=sm_90 -c "$t/bench/attn_kernel_bench.cu" -o "$o/bench.o" &
pids+=($!)
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
[ $rc = 0 ] || { echo "build_attn_bench: compiling $t failed (ptxas logs in $o)" >&2; exit 1; }
"$NVCC" -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90a,code=sm_90a "$o"/*.o -o "$o/attn_bench"
