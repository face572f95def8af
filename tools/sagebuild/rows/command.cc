#include "sagebuild/rows/command.h"

#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "sagebuild/common/text.h"
#include "sagebuild/rows/build.h"
#include "sagebuild/rows/doctor.h"
#include "sagebuild/rows/preflight.h"

namespace sb::rows {

namespace {

struct CliState {
  BuildOptions opt;
  std::string cuda_home, python, host_compiler, archs, torch_index;
  std::vector<std::string> torch_wheels;
  bool no_smoke = false;

  BuildOptions finish() const {
    BuildOptions o = opt;
    if (!cuda_home.empty()) o.toolchain.cuda_home = cuda_home;
    if (!python.empty()) o.toolchain.python = python;
    if (!host_compiler.empty()) o.toolchain.host_compiler = host_compiler;
    o.toolchain.torch_index = torch_index;
    for (const auto& w : torch_wheels) o.toolchain.torch_wheels.push_back(std::filesystem::absolute(w));
    o.smoke = !no_smoke;
    if (!archs.empty()) {
      std::string cur;
      for (char c : archs + ",") {
        if (c == ',' || c == ' ') {
          if (!cur.empty()) o.archs.push_back(cur);
          cur.clear();
        } else {
          cur += c;
        }
      }
    }
    return o;
  }
};

// --torch-index: an http(s) or file URL (pip's --index-url takes no path).
std::string index_url(const std::string& s) {
  for (const char* scheme : {"https://", "http://", "file://"})
    if (s.rfind(scheme, 0) == 0 && s.size() > std::string(scheme).size()) return {};
  return "expected the URL of a package index (https://..., http://... or file://...), e.g. "
         "https://download.pytorch.org/whl/cu130, got \"" +
         s + "\"";
}

// -j/--jobs: a count, said plainly (CLI::PositiveNumber's message is a
// floating-point range).
std::string whole_number_at_least_one(const std::string& s) {
  bool digits = !s.empty() && s.size() <= 6 && s.find_first_not_of("0123456789") == std::string::npos;
  if (digits && std::stoi(s) >= 1) return {};
  return "expected a whole number >= 1 (how many compiles run at once, e.g. -j 4; leave it out for one per CPU), "
         "got \"" +
         s + "\"";
}

// The options `build` and `doctor` share (doctor: those about finding tools).
void add_selection(CLI::App* app, CliState& s) {
  app->add_option("--profile", s.opt.profile, "matrix profile to build (default: default)");
  app->add_option("--row", s.opt.rows, "build exactly this row id (repeatable; what one CI job runs)");
  app->add_option("--matrix", s.opt.matrix_path, "the build matrix (default: <source>/matrix/build-matrix.yaml)");
  app->add_option("--source-dir", s.opt.source_dir,
                  "the checkout to build: this repository (default: found upward from here) or upstream "
                  "SageAttention's tree (matrix/sources/ describes it)");
  app->add_option("--source-kind", s.opt.source_kind,
                  "the source manifest for --source-dir (matrix/sources/<KIND>.yaml), instead of recognising it");
  app->add_option("--cache-dir", s.opt.cache_dir,
                  "cache directory (default: $XDG_CACHE_HOME/sagebuild or ~/.cache/sagebuild)");
  app->add_option("--cuda-home", s.cuda_home,
                  "CUDA toolkit to use (default: $CUDA_HOME, nvcc on PATH, or provisioned)");
  app->add_option("--python", s.python, "a Python to find torch and headers in (default: python3 on PATH)");
  app->add_option("--host-compiler", s.host_compiler, "host C++ compiler for nvcc and the link (default: c++ on PATH)");
  app->add_option("--torch-wheel", s.torch_wheels, "a local torch wheel to use instead of downloading (repeatable)")
      ->check(CLI::ExistingFile);
  app->add_option("--torch-index", s.torch_index,
                  "the package index torch is downloaded from, e.g. https://download.pytorch.org/whl/cu130 "
                  "(default: each row's own: PyPI, or PyTorch's index for its CUDA where PyPI lacks its build)")
      ->check(index_url, "URL");
  app->add_option("--archs", s.archs, "override every row's CUDA archs, e.g. 9.0 or 8.0,9.0a (development)");
  app->add_option("--for-python", s.opt.for_python,
                  "build the row for that interpreter's environment (its Python, torch and torch's CUDA; archs "
                  "from TORCH_CUDA_ARCH_LIST, else the GPU, else the package's): what `pip install .` runs");
}

void add_build_options(CLI::App* app, CliState& s) {
  add_selection(app, s);
  app->add_option("--out", s.opt.out_dir, "where finished wheels go (default: dist/)");
  app->add_option("-j,--jobs", s.opt.jobs, "parallel compile jobs (default: number of CPUs)")
      ->check(whole_number_at_least_one, "N");
  app->add_option("--nvcc-threads", s.opt.nvcc_threads,
                  "threads each nvcc may use for its unit: its archs side by side, and a one-arch unit's "
                  "compilation split (default: --jobs, shared among the units compiled at once; 1: one thread "
                  "per nvcc)")
      ->check(whole_number_at_least_one, "N");
  app->add_flag("-k,--keep-going", s.opt.keep_going, "build the other rows when one fails");
  app->add_flag("-n,--dry-run", s.opt.dry_run, "print the plan and the exact commands; compile nothing");
  app->add_option("--build-dir", s.opt.build_dir, "where build.ninja goes (default: <cache>/work/<profile or row>)");
  app->add_option("--launcher", s.opt.launcher, "compiler launcher for compiles")
      ->check(CLI::IsMember({"ccache", "sccache", "none", "auto"}));
  app->add_option("--json", s.opt.json_path, "write per-row results as JSON to FILE");
  app->add_flag("--no-smoke-test", s.no_smoke, "skip installing the wheel into a fresh venv");
  app->add_flag("--provision-torch", s.opt.provision_torch,
                "smoke-test with the row's torch and its dependencies installed into a private venv in the cache "
                "(<cache>/torch-env/, made once, reused; from --python, else python3 / the row's python3.X), "
                "installed while the kernels compile; the same on Linux and Windows");
  app->add_option("--kernel-objects", s.opt.kernel_objects,
                  "a directory of kernel objects compiled once per CUDA release, archs and platform: with "
                  "--kernels-only, where they go; else the build takes every kernel object from it (refusing one "
                  "whose key does not match) and compiles only the binding");
  app->add_flag("--kernels-only", s.opt.kernels_only,
                "compile the rows' torch-free kernel objects alone into --kernel-objects DIR, with its manifest "
                "(no torch, no binding, no link, no wheel)");
  app->add_flag("--allow-unsupported-compiler", s.opt.toolchain.allow_unsupported_compiler,
                "win_amd64 rows: let nvcc accept an MSVC newer than the row's CUDA supports");
}

}  // namespace

void add_build_command(CLI::App& app, cli::Context& ctx) {
  auto top = std::make_shared<CliState>();
  auto sub = std::make_shared<CliState>();
  auto doc = std::make_shared<CliState>();

  CLI::App* build = app.add_subcommand("build", "build the wheels of a profile or of one row (the default command)");
  add_build_options(build, *sub);
  build->callback([sub, &ctx] {
    run::HostProcessRunner runner;
    PrintableOstream out(std::cout);  // names and messages from files, escaped (text.h)
    ctx.exit_code = run_build(sub->finish(), runner, out);
  });

  CLI::App* doctor =
      app.add_subcommand("doctor", "show what a build of each row would use, what is missing, how to fix it");
  add_selection(doctor, *doc);
  doctor->add_flag("--preprocess", doc->opt.preprocess,
                   "prove the rows' toolchains without compiling: provision what a build would (torch, CUDA, "
                   "header packages), then run every compile unit through the preprocessor (nvcc -E) with the "
                   "build's own flags; a missing header fails in seconds, naming the unit and what provides it");
  doctor->callback([doc, &ctx] {
    run::HostProcessRunner runner;
    PrintableOstream out(std::cout);
    BuildOptions o = doc->finish();
    ctx.exit_code = o.preprocess ? run_preflight(std::move(o), runner, out) : run_doctor(std::move(o), runner, out);
  });

  // A bare `sagebuild [options]` is `sagebuild build [options]`.
  add_build_options(&app, *top);
  app.require_subcommand(0, 1);
  app.final_callback([top, &app, &ctx] {
    if (!app.get_subcommands().empty()) return;
    run::HostProcessRunner runner;
    PrintableOstream out(std::cout);
    ctx.exit_code = run_build(top->finish(), runner, out);
  });
}

}  // namespace sb::rows
