// sb_fuzz_seeds OUT SOURCE_DIR CORPUS_DIR [FILE...]: writes a starting
// corpus for every harness into OUT/<harness>/ (scripts/fuzz.sh runs it):
//   - a wheel written by the pack writer, named and laid out like ours
//     (build_info.json, the first library given as the extension), and its
//     dist-info files;
//   - the wheels and zip files of the shared corpus when CORPUS_DIR exists,
//     their dist-info files, and their native libraries;
//   - each FILE: a library (cc / nvcc builds: ELF seeds, and its .nv_fatbin)
//     or a wheel (.whl: the default wheel the main job built, when there is one);
//   - the build matrix.
// Files over kMaxSeed bytes are left out: the fuzzers mutate small inputs fast.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sagebuild/archive/zip_reader.h"
#include "sagebuild/binary/elf.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/common/hash.h"
#include "sagebuild/pack/wheel_writer.h"

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kMaxSeed = 4 << 20;

// A build_info.json verify accepts for the wheel below (torch 2.11, CUDA 13.0, arch 9.0).
const char* kBuildInfo = R"({"schema":1,"package":"sageattention","version":"2.2.0","abi_mode":"abi3",
 "pythons":["3.10","3.11","3.12","3.13","3.14"],"wheel":{"build_tag":"21100.130","local_version":null,
 "python_tag":"cp310","abi_tag":"abi3","platform_tag":"linux_x86_64"},
 "torch":{"version":"2.11.0","cxx11_abi":true,"cuda":"13.0"},"cuda":{"version":"13.0","nvcc":"13.0.88"},
 "archs":["9.0"],"ptx_archs":["9.0"],"kernel_families":{},"host_compiler":{"id":"gcc","version":"12.2.0"},
 "platform":"linux_x86_64","source_revision":"0123456789abcdef"})";

struct Seeds {
  fs::path out;
  int written = 0;

  void add(const std::string& harness, const std::string& bytes) {
    if (bytes.empty() || bytes.size() > kMaxSeed) return;
    fs::create_directories(out / harness);
    // Named by content: the same seed from two places is written once.
    std::ofstream(out / harness / sb::hex(sb::sha256(bytes)).substr(0, 16), std::ios::binary) << bytes;
    ++written;
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// An ELF's .nv_fatbin section, when it has one.
void add_fatbin_of(Seeds& seeds, const std::string& elf_bytes) {
  sb::binary::MemorySource src(elf_bytes);
  sb::Findings ignored;
  auto elf = sb::binary::ElfFile::parse(src, ignored);
  if (!elf) return;
  if (const auto* s = elf->section(".nv_fatbin"); s && s->size <= kMaxSeed) {
    std::string bytes(s->size, '\0');
    if (src.read(s->offset, bytes.data(), bytes.size())) seeds.add("fatbin", bytes);
  }
}

// A wheel as seed for the zip reader and verify, its dist-info files for the
// text parsers, its libraries for the binary readers.
void add_wheel(Seeds& seeds, const fs::path& path) {
  if (fs::file_size(path) > kMaxSeed) return;
  std::string bytes = slurp(path);
  seeds.add("zip", bytes);
  seeds.add("verify", bytes);
  auto zip = sb::zip::Reader::open(path);
  if (!zip->usable()) return;
  const auto& entries = zip->entries();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string& name = entries[i].name;
    std::string harness = ends_with(name, ".dist-info/RECORD")                               ? "record"
                          : ends_with(name, ".dist-info/METADATA")                           ? "metadata"
                          : ends_with(name, ".dist-info/WHEEL")                              ? "metadata"
                          : ends_with(name, ".dist-info/entry_points.txt")                   ? "entry_points"
                          : ends_with(name, ".so") || name.find(".so.") != std::string::npos ? "elf"
                          : ends_with(name, ".pyd") || ends_with(name, ".dll")               ? "pe"
                                                                                             : "";
    if (harness.empty()) continue;
    std::string data, error;
    if (!zip->read_small(i, kMaxSeed, data, error)) continue;
    seeds.add(harness, data);
    if (harness == "elf") add_fatbin_of(seeds, data);
  }
}

fs::path write_our_wheel(const fs::path& dir, const std::vector<fs::path>& libraries) {
  sb::pack::WheelSpec spec;
  spec.name = "sageattention";
  spec.version = *sb::wheel::parse_version("2.2.0");
  spec.build_tag = "21100.130";
  spec.tags = {{"cp310"}, {"abi3"}, {"linux_x86_64"}};
  spec.requires_python = ">=3.10";
  spec.requires_dist = {"torch==2.11.0"};
  std::vector<sb::pack::PayloadFile> payload = {
      {"sageattention/__init__.py", std::string("from . import _C\n"), std::nullopt},
      {"sageattention/build_info.json", std::string(kBuildInfo), std::nullopt}};
  if (!libraries.empty()) payload.push_back({"sageattention/_C.abi3.so", libraries.front(), std::nullopt});
  return sb::pack::write_wheel(spec, payload, {dir, std::nullopt}).path;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: sb_fuzz_seeds OUT SOURCE_DIR CORPUS_DIR [FILE...]\n");
    return 2;
  }
  try {
    Seeds seeds{argv[1]};
    fs::path source = argv[2];
    fs::path corpus = argc > 3 ? fs::path(argv[3]) : fs::path();
    std::vector<fs::path> libraries;
    fs::create_directories(seeds.out);
    for (int i = 4; i < argc; ++i) {
      fs::path file = argv[i];
      if (file.extension() == ".whl") {
        add_wheel(seeds, file);
        continue;
      }
      libraries.push_back(file);
      std::string bytes = slurp(file);
      seeds.add("elf", bytes);
      add_fatbin_of(seeds, bytes);
    }
    add_wheel(seeds, write_our_wheel(seeds.out, libraries));
    seeds.add("matrix", sb::read_file(source / "matrix" / "build-matrix.yaml"));
    std::error_code ec;
    if (!corpus.empty() && fs::is_directory(corpus, ec)) {
      for (auto it = fs::recursive_directory_iterator(corpus, ec); !ec && it != fs::end(it); it.increment(ec)) {
        if (!it->is_regular_file()) continue;
        std::string ext = it->path().extension().string();
        if (ext == ".whl")
          add_wheel(seeds, it->path());
        else if (ext == ".zip" && it->file_size() <= kMaxSeed)
          seeds.add("zip", slurp(it->path()));
      }
    }
    std::printf("%d seeds in %s\n", seeds.written, seeds.out.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sb_fuzz_seeds: %s\n", e.what());
    return 2;
  }
}
