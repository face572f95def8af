// Test-only: where the shared wheel corpus is, and how a test that needs it
// skips when it is absent.  The corpus (../shared/wheel-corpus beside the
// checkout, or -DSAGEBUILD_CORPUS_DIR=...) is not part of the repository: a
// user's clone lacks it, CI has it.  Such a test starts with
//   SB_SKIP_WITHOUT_CORPUS();
// which, without the corpus, prints a line CTest's SKIP_REGULAR_EXPRESSION
// (tools/sagebuild/CMakeLists.txt) reports as "Skipped", and returns.
// (Catch2 v2, Debian's, has no SKIP() of its own.)
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <iostream>

namespace sb::testing {

inline std::filesystem::path corpus_dir() { return SAGEBUILD_CORPUS_DIR; }

inline bool corpus_present() {
  std::error_code ec;
  return std::filesystem::is_regular_file(corpus_dir() / "MANIFEST.tsv", ec);
}

inline void report_corpus_skip() {
  std::cout << "SKIPPED: the shared wheel corpus is not at " << corpus_dir().string()
            << " (../shared/wheel-corpus beside the checkout, or configure with "
               "-DSAGEBUILD_CORPUS_DIR=DIR); this test needs it, CI runs it\n";
}

}  // namespace sb::testing

#define SB_SKIP_WITHOUT_CORPUS()            \
  do {                                      \
    if (!::sb::testing::corpus_present()) { \
      ::sb::testing::report_corpus_skip();  \
      return;                               \
    }                                       \
  } while (false)
