#include "sagebuild/rows/compile_log.h"

namespace sb::rows {

namespace {

// ninja (not on a smart terminal) prints "[k/n] description" when an edge
// finishes, then that edge's output: the status line names the compile.
bool is_status(std::string_view l) {
  if (l.size() < 5 || l[0] != '[') return false;
  auto close = l.find("] ");
  return close != std::string_view::npos && l.substr(1, close - 1).find('/') != std::string_view::npos;
}

bool is_spill_warning(std::string_view l) {
  return l.rfind("ptxas warning : ", 0) == 0 && l.find("spill") != std::string_view::npos;
}

}  // namespace

void CompileLog::feed(std::string_view chunk) {
  partial_.append(chunk);
  std::size_t start = 0;
  for (auto nl = partial_.find('\n'); nl != std::string::npos; nl = partial_.find('\n', start)) {
    line(std::string_view(partial_).substr(start, nl - start));
    start = nl + 1;
  }
  partial_.erase(0, start);
  out_.flush();
}

void CompileLog::finish() {
  if (!partial_.empty()) line(partial_);
  partial_.clear();
  out_.flush();
}

void CompileLog::line(std::string_view l) {
  if (is_status(l)) edge_ = std::string(l.substr(l.find("] ") + 2));
  if (!is_spill_warning(l)) {
    out_ << l << "\n";
    return;
  }
  if (held_.empty() || held_.back().first != edge_) held_.push_back({edge_, {}});
  held_.back().second.emplace_back(l);
  ++total_;
}

std::string CompileLog::summary(const std::filesystem::path& full_text) const {
  if (total_ == 0) return {};
  std::string s = "ptxas: " + std::to_string(total_) + " register-spill warning" + (total_ == 1 ? "" : "s") + " from " +
                  std::to_string(held_.size()) + " compile" + (held_.size() == 1 ? "" : "s") +
                  " (kernels spilling to local memory; full text: " + full_text.string() + ")\n";
  for (const auto& [edge, lines] : held_)
    s += "  " + std::to_string(lines.size()) + "  " + (edge.empty() ? "(before any compile finished)" : edge) + "\n";
  return s;
}

std::string CompileLog::full_text() const {
  std::string s;
  for (const auto& [edge, lines] : held_) {
    s += "# " + edge + "\n";
    for (const auto& l : lines) s += l + "\n";
  }
  return s;
}

}  // namespace sb::rows
