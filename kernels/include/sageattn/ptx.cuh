// Typed wrappers around the PTX instructions the SageAttention kernels use.
// One function per instruction; the instruction is in the name.  Fragment
// layouts follow the PTX ISA "Matrix fragments for mma.m16n8k*" sections:
//   groupID = lane >> 2, tig = lane & 3
//   m16n8k32 (8-bit A/B): a0:(row g, k 4tig..4tig+3) a1:(row g+8, same k)
//                         a2:(row g, k 16+4tig..)   a3:(row g+8, k 16+4tig..)
//                         b0:(k 4tig..4tig+3, col g) b1:(k 16+4tig.., col g)
//   m16n8k16 (f16 A/B):   a0:(row g, k 2tig..2tig+1) a1:(row g+8, ..)
//                         a2:(row g, k 8+2tig..)    a3:(row g+8, k 8+2tig..)
//                         b0:(k 2tig..2tig+1, col g) b1:(k 8+2tig.., col g)
//   accumulators (all):   c0,c1:(row g, col 2tig, 2tig+1) c2,c3:(row g+8, ..)
#pragma once
#include <cstdint>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>

namespace sa {
namespace ptx {

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// cp.async.cg 16 bytes global->shared; when !pred, the 16 bytes are zero-filled
// (src-size 0) and the source is not read.
__device__ __forceinline__ void cp_async_16(void* smem_dst, const void* gmem_src, bool pred = true) {
  const int src_bytes = pred ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(smem_dst)),
               "l"(gmem_src), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

// ldmatrix.sync.aligned.m8n8.x4.shared.b16: four 8x8 b16 matrices; lane l
// gives the row address (l & 7) of matrix (l >> 3).
__device__ __forceinline__ void ldmatrix_x4(uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3,
                                            const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(smem_u32(smem_row)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3,
                                                  const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(smem_u32(smem_row)));
}

// D = A(16x32 s8, row) * B(32x8 s8, col) + C (s32)
__device__ __forceinline__ void mma_m16n8k32_s8(int32_t (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                                uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// D = A(16x16 f16, row) * B(16x8 f16, col) + C (f32)
__device__ __forceinline__ void mma_m16n8k16_f16(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                                 uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 890
#define SA_HAS_E4M3_MMA 1
// D = A(16x32 e4m3, row) * B(32x8 e4m3, col) + C (f32). Needs sm_89+.
__device__ __forceinline__ void mma_m16n8k32_e4m3(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                                  uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
#endif

// cvt.rn.satfinite.e4m3x2.f32 (via cuda_fp8.h): lo -> byte 0, hi -> byte 1.
__device__ __forceinline__ uint16_t cvt_e4m3x2_f32(float lo, float hi) {
  return static_cast<uint16_t>(__nv_cvt_float2_to_fp8x2(make_float2(lo, hi), __NV_SATFINITE, __NV_E4M3));
}
// Four floats -> four e4m3 bytes, x0 in the lowest byte.
__device__ __forceinline__ uint32_t pack_e4m3x4(float x0, float x1, float x2, float x3) {
  return static_cast<uint32_t>(cvt_e4m3x2_f32(x0, x1)) | (static_cast<uint32_t>(cvt_e4m3x2_f32(x2, x3)) << 16);
}
// cvt.rn.f16x2.f32: lo in the low half.
__device__ __forceinline__ uint32_t pack_f16x2(float lo, float hi) {
  __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&h);
}

// ex2.approx.ftz.f32
__device__ __forceinline__ float ex2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ uint32_t ld_global_u32(const void* p) {
  return *reinterpret_cast<const uint32_t*>(p);
}

}  // namespace ptx
}  // namespace sa
