// Prints the routing table of the C ABI (sageattn/abi.h: sa_route_table) as
// the Python module python/sageattention/_routes.py: the table as data for
// the Python layer without the extension.  Built with a host compiler
// against kernels/src/abi.cu alone (no CUDA) by kernels/tools/gen_routes.py.
#include <cstdio>
#include "sageattn/abi.h"

int main() {
  const sa_route_row* rows = nullptr;
  const int n = sa_route_table(&rows);
  std::printf(
      "\"\"\"The routing table of the C ABI (kernels/src/route_table.h, sageattn/abi.h: sa_route) as data: what\n"
      "_arch asks when the extension is not loaded (the CPU tests, tracing on meta tensors); with it, _arch asks\n"
      "the library itself (the `route` op).  Written by kernels/tools/gen_routes.py --update from the C table;\n"
      "tests/ci/test_generated_routes.py checks that they agree.  Do not edit.\"\"\"\n\n");
  std::printf("ABI_VERSION = %d\nMAX_HEAD_DIM = %d\nANY = %d\n", SA_ABI_VERSION, SA_MAX_HEAD_DIM, SA_ROUTE_ANY);
  std::printf("PV = {%d: \"fp16\", %d: \"fp8\"}\n", SA_PV_FP16, SA_PV_FP8);
  const sa_family families[] = {SA_FAMILY_PV_FP16, SA_FAMILY_PV_FP8, SA_FAMILY_SM90};
  std::printf("FAMILIES = {");
  unsigned all = 0;
  for (int i = 0; i < 3; ++i) {
    std::printf("%s%d: \"%s\"", i ? ", " : "", families[i], sa_family_name(families[i]));
    all |= families[i];
  }
  std::printf("}\nALL_FAMILIES = %u\n", all);
  const sa_kernel kernels[] = {SA_KERNEL_MMA_PV_FP16, SA_KERNEL_MMA_PV_FP8, SA_KERNEL_MMA_PV_FP8_F16ACC,
                               SA_KERNEL_SM90_PV_FP8, SA_KERNEL_SM90_PV_FP16};
  std::printf("KERNELS = {");
  for (int i = 0; i < 5; ++i) std::printf("%s%d: \"%s\"", i ? ", " : "", kernels[i], sa_kernel_name(kernels[i]));
  std::printf("}\n\n");
  std::printf(
      "# In order of preference: a call runs the first row that matches it and whose family is present.\n"
      "# (kernel, family, pv, pv_accum_f16, cc_min, cc_max, head_dim_min, head_dim_max)\n"
      "ROWS = (\n");
  for (int i = 0; i < n; ++i) {
    const sa_route_row& r = rows[i];
    std::printf("    (%d, %d, %d, %d, %d, %d, %d, %d),\n", r.kernel, r.family, r.pv, r.pv_accum_f16, r.cc_min, r.cc_max,
                r.head_dim_min, r.head_dim_max);
  }
  std::printf(")\n");
  return 0;
}
