// common/digest.h through Windows' CNG (BCrypt): reusable hash objects, so
// finish() starts the next digest without reopening the provider.
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
// windows.h first: bcrypt.h uses its types.
#include <bcrypt.h>

#include <vector>

#include "sagebuild/common/digest.h"

namespace sb {

struct Digest::Impl {
  BCRYPT_ALG_HANDLE alg = nullptr;
  BCRYPT_HASH_HANDLE hash = nullptr;
  std::vector<unsigned char> out;
  ~Impl() {
    if (hash) BCryptDestroyHash(hash);
    if (alg) BCryptCloseAlgorithmProvider(alg, 0);
  }
};

namespace {

// hashlib's names as CNG's algorithm identifiers; blake2b has none.
const wchar_t* lookup(std::string_view algo) {
  if (algo == "sha256") return L"SHA256";
  if (algo == "sha384") return L"SHA384";
  if (algo == "sha512") return L"SHA512";
  if (algo == "sha3_256") return L"SHA3-256";
  if (algo == "sha3_384") return L"SHA3-384";
  if (algo == "sha3_512") return L"SHA3-512";
  return nullptr;
}

bool ok(NTSTATUS status) { return status >= 0; }

}  // namespace

Digest::Digest(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Digest::~Digest() = default;

std::unique_ptr<Digest> Digest::create(std::string_view algorithm) {
  const wchar_t* id = lookup(algorithm);
  if (!id) return nullptr;
  auto impl = std::make_unique<Impl>();
  DWORD length = 0, got = 0;
  if (!ok(BCryptOpenAlgorithmProvider(&impl->alg, id, nullptr, BCRYPT_HASH_REUSABLE_FLAG)) ||
      !ok(BCryptGetProperty(impl->alg, BCRYPT_HASH_LENGTH, reinterpret_cast<PUCHAR>(&length), sizeof length, &got,
                            0)) ||
      !ok(BCryptCreateHash(impl->alg, &impl->hash, nullptr, 0, nullptr, 0, BCRYPT_HASH_REUSABLE_FLAG)))
    return nullptr;
  impl->out.resize(length);
  return std::unique_ptr<Digest>(new Digest(std::move(impl)));
}

void Digest::update(const void* data, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  while (size > 0) {  // BCryptHashData takes a ULONG length
    ULONG n = size > 0x40000000u ? 0x40000000u : static_cast<ULONG>(size);
    BCryptHashData(impl_->hash, const_cast<PUCHAR>(p), n, 0);
    p += n;
    size -= n;
  }
}

std::string Digest::finish() {
  BCryptFinishHash(impl_->hash, impl_->out.data(), static_cast<ULONG>(impl_->out.size()), 0);
  return std::string(impl_->out.begin(), impl_->out.end());
}

}  // namespace sb
