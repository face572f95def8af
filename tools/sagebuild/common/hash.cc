#include "sagebuild/common/hash.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "sagebuild/common/digest.h"
#include "sagebuild/common/error.h"

namespace sb {

struct Sha256::Impl {
  std::unique_ptr<Digest> digest = Digest::create("sha256");
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) {
  if (!impl_->digest) throw std::runtime_error("cannot initialise SHA-256");
}
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(const void* data, std::size_t size) { impl_->digest->update(data, size); }

Digest256 Sha256::finish() {
  std::string bytes = impl_->digest->finish();
  Digest256 d{};
  std::copy(bytes.begin(), bytes.end(), d.begin());
  return d;
}

Digest256 sha256(std::string_view data) {
  Sha256 h;
  h.update(data);
  return h.finish();
}

Digest256 sha256_file(const std::filesystem::path& path) {
  // std::ifstream takes the path as the OS spells it (UTF-16 on Windows).
  std::ifstream f(path, std::ios::binary);
  if (!f) throw IoError("cannot open " + path.string() + " for reading");
  Sha256 h;
  std::string buf(1 << 20, '\0');
  while (f) {
    f.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (f.gcount() > 0) h.update(buf.data(), static_cast<std::size_t>(f.gcount()));
  }
  if (f.bad()) throw IoError("error reading " + path.string());
  return h.finish();
}

std::string hex(std::span<const std::uint8_t> bytes) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  s.reserve(bytes.size() * 2);
  for (auto b : bytes) {
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

static const char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string urlsafe_b64_nopad(std::span<const std::uint8_t> in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    std::uint32_t v = (in[i] << 16) | (in[i + 1] << 8) | in[i + 2];
    out += kB64[(v >> 18) & 63];
    out += kB64[(v >> 12) & 63];
    out += kB64[(v >> 6) & 63];
    out += kB64[v & 63];
  }
  std::size_t rest = in.size() - i;
  if (rest == 1) {
    std::uint32_t v = in[i] << 16;
    out += kB64[(v >> 18) & 63];
    out += kB64[(v >> 12) & 63];
  } else if (rest == 2) {
    std::uint32_t v = (in[i] << 16) | (in[i + 1] << 8);
    out += kB64[(v >> 18) & 63];
    out += kB64[(v >> 12) & 63];
    out += kB64[(v >> 6) & 63];
  }
  return out;
}

bool decode_urlsafe_b64_nopad(std::string_view text, std::string& out) {
  out.clear();
  if (text.size() % 4 == 1) return false;
  std::uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    int v;
    if (c >= 'A' && c <= 'Z')
      v = c - 'A';
    else if (c >= 'a' && c <= 'z')
      v = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      v = c - '0' + 52;
    else if (c == '-')
      v = 62;
    else if (c == '_')
      v = 63;
    else
      return false;
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xFF);
    }
  }
  // Leftover bits must be zero for a canonical encoding.
  return (acc & ((1u << bits) - 1)) == 0;
}

}  // namespace sb
