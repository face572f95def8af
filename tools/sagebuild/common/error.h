// Errors that stop a command (as opposed to findings, which are reported).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace sb {

// Where in a text input something was found (1-based; 0 = unknown).
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  std::string str() const;  // "file:line:column" (omits unknown parts)
};

// Bad command-line usage: exit code 2.
// The `std::string* why` out-parameter of the parsers that return an empty
// std::optional on bad input: records the reason when the caller asked for it.
inline void set_why(std::string* why, std::string message) {
  if (why) *why = std::move(message);
}

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A file could not be read or written: exit code 2.
class IoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad configuration (the build matrix, ...), with the place it was found.
class ConfigError : public std::runtime_error {
 public:
  ConfigError(SourceLocation where, const std::string& message);
  const SourceLocation& where() const { return where_; }
  const std::string& bare_message() const { return bare_; }

 private:
  SourceLocation where_;
  std::string bare_;
};

}  // namespace sb
