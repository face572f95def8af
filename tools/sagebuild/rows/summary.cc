#include "sagebuild/rows/summary.h"

#include <algorithm>
#include <cstdio>

namespace sb::rows {

std::string human_size(std::uint64_t b) {
  char buf[32];
  if (b < 1024)
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(b));
  else if (b < (1u << 20))
    std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024.0);
  else if (b < (1ull << 30))
    std::snprintf(buf, sizeof buf, "%.1f MiB", b / 1048576.0);
  else
    std::snprintf(buf, sizeof buf, "%.2f GiB", b / 1073741824.0);
  return buf;
}

namespace {

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1fs", s);
  return buf;
}

std::vector<std::vector<std::string>> cells(const std::vector<RowResult>& rows) {
  std::vector<std::vector<std::string>> out;
  for (const auto& r : rows)
    out.push_back({r.row_id, r.ok ? r.wheel.filename().string() : "-", r.ok ? human_size(r.size) : "-",
                   join(r.archs, " "), seconds(r.seconds), r.ok ? "ok" : "FAILED (" + r.stage + ")"});
  return out;
}

const std::vector<std::string> kHeader = {"row", "wheel", "size", "archs", "time", "result"};

}  // namespace

std::string format_table(const std::vector<RowResult>& rows) {
  auto body = cells(rows);
  std::vector<std::size_t> w(kHeader.size());
  for (std::size_t i = 0; i < kHeader.size(); ++i) w[i] = kHeader[i].size();
  for (const auto& r : body)
    for (std::size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], r[i].size());
  auto line = [&](const std::vector<std::string>& c) {
    std::string s;
    for (std::size_t i = 0; i < c.size(); ++i) {
      s += c[i];
      if (i + 1 < c.size()) s += std::string(w[i] - c[i].size() + 2, ' ');
    }
    return s + "\n";
  };
  std::string s = line(kHeader);
  for (const auto& r : body) s += line(r);
  for (const auto& r : rows)
    if (!r.ok) s += "\n" + r.row_id + ": " + r.error + "\n";
  return s;
}

std::string format_markdown(const std::vector<RowResult>& rows) {
  auto esc = [](std::string s) {
    std::string o;
    for (char c : s) o += c == '|' ? std::string("\\|") : std::string(1, c);
    return o;
  };
  std::string s = "| torch | CUDA | Python | platform | wheel | time | result |\n|---|---|---|---|---|---|---|\n";
  for (const auto& r : rows) {
    std::vector<std::string> c = {r.torch,
                                  r.cuda,
                                  r.python,
                                  r.platform,
                                  r.ok ? "`" + r.wheel.filename().string() + "`" : "`" + r.row_id + "`",
                                  seconds(r.seconds),
                                  r.ok ? "ok" : "FAILED (" + r.stage + ")"};
    s += "|";
    for (const auto& x : c) s.append(" ").append(esc(x)).append(" |");
    s += "\n";
  }
  for (const auto& r : rows)
    if (!r.ok) s += "\n**" + esc(r.row_id) + "** failed in " + r.stage + ": `" + esc(r.error.substr(0, 500)) + "`\n";
  return s;
}

nlohmann::json to_json(const std::vector<RowResult>& rows, const std::string& profile) {
  nlohmann::json j;
  j["profile"] = profile;
  j["ok"] = std::all_of(rows.begin(), rows.end(), [](const RowResult& r) { return r.ok; });
  j["rows"] = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json o = {{"row", r.row_id},
                        {"ok", r.ok},
                        {"stage", r.stage},
                        {"error", r.error},
                        {"wheel", r.wheel.string()},
                        {"size", r.size},
                        {"sha256", r.sha256},
                        {"archs", r.archs},
                        {"kernel_families", r.families},
                        {"seconds", r.seconds},
                        {"kernels_cached", r.kernels_cached},
                        {"kernels_compiled", r.kernels_compiled},
                        {"smoke", r.smoke},
                        {"platform_tag", r.platform_tag},
                        {"findings", r.findings}};
    j["rows"].push_back(std::move(o));
  }
  return j;
}

}  // namespace sb::rows
