// Test helper: small but real wheels (METADATA, WHEEL, build_info.json)
// written with the project's zip writer, and IndexedWheel values for the
// renderers.  Used by the index tests only.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "sagebuild/archive/zip_writer.h"
#include "sagebuild/index/model.h"

namespace sb::index::testing {

// A build_info.json that distinfo::parse_build_info accepts.
inline std::string build_info_json(const std::string& torch, const std::string& cuda) {
  return R"({"schema":1,"package":"sageattention","version":"2.2.0","abi_mode":"abi3",
    "pythons":["3.9"],"wheel":{"build_tag":null,"local_version":null,"python_tag":"cp39",
    "abi_tag":"abi3","platform_tag":"linux_x86_64"},
    "torch":{"version":")" +
         torch + R"(","cxx11_abi":true,"cuda":")" + cuda + R"("},
    "cuda":{"version":")" +
         cuda + R"(","nvcc":")" + cuda + R"(.0"},
    "archs":["8.0"],"ptx_archs":["8.0"],"kernel_families":{},
    "host_compiler":{"id":"gcc","version":"13.2.0"},"platform":"linux_x86_64",
    "source_revision":"0123456789abcdef"})";
}

// Writes dir/filename with METADATA (Requires-Python when given) and, when
// `build_info` is set, sageattention/build_info.json.
inline std::filesystem::path write_wheel(const std::filesystem::path& dir, const std::string& filename,
                                         const std::optional<std::string>& build_info,
                                         const std::string& requires_python = ">=3.9") {
  std::filesystem::create_directories(dir);
  std::filesystem::path path = dir / filename;
  zip::Writer w(path);
  w.add_file("sageattention/__init__.py", "", 0644);
  if (build_info) w.add_file("sageattention/build_info.json", *build_info, 0644);
  std::string meta = "Metadata-Version: 2.4\nName: sageattention\nVersion: 2.2.0\n";
  if (!requires_python.empty()) meta += "Requires-Python: " + requires_python + "\n";
  w.add_file("sageattention-2.2.0.dist-info/METADATA", meta, 0644);
  w.add_file("sageattention-2.2.0.dist-info/WHEEL",
             "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: cp39-abi3-linux_x86_64\n", 0644);
  w.commit();
  return path;
}

inline IndexedWheel wheel(std::string filename, std::string variant, std::string torch, std::string cuda,
                          std::string project = "sageattention") {
  IndexedWheel w;
  w.filename = std::move(filename);
  w.project = std::move(project);
  w.version = "2.2.0";
  w.variant = std::move(variant);
  w.torch_version = std::move(torch);
  w.cuda_version = std::move(cuda);
  w.sha256 = std::string(64, 'a');
  w.size = 1234;
  w.requires_python = ">=3.9";
  return w;
}

// A fresh, empty directory under the system temp dir.
inline std::filesystem::path fresh_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("sb_index_test_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace sb::index::testing
