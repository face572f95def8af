#include "sagebuild/toolchain/wheel_unpack.h"

#include <zip.h>

#include <fstream>
#include <memory>

#include "sagebuild/common/error.h"

namespace sb::toolchain {

namespace fs = std::filesystem;

namespace {

struct ZipCloser {
  void operator()(zip_t* z) const { zip_discard(z); }
};
struct FileCloser {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};

std::unique_ptr<zip_t, ZipCloser> open_zip(const fs::path& wheel) {
  int err = 0;
  // libzip takes the path as UTF-8 on every platform.
  zip_t* z = zip_open(reinterpret_cast<const char*>(wheel.u8string().c_str()), ZIP_RDONLY, &err);
  if (!z) {
    zip_error_t ze;
    zip_error_init_with_code(&ze, err);
    std::string msg = zip_error_strerror(&ze);
    zip_error_fini(&ze);
    throw IoError("cannot open " + wheel.string() + " as a zip: " + msg);
  }
  return std::unique_ptr<zip_t, ZipCloser>(z);
}

bool safe_name(const std::string& n) {
  if (n.empty() || n[0] == '/' || n.find('\\') != std::string::npos) return false;
  for (const auto& part : fs::path(n))
    if (part == "..") return false;
  return true;
}

}  // namespace

std::size_t unpack_wheel(const fs::path& wheel, const fs::path& dest, const std::vector<UnpackRule>& rules) {
  auto z = open_zip(wheel);
  zip_int64_t n = zip_get_num_entries(z.get(), 0);
  std::size_t written = 0;
  std::vector<char> buf(1 << 20);
  for (zip_int64_t i = 0; i < n; ++i) {
    const char* raw = zip_get_name(z.get(), static_cast<zip_uint64_t>(i), ZIP_FL_ENC_RAW);
    if (!raw) continue;
    std::string name = raw;
    if (name.empty() || name.back() == '/') continue;
    const UnpackRule* rule = nullptr;
    for (const auto& r : rules)
      if (name.rfind(r.prefix, 0) == 0) {
        rule = &r;
        break;
      }
    if (!rule) continue;
    if (!safe_name(name)) throw IoError(wheel.string() + ": refusing unsafe member name " + name);
    std::string rel = name.substr(name.rfind(rule->strip, 0) == 0 ? rule->strip.size() : 0);
    fs::path out = dest / rel;
    fs::create_directories(out.parent_path());
    std::unique_ptr<zip_file_t, FileCloser> f(zip_fopen_index(z.get(), static_cast<zip_uint64_t>(i), 0));
    if (!f) throw IoError(wheel.string() + ": cannot read member " + name);
    std::ofstream o(out, std::ios::binary | std::ios::trunc);
    if (!o) throw IoError("cannot create " + out.string());
    zip_int64_t got;
    while ((got = zip_fread(f.get(), buf.data(), buf.size())) > 0) o.write(buf.data(), got);
    if (got < 0) throw IoError(wheel.string() + ": error inflating " + name);
    o.close();
    if (!o) throw IoError("error writing " + out.string());
    zip_uint8_t opsys = 0;
    zip_uint32_t attr = 0;
    if (zip_file_get_external_attributes(z.get(), static_cast<zip_uint64_t>(i), 0, &opsys, &attr) == 0 &&
        opsys == ZIP_OPSYS_UNIX && ((attr >> 16) & 0111))
      std::filesystem::permissions(
          out,
          std::filesystem::perms::owner_exec | std::filesystem::perms::group_exec | std::filesystem::perms::others_exec,
          std::filesystem::perm_options::add);
    ++written;
  }
  return written;
}

std::string read_wheel_member(const fs::path& wheel, const std::string& name) {
  auto z = open_zip(wheel);
  zip_int64_t idx = zip_name_locate(z.get(), name.c_str(), ZIP_FL_ENC_RAW);
  if (idx < 0) throw IoError(wheel.string() + " has no member " + name);
  std::unique_ptr<zip_file_t, FileCloser> f(zip_fopen_index(z.get(), static_cast<zip_uint64_t>(idx), 0));
  if (!f) throw IoError(wheel.string() + ": cannot read member " + name);
  std::string out;
  char buf[65536];
  zip_int64_t got;
  while ((got = zip_fread(f.get(), buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(got));
  if (got < 0) throw IoError(wheel.string() + ": error inflating " + name);
  return out;
}

}  // namespace sb::toolchain
