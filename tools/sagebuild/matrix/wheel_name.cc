#include "sagebuild/matrix/wheel_name.h"

#include <stdexcept>

#include "sagebuild/matrix/version.h"

namespace sb::matrix {
namespace {

std::vector<int> release(std::string_view text, std::size_t size) {
  auto v = DottedVersion::parse(text);
  if (!v) throw std::logic_error("wheel_name: not a dotted version: " + std::string(text));
  std::vector<int> parts = v->parts;
  parts.resize(size, 0);
  return parts;
}

// Below 2.10 every component is one digit ("280"); from 2.10 on the code is
// M*10000 + m*100 + p ("21100"), so the length says which rule applies.
std::string torch_code(std::string_view torch) {
  auto p = release(torch, 3);
  if (p[0] < 2 || (p[0] == 2 && p[1] < 10))
    return std::to_string(p[0]) + std::to_string(p[1]) + std::to_string(p[2]);
  return std::to_string(p[0] * 10000 + p[1] * 100 + p[2]);
}

}  // namespace

std::string cuda_tag(std::string_view cuda) {
  auto p = release(cuda, 2);
  // One-digit minors are one digit ("129"); two-digit minors keep both ("1210").
  return "cu" + std::to_string(p[0]) + std::to_string(p[1]);
}

std::string build_tag(std::string_view torch, std::string_view cuda) {
  return torch_code(torch) + "." + cuda_tag(cuda).substr(2);
}

std::string local_version(std::string_view cuda, std::string_view torch) {
  return cuda_tag(cuda) + "torch" + std::string(torch);
}

std::string wheel_filename(std::string_view project, std::string_view version,
                           std::string_view build_tag, std::string_view python_tag,
                           std::string_view abi_tag, std::string_view platform) {
  std::string name;
  for (char c : project) name += (c == '-' || c == '.') ? '_' : c;
  std::string out = name + "-" + std::string(version);
  if (!build_tag.empty()) out += "-" + std::string(build_tag);
  out += "-" + std::string(python_tag) + "-" + std::string(abi_tag) + "-" + std::string(platform);
  return out + ".whl";
}

}  // namespace sb::matrix
