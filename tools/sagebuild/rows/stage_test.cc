// The build-info record of a row (make_build_info): what each kernel family
// was built for, as verify's B6 will read it.
#include <catch2/catch.hpp>

#include "sagebuild/rows/stage.h"

using namespace sb::rows;
using sb::matrix::Arch;

namespace {

Arch A(const char* s) { return parse_arch_arg(s, "test"); }

KernelManifest manifest() {
  KernelManifest m;
  m.families = {{"pv_fp8", {"kernels/src/attn_pv_fp8.cu"}, A("8.9"), "attn_pv_fp8_kernel"},
                {"quant", {"kernels/src/quant.cu"}, A("8.0"), "quant_qk_kernel"},
                {"sm90", {"kernels/src/attn_sm90.cu"}, std::nullopt, "attn_sm90_kernel", {A("9.0a"), A("10.0a")}}};
  return m;
}

sb::matrix::Row row(std::vector<Arch> archs) {
  sb::matrix::Row r;
  r.package = "sageattention";
  r.version = "2.2.0";
  r.abi_mode = sb::matrix::AbiMode::abi3;
  r.pythons = {"3.10"};
  r.cuda = "13.0";
  r.archs = std::move(archs);
  r.ptx_arch = r.archs.back();
  return r;
}

sb::distinfo::BuildInfo info_for(const sb::matrix::Row& r, const RowGraph& g) {
  return make_build_info(r, RowToolchain{}, "gcc", "12.2.0", "13.0", "13.0.88", g, manifest(), "rev");
}

}  // namespace

TEST_CASE("build_info records an archs family's built targets and a min_arch family's floor") {
  RowGraph g;
  g.families = {"pv_fp8", "quant", "sm90"};
  auto r = row({A("8.0"), A("8.9"), A("9.0")});
  auto b = info_for(r, g);
  CHECK(b.archs == std::vector<std::string>{"8.0", "8.9", "9.0"});
  REQUIRE(b.kernel_families.count("sm90"));
  // Only the target whose base arch the row lists: 9.0a, not 10.0a.
  CHECK(b.kernel_families["sm90"] == sb::distinfo::KernelFamily{"", "attn_sm90_kernel", {"9.0a"}});
  CHECK(b.kernel_families["pv_fp8"] == sb::distinfo::KernelFamily{"8.9", "attn_pv_fp8_kernel", {}});
  // A row listing 9.0a itself: the capability is 9.0, the family's target 9.0a.
  auto specific = info_for(row({A("8.0"), A("9.0a")}), g);
  CHECK(specific.archs == std::vector<std::string>{"8.0", "9.0"});
  CHECK(specific.kernel_families["sm90"].archs == std::vector<std::string>{"9.0a"});
}

TEST_CASE("build_info leaves out the families the row skipped") {
  RowGraph g;
  g.families = {"pv_fp8", "quant"};
  g.skipped_families = {{"sm90", "the row lists none of 9.0, 9.0a, 10.0, 10.0a (for its archs 9.0a, 10.0a)"}};
  auto b = info_for(row({A("8.0"), A("8.9")}), g);
  CHECK(b.kernel_families.size() == 2);
  CHECK_FALSE(b.kernel_families.count("sm90"));
}
