#include "sagebuild/verify/digester.h"

#include <openssl/evp.h>

namespace sb::verify {

struct Digester::Impl {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~Impl() { EVP_MD_CTX_free(ctx); }
};

// RECORD writes hashlib's names; OpenSSL spells some of them differently.
static const EVP_MD* lookup(std::string_view algo) {
  if (algo == "sha256") return EVP_sha256();
  if (algo == "sha384") return EVP_sha384();
  if (algo == "sha512") return EVP_sha512();
  if (algo == "sha3_256") return EVP_sha3_256();
  if (algo == "sha3_384") return EVP_sha3_384();
  if (algo == "sha3_512") return EVP_sha3_512();
  if (algo == "blake2b") return EVP_blake2b512();
  return nullptr;
}

Digester::Digester(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Digester::~Digester() = default;

std::unique_ptr<Digester> Digester::create(std::string_view record_algo) {
  const EVP_MD* md = lookup(record_algo);
  if (!md) return nullptr;
  auto impl = std::make_unique<Impl>();
  if (!impl->ctx || EVP_DigestInit_ex(impl->ctx, md, nullptr) != 1) return nullptr;
  return std::unique_ptr<Digester>(new Digester(std::move(impl)));
}

void Digester::update(const void* data, std::size_t size) {
  if (size) EVP_DigestUpdate(impl_->ctx, data, size);
}

std::string Digester::finish() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(impl_->ctx, out, &n);
  return std::string(reinterpret_cast<char*>(out), n);
}

}  // namespace sb::verify
