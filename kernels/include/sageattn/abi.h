/*
 * SageAttention kernels: the C ABI's own part, torch-free and CUDA-free (no
 * cuda_runtime.h), so that a host compiler alone can build against it
 * (kernels/src/abi.cu): the status codes and the calling thread's last error,
 * the ABI version, the head-dim and padding helpers.  sageattn.h includes it.
 */
#ifndef SAGEATTN_ABI_H_
#define SAGEATTN_ABI_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 2: per-batch sequence starts and lengths; 3: sa_quant_qkv; 4: head dims to 256; 5: sa_abi_version */
#define SA_ABI_VERSION 5
#define SA_MAX_HEAD_DIM 256 /* the largest head_dim the kernels take (a multiple of 8) */

typedef enum sa_status { SA_OK = 0, SA_ERR_INVALID_ARGUMENT = 1, SA_ERR_UNSUPPORTED = 2, SA_ERR_CUDA = 3 } sa_status;

typedef enum sa_dtype { SA_DTYPE_F16 = 0, SA_DTYPE_BF16 = 1 } sa_dtype;

/* SA_ABI_VERSION of the library (a caller compiled against another header can tell). */
int sa_abi_version(void);
/* The message of the last error returned on the calling thread ("" if none yet). */
const char* sa_last_error_message(void);
const char* sa_status_string(sa_status s);

int sa_padded_head_dim(int head_dim); /* 64, 128, 192, 256, or 0 when unsupported */
int64_t sa_round_up(int64_t n, int64_t tile);

#ifdef __cplusplus
}
#endif
#endif /* SAGEATTN_ABI_H_ */
