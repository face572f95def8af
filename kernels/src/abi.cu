// The C ABI's own part (sageattn/abi.h): the calling thread's last error,
// status names, the ABI version, the head-dim and padding helpers.  Host code
// only, built with the always-built quant family (families.json); it includes
// no CUDA header, so a host compiler builds it as well.
#include <cstdarg>
#include <cstdio>
#include "sageattn/abi.h"

namespace sa {

static thread_local char g_err[1024] = "";

// Declared in common.cuh: stores the message, returns s.
sa_status set_error(sa_status s, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_err, sizeof(g_err), fmt, ap);
  va_end(ap);
  return s;
}

}  // namespace sa

extern "C" {

int sa_abi_version(void) { return SA_ABI_VERSION; }

const char* sa_last_error_message(void) { return sa::g_err; }

const char* sa_status_string(sa_status s) {
  switch (s) {
    case SA_OK:
      return "ok";
    case SA_ERR_INVALID_ARGUMENT:
      return "invalid argument";
    case SA_ERR_UNSUPPORTED:
      return "unsupported";
    case SA_ERR_CUDA:
      return "CUDA error";
  }
  return "unknown status";
}

int sa_padded_head_dim(int head_dim) {
  if (head_dim <= 0 || head_dim > SA_MAX_HEAD_DIM) return 0;
  return head_dim <= 64 ? 64 : head_dim <= 128 ? 128 : head_dim <= 192 ? 192 : 256;
}

int64_t sa_round_up(int64_t n, int64_t tile) { return (n + tile - 1) / tile * tile; }

}  // extern "C"
