#include "sagebuild/archive/zip_writer.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <unordered_set>

#include <zip.h>

#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"

namespace sb::zip {

namespace {

constexpr std::int64_t kDosLast = 4354819198;  // 2107-12-31T23:59:58Z
constexpr std::uint32_t kRegular = 0100000;

std::string libzip_error(zip_t* za) { return zip_error_strerror(zip_get_error(za)); }

// Civil date from days since 1970-01-01 (proleptic Gregorian, UTC), so the
// result never depends on the machine's time zone (unlike libzip's
// zip_file_set_mtime, which goes through localtime).
void civil_from_days(std::int64_t z, int& y, unsigned& m, unsigned& d) {
  z += 719468;
  std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  auto doe = static_cast<unsigned>(z - era * 146097);
  unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y = static_cast<int>(yoe + era * 400 + (m <= 2));
}

}  // namespace

DosDateTime to_dos_datetime(std::int64_t t) {
  t = std::clamp(t, kDosEpoch, kDosLast);
  int y;
  unsigned m, d;
  civil_from_days(t / 86400, y, m, d);
  auto secs = static_cast<unsigned>(t % 86400);
  DosDateTime out;
  out.date = static_cast<std::uint16_t>(((y - 1980) << 9) | (m << 5) | d);
  out.time = static_cast<std::uint16_t>(((secs / 3600) << 11) | (((secs / 60) % 60) << 5) | ((secs % 60) / 2));
  return out;
}

struct Writer::Impl {
  AtomicOutput out;
  WriterOptions options;
  zip_t* za = nullptr;
  std::unordered_set<std::string> names;
  explicit Impl(std::filesystem::path dest) : out(std::move(dest)) {}

  void add(const std::string& name, zip_source_t* src, std::uint32_t mode);
  [[noreturn]] void fail(const std::string& what) {
    throw IoError(what + " (writing " + out.destination().string() + "): " + libzip_error(za));
  }
};

Writer::Writer(std::filesystem::path destination, WriterOptions options)
    : impl_(std::make_unique<Impl>(std::move(destination))) {
  impl_->options = options;
  int err = 0;
  impl_->za = zip_open(impl_->out.temp_path().string().c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  if (!impl_->za) {
    zip_error_t e;
    zip_error_init_with_code(&e, err);
    std::string msg = zip_error_strerror(&e);
    zip_error_fini(&e);
    throw IoError("cannot create " + impl_->out.temp_path().string() + ": " + msg);
  }
}

Writer::~Writer() {
  if (impl_ && impl_->za) zip_discard(impl_->za);  // writes nothing
}

void Writer::Impl::add(const std::string& name, zip_source_t* src, std::uint32_t mode) {
  if (!src) fail("cannot create a source for '" + name + "'");
  zip_int64_t idx = zip_file_add(za, name.c_str(), src, ZIP_FL_ENC_UTF_8);
  if (idx < 0) {
    zip_source_free(src);
    fail("cannot add '" + name + "'");
  }
  auto i = static_cast<zip_uint64_t>(idx);
  DosDateTime dos = to_dos_datetime(options.mtime);
  if (zip_file_set_dostime(za, i, dos.time, dos.date, 0) != 0 ||
      zip_file_set_external_attributes(za, i, 0, ZIP_OPSYS_UNIX, (kRegular | mode) << 16) != 0 ||
      zip_set_file_compression(za, i, ZIP_CM_DEFLATE, static_cast<zip_uint32_t>(options.deflate_level)) != 0)
    fail("cannot set the attributes of '" + name + "'");
  // libzip may carry extra fields over from a source; none may vary.
  if (zip_file_extra_field_delete(za, i, ZIP_EXTRA_FIELD_ALL, ZIP_FL_LOCAL | ZIP_FL_CENTRAL) != 0)
    fail("cannot strip the extra fields of '" + name + "'");
}

static void check_entry(std::unordered_set<std::string>& names, const std::string& name, std::uint32_t mode) {
  if (mode > 0777)
    throw UsageError("mode " + std::to_string(mode) + " for '" + name +
                     "' is not a permission mask (expected e.g. 0644 or 0755)");
  if (name.empty() || name.back() == '/')
    throw UsageError("'" + name + "' is not a file name (expected a non-empty path not ending in '/')");
  if (!names.insert(name).second) throw UsageError("'" + name + "' added twice (expected each member name once)");
}

void Writer::add_file(std::string name, std::string_view data, std::uint32_t mode) {
  check_entry(impl_->names, name, mode);
  // libzip reads sources at zip_close(): hand it a copy it frees itself.
  void* copy = std::malloc(std::max<std::size_t>(data.size(), 1));
  if (!copy) throw IoError("out of memory copying '" + name + "'");
  if (!data.empty()) std::memcpy(copy, data.data(), data.size());
  zip_source_t* src = zip_source_buffer(impl_->za, copy, data.size(), 1);
  if (!src) std::free(copy);
  impl_->add(name, src, mode);
}

void Writer::add_file_from_disk(std::string name, const std::filesystem::path& src, std::uint32_t mode) {
  check_entry(impl_->names, name, mode);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(src, ec))
    throw IoError("cannot add '" + name + "': " + src.string() + " is not a readable regular file");
  impl_->add(name, zip_source_file(impl_->za, src.string().c_str(), 0, -1), mode);
}

void Writer::commit() {
  if (!impl_->za) throw IoError("commit() called twice for " + impl_->out.destination().string());
  if (zip_close(impl_->za) != 0) impl_->fail("cannot write the archive");
  impl_->za = nullptr;
  impl_->out.commit();
}

}  // namespace sb::zip
