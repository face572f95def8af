#!/usr/bin/env bash
# Build the torch-free attn_bench for one tuning variant: build_variant.sh NAME [-DSA_...]...
set -euo pipefail
cd "$(dirname "$0")/../.."
name=$1; shift
out=${SA_VARIANT_DIR:-.devcarry}
mkdir -p "$out/obj_$name"
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
flags=(-std=c++17 -O3 --use_fast_math -Ikernels/include -Ikernels/src -gencode arch=compute_90,code=sm_90 "$@")
for f in quant attn_pv_fp16 attn_pv_fp8; do
  "$NVCC" "${flags[@]}" -c kernels/src/$f.cu -o "$out/obj_$name/$f.o" &
done
"$NVCC" "${flags[@]}" -c kernels/dev/attn_bench.cu -o "$out/obj_$name/bench.o" &
wait
"$NVCC" -gencode arch=compute_90,code=sm_90 "$out/obj_$name"/*.o -o "$out/attn_bench_$name"
rm -rf "$out/obj_$name"
echo "built $out/attn_bench_$name"
