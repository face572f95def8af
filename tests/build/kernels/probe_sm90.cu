// A one-kernel family for sagebuild's own tests (not part of SageAttention):
// it stands in for an `archs: ["9.0a"]` family such as attn_sm90.  wgmma.fence
// assembles only for the arch-specific target sm_90a, so this file compiles
// only when the family gets `-gencode arch=compute_90a,code=sm_90a`; the
// kernel's name carries the family's symbol_marker, "probe_sm90_kernel".
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "probe_sm90.cu is for sm_90a only (compile it with -gencode arch=compute_90a,code=sm_90a)"
#endif

__global__ void probe_sm90_kernel(int* out) {
#if defined(__CUDA_ARCH__)
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
  if (out) out[threadIdx.x] = static_cast<int>(threadIdx.x);
}
