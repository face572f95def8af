// What the index knows about one wheel: plain data, filled by wheel_scan.h
// from the archive and read by every page renderer.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace sb::index {

struct IndexedWheel {
  std::filesystem::path source;  // where it was read from; empty for a wheel of a previous site
  // Where it is served, when not from this site's wheels href: a previous
  // release's asset (from that site's manifest.json). Empty: href + filename.
  std::string url;
  std::string filename;         // basename, as it will be served
  std::string project;          // PEP 503 normalized name: "sageattention"
  std::string version;          // PEP 440 normalized: "2.2.0"
  std::string torch_version;    // "2.8.0"
  std::string cuda_version;     // "12.9"
  std::string variant;          // "torch2.8-cu129" (variant.h)
  std::string sha256;           // lowercase hex of the whole file
  std::uint64_t size = 0;       // bytes
  std::string requires_python;  // METADATA Requires-Python, "" when absent
  nlohmann::json build_info;    // <pkg>/build_info.json as shipped; null when absent
};

}  // namespace sb::index
