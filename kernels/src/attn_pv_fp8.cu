// Family "pv_fp8" (sm89+: mma.m16n8k32 e4m3): INT8 QK^T, FP8 PV with two-level
// (per-tile MMA accumulator + fp32 buffer) accumulation.  On sm_90 the e4m3
// mma.sync is emulated (2 f16 HMMA + conversions), so when the sm90 family
// (wgmma, native e4m3) is linked in, a 9.0 device is routed there.
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include "attn_kernel.cuh"

// Defined by the sm90 family (kernels/src/attn_sm90.cu) when the build has it.
#pragma weak sa_attn_sm90_qk_int8_pv_fp8

namespace {

// Compute capability of the current device, cached per device (0 on error).
int current_cc() {
  static int cached[64] = {0};
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0) return 0;
  if (dev < 64 && cached[dev] != 0) return cached[dev];
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess)
    return 0;
  const int cc = major * 10 + minor;
  if (dev < 64) cached[dev] = cc;
  return cc;
}

bool sm90_enabled() {
  static const bool enabled = [] {
    const char* e = std::getenv("SAGEATTN_SM90");
    return !(e != nullptr && std::strcmp(e, "0") == 0);
  }();
  return enabled;
}

}  // namespace

extern "C" sa_status sa_attn_qk_int8_pv_fp8(const sa_attn_params* p, cudaStream_t stream) {
  if (&sa_attn_sm90_qk_int8_pv_fp8 != nullptr && sm90_enabled() && current_cc() == 90)
    return sa_attn_sm90_qk_int8_pv_fp8(p, stream);
  return sa::launch_attn<true>(p, stream);
}
