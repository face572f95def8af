// Torch-free benchmark of the kernels through the C ABI, for tuning variants
// (compile with different -D SA_* values).  Inputs: random fp16 Q/K/V,
// quantized by the library's own kernels.
//   attn_bench [B H D causal N...]
#include <cuda_fp16.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "sageattn/sageattn.h"

#define CK(x)                                                                              \
  do {                                                                                     \
    cudaError_t e_ = (x);                                                                  \
    if (e_ != cudaSuccess) {                                                               \
      fprintf(stderr, "%s: %s (%s:%d)\n", #x, cudaGetErrorString(e_), __FILE__, __LINE__); \
      exit(1);                                                                             \
    }                                                                                      \
  } while (0)
#define SK(x)                                                                             \
  do {                                                                                    \
    sa_status s_ = (x);                                                                   \
    if (s_ != SA_OK) {                                                                    \
      fprintf(stderr, "%s: %s: %s\n", #x, sa_status_string(s_), sa_last_error_message()); \
      exit(1);                                                                            \
    }                                                                                     \
  } while (0)

__global__ void fill_randn(__half* x, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ seed;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    unsigned h2 = h * 0x27d4eb2du;
    h2 ^= h2 >> 16;
    float u1 = ((h & 0xffffff) + 1) / 16777217.f, u2 = (h2 & 0xffffff) / 16777216.f;
    x[i] = __float2half(sqrtf(-2.f * logf(u1)) * cosf(6.2831853f * u2));
  }
}

template <typename F>
float time_ms(F f, int warm = 2, int reps = 10) {
  for (int i = 0; i < warm; ++i) f();
  CK(cudaDeviceSynchronize());
  std::vector<float> t;
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int i = 0; i < reps; ++i) {
    CK(cudaEventRecord(a));
    f();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main(int argc, char** argv) {
  int B = 4, H = 32, D = 128, causal = 0;
  std::vector<int> Ns = {2048, 16384};
  if (argc > 4) {
    B = atoi(argv[1]);
    H = atoi(argv[2]);
    D = atoi(argv[3]);
    causal = atoi(argv[4]);
    Ns.clear();
    for (int i = 5; i < argc; ++i) Ns.push_back(atoi(argv[i]));
  }
  for (int N : Ns) {
    const size_t n = (size_t)B * H * N * D;
    __half *q, *k, *v, *o;
    CK(cudaMalloc(&q, n * 2));
    CK(cudaMalloc(&k, n * 2));
    CK(cudaMalloc(&v, n * 2));
    CK(cudaMalloc(&o, n * 2));
    fill_randn<<<1024, 256>>>(q, n, 1);
    fill_randn<<<1024, 256>>>(k, n, 2);
    fill_randn<<<1024, 256>>>(v, n, 3);
    CK(cudaGetLastError());
    const int dp = sa_padded_head_dim(D);
    const int qp = (int)sa_round_up(N, SA_BLOCK_Q), kp = (int)sa_round_up(N, SA_BLOCK_K);
    int8_t *qi, *ki;
    float *qs, *ks, *vs, *vm;
    uint8_t* vf;
    CK(cudaMalloc(&qi, (size_t)B * H * qp * dp));
    CK(cudaMalloc(&ki, (size_t)B * H * kp * dp));
    CK(cudaMalloc(&qs, (size_t)B * H * qp / 16 * 8 * 4));
    CK(cudaMalloc(&ks, (size_t)B * H * kp / 64 * 4 * 4));
    CK(cudaMalloc(&vs, (size_t)B * H * dp * 4));
    CK(cudaMalloc(&vm, (size_t)B * H * dp * 4));
    CK(cudaMalloc(&vf, (size_t)B * H * dp * kp));
    auto view = [&](const __half* p) {
      sa_view w{p, SA_DTYPE_F16, B, H, N, D, (int64_t)H * N * D, (int64_t)N * D, D};
      return w;
    };
    // The two-launch quantization sageattn runs (sa_quant_qkv), into the same outputs.
    sa_quant_qkv_params pqkv{view(q), view(k), view(v), SA_GRAN_PER_THREAD, 1, 0, qi, qs, ki, ks, vf, vs,
                             vm,      0.f,     nullptr};
    void* qkv_stats = nullptr;
    CK(cudaMalloc(&qkv_stats, (size_t)sa_quant_qkv_stats_bytes(&pqkv)));
    pqkv.stats = qkv_stats;
    auto quant_qkv = [&]() { SK(sa_quant_qkv(&pqkv, 0)); };
    // Q, K and V one call each (the quant_q / quant_k / quant_v_fp8 ops), into the same outputs.
    auto part = [&](int which) {
      sa_quant_qkv_params one = pqkv;
      if (which != 0) one.q.data = nullptr;
      if (which != 1) one.k.data = nullptr;
      if (which != 2) one.v.data = nullptr;
      return one;
    };
    sa_quant_qkv_params parts[3] = {part(0), part(1), part(2)};
    auto quant = [&]() {
      for (sa_quant_qkv_params& one : parts) SK(sa_quant_qkv(&one, 0));
    };
    quant();
    CK(cudaDeviceSynchronize());
    sa_attn_params p{};
    p.q_int8 = qi;
    p.q_scale = qs;
    p.k_int8 = ki;
    p.k_scale = ks;
    p.batch = B;
    p.q_heads = H;
    p.kv_heads = H;
    p.q_len = N;
    p.kv_len = N;
    p.head_dim = D;
    p.v = view(v);
    p.v_fp8 = vf;
    p.v_scale = vs;
    p.v_mean = nullptr;
    p.out = o;
    p.out_dtype = SA_DTYPE_F16;
    p.out_stride_batch = (int64_t)H * N * D;
    p.out_stride_head = (int64_t)N * D;
    p.out_stride_seq = D;
    p.causal = causal;
    p.sm_scale = 0.088f;
    const double flops = 4.0 * B * H * (double)N * N * D / (causal ? 2 : 1);
    float tq = time_ms(quant);
    float tqkv = time_ms(quant_qkv);
    quant();  // the separate ops' outputs for the attention below (the same but for float-atomic sums)
    // mma.sync fp8 kernel (SAGEATTN_SM90=0 keeps sa_attn_qk_int8_pv_fp8 off the sm90 family)
    float t8 = time_ms([&] { SK(sa_attn_qk_int8_pv_fp8(&p, 0)); });
    float t16 = time_ms([&] { SK(sa_attn_qk_int8_pv_fp16(&p, 0)); });
    // sm90 (wgmma) kernels: time them, and compare each with its mma.sync
    // counterpart (run with SAGEATTN_SM90=0 so the sa_attn_qk_* entries stay on mma.sync)
    struct Cmp {
      float ms = 0.f;
      double cos = 0, l1 = 0;
      long nan = 0;
    };
    auto compare = [&](auto ref_fn, auto new_fn) {
      Cmp c;
      std::vector<__half> hr(n), hn(n);
      CK(cudaMemset(o, 0xff, n * 2));  // NaN poison
      ref_fn();
      CK(cudaMemcpy(hr.data(), o, n * 2, cudaMemcpyDeviceToHost));
      CK(cudaMemset(o, 0xff, n * 2));
      new_fn();
      CK(cudaDeviceSynchronize());
      CK(cudaMemcpy(hn.data(), o, n * 2, cudaMemcpyDeviceToHost));
      double dot = 0, na = 0, nb = 0, dl1 = 0, rl1 = 0;
      for (size_t i = 0; i < n; ++i) {
        const double a = __half2float(hn[i]), r = __half2float(hr[i]);
        if (!(a == a) || !(r == r)) {
          ++c.nan;
          continue;
        }
        dot += a * r;
        na += a * a;
        nb += r * r;
        dl1 += fabs(a - r);
        rl1 += fabs(r);
      }
      c.cos = dot / sqrt(na * nb + 1e-300);
      c.l1 = dl1 / (rl1 + 1e-300);
      c.ms = time_ms(new_fn);
      return c;
    };
    Cmp c8, c16;
    if (getenv("SA_BENCH_SM90") == nullptr || atoi(getenv("SA_BENCH_SM90")) != 0) {
      c8 = compare([&] { SK(sa_attn_qk_int8_pv_fp8(&p, 0)); }, [&] { SK(sa_attn_sm90_qk_int8_pv_fp8(&p, 0)); });
      c16 = compare([&] { SK(sa_attn_qk_int8_pv_fp16(&p, 0)); }, [&] { SK(sa_attn_sm90_qk_int8_pv_fp16(&p, 0)); });
    }
    auto tops = [&](float ms) { return ms > 0 ? flops / ms / 1e9 : 0.0; };
    printf(
        "B=%d H=%d D=%d causal=%d N=%d | quant %.3f ms, qkv %.3f ms | mma.sync: fp8 %.0f fp16 %.0f TOPS | "
        "sm90 fp8 %.0f TOPS (cos %.7f relL1 %.1e NaN %ld) | sm90 fp16 %.0f TOPS (cos %.7f relL1 %.1e NaN %ld)\n",
        B, H, D, causal, N, tq, tqkv, tops(t8), tops(t16), tops(c8.ms), c8.cos, c8.l1, c8.nan, tops(c16.ms), c16.cos,
        c16.l1, c16.nan);
    CK(cudaFree(q));
    CK(cudaFree(k));
    CK(cudaFree(v));
    CK(cudaFree(o));
    CK(cudaFree(qi));
    CK(cudaFree(ki));
    CK(cudaFree(qs));
    CK(cudaFree(ks));
    CK(cudaFree(qkv_stats));
    CK(cudaFree(vs));
    CK(cudaFree(vm));
    CK(cudaFree(vf));
  }
  return 0;
}
