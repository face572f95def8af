#!/usr/bin/env bash
# A tuning variant of the dev extension: the sm90 family recompiled with extra
# flags, linked with the other objects of the last dev build, as a complete
# package in .devcarry/v_NAME/sageattention (PYTHONPATH=.devcarry/v_NAME):
#   SA_BUILD_DIR=/tmp/bdev python3 kernels/tools/build_ext.py   # once: the shared objects
#   kernels/tools/build_ext_variant.sh NAME [-DSA90_...]...
# SA_VARIANT_SRC=quant recompiles kernels/src/quant.cu instead (sm_90a code only).
set -euo pipefail
cd "$(dirname "$0")/../.."
name=$1; shift
bdev=${SA_BUILD_DIR:-build-dev}
out=.devcarry/v_$name
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
mkdir -p "$out/sageattention"
flags=$(python3 -c 'import json; print(" ".join(json.load(open("kernels/families.json"))["nvcc_flags"]))')
# shellcheck disable=SC2086
src=${SA_VARIANT_SRC:-attn_sm90}
"$NVCC" $flags -Xptxas=-v "$@" -gencode arch=compute_90a,code=sm_90a -Ikernels/include -Ikernels/src \
  -c "kernels/src/$src.cu" -o "$out/$src.o" 2> "$out/ptxas.txt"
objs=""
for o in quant abi attn_pv_fp16 attn_pv_fp8 attn_sm90; do
  if [ "$o" = "$src" ]; then objs="$objs $out/$o.o"; else objs="$objs $bdev/$o.cu.o"; fi
done
torch_lib=$(python3 -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))' 2>/dev/null)
# shellcheck disable=SC2086
g++ -shared -o "$out/sageattention/_C.abi3.so" $objs "$bdev/ops.cc.o" -L"$torch_lib" -ltorch -ltorch_cpu -lc10 -lc10_cuda -ltorch_cuda \
  -L/usr/local/cuda/lib64 -lcudart_static -ldl -lrt -lpthread -Wl,--no-as-needed
cp python/sageattention/*.py "$out/sageattention/"
rm -f "$out/$src.o"
grep -E "spill|C75" "$out/ptxas.txt" | grep -v " 0 bytes spill" | sed 's/in the function.*kernelI/ /' | sort | uniq -c | head -6 || true
echo "built $out ($*)"
