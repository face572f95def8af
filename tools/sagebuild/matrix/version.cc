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

std::strong_ordering compare_versions(std::string_view a, std::string_view b) {
  auto va = DottedVersion::parse(a);
  auto vb = DottedVersion::parse(b);
  // Callers only compare validated versions; a failure here is a bug.
  if (!va || !vb) throw std::logic_error("compare_versions: not a dotted version");
  return *va <=> *vb;
}

bool version_less(std::string_view a, std::string_view b) { return compare_versions(a, b) < 0; }

std::string version_digits(std::string_view text) {
  std::string out;
  for (char c : text)
    if (c != '.') out += c;
  return out;
}

}  // namespace sb::matrix
