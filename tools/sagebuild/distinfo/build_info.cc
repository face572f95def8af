#include "sagebuild/distinfo/build_info.h"

#include "sagebuild/common/arch.h"
#include "sagebuild/common/json_limits.h"

namespace sb::distinfo {

using nlohmann::json;

namespace {

std::string type_name(const json& j) { return j.type_name(); }

// Reads required/optional members, naming the field in every error.
class Fields {
 public:
  Fields(const json& j, std::string path) : j_(j), path_(std::move(path)) {
    if (!j_.is_object()) fail("", "expected an object, found " + type_name(j_));
  }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw BuildInfoError(path_ + (key.empty() ? "" : "." + key) + ": " + what);
  }
  const json& at(const std::string& key) const {
    auto it = j_.find(key);
    if (it == j_.end()) fail(key, "missing (required)");
    return *it;
  }
  std::string str(const std::string& key, bool allow_empty = false) const {
    const json& v = at(key);
    if (!v.is_string()) fail(key, "expected a string, found " + type_name(v));
    std::string s = v.get<std::string>();
    if (s.empty() && !allow_empty) fail(key, "expected a non-empty string");
    return s;
  }
  std::optional<std::string> opt_str(const std::string& key) const {
    const json& v = at(key);
    if (v.is_null()) return std::nullopt;
    if (!v.is_string() || v.get<std::string>().empty())
      fail(key, "expected a non-empty string or null, found " + type_name(v));
    return v.get<std::string>();
  }
  bool boolean(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_boolean()) fail(key, "expected true or false, found " + type_name(v));
    return v.get<bool>();
  }
  std::vector<std::string> strings(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_array()) fail(key, "expected an array of strings, found " + type_name(v));
    std::vector<std::string> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string()) fail(key + "[" + std::to_string(i) + "]", "expected a string, found " + type_name(v[i]));
      out.push_back(v[i].get<std::string>());
    }
    return out;
  }
  Fields sub(const std::string& key) const { return Fields(at(key), path_ + "." + key); }
  const json& raw() const { return j_; }
  const std::string& path() const { return path_; }

 private:
  const json& j_;
  std::string path_;
};

// A compute capability ("8.9"), as archs, ptx_archs and min_arch hold: not
// a target, so no 'a'.
bool is_capability(const std::string& text) {
  auto arch = parse_arch(text);
  return arch && !arch->arch_specific;
}

void require_archs(const Fields& f, const std::string& key, const std::vector<std::string>& archs) {
  for (std::size_t i = 0; i < archs.size(); ++i)
    if (!is_capability(archs[i]))
      f.fail(key + "[" + std::to_string(i) + "]", "'" + archs[i] + "' is not a compute capability like \"8.9\"");
}

void read_families(const Fields& f, BuildInfo& b) {
  Fields fam = f.sub("kernel_families");
  for (const auto& [name, value] : fam.raw().items()) {
    Fields one(value, fam.path() + "." + name);
    BuiltFamily k;
    k.symbol_marker = one.str("symbol_marker");
    bool has_min = one.raw().contains("min_arch"), has_archs = one.raw().contains("archs");
    if (has_min == has_archs)
      one.fail("", has_min ? "has both min_arch and archs; expected exactly one"
                           : "expected min_arch (\"8.0\") or archs ([\"9.0a\"])");
    if (has_min) {
      k.min_arch = one.str("min_arch");
      if (!is_capability(k.min_arch)) one.fail("min_arch", "'" + k.min_arch + "' is not a compute capability");
    } else {
      k.archs = one.strings("archs");
      if (k.archs.empty()) one.fail("archs", "expected at least one target such as \"9.0a\"");
      for (std::size_t i = 0; i < k.archs.size(); ++i)
        if (!parse_arch(k.archs[i]))
          one.fail("archs[" + std::to_string(i) + "]", "'" + k.archs[i] + "' is not a target like \"9.0a\" or \"8.9\"");
    }
    b.kernel_families.emplace(name, std::move(k));
  }
}

}  // namespace

