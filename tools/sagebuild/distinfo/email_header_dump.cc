// Test helper, not shipped: prints how parse_email_header reads the bytes on
// stdin, as JSON, so tests/verify/test_metadata_reading.py can compare it
// with Python's email parser and packaging on generated METADATA texts.
#include <cstdio>
#include <iostream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "sagebuild/distinfo/email_header.h"

int main() {
  std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  sb::distinfo::EmailHeader h = sb::distinfo::parse_email_header(text);
  nlohmann::json fields = nlohmann::json::array(), problems = nlohmann::json::array();
  for (const auto& f : h.fields) fields.push_back({f.name, f.value});
  for (const auto& p : h.problems) problems.push_back({p.line, p.message});
  nlohmann::json out = {{"fields", fields}, {"body", h.body}, {"problems", problems}, {"utf8", h.utf8}};
  std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  return 0;
}
