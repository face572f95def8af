// Streaming digests for the algorithms RECORD may use (hashlib's names:
// sha256, sha384, sha512, sha3_256, sha3_384, sha3_512, blake2b): one object
// per member, fed chunk by chunk, so hashing never holds a member in memory.
// One implementation per platform: OpenSSL's EVP (digest_openssl.cc; Linux)
// and Windows' CNG (digest_win32.cc: BCrypt, part of every Windows).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace sb {

class Digest {
 public:
  // nullptr when the algorithm is unknown, or not provided on this platform
  // (CNG has no blake2b, and SHA-3 only from Windows 11 24H2).
  static std::unique_ptr<Digest> create(std::string_view algorithm);
  ~Digest();
  void update(const void* data, std::size_t size);
  std::string finish();  // the raw digest bytes; the object starts over

 private:
  struct Impl;
  explicit Digest(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sb