void to_json(json& j, const BuildInfo& b) {
  json families = json::object();
  for (const auto& [name, k] : b.kernel_families) {
    if (k.archs.empty())
      families[name] = {{"min_arch", k.min_arch}, {"symbol_marker", k.symbol_marker}};
    else
      families[name] = {{"archs", k.archs}, {"symbol_marker", k.symbol_marker}};
  }
  auto opt = [](const std::optional<std::string>& s) { return s ? json(*s) : json(nullptr); };
  j = json{{"schema", b.schema},
           {"package", b.package},
           {"version", b.version},
           {"abi_mode", b.abi_mode == wheel::AbiMode::abi3 ? "abi3" : "cpython"},
           {"pythons", b.pythons},
           {"wheel",
            {{"build_tag", opt(b.wheel.build_tag)},
             {"local_version", opt(b.wheel.local_version)},
             {"python_tag", b.wheel.python_tag},
             {"abi_tag", b.wheel.abi_tag},
             {"platform_tag", b.wheel.platform_tag}}},
           {"torch", {{"version", b.torch.version}, {"cxx11_abi", b.torch.cxx11_abi}, {"cuda", b.torch.cuda}}},
           {"cuda", {{"version", b.cuda.version}, {"nvcc", b.cuda.nvcc}}},
           {"archs", b.archs},
           {"ptx_archs", b.ptx_archs},
           {"kernel_families", families},
           {"host_compiler", {{"id", b.host_compiler.id}, {"version", b.host_compiler.version}}},
           {"platform", b.platform},
           {"source_revision", b.source_revision}};
}

void from_json(const json& j, BuildInfo& b) {
  Fields f(j, "build_info");
  const json& schema = f.at("schema");
  if (!schema.is_number_integer() || schema.get<int>() != 1) f.fail("schema", "expected 1, found " + schema.dump());
  b = BuildInfo{};
  b.package = f.str("package");
  b.version = f.str("version");
  std::string abi_mode = f.str("abi_mode");
  if (abi_mode != "abi3" && abi_mode != "cpython")
    f.fail("abi_mode", "expected \"abi3\" or \"cpython\", found \"" + abi_mode + "\"");
  b.abi_mode = abi_mode == "abi3" ? wheel::AbiMode::abi3 : wheel::AbiMode::per_interpreter;
  b.pythons = f.strings("pythons");
  if (b.pythons.empty()) f.fail("pythons", "expected at least one Python version");
  Fields w = f.sub("wheel");
  b.wheel = {w.opt_str("build_tag"), w.opt_str("local_version"), w.str("python_tag"), w.str("abi_tag"),
             w.str("platform_tag")};
  if (b.wheel.build_tag && b.wheel.local_version)
    w.fail("local_version", "expected null when build_tag is set (a wheel uses one scheme)");
  Fields t = f.sub("torch");
  b.torch = {t.str("version"), t.boolean("cxx11_abi"), t.str("cuda")};
  Fields c = f.sub("cuda");
  b.cuda = {c.str("version"), c.str("nvcc")};
  b.archs = f.strings("archs");
  require_archs(f, "archs", b.archs);
  b.ptx_archs = f.strings("ptx_archs");
  require_archs(f, "ptx_archs", b.ptx_archs);
  read_families(f, b);
  Fields hc = f.sub("host_compiler");
  b.host_compiler = {hc.str("id"), hc.str("version")};
  b.platform = f.str("platform");
  b.source_revision = f.str("source_revision");
}

BuildInfo parse_build_info(std::string_view text) {
  // Bounded before parsing: a deep file would overflow the stack of every
  // later copy or dump (common/json_limits.h).
  if (json_depth(text) > kMaxJsonDepth)
    throw BuildInfoError("build_info: nested deeper than " + std::to_string(kMaxJsonDepth) +
                         " levels; expected the record sagebuild writes (4 levels deep)");
  json j = json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded()) throw BuildInfoError("build_info: not valid JSON");
  BuildInfo b;
  from_json(j, b);
  return b;
}

std::string write_build_info(const BuildInfo& b) {
  json j;
  to_json(j, b);  // nlohmann's object keeps keys sorted: the output is canonical
  return j.dump(2) + "\n";
}

}  // namespace sb::distinfo
