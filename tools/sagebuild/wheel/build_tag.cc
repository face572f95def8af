// The torch/CUDA encodings described in build_tag.h. Decoders accept only
// the canonical spelling of each code, so that decode(encode(x)) == x and
// encode(decode(s)) == s for every accepted s.
#include "sagebuild/wheel/build_tag.h"

#include <algorithm>

#include "sagebuild/common/error.h"
#include "sagebuild/common/text.h"

namespace sb::wheel {
namespace {

// torch 2.10 is where the legacy one-digit-per-component code stops working.
const Version kFirstPaddedTorch = [] {
  Version v;
  v.release = {2, 10, 0};
  return v;
}();

// Records why and yields the "no value" of the optional-returning callers.
std::nullopt_t fail(std::string* why, std::string message) {
  set_why(why, std::move(message));
  return std::nullopt;
}

std::uint64_t to_number(std::string_view digits) { return std::stoull(std::string(digits)); }

std::string pad2(std::uint64_t n) { return (n < 10 ? "0" : "") + std::to_string(n); }

Version release_version(std::vector<std::uint64_t> release) {
  Version v;
  v.release = std::move(release);
  return v;
}

// Only a plain release can be encoded; `what` names it in the message.
bool plain_release(const Version& v, std::size_t max_parts, std::string_view what, std::string* why) {
  if (v.epoch != 0 || v.pre || v.post || v.dev || !v.local.empty()) {
    fail(why, std::string(what) + " version '" + v.str() +
                  "' is not a plain release; expected e.g. 2.8.0 (no pre/post/dev/local part)");
    return false;
  }
  if (v.release.empty() || v.release.size() > max_parts) {
    fail(why, std::string(what) + " version '" + v.str() + "' has " + std::to_string(v.release.size()) +
                  " components; expected 1 to " + std::to_string(max_parts));
    return false;
  }
  return true;
}

std::vector<std::uint64_t> padded(const Version& v, std::size_t n) {
  auto r = v.release;
  r.resize(n, 0);
  return r;
}

std::optional<std::string> encode_torch_code(const Version& torch, std::string* why) {
  if (!plain_release(torch, 3, "torch", why)) return std::nullopt;
  auto r = padded(torch, 3);
  std::string name = std::to_string(r[0]) + "." + std::to_string(r[1]) + "." + std::to_string(r[2]);
  if (torch < kFirstPaddedTorch) {
    if (r[0] > 9 || r[1] > 9 || r[2] > 9)
      return fail(why, "torch " + name +
                           " (before 2.10) has a component above 9, which the "
                           "legacy 3-digit build-tag code cannot hold");
    return std::to_string(r[0]) + std::to_string(r[1]) + std::to_string(r[2]);
  }
  if (r[1] > 99 || r[2] > 99)
    return fail(why, "torch " + name + ": minor and patch must be below 100 for the build-tag code");
  return std::to_string(r[0]) + pad2(r[1]) + pad2(r[2]);
}

std::optional<Version> decode_torch_code(std::string_view code, std::string* why) {
  std::string c(code);
  // In the 3-digit form each digit is a component, so "081" (torch 0.8.1) is
  // fine; a longer code never starts with '0' (its major is at least 2).
  if (!all_ascii_digits(code) || (code.size() != 3 && code.front() == '0'))
    return fail(why, "torch code '" + c + "': expected digits without a leading zero");
  if (code.size() == 3) {
    Version v =
        release_version({to_number(code.substr(0, 1)), to_number(code.substr(1, 1)), to_number(code.substr(2, 1))});
    if (v >= kFirstPaddedTorch)
      return fail(why, "torch code '" + c + "' is not canonical: torch " + v.str() + " is written " +
                           *encode_torch_code(v, nullptr));
    return v;
  }
  if (code.size() < 5 || code.size() > 10)
    return fail(why, "torch code '" + c + "' has " + std::to_string(code.size()) +
                         " digits; expected 3 (torch < 2.10, e.g. 280) or 5+ (e.g. 21100 for 2.11.0)");
  std::size_t m = code.size() - 4;
  Version v =
      release_version({to_number(code.substr(0, m)), to_number(code.substr(m, 2)), to_number(code.substr(m + 2, 2))});
  if (v < kFirstPaddedTorch) {
    std::string canonical = encode_torch_code(v, nullptr).value_or("(not encodable)");
    return fail(why, "torch code '" + c + "' is not canonical: torch " + v.str() + " is written " + canonical);
  }
  return v;
}

}  // namespace

std::optional<std::string> encode_cuda_code(const Version& cuda, std::string* why) {
  if (!plain_release(cuda, 2, "CUDA", why)) return std::nullopt;
  auto r = padded(cuda, 2);
  if (r[0] < 10 || r[0] > 99 || r[1] > 99)
    return fail(why, "CUDA " + cuda.str() + ": expected major 10..99 and minor 0..99");
  return std::to_string(r[0]) + (r[1] < 10 ? std::to_string(r[1]) : pad2(r[1]));
}

std::optional<std::string> encode_cuda_tag(const Version& cuda, std::string* why) {
  auto c = encode_cuda_code(cuda, why);
  if (!c) return std::nullopt;
  return "cu" + *c;
}

std::optional<Version> decode_cuda_code(std::string_view code, std::string* why) {
  std::string c(code);
  if (!all_ascii_digits(code) || code.front() == '0' || (code.size() != 3 && code.size() != 4))
    return fail(why, "CUDA code '" + c + "': expected 3 digits (12.9 -> 129) or 4 (12.10 -> 1210)");
  Version v = release_version({to_number(code.substr(0, 2)), to_number(code.substr(2))});
  if (code.size() == 4 && v.release[1] < 10)
    return fail(why, "CUDA code '" + c + "' is not canonical: CUDA " + v.str() + " is written " +
                         *encode_cuda_code(v, nullptr));
  return v;
}

std::optional<std::string> encode_build_tag(const Version& torch, const Version& cuda, std::string* why) {
  auto t = encode_torch_code(torch, why);
  if (!t) return std::nullopt;
  auto c = encode_cuda_code(cuda, why);
  if (!c) return std::nullopt;
  return *t + "." + *c;
}

std::optional<TorchCudaVersions> decode_build_tag(std::string_view tag, std::string* why) {
  std::size_t dot = tag.find('.');
  if (dot == std::string_view::npos || tag.find('.', dot + 1) != std::string_view::npos)
    return fail(why, "build tag '" + std::string(tag) + "': expected <torch code>.<cuda code>, e.g. 280.129");
  auto torch = decode_torch_code(tag.substr(0, dot), why);
  if (!torch) return std::nullopt;
  auto cuda = decode_cuda_code(tag.substr(dot + 1), why);
  if (!cuda) return std::nullopt;
  return TorchCudaVersions{*torch, *cuda};
}

std::optional<std::string> encode_local_version(const Version& cuda, const Version& torch, std::string* why) {
  auto c = encode_cuda_tag(cuda, why);
  if (!c || !plain_release(torch, 3, "torch", why)) return std::nullopt;
  return *c + "torch" + release_version(padded(torch, 3)).str();
}

std::optional<TorchCudaVersions> decode_local_version(std::string_view local, std::string* why) {
  std::string_view label = local.substr(!local.empty() && local.front() == '+' ? 1 : 0);
  // Let PEP 440 normalize the spelling (case, '-'/'_' separators) first.
  auto parsed = parse_version("0+" + std::string(label));
  std::string norm = parsed ? parsed->local_str() : std::string();
  std::size_t t = norm.find("torch");
  if (!parsed || norm.substr(0, 2) != "cu" || t == std::string::npos)
    return fail(
        why, "local version '" + std::string(local) + "': expected cu<cuda code>torch<version>, e.g. cu128torch2.9.0");
  auto cuda = decode_cuda_code(std::string_view(norm).substr(2, t - 2), why);
  if (!cuda) return std::nullopt;
  std::string torch_text = norm.substr(t + 5);
  auto torch = parse_version(torch_text);
  if (!torch || !plain_release(*torch, 3, "torch", why)) {
    if (!torch) fail(why, "local version '" + std::string(local) + "': '" + torch_text + "' is not a torch version");
    return std::nullopt;
  }
  TorchCudaVersions info{release_version(padded(*torch, 3)), *cuda};
  if (encode_local_version(info.cuda, info.torch) != norm)
    return fail(why, "local version '" + std::string(local) + "' is not canonical; expected '" +
                         *encode_local_version(info.cuda, info.torch) + "'");
  return info;
}

}  // namespace sb::wheel
