"""The dense public functions: upstream SageAttention's names and signatures.

Each turns its call into an ``_args.Call`` (every accepted spelling: upstream's,
SDPA's) and an ``_args.Options`` (what runs), then ``_dispatch.run_call`` runs it.
"""
from __future__ import annotations

from . import _args
from ._dispatch import run_call
_SDPA_DOC = """
    SDPA's arguments are accepted too, so ``torch.nn.functional.scaled_dot_product_attention = {fn}``
    works for keyword calls: ``query``/``key``/``value`` (aliases of q/k/v), ``attn_mask``,
    ``dropout_p`` (must be 0: ValueError otherwise), ``scale`` (= sm_scale; both given and different:
    ValueError) and ``enable_gqa`` (GQA runs whenever q_heads % kv_heads == 0).  A fourth positional
    argument that is a tensor or None is SDPA's ``attn_mask``.

    attn_mask: key-padding masks run natively: bool (True = attend) or additive (0 = attend,
    <= -1000 such as -inf = masked), broadcastable to [batch, q_heads, q_len, kv_len] ([B, 1, 1, Nk]
    typically), the same keys for every head and query row, one contiguous range of attended keys
    per batch element (right or left padding).  Checking it costs one host synchronisation.  Any
    other mask, and attn_mask with is_causal=True, raise ValueError naming attn_mask: a mask is
    never ignored, so a caller's fallback to torch SDPA takes over.  See sageattention.masks.
    Causal masking is top-left aligned (query i sees keys j <= i), as SDPA's is_causal.

    flash-attn's keywords, as yunchang and xDiT pass them: ``softmax_scale`` (= sm_scale) and
    ``causal`` (= is_causal) are honoured (both spellings with different values: ValueError);
    ``window_size=(-1, -1)``, ``softcap=0.0``, ``alibi_slopes=None``, ``return_softmax=False``,
    ``return_attn_probs=False`` and ``deterministic`` (either value: flash-attn's flag picks its
    backward's algorithm; the opted-in backward here is torch SDPA's, which follows
    torch.use_deterministic_algorithms) are accepted; any other value raises ValueError naming it.

    Dtypes: fp16, bf16, or fp32 (run as bf16, whose range is fp32's, and returned as fp32).
    Empty inputs (batch 0, no query, no key, no head) give torch SDPA's result: zeros of o's shape
    (lse -inf).  Autograd: when grad mode is on and an input requires grad, o stays in the graph;
    its backward raises (use torch SDPA for training: patch_sdpa() sends such calls there) unless
    SAGEATTN_BACKWARD=sdpa or sageattention.set_backward("sdpa") opted in to exact gradients
    recomputed through torch SDPA.  no_grad / inference_mode calls cost nothing extra.

    Returns o (layout and dtype of q), and with return_lse=True also lse [B, Hq, Nq] (fp32, natural
    log, in both layouts: what flash-attn returns and yunchang's update_out_and_lse merges).
"""


def sageattn_qk_int8_pv_fp16_cuda(q=None, k=None, v=None, tensor_layout="HND", is_causal=None,
                                  qk_quant_gran="per_thread", sm_scale=None, pv_accum_dtype="fp32", smooth_k=True,
                                  smooth_v=False, return_lse=False, **kwargs):
    call = _args.normalize("sageattn_qk_int8_pv_fp16_cuda", q, k, v, tensor_layout, is_causal, sm_scale, return_lse,
                           kwargs)
    opts = _args.options("sageattn_qk_int8_pv_fp16_cuda", call.options, "fp16",
                         dict(qk_quant_gran=qk_quant_gran, pv_accum_dtype=pv_accum_dtype, smooth_k=smooth_k,
                              smooth_v=smooth_v))
    return run_call(call, opts)


sageattn_qk_int8_pv_fp16_cuda.__doc__ = """INT8 Q.K^T (per-block/warp/thread scales, K smoothed) and FP16 P.V with fp32 accumulation.

    Upstream's values run as: pv_accum_dtype "fp32", "fp16+fp32" and "fp16" all run fp32
    accumulation (at least as accurate); smooth_v is accepted and not needed with fp32
    accumulation; qk_quant_gran "per_block", "per_warp" or "per_thread".
""" + _SDPA_DOC.format(fn="sageattn_qk_int8_pv_fp16_cuda")


def sageattn_qk_int8_pv_fp8_cuda(q=None, k=None, v=None, tensor_layout="HND", is_causal=None,
                                 qk_quant_gran="per_thread", sm_scale=None, pv_accum_dtype="fp32+fp16", smooth_k=True,
                                 smooth_v=False, return_lse=False, **kwargs):
    call = _args.normalize("sageattn_qk_int8_pv_fp8_cuda", q, k, v, tensor_layout, is_causal, sm_scale, return_lse,
                           kwargs)
    opts = _args.options("sageattn_qk_int8_pv_fp8_cuda", call.options, "fp8",
                         dict(qk_quant_gran=qk_quant_gran, pv_accum_dtype=pv_accum_dtype, smooth_k=smooth_k,
                              smooth_v=smooth_v))
    return run_call(call, opts)


