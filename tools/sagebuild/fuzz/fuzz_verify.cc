// The whole of `sagebuild verify` on the input as a wheel named like ours
// (so the build-info, binary and CUDA rules run too), both report formats.
// The JSON is dumped strictly (no replacement of invalid UTF-8): the report
// itself must never hand the JSON writer bytes it cannot write.
#include <filesystem>
#include <fstream>

#include "sagebuild/common/os.h"
#include "sagebuild/fuzz/fuzz.h"
#include "sagebuild/verify/verify.h"

namespace {

const std::filesystem::path& wheel_path() {
  static const std::filesystem::path p = [] {
    std::filesystem::path dir =
        std::filesystem::exists("/dev/shm") ? "/dev/shm" : std::filesystem::temp_directory_path();
    dir /= "sb-fuzz-verify-" + std::to_string(sb::process_id());
    std::filesystem::create_directories(dir);
    return dir / "sageattention-2.2.0-21100.130-cp310-abi3-linux_x86_64.whl";
  }();
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sb;
  {
    std::ofstream out(wheel_path(), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  verify::Options options;
  options.policy_dir = verify::default_policy_dir();
  verify::Report r = verify::verify_wheel(wheel_path(), options);
  fuzz::check_bounded(r.findings);
  verify::format_human(r, false);
  verify::to_json(r, false).dump(2);  // throws (a crash here) on bytes that are not UTF-8
  return 0;
}
