// Streaming digests for the algorithms RECORD may use (sha256, sha384,
// sha512, sha3_*, blake2b), through OpenSSL EVP: one object per member,
// fed chunk by chunk, so hashing never holds a member in memory.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace sb::verify {

class Digester {
 public:
  // nullptr when OpenSSL has no such digest (the RECORD check reports R4 first).
  static std::unique_ptr<Digester> create(std::string_view record_algo);
  ~Digester();
  void update(const void* data, std::size_t size);
  std::string finish();  // raw digest bytes

 private:
  struct Impl;
  explicit Digester(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sb::verify