_FP8_DOC = """INT8 Q.K^T and FP8 (e4m3) P.V: P scaled by 448, V per-channel scaled; two-level fp32 accumulation.

    Needs compute capability >= 8.9 (on 9.0 the wgmma kernels run when the build has them).
    pv_accum_dtype: "fp32+fp16" (the default, as upstream's) accumulates each 64-key tile of P.V in
    fp16 (V scaled to +-2.25 so a tile's sums fit), then adds it to the fp32 output, as upstream's
    "fp32+fp16": twice the MMA rate on sm89 and sm120.  The sm90 (wgmma) kernels keep an fp32 tile
    accumulator for it, as upstream's sm90 kernel.  "fp32+fp32" (the default of
    sageattn_qk_int8_pv_fp8_cuda_sm90) and "fp32" run the fp32 tile accumulator (at least as
    accurate as upstream's "fp32", whose accumulator keeps 22 bits).  smooth_v is honoured
    with every value (upstream ignores it except with "fp32"); qk_quant_gran "per_block",
    "per_warp" or "per_thread".
"""
sageattn_qk_int8_pv_fp8_cuda.__doc__ = _FP8_DOC + _SDPA_DOC.format(fn="sageattn_qk_int8_pv_fp8_cuda")


def sageattn_qk_int8_pv_fp8_cuda_sm90(q=None, k=None, v=None, tensor_layout="HND", is_causal=None,
                                      qk_quant_gran="per_thread", sm_scale=None, pv_accum_dtype="fp32+fp32",
                                      smooth_k=True, return_lse=False, **kwargs):
    call = _args.normalize("sageattn_qk_int8_pv_fp8_cuda_sm90", q, k, v, tensor_layout, is_causal, sm_scale,
                           return_lse, kwargs)
    opts = _args.options("sageattn_qk_int8_pv_fp8_cuda_sm90", call.options, "fp8",
                         dict(qk_quant_gran=qk_quant_gran, pv_accum_dtype=pv_accum_dtype, smooth_k=smooth_k))
    return run_call(call, opts)


sageattn_qk_int8_pv_fp8_cuda_sm90.__doc__ = """The FP8 P.V path under upstream's Hopper name: the same function as sageattn_qk_int8_pv_fp8_cuda.

    On compute capability 9.0 the build's wgmma kernels run (sm_90a); unlike upstream it also
    runs on any other GPU of compute capability >= 8.9, and accepts pv_accum_dtype "fp32"
    (upstream raises NotImplementedError): it runs the two-level fp32 accumulation.
""" + _SDPA_DOC.format(fn="sageattn_qk_int8_pv_fp8_cuda_sm90")


def sageattn_qk_int8_pv_fp16_triton(q=None, k=None, v=None, tensor_layout="HND", quantization_backend="triton",
                                    is_causal=None, attn_mask=None, sm_scale=None, smooth_k=True, return_lse=False,
                                    **kwargs):
    kwargs = dict(kwargs, attn_mask=attn_mask)
    call = _args.normalize("sageattn_qk_int8_pv_fp16_triton", q, k, v, tensor_layout, is_causal, sm_scale,
                           return_lse, kwargs)
    opts = _args.options("sageattn_qk_int8_pv_fp16_triton", call.options, "fp16",
                         dict(qk_quant_gran="per_block", quantization_backend=quantization_backend,
                              smooth_k=smooth_k))
    return run_call(call, opts)


sageattn_qk_int8_pv_fp16_triton.__doc__ = """Upstream's Triton kernel's name and signature, run by the CUDA kernels.

    Per-block INT8 Q/K scales (128 query rows, 64 keys: upstream's Triton granularity; pass
    qk_quant_gran to choose another) and FP16 P.V with fp32 accumulation (at least as accurate as
    upstream's fp16 accumulator).  quantization_backend "triton" or "cuda": both run the CUDA
    quantization.  attn_mask: upstream applies any mask here; this build applies key-padding
    masks and raises ValueError for others (see below).
""" + _SDPA_DOC.format(fn="sageattn_qk_int8_pv_fp16_triton")


def sageattn(q=None, k=None, v=None, tensor_layout="HND", is_causal=None, sm_scale=None, return_lse=False,
             **kwargs):
    call = _args.normalize("sageattn", q, k, v, tensor_layout, is_causal, sm_scale, return_lse, kwargs,
                           sdpa_positional=True)
    opts = _args.options("sageattn", call.options, "any")
    return run_call(call, opts)


sageattn.__doc__ = """Quantized attention, picking the kernel for the GPU: sm80/sm86/sm87 -> FP16 P.V, sm89/sm90/sm120 -> FP8 P.V (sm90 above head_dim 128: FP16 P.V on the wgmma kernels).

    On sm89 and sm12x the FP8 P.V accumulates its key tiles in fp16 (pv_accum_dtype "fp32+fp16"), as upstream's sageattn.

    q: [B, Hq, Nq, D] (HND) or [B, Nq, Hq, D] (NHD); k, v: same with Hk heads (Hq % Hk == 0), fp16, bf16 or fp32.
    Upstream's keyword options (qk_quant_gran, pv_accum_dtype of either path, smooth_k, smooth_v,
    qk_quant_dtype) go to the chosen path (upstream's sageattn drops them).  Positional calls in
    SDPA's order (q, k, v, attn_mask, dropout_p, is_causal) are recognised by the fourth argument
    being a tensor or None.
""" + _SDPA_DOC.format(fn="sageattn")
