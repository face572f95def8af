#include "sagebuild/rows/stage.h"

#include <algorithm>
#include <cstdlib>
#include <variant>

#include "sagebuild/common/arch.h"
#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/common/hash.h"
#include "sagebuild/common/text.h"
#include "sagebuild/verify/verify.h"

namespace sb::rows {

namespace fs = std::filesystem;

distinfo::BuildInfo make_build_info(const matrix::Row& row, const toolchain::RowToolchain& tc,
                                    const plan::RowSpec& spec, const std::string& source_revision) {
  distinfo::BuildInfo b;
  b.package = row.project;
  b.version = row.version;
  b.abi_mode = row.abi_mode;
  for (const auto& python : row.pythons) b.pythons.push_back(python.str());
  if (!row.build_tag.empty()) b.wheel.build_tag = row.build_tag;
  if (!row.local_version.empty()) b.wheel.local_version = row.local_version;
  b.wheel.python_tag = row.python_tag;
  b.wheel.abi_tag = row.abi_tag;
  b.wheel.platform_tag = row.platform;
  b.torch.version = row.torch.str();
  b.torch.cxx11_abi = tc.torch.cxx11_abi;
  b.torch.cuda = tc.row_torch_cuda;
  b.cuda.version = row.cuda.release_str();
  b.cuda.nvcc = tc.nvcc_version;
  // build_info.json writes compute capabilities ("9.0"); the 'a' of an
  // arch-specific target is a compile option, not a different capability.
  for (const auto& a : row.archs) {
    std::string c = a.capability();
    if (std::find(b.archs.begin(), b.archs.end(), c) == b.archs.end()) b.archs.push_back(c);
  }
  for (const auto& p : spec.ptx_archs) b.ptx_archs.push_back(p.capability());
  for (const auto& f : spec.families) {
    distinfo::BuiltFamily k;
    k.symbol_marker = f.symbol_marker;
    // An archs family records the exact targets this row built ("9.0a"),
    // which verify's B6 then demands as SASS.
    if (f.min_arch)
      k.min_arch = f.min_arch->name();
    else
      for (const auto& t : f.archs) k.archs.push_back(t.name());
    b.kernel_families[f.name] = std::move(k);
  }
  auto compiler = tc.host->host_compiler();
  b.host_compiler.id = compiler.id;
  b.host_compiler.version = compiler.version;
  b.platform = row.platform;
  b.source_revision = source_revision;
  return b;
}

StagedModule staged_module(const std::string& module, const std::string& filename, const fs::path& file) {
  std::string folder = module.find('.') == std::string::npos ? "" : module.substr(0, module.rfind('.'));
  std::replace(folder.begin(), folder.end(), '.', '/');
  return {folder.empty() ? filename : folder + "/" + filename, file};
}

std::vector<pack::PayloadFile> stage_payload(const fs::path& package_dir, const std::string& package,
                                             const std::vector<std::string>& globs,
                                             const std::vector<StagedModule>& modules, const fs::path& tree) {
  if (!fs::is_directory(package_dir))
    throw UsageError("the Python package directory " + package_dir.string() + " of " + package +
                     " does not exist; pass the checkout that holds it as --source-dir");
  auto wanted = [&](const std::string& name) {
    return globs.empty() ||
           std::any_of(globs.begin(), globs.end(), [&](const std::string& g) { return glob_match(g, name); });
  };
  std::vector<pack::PayloadFile> out;
  for (auto it = fs::recursive_directory_iterator(package_dir); it != fs::recursive_directory_iterator(); ++it) {
    const auto& p = it->path();
    std::string name = p.filename().string();
    std::error_code kind;  // a link loop: no exception here, tree_file() names it
    if (!it->is_symlink(kind) && it->is_directory(kind)) {
      if (name == "__pycache__" || name[0] == '.') it.disable_recursion_pending();
      continue;
    }
    std::string ext = p.extension().string();
    if (ext == ".pyc" || ext == ".pyo" || ext == ".so" || ext == ".pyd" || name[0] == '.' ||
        name.find(".so.") != std::string::npos || name == "build_info.json" || !wanted(name))
      continue;
    auto file = tree_file(tree.empty() ? package_dir : tree, p);  // a link leaving the tree: refused
    if (!file) continue;                                          // a FIFO, a socket: not a file to ship
    out.push_back({package + "/" + p.lexically_relative(package_dir).generic_string(), *file, std::nullopt});
  }
  for (const auto& m : modules) out.push_back({m.archive_name, m.file, std::nullopt});
  std::sort(out.begin(), out.end(),
            [](const pack::PayloadFile& a, const pack::PayloadFile& b) { return a.archive_name < b.archive_name; });
  return out;
}

pack::WheelSpec wheel_spec(const matrix::Row& row, distinfo::BuildInfo info, const plan::RowSpec& spec,
                           const fs::path& tree) {
  pack::WheelSpec s;
  s.name = row.project;
  std::string why;
  auto v = wheel::parse_version(row.wheel_version.empty() ? row.version : row.wheel_version, &why);
  if (!v) throw UsageError("row " + row.id + ": wheel version \"" + row.wheel_version + "\" is not PEP 440: " + why);
  s.version = *v;
  if (!row.build_tag.empty()) s.build_tag = row.build_tag;
  s.tags = wheel::TagSets{{row.python_tag}, {row.abi_tag}, {row.platform}};
  s.summary = spec.summary;
  s.requires_python = row.requires_python;
  if (!row.torch_requirement.empty()) s.requires_dist = {row.torch_requirement};
  s.build_info = std::move(info);
  // The tree's licence travels in every wheel (METADATA 2.4 License-File).
  if (!spec.license_file.empty() && fs::exists(tree / spec.license_file)) {
    s.license_expression = spec.license_expression;
    s.license_file = tree / spec.license_file;
  }
  // Project-URL: the repository the wheel was built from, when CI says which.
  const char* server = std::getenv("GITHUB_SERVER_URL");
  const char* repo = std::getenv("GITHUB_REPOSITORY");
  if (server && repo && *server && *repo) s.project_urls = {{"Source", std::string(server) + "/" + repo}};
  return s;
}

matrix::Row with_platform_tag(const matrix::Row& row, const std::vector<pack::PayloadFile>& payload, std::string& why) {
  std::vector<verify::NamedLibrary> libraries;
  std::vector<std::string> members;
  for (const auto& f : payload) {
    members.push_back(f.archive_name);
    const auto* file = std::get_if<fs::path>(&f.data);
    std::string name = fs::path(f.archive_name).filename().string();
    bool shared_object =
        (name.size() > 3 && name.compare(name.size() - 3, 3, ".so") == 0) || name.find(".so.") != std::string::npos;
    if (file && shared_object) libraries.push_back({*file, f.archive_name});
  }
  verify::Options vo;
  vo.policy_dir = verify::default_policy_dir();
  verify::DerivedTag derived = verify::derive_platform_tag(row.platform, libraries, members, vo);
  // level_advice starts with the tag it names; "no manylinux level fits: ..." does not.
  why = derived.why.empty()                      ? derived.tag
        : derived.why.rfind(derived.tag, 0) == 0 ? derived.why
                                                 : derived.tag + ": " + derived.why;
  if (derived.tag == row.platform) return row;
  matrix::Row tagged = row;
  std::string suffix = "-" + row.platform + ".whl";
  if (tagged.wheel_filename.size() > suffix.size() &&
      tagged.wheel_filename.compare(tagged.wheel_filename.size() - suffix.size(), suffix.size(), suffix) == 0)
    tagged.wheel_filename.replace(tagged.wheel_filename.size() - suffix.size(), suffix.size(),
                                  "-" + derived.tag + ".whl");
  tagged.platform = derived.tag;
  return tagged;
}

fs::path move_wheel_into(const fs::path& wheel, const fs::path& out_dir) {
  fs::create_directories(out_dir);
  fs::path dest = out_dir / wheel.filename();
  std::error_code ec;
  fs::rename(wheel, dest, ec);
  if (!ec) return dest;
  AtomicOutput o(dest);
  fs::copy_file(wheel, o.temp_path(), fs::copy_options::overwrite_existing);
  o.commit();
  fs::remove(wheel);
  return dest;
}

fs::path pack_row_wheel(const matrix::Row& row, distinfo::BuildInfo info, const std::vector<pack::PayloadFile>& payload,
                        const plan::RowSpec& spec, const fs::path& tree, const fs::path& dist_dir) {
  pack::PackResult pr = pack::write_wheel(wheel_spec(row, std::move(info), spec, tree), payload,
                                          pack::PackOptions{dist_dir, std::nullopt});
  if (!row.wheel_filename.empty() && pr.path.filename() != row.wheel_filename)
    throw UsageError("the wheel was written as " + pr.path.filename().string() + " but the matrix predicts " +
                     row.wheel_filename);
  return pr.path;
}

void verify_row_wheel(const fs::path& wheel, RowResult& res) {
  verify::Options vo;
  vo.policy_dir = verify::default_policy_dir();
  verify::Report rep = verify::verify_wheel(wheel, vo);
  for (const auto& f : rep.findings)
    res.findings.push_back(f.rule + " " + std::string(to_string(f.severity)) +
                           (f.member.empty() ? "" : " [" + f.member + "]") + ": " + f.message +
                           (f.expected.empty() ? "" : "; expected " + f.expected));
  if (rep.failed(false)) {
    std::string first;
    for (const auto& line : res.findings)
      if (line.find(" warning") == std::string::npos) first += "\n    " + line;
    throw UsageError("verify found problems:" + first);
  }
}

void finish_row(const fs::path& wheel, const fs::path& out_dir, RowResult& res) {
  res.stage = "done";
  res.wheel = move_wheel_into(wheel, out_dir);
  res.size = fs::file_size(res.wheel);
  res.sha256 = hex(sha256_file(res.wheel));
  res.ok = true;
}

}  // namespace sb::rows
