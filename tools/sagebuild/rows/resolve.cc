#include "sagebuild/rows/resolve.h"

#include <optional>
#include <ostream>

#include "sagebuild/common/error.h"
#include "sagebuild/toolchain/cross_resolver.h"
#include "sagebuild/toolchain/cuda.h"
#include "sagebuild/toolchain/host.h"
#include "sagebuild/toolchain/msvc_resolver.h"

namespace sb::rows {

namespace fs = std::filesystem;
using toolchain::RowResolver;

std::vector<std::string> resolve_launcher(const std::string& launcher, const std::string& path_env) {
  if (launcher == "none") return {};
  if (launcher == "auto") {
    for (const char* n : {"sccache", "ccache"})
      if (auto p = run::find_program(n, path_env)) return {p->string()};
    return {};
  }
  if (launcher == "ccache" || launcher == "sccache") {
    auto p = run::find_program(launcher, path_env);
    if (!p)
      throw UsageError("--launcher " + launcher + ": " + launcher +
                       " is not on PATH; install it or use --launcher none");
    return {p->string()};
  }
  throw UsageError("--launcher: \"" + launcher + "\" is not one of ccache, sccache, none, auto");
}

RowResolver& Resolvers::for_row(const matrix::Row& row) {
  std::string host = toolchain::host_platform_tag();
  if (row.platform == host) {
    if (!host_) host_ = toolchain::host_resolver(runner_, s_.o.toolchain);
    return *host_;
  }
  // linux_aarch64 on an x86_64 Linux host: cross-compiled (cross_resolver.h).
  if (row.platform == "linux_aarch64" && host == "linux_x86_64") {
    if (!cross_) cross_ = std::make_unique<toolchain::CrossResolver>(runner_, s_.o.toolchain);
    return *cross_;
  }
  if (row.platform == "win_amd64" && s_.o.dry_run) {
    if (!windows_) windows_ = std::make_unique<toolchain::MsvcResolver>(runner_, s_.o.toolchain, std::nullopt);
    return *windows_;
  }
  if (row.platform == "win_amd64")
    throw UsageError("row " + row.id +
                     " is for win_amd64: building it needs a Windows host with Visual Studio "
                     "(the C++ x64 tools) and " +
                     (toolchain::cuda_provisioned_from_pypi(row.cuda, row.platform)
                          ? "pip (CUDA " + row.cuda.release_str() + " comes from NVIDIA's win_amd64 wheels on PyPI)"
                          : "the CUDA " + row.cuda.release_str() + " toolkit") +
                     "; this host builds " + host +
                     " rows (`--dry-run` prints the row's Windows plan here; its CI job runs on a windows runner: "
                     "`sagebuild matrix --format github` names it)");
  throw UsageError("row " + row.id + " is for " + row.platform + "; this host builds " + host +
                   " rows (run this "
                   "row's job on a " +
                   row.platform + " runner: `sagebuild matrix --format github` names it)");
}

namespace {

// Where a row's commands run: here, or for another platform's row (a dry
// run) its placeholders.
plan::BuildSite site_for(const Session& s, const matrix::Row& row, const std::vector<std::string>& launcher) {
  const std::string host = toolchain::host_platform_tag();
  if (row.platform == host || (row.platform == "linux_aarch64" && host == "linux_x86_64"))
    return {s.source, s.o.cache_dir / "objects", s.o.cache_dir / "extensions", s.work, launcher};
  return {
      "<SOURCE_DIR>", fs::path("<CACHE_DIR>") / "objects", fs::path("<CACHE_DIR>") / "extensions", "<BUILD_DIR>", {}};
}

void print_checks(const std::vector<toolchain::Check>& checks, std::ostream& out) {
  for (const auto& c : checks)
    out << "  " << (c.ok ? "\u2713 " : "\u2717 ") << c.what << ": " << c.found << (c.ok ? "" : " (" + c.fix + ")")
        << "\n";
}

// An upstream row's manifest: the kind its package names, which the
// checkout must be.
const plan::SourceManifest& source_manifest_of(const Session& s, const matrix::Row& row) {
  auto it = s.tree_kinds.find(row.source);
  if (it == s.tree_kinds.end())
    throw UsageError("row " + row.id + " is built from an upstream tree of kind " + row.source + " (" +
                     (s.sources / (row.source + ".yaml")).string() + "), and --source-dir " + s.source.string() +
                     " is " + s.tree_description + "; pass a checkout of that tree as --source-dir");
  return it->second;
}

// A row's toolchain and what its wheel is built from.
plan::RowInput resolve_row(Session& s, RowResolver& resolver, const matrix::Row& row, std::ostream& out) {
  if (row.source == matrix::kOurSource) {
    const plan::KernelManifest& manifest = manifest_of(s, row);
    out << "[" << row.id << "] toolchain...\n" << std::flush;
    const plan::StableAbiBinding* stable = manifest.stable_binding_for(row.torch);
    auto tc = resolver.resolve(row, stable ? std::optional(stable->min_torch) : std::nullopt);
    return {row, plan::extension_from_families(manifest, row), std::move(tc), {}};
  }
  const plan::SourceManifest& manifest = source_manifest_of(s, row);
  plan::RowSpec spec = plan::extensions_from_source(manifest, row);
  out << "[" << row.id << "] toolchain...\n" << std::flush;
  auto tc = resolver.resolve(row, std::nullopt);
  for (const auto& h : spec.headers) {
    toolchain::Check check;
    tc.headers.push_back(resolver.headers(h, row, check));
    tc.checks.push_back(check);
  }
  return {row, std::move(spec), std::move(tc), {}};
}

}  // namespace

Resolved resolve_rows(Session& s, Resolvers& resolvers, std::ostream& out) {
  Resolved r;
  std::vector<std::string> launcher = resolve_launcher(s.o.launcher, s.o.toolchain.path_env);
  for (std::size_t i = 0; i < s.rows.size() && !s.stopped(); ++i) {
    const auto& row = s.rows[i];
    try {
      plan::RowInput in = resolve_row(s, resolvers.for_row(row), row, out);
      print_checks(in.toolchain.checks, out);
      in.site = site_for(s, row, launcher);
      r.inputs.push_back(std::move(in));
      r.row_of.push_back(i);
    } catch (const ConfigError& e) {
      s.fail(i, "toolchain", e.what());
    } catch (const UsageError& e) {
      s.fail(i, "toolchain", e.what());
    } catch (const IoError& e) {
      s.fail(i, "toolchain", e.what());
    }
  }
  return r;
}

}  // namespace sb::rows
