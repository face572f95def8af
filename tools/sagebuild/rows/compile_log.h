// ninja's output as a person reads it: every line as it comes, except
// ptxas's register-spill warnings (-Xptxas=-warn-spills: one line per kernel
// instantiation that spills, dozens per build), which are counted per compile
// and summarised once ninja is done, their full text kept in a file.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sb::rows {

class CompileLog {
 public:
  explicit CompileLog(std::ostream& out) : out_(out) {}
  // A chunk of ninja's output, cut anywhere.
  void feed(std::string_view chunk);
  // The last line, when the output did not end in a newline.
  void finish();

  // "ptxas: 36 register-spill warnings from 3 compiles (full text: FILE)"
  // and one line per compile with its count; empty when there were none.
  std::string summary(const std::filesystem::path& full_text) const;
  // Every warning held back, each after the compile it came from.
  std::string full_text() const;
  int warnings() const { return total_; }

 private:
  void line(std::string_view l);
  std::ostream& out_;
  std::string partial_;
  std::string edge_;  // the compile whose output follows: ninja's last "[k/n] description"
  std::vector<std::pair<std::string, std::vector<std::string>>> held_;  // per compile, in order
  int total_ = 0;
};

}  // namespace sb::rows
