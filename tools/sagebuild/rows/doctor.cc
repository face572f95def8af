#include "sagebuild/rows/doctor.h"

#include <ostream>
#include <string>
#include <vector>

#include "sagebuild/common/error.h"
#include "sagebuild/rows/resolve.h"
#include "sagebuild/rows/session.h"

namespace sb::rows {

int run_doctor(BuildOptions o, run::ProcessRunner& runner, std::ostream& out) {
  o.toolchain.provision = false;
  Session s = open_session(std::move(o), runner, out);
  const auto& path = s.o.toolchain.path_env;
  // Any \u2717 line makes the exit code 1; what a build downloads itself
  // is not missing (\u2193).
  bool ok = true;
  enum class Mark { good, download, missing };
  auto line = [&](Mark mark, const std::string& what, const std::string& found, const std::string& fix) {
    const char* sign = mark == Mark::good ? "\u2713 " : mark == Mark::download ? "\u2193 " : "\u2717 ";
    out << sign << what << ": " << found << (mark != Mark::missing || fix.empty() ? "" : "\n    fix: " + fix) << "\n";
    if (mark == Mark::missing) ok = false;
  };
  auto ninja = run::find_program("ninja", path);
  line(ninja ? Mark::good : Mark::missing, "ninja", ninja ? ninja->string() : "not on PATH", "install ninja-build");
  auto launcher = resolve_launcher("auto", path);
  line(Mark::good, "compiler launcher",
       launcher.empty() ? "none (builds still work, without ccache/sccache)" : launcher.front(), "");
  line(Mark::good, "cache", s.o.cache_dir.string(), "");
  Resolvers resolvers(s, runner);
  for (const auto& row : s.rows) {
    std::string archs;
    for (const auto& a : row.archs) archs += (archs.empty() ? "" : " ") + a.name();
    out << "\n"
        << row.id << " (torch " << row.torch.str() << ", CUDA " << row.cuda.release_str() << ", archs " << archs
        << ")\n";
    std::vector<toolchain::Check> checks;
    try {
      checks = resolvers.for_row(row).diagnose(row);
    } catch (const UsageError& e) {
      checks = {{false, "host", e.what(), "run doctor on a " + row.platform + " host"}};
    }
    for (const auto& c : checks) {
      bool provisionable = !c.ok && (c.what.rfind("torch", 0) == 0 || c.what.rfind("CUDA", 0) == 0) &&
                           c.found.find("not in the cache") != std::string::npos;
      line(c.ok            ? Mark::good
           : provisionable ? Mark::download
                           : Mark::missing,
           c.what, c.found + (provisionable ? " (a build will download it)" : ""), c.fix);
    }
  }
  return ok ? 0 : 1;
}

}  // namespace sb::rows
