"""The routing table of the C ABI (kernels/src/route_table.h, sageattn/abi.h: sa_route) as data: what
_arch asks when the extension is not loaded (the CPU tests, tracing on meta tensors); with it, _arch asks
the library itself (the `route` op).  Written by kernels/tools/gen_routes.py --update from the C table;
tests/ci/test_generated_routes.py checks that they agree.  Do not edit."""

ABI_VERSION = 7
MAX_HEAD_DIM = 256
ANY = -1
PV = {0: "fp16", 1: "fp8"}
FAMILIES = {1: "pv_fp16", 2: "pv_fp8", 4: "sm90"}
ALL_FAMILIES = 7
KERNELS = {1: "mma_pv_fp16", 2: "mma_pv_fp8", 3: "mma_pv_fp8_f16acc", 4: "sm90_pv_fp8", 5: "sm90_pv_fp16"}

# In order of preference: a call runs the first row that matches it and whose family is present.
# (kernel, family, pv, pv_accum_f16, cc_min, cc_max, head_dim_min, head_dim_max)
ROWS = (
    (4, 4, 1, 0, 90, 90, 1, 128),
    (5, 4, 0, 0, 90, 90, 1, 256),
    (4, 4, 1, 1, 90, 90, 1, 128),
    (1, 1, 0, 0, 90, 90, 129, 256),
    (3, 2, 1, 1, 89, 89, 1, 256),
    (3, 2, 1, 1, 120, 129, 1, 256),
    (2, 2, 1, 0, 89, 1000, 1, 256),
    (3, 2, 1, 1, 89, 1000, 1, 256),
    (1, 1, 0, 0, 80, 1000, 1, 256),
)
