// Test-only: a test that reads a folder of ../shared (a fuzz finding's
// reproducers, say) starts with
//   SB_SKIP_WITHOUT_SHARED_DIR(dir);
// which, without that folder, prints the line CTest reports as "Skipped" (as
// SB_SKIP_WITHOUT_CORPUS does, corpus_test.h) and returns.
#pragma once

#include <filesystem>
#include <iostream>

namespace sb::testing {

inline bool shared_dir_present(const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::is_directory(dir, ec);
}

inline void report_shared_dir_skip(const std::filesystem::path& dir) {
  std::cout << "SKIPPED: no " << dir.string() << " (../shared beside the checkout)\n";
}

}  // namespace sb::testing

#define SB_SKIP_WITHOUT_SHARED_DIR(dir)            \
  do {                                             \
    if (!::sb::testing::shared_dir_present(dir)) { \
      ::sb::testing::report_shared_dir_skip(dir);  \
      return;                                      \
    }                                              \
  } while (false)
