#include "sagebuild/rows/kernel_objects.h"

#include <chrono>
#include <ostream>
#include <string>
#include <vector>

#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/common/hash.h"
#include "sagebuild/plan/kernel_objects.h"
#include "sagebuild/rows/pipeline.h"

namespace sb::rows {

namespace fs = std::filesystem;

namespace {

// `from` copied to `to` under a temporary name, renamed when complete.
void copy_atomic(const fs::path& from, const fs::path& to) {
  AtomicOutput o(to);
  std::error_code ec;
  fs::copy_file(from, o.temp_path(), fs::copy_options::overwrite_existing, ec);
  if (ec) throw IoError("cannot copy " + from.string() + " to " + o.temp_path().string() + ": " + ec.message());
  o.commit();
}

// One row's kernel objects into the directory and the set; how many were copied.
// The files of the entries they supersede go to `superseded`.
int hand_over(const plan::RowInput& in, const plan::RowGraph& rg, const fs::path& dir, plan::KernelObjects& set,
              std::vector<std::string>& superseded) {
  int copied = 0;
  for (std::size_t i = 0; i < rg.extensions.size(); ++i)
    for (std::size_t j = 0; j < rg.extensions[i].kernels.size(); ++j) {
      const plan::PlannedObject& obj = rg.extensions[i].kernels[j];
      const plan::KernelUnit& unit = in.spec.extensions[i].kernels[j];
      if (!fs::exists(obj.object))
        throw IoError("kernel object " + obj.object.string() + " of " + unit.source.generic_string() +
                      " is missing after the compile");
      fs::path dest = dir / obj.object.filename();
      std::string sum = hex(sha256_file(obj.object));
      if (!fs::exists(dest) || hex(sha256_file(dest)) != sum) {
        copy_atomic(obj.object, dest);
        ++copied;
      }
      plan::KernelObjectEntry e{unit.family, unit.source.generic_string(), {}, obj.key, dest.filename().string(),
                                sum,         in.toolchain.host->identity()};
      for (const auto& a : unit.targets) e.targets.push_back(a.name());
      for (auto& old : plan::add_kernel_object(set, std::move(e), in.row.id)) superseded.push_back(std::move(old));
    }
  return copied;
}

}  // namespace

void build_kernel_objects(Session& s, const Resolved& r, const plan::CompileGraph& g, run::ProcessRunner& build_runner,
                          std::ostream& out) {
  if (g.rows.empty() || s.stopped()) return;
  auto t0 = std::chrono::steady_clock::now();
  std::vector<RowResult*> results;
  for (auto i : r.row_of) results.push_back(&s.results[i]);
  PipelineSettings ps{s.source, s.work, s.o.out_dir, s.o.jobs, s.o.keep_going, false, "unknown"};
  compile_rows(g, results, ps, build_runner, out);
  const fs::path& dir = s.o.kernel_objects;
  make_output_dir(dir, "--kernel-objects");
  // Rows of other archs or releases may share a directory: their entries stay;
  // an entry of one of this build's units under another key is replaced.
  plan::KernelObjects set;
  if (fs::exists(dir / plan::kKernelObjectsManifest)) set = plan::load_kernel_objects(dir);
  bool changed = false;
  std::vector<std::string> superseded;
  for (std::size_t k = 0; k < g.rows.size(); ++k) {
    RowResult& res = *results[k];
    const plan::RowGraph& rg = g.rows[k];
    res.families = rg.families;
    int objects = 0;
    for (const auto& ext : rg.extensions)
      for (const auto& obj : ext.kernels) {
        (obj.cached ? res.kernels_cached : res.kernels_compiled)++;
        ++objects;
      }
    if (!res.ok && !res.stage.empty()) continue;  // failed before or in the compile
    try {
      res.stage = "kernel-objects";
      int copied = hand_over(r.inputs[k], rg, dir, set, superseded);
      changed = true;
      res.ok = true;
      res.stage = "done";
      res.smoke = "kernels only: " + std::to_string(objects) + " objects in " + dir.string() + " (" +
                  std::to_string(copied) + " copied)";
    } catch (const std::exception& e) {
      res.ok = false;
      res.error = e.what();
    }
    res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out << "[" << rg.row_id << "] " << (res.ok ? "ok: " + res.smoke : "FAILED in " + res.stage) << "\n";
  }
  if (!changed) return;
  write_file_atomic(dir / plan::kKernelObjectsManifest, plan::kernel_objects_json(set));
  // An object of one of these units from an earlier build (other sources or
  // flags) leaves the directory once the manifest no longer lists it.
  for (const auto& file : superseded) {
    std::error_code ec;
    fs::remove(dir / file, ec);
  }
}

}  // namespace sb::rows
