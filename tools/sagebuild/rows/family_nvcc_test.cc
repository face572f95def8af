// An `archs: ["9.0a"]` kernel family through the real chain: families.json
// text -> plan -> the real nvcc (the planner's own commands) -> a shared
// library -> the fatbin reader -> build_info -> verify's B6.  The family is
// tests/build/kernels/probe_sm90.cu, which compiles only for sm_90a.
// Skipped (a CTest skip, saying why) without nvcc in $CUDA_HOME or /usr/local/cuda.
#include <catch2/catch.hpp>

#include "sagebuild/common/os.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "sagebuild/binary/elf.h"
#include "sagebuild/binary/fatbin.h"
#include "sagebuild/common/arch.h"
#include "sagebuild/plan/plan.h"
#include "sagebuild/rows/stage.h"
#include "sagebuild/run/process.h"
#include "sagebuild/toolchain/cuda.h"
#include "sagebuild/toolchain/gnu_toolchain.h"
#include "sagebuild/verify/binaries.h"
#include "sagebuild/verify/binary_rules.h"

using namespace sb::plan;
using sb::run::Command;
namespace fs = std::filesystem;
using sb::Arch;

namespace {

const char* kManifest = R"({
  "families": {
    "probe_sm90": {
      "sources": ["tests/build/kernels/probe_sm90.cu"],
      "archs": ["9.0a"],
      "symbol_marker": "probe_sm90_kernel"
    }
  },
  "binding": {"sources": ["kernels/binding/ops.cc"]},
  "nvcc_flags": ["-std=c++17", "-O3"]
})";

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("sb-family-nvcc-" + std::to_string(sb::process_id()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

sb::matrix::Row row(std::vector<Arch> archs) {
  sb::matrix::Row r;
  r.id = "probe-row";
  r.package = "sageattention";
  r.version = "2.2.0";
  r.abi_mode = sb::wheel::AbiMode::abi3;
  r.torch = {2, 11, 0, true};
  r.pythons = {{3, 12}};
  r.build_python = {3, 12};
  r.cuda = {13, 0};
  r.archs = std::move(archs);
  r.ptx_arch = r.archs.back();
  return r;
}

}  // namespace

TEST_CASE("an archs family built by the real nvcc carries sm_90a SASS only, and B6 accepts it") {
  // $CUDA_HOME's (scripts/test.sh points it at the machine's CUDA 13.0 or the
  // one sagebuild provisioned from PyPI), else /usr/local/cuda's.
  const char* home = std::getenv("CUDA_HOME");
  fs::path nvcc = fs::path(home && *home ? home : "/usr/local/cuda") / "bin/nvcc";
  auto gxx = sb::run::find_program("g++");
  if (!fs::exists(nvcc) || !gxx) {
    std::cout << "SKIPPED: no " << nvcc.string() << " or no g++ here\n";  // a skip to CTest
    return;
  }
  sb::run::HostProcessRunner runner;
  auto version = sb::toolchain::query_nvcc(runner, nvcc);
  TempDir tmp;
  fs::path repo = SAGEBUILD_SOURCE_DIR;
  auto manifest = parse_kernel_manifest(kManifest, "probe families.json");
  sb::toolchain::RowToolchain tc;
  tc.host = std::make_shared<sb::toolchain::GnuToolchain>(
      sb::toolchain::GnuTools{nvcc, version.full_str(), *gxx, {"gcc", "12"}});
  tc.nvcc_version = version.full_str();
  tc.torch.version = "none";
  tc.row_torch_cuda = "13.0";
  tc.python_version = "3.12";
  PlanSettings st;
  st.repo_root = repo;
  BuildSite site{repo, tmp.path / "objects", tmp.path / "extensions", tmp.path / "work", {}};
  fs::create_directories(site.objects);
  auto parse_arch = [](const char* s) { return sb::parse_arch_arg(s, "test"); };
  auto input = [&](const sb::matrix::Row& r) { return RowInput{r, extension_from_families(manifest, r), tc, site}; };

  // A row without 9.0 does not build the family.
  auto without = plan_compile({input(row({parse_arch("8.0"), parse_arch("8.9")}))}, st);
  CHECK(without.rows[0].families.empty());
  REQUIRE(without.rows[0].skipped_families.size() == 1);
  CHECK(without.rows[0].skipped_families[0].name == "probe_sm90");

  // A row with 9.0 does: run the planner's compile command for the kernel.
  auto r = row({parse_arch("8.0"), parse_arch("9.0")});
  auto g = plan_compile({input(r)}, st);
  REQUIRE(g.rows[0].extensions[0].kernels.size() == 1);
  const auto& obj = g.rows[0].extensions[0].kernels[0];
  const sb::graph::Edge* edge = nullptr;
  for (const auto& e : g.edges)
    if (e.output == obj.object) edge = &e;
  REQUIRE(edge);
  auto compiled = runner.run(Command{edge->argv});
  INFO(sb::run::display(Command{edge->argv}) << "\n" << compiled.err);
  REQUIRE(compiled.ok());
  fs::path lib = tmp.path / "libprobe.so";
  auto linked = runner.run(Command{{gxx->string(), "-shared", "-o", lib.string(), edge->temp.string()}});
  INFO(linked.err);
  REQUIRE(linked.ok());

  auto source = sb::binary::FileSource::open(lib);
  sb::Findings read_findings;
  auto elf = sb::binary::ElfFile::parse(*source, read_findings);
  REQUIRE(elf);
  auto coverage = sb::binary::cuda_coverage(*elf, read_findings);
  // Exactly one entry: SASS for sm_90a.  No PTX (arch-specific code has none
  // that could serve another GPU) and no plain sm_90.
  REQUIRE(coverage.entries.size() == 1);
  CHECK(coverage.entries[0].kind == sb::binary::FatbinKind::Sass);
  CHECK(coverage.entries[0].arch_name() == "sm_90a");
  CHECK(coverage.runs_on("_Z17probe_sm90_kernelPi", {90, 0}));

  auto info = sb::rows::make_build_info(r, tc, extension_from_families(manifest, r), "test");
  CHECK(info.archs == std::vector<std::string>{"8.0", "9.0"});
  CHECK(info.kernel_families["probe_sm90"] == sb::distinfo::BuiltFamily{"", "probe_sm90_kernel", {"9.0a"}});
  auto code = sb::verify::cuda_code(coverage);
  sb::Findings b6;
  sb::verify::check_cuda_coverage(code, info, "libprobe.so", b6);
  CHECK(b6.empty());

  // The same library under a build-info that also promises sm_100a for a
  // 10.0 it lists: B6 names the missing target.
  info.archs.push_back("10.0");
  info.kernel_families["probe_sm90"].archs.push_back("10.0a");
  sb::verify::check_cuda_coverage(code, info, "libprobe.so", b6);
  REQUIRE(b6.size() == 1);
  CHECK(b6[0].message.find("no probe_sm90 kernels for sm_100a") != std::string::npos);
}
