// `sagebuild index` on the input as the one wheel of its directory: the scan
// (name, zip, build_info.json, METADATA), the grouping and every page.  A
// clear error (UsageError, IoError) is fine; anything else is a crash, and so
// is a page whose path would leave the site or JSON that is not UTF-8.
#include <filesystem>
#include <fstream>

#include "sagebuild/common/error.h"
#include "sagebuild/common/os.h"
#include "sagebuild/fuzz/fuzz.h"
#include "sagebuild/fuzz/fuzz_site.h"
#include "sagebuild/index/wheel_scan.h"

namespace {

const std::filesystem::path& wheel_dir() {
  static const std::filesystem::path p = [] {
    std::filesystem::path dir =
        std::filesystem::exists("/dev/shm") ? "/dev/shm" : std::filesystem::temp_directory_path();
    dir /= "sb-fuzz-index-" + std::to_string(sb::process_id());
    std::filesystem::create_directories(dir);
    return dir;
  }();
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sb;
  {
    std::ofstream out(wheel_dir() / "sageattention-2.2.0-21100.130-cp310-abi3-linux_x86_64.whl",
                      std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    fuzz::check_site(index::scan_directory(wheel_dir()));
  } catch (const UsageError&) {
  } catch (const IoError&) {
  }
  return 0;
}
