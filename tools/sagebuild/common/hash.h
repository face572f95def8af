// SHA-256 (common/digest.h) and the encodings wheels use for digests.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace sb {

using Digest256 = std::array<std::uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;
  void update(const void* data, std::size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  Digest256 finish();  // resets the state for reuse

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

Digest256 sha256(std::string_view data);
Digest256 sha256_file(const std::filesystem::path& path);  // throws IoError

std::string hex(std::span<const std::uint8_t> bytes);
// RFC 4648 section 5 alphabet, '=' padding stripped (RECORD's encoding).
std::string urlsafe_b64_nopad(std::span<const std::uint8_t> bytes);
// Strict decoder for the same encoding; returns false on any invalid char or padding.
bool decode_urlsafe_b64_nopad(std::string_view text, std::string& out);

}  // namespace sb
