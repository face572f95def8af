// A small CUDA library for the fatbin seeds (scripts/fuzz.sh builds it with
// nvcc when there is one): SASS and PTX entries, compressed by nvcc.
extern "C" __global__ void seed_add(float* a, float b) { a[threadIdx.x] += b; }
template <int N>
__global__ void seed_tpl(int* a) {
  a[threadIdx.x] = N;
}
template __global__ void seed_tpl<3>(int*);
