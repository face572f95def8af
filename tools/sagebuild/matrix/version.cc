#include "sagebuild/matrix/version.h"

#include <stdexcept>

#include "sagebuild/wheel/build_tag.h"

namespace sb::matrix {

std::optional<DottedVersion> DottedVersion::parse(std::string_view text) {
  DottedVersion v;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = text.find('.', start);
    std::string_view part = text.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (part.empty() || part.size() > 6) return std::nullopt;
    if (part.size() > 1 && part[0] == '0') return std::nullopt;
    int value = 0;
    for (char c : part) {
      if (c < '0' || c > '9') return std::nullopt;
      value = value * 10 + (c - '0');
    }
    v.parts.push_back(value);
    if (dot == std::string_view::npos) return v;
    start = dot + 1;
  }
}

std::strong_ordering DottedVersion::operator<=>(const DottedVersion& other) const {
  std::size_t n = std::max(parts.size(), other.parts.size());
  for (std::size_t i = 0; i < n; ++i) {
    int a = i < parts.size() ? parts[i] : 0;
    int b = i < other.parts.size() ? other.parts[i] : 0;
    if (a != b) return a <=> b;
  }
  return std::strong_ordering::equal;
}

std::optional<CudaVersion> CudaVersion::parse_release(std::string_view text) {
  auto v = DottedVersion::parse(text);
  if (!v || v->parts.size() != 2) return std::nullopt;
  return CudaVersion{v->parts[0], v->parts[1], 0};
}

std::string CudaVersion::release_str() const { return std::to_string(major) + "." + std::to_string(minor); }

std::string CudaVersion::full_str() const { return release_str() + "." + std::to_string(patch); }

wheel::Version CudaVersion::wheel_release() const {
  wheel::Version w;
  w.release = {static_cast<std::uint64_t>(major), static_cast<std::uint64_t>(minor)};
  return w;
}

std::optional<std::string> CudaVersion::code(std::string* why) const {
  return wheel::encode_cuda_code(wheel_release(), why);
}

std::string CudaVersion::tag() const {
  auto tag = wheel::encode_cuda_tag(wheel_release());
  if (!tag) throw std::logic_error("CudaVersion::tag: unchecked CUDA version " + release_str());
  return *tag;
}

namespace {
// A dotted version of `min`..`max` parts, as DottedVersion::parse reads it.
std::optional<std::vector<int>> parts_of(std::string_view text, std::size_t min, std::size_t max) {
  auto v = DottedVersion::parse(text);
  if (!v || v->parts.size() < min || v->parts.size() > max) return std::nullopt;
  return v->parts;
}
}  // namespace

std::optional<TorchVersion> TorchVersion::parse(std::string_view text) {
  auto p = parts_of(text, 2, 3);
  if (!p) return std::nullopt;
  return TorchVersion{(*p)[0], (*p)[1], p->size() == 3 ? (*p)[2] : 0, p->size() == 3};
}

std::optional<TorchVersion> TorchVersion::parse_installed(std::string_view text) {
  const std::size_t plus = text.find('+');
  if (plus != std::string_view::npos && plus + 1 == text.size()) return std::nullopt;  // "2.11.0+": no label
  return parse(text.substr(0, plus));
}

std::string TorchVersion::str() const {
  std::string s = std::to_string(major) + "." + std::to_string(minor);
  return has_patch ? s + "." + std::to_string(patch) : s;
}

wheel::Version TorchVersion::wheel_release() const {
  wheel::Version w;
  w.release = {static_cast<std::uint64_t>(major), static_cast<std::uint64_t>(minor)};
  if (has_patch) w.release.push_back(static_cast<std::uint64_t>(patch));
  return w;
}

std::strong_ordering TorchVersion::operator<=>(const TorchVersion& other) const {
  if (auto c = major <=> other.major; c != 0) return c;
  if (auto c = minor <=> other.minor; c != 0) return c;
  return patch <=> other.patch;
}

std::optional<PythonVersion> PythonVersion::parse(std::string_view text) {
  auto p = parts_of(text, 2, 2);
  if (!p) return std::nullopt;
  return PythonVersion{(*p)[0], (*p)[1]};
}

std::string PythonVersion::str() const { return std::to_string(major) + "." + std::to_string(minor); }

std::string PythonVersion::nodot() const { return std::to_string(major) + std::to_string(minor); }

}  // namespace sb::matrix
