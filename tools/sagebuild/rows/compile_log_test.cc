// ninja's output with ptxas's spill warnings held back and summarised.
#include <catch2/catch.hpp>

#include <sstream>

#include "sagebuild/rows/compile_log.h"

using namespace sb::rows;

namespace {
const char* kNinja =
    "[1/4] nvcc quant kernels/src/quant.cu [8.0 9.0]\n"
    "[2/4] nvcc pv_fp16 kernels/src/pv_fp16.cu [8.0 9.0]\n"
    "ptxas warning : Registers are spilled to local memory in function '_Z3fooILi64EEvv', 8 bytes spill stores, "
    "8 bytes spill loads\n"
    "ptxas warning : Registers are spilled to local memory in function '_Z3fooILi128EEvv', 16 bytes spill stores, "
    "16 bytes spill loads\n"
    "kernels/src/pv_fp16.cu(12): warning #177-D: variable \"x\" was declared but never referenced\n"
    "[3/4] nvcc pv_fp8 kernels/src/pv_fp8.cu [8.9 9.0]\n"
    "ptxas warning : Registers are spilled to local memory in function '_Z3barv', 4 bytes spill stores, "
    "4 bytes spill loads\n"
    "[4/4] link _C.abi3.so\n";
}

TEST_CASE("ptxas spill warnings are counted per compile; every other line passes, in order") {
  std::ostringstream out;
  CompileLog log(out);
  // Cut anywhere, as pipes deliver it.
  std::string all = kNinja;
  for (std::size_t i = 0; i < all.size(); i += 7) log.feed(std::string_view(all).substr(i, 7));
  log.finish();
  CHECK(out.str() ==
        "[1/4] nvcc quant kernels/src/quant.cu [8.0 9.0]\n"
        "[2/4] nvcc pv_fp16 kernels/src/pv_fp16.cu [8.0 9.0]\n"
        "kernels/src/pv_fp16.cu(12): warning #177-D: variable \"x\" was declared but never referenced\n"
        "[3/4] nvcc pv_fp8 kernels/src/pv_fp8.cu [8.9 9.0]\n"
        "[4/4] link _C.abi3.so\n");
  CHECK(log.warnings() == 3);
  CHECK(log.summary("/w/ptxas-warnings.log") ==
        "ptxas: 3 register-spill warnings from 2 compiles (kernels spilling to local memory; full text: "
        "/w/ptxas-warnings.log)\n"
        "  2  nvcc pv_fp16 kernels/src/pv_fp16.cu [8.0 9.0]\n"
        "  1  nvcc pv_fp8 kernels/src/pv_fp8.cu [8.9 9.0]\n");
  std::string full = log.full_text();
  CHECK(full.rfind("# nvcc pv_fp16 kernels/src/pv_fp16.cu [8.0 9.0]\nptxas warning : Registers are spilled", 0) == 0);
  CHECK(full.find("'_Z3barv', 4 bytes spill stores") != std::string::npos);
}

TEST_CASE("no spill warning: no summary; a last line without newline still shows") {
  std::ostringstream out;
  CompileLog log(out);
  log.feed("[1/1] link _C.abi3.so\nninja: no work to do.");
  log.finish();
  CHECK(out.str() == "[1/1] link _C.abi3.so\nninja: no work to do.\n");
  CHECK(log.warnings() == 0);
  CHECK(log.summary("x").empty());
}
