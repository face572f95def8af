// Thin torch binding of the SageAttention C ABI against the PyTorch *stable*
// ABI: torch::stable::Tensor, the STABLE_TORCH_LIBRARY macros and the C shim
// (torch/csrc/inductor/aoti_torch/c/shim.h).  Built with TORCH_TARGET_VERSION,
// one object serves every torch release >= that version, so a wheel per torch
// release carries the same extension and none of them can fail to load with an
// "undefined symbol" from a torch C++ class.  ops.cc is the classic binding for
// the torch releases before the stable ABI could express these ops (see
// kernels/families.json, binding.stable_abi).
//
// The ops themselves are in op_table.h (the same for ops.cc); this file adapts
// torch::stable::Tensor to them and registers them.  No pybind11: the module
// is a limited-API (abi3) stub whose import registers the ops
// torch.ops.sageattention.*.
#ifndef Py_LIMITED_API  // the build passes the row's minimum Python
#define Py_LIMITED_API 0x03090000
#endif
#include <Python.h>

#ifndef TORCH_TARGET_VERSION  // the build passes binding.stable_abi.target_version
#error "ops_stable.cc is built with -DTORCH_TARGET_VERSION=<stable ABI version> (sagebuild passes it)"
#endif

// The CUDA entry points of the shim (the current CUDA stream) are declared
// only under USE_CUDA; every torch build this binding serves is a CUDA build.
#ifndef USE_CUDA
#define USE_CUDA 1
#endif
#include <torch/csrc/inductor/aoti_torch/c/shim.h>
#include <torch/csrc/stable/accelerator.h>
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>

#include <cstdint>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "op_table.h"

namespace {

using torch::headeronly::ScalarType;
using torch::stable::Tensor;
using Shape = std::vector<int64_t>;

// A device printed as c10 prints one: "cpu", "cuda:0", "meta".
struct DeviceName {
  torch::stable::Device d;
};
std::ostream& operator<<(std::ostream& os, const DeviceName& n) {
  using torch::headeronly::DeviceType;
  switch (n.d.type()) {
    case DeviceType::CPU:
      os << "cpu";
      break;
    case DeviceType::CUDA:
      os << "cuda";
      break;
    case DeviceType::Meta:
      os << "meta";
      break;
    default:
      os << "device_type_" << static_cast<int>(n.d.type());
      break;
  }
  if (n.d.has_index()) os << ":" << static_cast<int>(n.d.index());
  return os;
}

// A shape or strides, owned (the stable tensor hands out a view).
struct OwnedDims {
  Shape v;
};
std::ostream& operator<<(std::ostream& os, const OwnedDims& d) { return os << sa_binding::Dims{d.v}; }

// torch::stable::Tensor for op_table.h: the shim's calls, and messages
// formatted like c10's so both bindings raise the same text.  check throws
// std::runtime_error, which torch turns into a Python RuntimeError with the
// message alone (STD_TORCH_CHECK would prefix the function, file and line).
struct StableAdapter {
  using Tensor = torch::stable::Tensor;
  using OptTensor = std::optional<Tensor>;
  using In = Tensor;
  using OptIn = std::optional<Tensor>;
  using ScalarType = torch::headeronly::ScalarType;

  template <typename... Args>
  static void check(bool ok, const Args&... args) {
    if (ok) return;
    std::ostringstream os;
    (os << ... << args);
    throw std::runtime_error(os.str());
  }
  static OwnedDims sizes(const Tensor& t) {
    auto s = t.sizes();
    return OwnedDims{Shape(s.begin(), s.end())};
  }
  static OwnedDims strides(const Tensor& t) {
    auto s = t.strides();
    return OwnedDims{Shape(s.begin(), s.end())};
  }
  static DeviceName device(const Tensor& t) { return DeviceName{t.device()}; }
  static const char* dtype_name(ScalarType t) { return torch::headeronly::toString(t); }
  static bool same_device(const Tensor& a, const Tensor& b) {
    return a.device().type() == b.device().type() && a.get_device_index() == b.get_device_index();
  }
  static Tensor empty(const Tensor& like, const Shape& shape, ScalarType dtype) {
    return torch::stable::new_empty(like, shape, dtype);
  }
  struct Guard {
    explicit Guard(const Tensor& t) : guard(t.get_device_index()) {}
    torch::stable::accelerator::DeviceGuard guard;
  };
  static cudaStream_t stream(const Tensor& t) {
    void* s = nullptr;
    TORCH_ERROR_CODE_CHECK(aoti_torch_get_current_cuda_stream(t.get_device_index(), &s));
    return static_cast<cudaStream_t>(s);
  }
};

using Ops = sa_binding::Ops<StableAdapter>;

}  // namespace

STABLE_TORCH_LIBRARY(sageattention, m) {
  for (const char* schema : sa_binding::kSchemas) m.def(schema);
}

#define SA_IMPL(name) m.impl(#name, TORCH_BOX(&Ops::name));
STABLE_TORCH_LIBRARY_IMPL(sageattention, CUDA, m){SA_FOR_EACH_OP(SA_IMPL)}
// CPU tensors reach the same checks, which reject them naming the argument.
STABLE_TORCH_LIBRARY_IMPL(sageattention, CPU, m) {
  SA_FOR_EACH_OP(SA_IMPL)
}
#undef SA_IMPL
// The routing query (no tensor arguments: the composite kernel serves it everywhere).
STABLE_TORCH_LIBRARY_IMPL(sageattention, CompositeExplicitAutograd, m) { m.impl("route", TORCH_BOX(&Ops::route)); }

// The Python module (the same in both bindings): py_module.h.
#include "py_module.h"
