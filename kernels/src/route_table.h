// The routing table: which kernel serves an attention call (sageattn/abi.h,
// sa_route).  The one place these bounds are written: abi.cu answers the C ABI
// and the `route` op from it, attn_pv_fp8.cu / attn_pv_fp16.cu route their
// calls through it, config.cuh takes the sm90 FP8 P.V's largest head dim from
// it (the instances attn_sm90.cu compiles), and the Python layer reads it
// through the `route` op, or without the extension through
// python/sageattention/_routes.py, which kernels/tools/gen_routes.py writes
// from this table (tests/ci/test_generated_routes.py checks they agree).
//
// Rows in order of preference; a call runs the first row that matches it
// (compute capability, head dim, P.V path, accumulator) and whose family the
// library has.  A query that leaves the P.V path or the accumulator open
// (SA_ROUTE_ANY) gets the first matching row's: the rows' order is the default.
// Host code, no CUDA header (a host compiler builds it: gen_routes.py).
#pragma once
#include "sageattn/abi.h"

namespace sa {
namespace route {

constexpr int kAnyCcMax = 1000;  // no upper bound: architectures after the last measured one

// clang-format off
constexpr sa_route_row kTable[] = {
  // kernel                       family             pv           f16acc cc_min cc_max     hd_min hd_max
  // Hopper, wgmma.  The fp8 P.V's accumulators are DP + 8 wide (a row of ones
  // under V^T for the row sums) and a wgmma is at most 256: head dims to 128.
  // It accumulates in f32 either way; a pv_accum_f16 call still gets V scaled
  // to SA_V_MAX_F16ACC (what it asked for), which the kernel takes as well.
  {SA_KERNEL_SM90_PV_FP8,         SA_FAMILY_SM90,    SA_PV_FP8,   0,     90,    90,        1,     128},
  {SA_KERNEL_SM90_PV_FP16,        SA_FAMILY_SM90,    SA_PV_FP16,  0,     90,    90,        1,     SA_MAX_HEAD_DIM},
  {SA_KERNEL_SM90_PV_FP8,         SA_FAMILY_SM90,    SA_PV_FP8,   1,     90,    90,        1,     128},
  // 9.0 without the sm90 family: above head dim 128 the FP16 P.V by default,
  // as with it (e4m3 mma.sync is emulated on 9.0).
  {SA_KERNEL_MMA_PV_FP16,         SA_FAMILY_PV_FP16, SA_PV_FP16,  0,     90,    90,        129,   SA_MAX_HEAD_DIM},
  // sm89 and sm12x: the FP8 MMA runs twice as fast into an f16 accumulator
  // (upstream's sageattn default there, V scaled to SA_V_MAX_F16ACC).
  {SA_KERNEL_MMA_PV_FP8_F16ACC,   SA_FAMILY_PV_FP8,  SA_PV_FP8,   1,     89,    89,        1,     SA_MAX_HEAD_DIM},
  {SA_KERNEL_MMA_PV_FP8_F16ACC,   SA_FAMILY_PV_FP8,  SA_PV_FP8,   1,     120,   129,       1,     SA_MAX_HEAD_DIM},
  // mma.sync: e4m3 needs 8.9; the FP16 P.V runs from 8.0.
  {SA_KERNEL_MMA_PV_FP8,          SA_FAMILY_PV_FP8,  SA_PV_FP8,   0,     89,    kAnyCcMax, 1,     SA_MAX_HEAD_DIM},
  {SA_KERNEL_MMA_PV_FP8_F16ACC,   SA_FAMILY_PV_FP8,  SA_PV_FP8,   1,     89,    kAnyCcMax, 1,     SA_MAX_HEAD_DIM},
  {SA_KERNEL_MMA_PV_FP16,         SA_FAMILY_PV_FP16, SA_PV_FP16,  0,     80,    kAnyCcMax, 1,     SA_MAX_HEAD_DIM},
};
// clang-format on
constexpr int kRows = sizeof(kTable) / sizeof(kTable[0]);

// The largest head dim any row gives `kernel` (0: none): the instances a
// family must compile.
constexpr int max_head_dim(sa_kernel kernel) {
  int m = 0;
  for (int i = 0; i < kRows; ++i)
    if (kTable[i].kernel == kernel && kTable[i].head_dim_max > m) m = kTable[i].head_dim_max;
  return m;
}

}  // namespace route
}  // namespace sa
