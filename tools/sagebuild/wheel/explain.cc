#include "sagebuild/wheel/explain.h"

#include <algorithm>
#include <cctype>

#include "sagebuild/common/text.h"
#include "sagebuild/wheel/build_tag.h"
#include "sagebuild/wheel/filename.h"
#include "sagebuild/wheel/pep440.h"
#include "sagebuild/wheel/platform.h"

namespace sb::wheel {

namespace {

// "312" -> "3.12", "3" -> "3": the version digits of a Python tag.
std::string python_version(std::string_view digits) {
  if (digits.size() == 1) return std::string(digits);
  return std::string(digits.substr(0, 1)) + "." + std::string(digits.substr(1));
}

std::string joined(const std::vector<std::string>& v, std::string_view sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : std::string(sep)) + s;
  return out;
}

// The torch and CUDA parts a build tag or local label decodes into.
void torch_cuda_parts(Explained& e, const TorchCudaVersions& v, const std::string& torch_written,
                      const std::string& cuda_written, const std::string& how) {
  e.parts.push_back({"torch", "PyTorch " + how, torch_written, v.torch.str()});
  e.parts.push_back({"cuda", "CUDA " + how, cuda_written, v.cuda.str()});
}

const char* kBuildTagForm =
    "<torch code>.<CUDA code>, e.g. 280.129 (torch 2.8.0, CUDA 12.9) or 21100.130 (torch 2.11.0, CUDA 13.0)";
const char* kLocalForm = "+cu<CUDA code>torch<torch version>, e.g. +cu128torch2.9.0 (CUDA 12.8, torch 2.9.0)";

void add_build_tag(Explained& e, std::string_view tag) {
  std::string why;
  auto v = decode_build_tag(tag, &why);
  if (!v) {
    e.parts.push_back({"build_tag", "build tag", std::string(tag), why, false});
    e.problems.push_back("build tag '" + std::string(tag) + "': " + why + "; expected " + kBuildTagForm);
    return;
  }
  auto dot = tag.find('.');
  torch_cuda_parts(e, *v, std::string(tag.substr(0, dot)), std::string(tag.substr(dot + 1)), "version tag");
}

void add_local_version(Explained& e, std::string_view label) {
  std::string why;
  auto v = decode_local_version(label, &why);
  std::string written(label.starts_with("+") ? label.substr(1) : label);
  if (!v) {
    e.parts.push_back({"local_version", "local version", "+" + written, why, false});
    e.problems.push_back("local version '+" + written + "': " + why + "; expected " + kLocalForm);
    return;
  }
  torch_cuda_parts(e, *v, "torch" + v->torch.str(), encode_cuda_tag(v->cuda).value_or("cu?"), "(local version)");
}

}  // namespace

std::string describe_python_tag(std::string_view tag) {
  std::size_t digits = tag.find_first_of("0123456789");
  std::string_view impl = tag.substr(0, digits);
  std::string_view number = digits == std::string_view::npos ? std::string_view{} : tag.substr(digits);
  std::string who = impl == "cp"   ? "CPython"
                    : impl == "py" ? "any Python"
                    : impl == "pp" ? "PyPy"
                    : impl == "gp" ? "GraalPy"
                                   : "";
  if (who.empty() || !all_ascii_digits(number)) return "";
  return who + " " + python_version(number) + (impl == "py" && number.size() == 1 ? ".x" : "");
}

std::string describe_abi_tag(std::string_view tag) {
  if (tag == "abi3") return "CPython's stable ABI: one build for its Python tag's version and every later one";
  if (tag == "none") return "no Python ABI (pure Python, or no extension module)";
  if (tag.starts_with("cp") && all_ascii_digits(tag.substr(2)))
    return "CPython " + python_version(tag.substr(2)) + "'s own ABI: that version only";
  if (tag.starts_with("cp") && tag.size() > 3 && tag.back() == 't' && all_ascii_digits(tag.substr(2, tag.size() - 3)))
    return "free-threaded CPython " + python_version(tag.substr(2, tag.size() - 3));
  return "";
}

