#include "sagebuild/toolchain/torch.h"

#include <regex>

#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"

namespace sb::toolchain {

namespace fs = std::filesystem;

const std::vector<std::string>& torch_link_libraries(bool stable_abi) {
  static const std::vector<std::string> classic{"c10", "c10_cuda", "torch", "torch_cpu", "torch_cuda"};
  static const std::vector<std::string> stable{"torch_cpu", "torch_cuda"};
  return stable_abi ? stable : classic;
}

std::string TorchInstall::public_version() const { return version.substr(0, version.find('+')); }

std::optional<std::string> parse_version_py(std::string_view text, std::string_view name) {
  const std::regex re("^" + std::string(name) + R"re(\s*(?::[^=\n]*)?=\s*(?:'([^'\n]*)'|"([^"\n]*)"|None)\s*$)re",
                      std::regex::multiline);
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_search(text.begin(), text.end(), m, re)) return std::nullopt;
  if (m[1].matched) return m[1].str();
  if (m[2].matched) return m[2].str();
  return std::nullopt;  // None
}

std::optional<bool> parse_cmake_cxx11_abi(std::string_view text) {
  static const std::regex re(R"(_GLIBCXX_USE_CXX11_ABI=([01]))");
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_search(text.begin(), text.end(), m, re)) return std::nullopt;
  return m[1].str() == "1";
}

std::optional<bool> cxx11_abi_from_library_bytes(std::string_view bytes) {
  // Itanium mangling: new ABI std::string is NSt7__cxx1112basic_string...,
  // the old one is Ss / NSs / basic_string without the __cxx11 namespace.
  if (bytes.find("St7__cxx1112basic_string") != std::string_view::npos) return true;
  if (bytes.find("12basic_stringIcSt11char_traitsIcESaIcEE") != std::string_view::npos) return false;
  return std::nullopt;
}

TorchInstall read_torch_dir(const fs::path& dir) {
  TorchInstall t;
  t.root = dir;
  fs::path vpy = dir / "version.py";
  if (!fs::exists(vpy))
    throw UsageError(dir.string() +
                     " is not a torch installation: no version.py (expected the "
                     "`torch` package directory with include/ and lib/)");
  std::string v = read_file(vpy);
  auto ver = parse_version_py(v, "__version__");
  if (!ver) throw UsageError(vpy.string() + " has no __version__ assignment");
  t.version = *ver;
  t.cuda = parse_version_py(v, "cuda").value_or("");
  if (!fs::exists(dir / "include/torch/library.h"))
    throw UsageError(dir.string() +
                     " has no include/torch/library.h: this torch install lacks "
                     "its C++ headers");
  for (const char* cfg : {"share/cmake/Torch/TorchConfig.cmake", "share/cmake/Caffe2/Caffe2Config.cmake"}) {
    if (!fs::exists(dir / cfg)) continue;
    if (auto abi = parse_cmake_cxx11_abi(read_file(dir / cfg))) {
      t.cxx11_abi = *abi;
      t.abi_source = cfg;
      return t;
    }
  }
  fs::path c10 = dir / "lib/libc10.so";
  if (!fs::exists(c10)) throw UsageError(dir.string() + " has no lib/libc10.so");
  auto abi = cxx11_abi_from_library_bytes(read_file(c10));
  if (!abi)
    throw UsageError("cannot tell the C++ ABI of " + c10.string() +
                     ": no std::string in its symbols and no _GLIBCXX_USE_CXX11_ABI in its cmake files");
  t.cxx11_abi = *abi;
  t.abi_source = "lib/libc10.so symbols";
  return t;
}

}  // namespace sb::toolchain
