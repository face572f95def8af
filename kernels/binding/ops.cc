// The classic torch binding (ATen tensors, TORCH_LIBRARY), for the torch
// releases before the stable ABI could express these ops (torch < 2.10; see
// kernels/families.json, binding.stable_abi).  The ops themselves are in
// op_table.h; this file adapts at::Tensor to them and registers them.  No
// pybind11: the module is a limited-API (abi3) stub whose import registers the
// ops torch.ops.sageattention.* through TORCH_LIBRARY.
#ifndef Py_LIMITED_API  // the build passes the row's minimum Python
#define Py_LIMITED_API 0x03090000
#endif
#include <Python.h>

// Narrow torch includes: this file is the only one compiled per torch release,
// so its compile time is what a second torch costs (ATen/ATen.h and
// ATen/cuda/CUDAContext.h would add ~50 %).
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <optional>
#include <vector>

#include "op_table.h"

namespace {

// at::Tensor for op_table.h: c10's checks (TORCH_CHECK) and printing.
struct AtenAdapter {
  using Tensor = at::Tensor;
  using OptTensor = std::optional<at::Tensor>;
  using In = const at::Tensor&;
  using OptIn = const std::optional<at::Tensor>&;
  using ScalarType = at::ScalarType;

  template <typename... Args>
  static void check(bool ok, const Args&... args) {
    TORCH_CHECK(ok, args...);
  }
  static at::IntArrayRef sizes(const at::Tensor& t) { return t.sizes(); }
  static at::IntArrayRef strides(const at::Tensor& t) { return t.strides(); }
  static at::Device device(const at::Tensor& t) { return t.device(); }
  static const char* dtype_name(at::ScalarType t) { return c10::toString(t); }
  static bool same_device(const at::Tensor& a, const at::Tensor& b) { return a.device() == b.device(); }
  static at::Tensor empty(const at::Tensor& like, const std::vector<int64_t>& shape, at::ScalarType dtype) {
    return at::empty(shape, like.options().dtype(dtype));
  }
  struct Guard {
    explicit Guard(const at::Tensor& t) : guard(t.device()) {}
    c10::cuda::CUDAGuard guard;
  };
  // The current device's stream (the Guard made the tensor's device current).
  static cudaStream_t stream(const at::Tensor&) { return c10::cuda::getCurrentCUDAStream(); }
};

using Ops = sa_binding::Ops<AtenAdapter>;

}  // namespace

TORCH_LIBRARY(sageattention, m) {
  for (const char* schema : sa_binding::kSchemas) m.def(schema);
}

#define SA_IMPL(name) m.impl(#name, &Ops::name);
TORCH_LIBRARY_IMPL(sageattention, CUDA, m){SA_FOR_EACH_OP(SA_IMPL)}
// CPU tensors reach the same checks, which reject them naming the argument.
TORCH_LIBRARY_IMPL(sageattention, CPU, m) {
  SA_FOR_EACH_OP(SA_IMPL)
}
#undef SA_IMPL
// The routing query (no tensor arguments: the composite kernel serves it everywhere).
TORCH_LIBRARY_IMPL(sageattention, CompositeExplicitAutograd, m) { m.impl("route", &Ops::route); }

// The Python module (the same in both bindings): py_module.h.
#include "py_module.h"