std::string describe_platform_tag(std::string_view tag) {
  PlatformInfo p = classify_platform(tag);
  std::string v = std::to_string(p.major) + "." + std::to_string(p.minor);
  if (!p.problem.empty()) return "";
  switch (p.family) {
    case PlatformFamily::Any:
      return "any platform";
    case PlatformFamily::Windows:
      return "Windows, " + p.arch;
    case PlatformFamily::Linux:
      return "Linux, " + p.arch + "; installable here, refused by PyPI (a manylinux tag is for publishing)";
    case PlatformFamily::Manylinux:
      return "Linux with glibc >= " + v + ", " + p.arch;
    case PlatformFamily::Musllinux:
      return "Linux with musl >= " + v + ", " + p.arch;
    case PlatformFamily::Macos:
      return "macOS >= " + v + ", " + p.arch;
    default:
      return std::string(to_string(p.family)) + (p.arch.empty() ? "" : ", " + p.arch);
  }
}

Explained explain_wheel_filename(std::string_view filename) {
  Explained e{"wheel file name"};
  ParsedFilename parsed = parse_wheel_filename(filename);
  for (const auto& f : parsed.findings)
    if (f.severity != Severity::Warning)
      e.problems.push_back(f.rule + ": " + f.message + (f.expected.empty() ? "" : "; expected " + f.expected));
  if (!parsed.filename) return e;
  const WheelFilename& w = *parsed.filename;
  e.parts.push_back({"package", "package", w.name + " " + w.version_raw, ""});
  if (w.build_tag)
    add_build_tag(e, *w.build_tag);
  else if (!w.version.local.empty())
    add_local_version(e, w.version.local_str());
  else
    e.notes.push_back("the name records no torch or CUDA (neither a build tag, " + std::string(kBuildTagForm) +
                      ", nor a local version, " + kLocalForm + ")");
  auto tags = [&](const char* key, const char* label, const std::vector<std::string>& written,
                  std::string (*describe)(std::string_view)) {
    std::vector<std::string> words;
    bool known = true;
    for (const auto& t : written) {
      std::string d = describe(t);
      known = known && !d.empty();
      words.push_back(d.empty() ? t + ": not a tag sagebuild knows" : d);
    }
    e.parts.push_back({key, label, joined(written, "."), joined(words, "; "), known});
  };
  tags("python", "Python tag", w.python_tags, describe_python_tag);
  tags("abi", "ABI tag", w.abi_tags, describe_abi_tag);
  tags("platform", "platform tag", w.platform_tags, describe_platform_tag);
  return e;
}

Explained explain_build_tag(std::string_view tag) {
  Explained e{"build tag"};
  add_build_tag(e, tag);
  return e;
}

Explained explain_local_version(std::string_view label) {
  Explained e{"local version"};
  add_local_version(e, label);
  return e;
}

Explained explain_name(std::string_view text) {
  std::string_view base =
      text.substr(text.find_last_of("/\\") == std::string_view::npos ? 0 : text.find_last_of("/\\") + 1);
  if (base.ends_with(".whl") || base.find('-') != std::string_view::npos) return explain_wheel_filename(base);
  if (base.starts_with("+") || base.starts_with("cu") || base.starts_with("CU")) return explain_local_version(base);
  if (!base.empty() && std::isdigit(static_cast<unsigned char>(base[0])) && base.find('+') == std::string_view::npos &&
      base.find_first_not_of("0123456789.") == std::string_view::npos && base.find('.') != std::string_view::npos &&
      base.find('.') == base.rfind('.'))
    return explain_build_tag(base);
  if (auto plus = base.find('+'); plus != std::string_view::npos) {
    std::string why;
    Explained e{"version"};
    if (auto v = parse_version(base, &why)) {
      e.parts.push_back({"version", "version", v->public_str(), ""});
      add_local_version(e, v->local_str());
    } else {
      e.problems.push_back("version '" + std::string(base) + "': " + why +
                           "; expected a PEP 440 version with a local label, e.g. 1.0.0+cu128torch2.9.0");
    }
    return e;
  }
  Explained e{"unknown"};
  e.problems.push_back("'" + std::string(base) +
                       "' is none of the names sagebuild decodes: a wheel file name "
                       "(sageattention-2.2.0-280.129-cp312-cp312-linux_x86_64.whl), a build tag (" +
                       kBuildTagForm + ") or a local version (" + kLocalForm + ")");
  return e;
}

}  // namespace sb::wheel
