// common/digest.h through OpenSSL's EVP.
#include <openssl/evp.h>

#include "sagebuild/common/digest.h"

namespace sb {

struct Digest::Impl {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  const EVP_MD* md = nullptr;
  ~Impl() { EVP_MD_CTX_free(ctx); }
};

namespace {

// RECORD writes hashlib's names; OpenSSL spells some of them differently.
const EVP_MD* lookup(std::string_view algo) {
  if (algo == "sha256") return EVP_sha256();
  if (algo == "sha384") return EVP_sha384();
  if (algo == "sha512") return EVP_sha512();
  if (algo == "sha3_256") return EVP_sha3_256();
  if (algo == "sha3_384") return EVP_sha3_384();
  if (algo == "sha3_512") return EVP_sha3_512();
  if (algo == "blake2b") return EVP_blake2b512();
  return nullptr;
}

}  // namespace

Digest::Digest(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Digest::~Digest() = default;

std::unique_ptr<Digest> Digest::create(std::string_view algorithm) {
  auto impl = std::make_unique<Impl>();
  impl->md = lookup(algorithm);
  if (!impl->md || !impl->ctx || EVP_DigestInit_ex(impl->ctx, impl->md, nullptr) != 1) return nullptr;
  return std::unique_ptr<Digest>(new Digest(std::move(impl)));
}

void Digest::update(const void* data, std::size_t size) {
  if (size) EVP_DigestUpdate(impl_->ctx, data, size);
}

std::string Digest::finish() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(impl_->ctx, out, &n);
  EVP_DigestInit_ex(impl_->ctx, impl_->md, nullptr);
  return std::string(reinterpret_cast<char*>(out), n);
}

}  // namespace sb
