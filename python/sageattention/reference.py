"""Pure-PyTorch references.

* ``attention_fp64``: exact softmax attention in float64 (GQA, top-left causal).
* ``sageattn_emulated``: the SageAttention algorithm exactly as the CUDA kernels
  run it, with the same scale layouts: INT8 Q/K per-block/warp/thread scales,
  K smoothing, 64-key tiles with an online exp2 softmax, P in fp16 (fp16 path)
  or P x448 in e4m3 with per-channel e4m3 V (fp8 path).  Useful to check the
  kernels and to study the quantization error on any device (CPU included).
"""
from __future__ import annotations

import math

import torch

from ._tensors import padded_head_dim as _padded_head_dim

BLOCK_Q = 128
BLOCK_K = 64
LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453
FP8_MAX = 448.0
V_MAX_F16ACC = 2.25  # the V range of the fp16-accumulated FP8 P.V (sageattn.h: SA_V_MAX_F16ACC)
LOG2_FP8_MAX = 8.807354922057604


def _round_up(n, t):
    return (n + t - 1) // t * t


def _to_hnd(x, layout):
    if layout == "HND":
        return x
    if layout == "NHD":
        return x.transpose(1, 2)
    raise ValueError(f"tensor_layout must be 'HND' or 'NHD', got {layout!r}")


def quantize_q(q, gran="per_thread"):
    """q [B,H,N,D] -> (q_int values as float32 [B,H,Npad,Dp], q_scale [B,H,Npad/16,8], per-row scale [B,H,Npad])."""
    b, h, n, d = q.shape
    dp, n_pad = _padded_head_dim(d), _round_up(n, BLOCK_Q)
    x = torch.zeros(b, h, n_pad, dp, dtype=torch.float32, device=q.device)
    x[:, :, :n, :d] = q.float()
    a = x.abs()
    s = n_pad // 16
    if gran == "per_thread":  # rows 16s + 8*half + g share the scale (s, g)
        am = a.view(b, h, s, 2, 8, dp).amax(dim=(3, 5))
    elif gran == "per_warp":
        am = a.view(b, h, s, 16 * dp).amax(-1)[..., None].expand(b, h, s, 8)
    elif gran == "per_block":
        am = a.view(b, h, n_pad // BLOCK_Q, BLOCK_Q * dp).amax(-1)
        am = am.repeat_interleave(BLOCK_Q // 16, dim=2)[..., None].expand(b, h, s, 8)
    else:
        raise ValueError(f"unknown granularity {gran!r}")
    am = am.contiguous()
    rows = am[:, :, :, None, :].expand(b, h, s, 2, 8).reshape(b, h, n_pad)
    inv = torch.where(rows > 0, 127.0 / rows, torch.zeros_like(rows))
    qi = torch.round(x * inv[..., None]).clamp_(-127, 127)
    return qi, am / 127.0, rows / 127.0


def quantize_k(k, gran="per_thread", smooth_k=True):
    """k [B,H,N,D] -> (k_int values float32 [B,H,Npad,Dp], k_scale [B,H,Npad/64,4], per-key scale [B,H,Npad])."""
    b, h, n, d = k.shape
    dp, n_pad = _padded_head_dim(d), _round_up(n, BLOCK_K)
    x = k.float()
    if smooth_k:
        x = x - x.mean(dim=2, keepdim=True)
    xp = torch.zeros(b, h, n_pad, dp, dtype=torch.float32, device=k.device)
    xp[:, :, :n, :d] = x
    a = xp.abs()
    t = n_pad // BLOCK_K
    if gran == "per_thread":  # key r of a tile has class (r % 8) // 2; r = 8*i + 2*c + e
        am = a.view(b, h, t, 8, 4, 2, dp).amax(dim=(3, 5, 6))
    elif gran in ("per_warp", "per_block"):
        am = a.view(b, h, t, BLOCK_K * dp).amax(-1)[..., None].expand(b, h, t, 4)
    else:
        raise ValueError(f"unknown granularity {gran!r}")
    am = am.contiguous()
    rows = am[:, :, :, None, :, None].expand(b, h, t, 8, 4, 2).reshape(b, h, n_pad)
    inv = torch.where(rows > 0, 127.0 / rows, torch.zeros_like(rows))
    ki = torch.round(xp * inv[..., None]).clamp_(-127, 127)
    return ki, am / 127.0, rows / 127.0


def quantize_v_fp8(v, smooth_v=False, scale_max=None):
    """v [B,H,N,D] -> (e4m3 values as float32 [B,H,N,Dp], v_scale [B,H,Dp], v_mean [B,H,Dp]); each channel
    scaled to +-scale_max (default 448; 2.25 for the fp16-accumulated P.V)."""
    vmax = FP8_MAX if scale_max is None else float(scale_max)
    b, h, n, d = v.shape
    dp = _padded_head_dim(d)
    x = v.float()
    mean = x.mean(dim=2) if smooth_v else torch.zeros(b, h, d, device=v.device)
    amax = torch.maximum((x.amax(dim=2) - mean).abs(), (x.amin(dim=2) - mean).abs())
    inv = torch.where(amax > 0, vmax / amax, torch.zeros_like(amax))
    vq = ((x - mean[:, :, None, :]) * inv[:, :, None, :]).clamp_(-vmax, vmax).to(torch.float8_e4m3fn).float()
    vp = torch.zeros(b, h, n, dp, device=v.device)
    vp[..., :d] = vq
    scale = torch.zeros(b, h, dp, device=v.device)
    scale[..., :d] = amax / vmax
    meanp = torch.zeros(b, h, dp, device=v.device)
    meanp[..., :d] = mean
    return vp, scale, meanp


def sageattn_emulated(q, k, v, tensor_layout="HND", is_causal=False, sm_scale=None, pv="fp8",
                      qk_quant_gran="per_thread", smooth_k=True, smooth_v=False, return_lse=False,
                      block_k=BLOCK_K, rowsum_rounded_p=False, pv_accum_f16=False, v_scale_max=None):
    """Emulate sageattn_qk_int8_pv_{fp16,fp8}_cuda step by step (fp32 scores, fp64 P.V sums).

    ``pv_accum_f16`` (fp8 only, pv_accum_dtype "fp32+fp16"): V scaled to +-2.25 and each key
    tile's P.V rounded to fp16 after every 32 keys (the MMA's k-step) before it joins O.
    ``v_scale_max``: the V range alone (2.25 with an fp32 accumulator: what the sm90 kernel runs
    for "fp32+fp16"); default 2.25 with ``pv_accum_f16``, else 448.

    ``rowsum_rounded_p``: the row sums l add up P as rounded for the P.V (the sm90 fp8 kernel
    takes them from the P.V MMA), not P before rounding.
    ``block_k`` is the kernel's key tile (64; the sm90 fp8 kernel uses 128 for head dims
    above 64): the online softmax's running max, hence how P is rounded, changes per tile.
    """
    if pv not in ("fp8", "fp16"):
        raise ValueError("pv must be 'fp8' or 'fp16'")
    if block_k not in (64, 128):
        raise ValueError(f"block_k must be 64 or 128, got {block_k}")
    out_dtype = q.dtype
    q, k, v = (_to_hnd(t, tensor_layout) for t in (q, k, v))
    b, hq, nq, d = q.shape
    hk, nk = k.shape[1], k.shape[2]
    dp = _padded_head_dim(d)
    scale = 1.0 / math.sqrt(d) if sm_scale is None else float(sm_scale)
    dev = q.device

    qi, _, qrow = quantize_q(q, qk_quant_gran)
    ki, _, krow = quantize_k(k, qk_quant_gran, smooth_k)
    rep = hq // hk
    ki, krow = ki.repeat_interleave(rep, 1), krow.repeat_interleave(rep, 1)
    nq_pad, nk_pad = qi.shape[2], ki.shape[2]
    s_int = torch.matmul(qi.double(), ki.double().transpose(-1, -2)).float()  # exact integers
    sl2 = torch.tensor(scale, dtype=torch.float32) * torch.tensor(LOG2E, dtype=torch.float32)
    qs_eff = qrow * sl2.to(dev)
    s = s_int * (qs_eff[..., :, None] * krow[..., None, :])
    key = torch.arange(nk_pad, device=dev)
    row = torch.arange(nq_pad, device=dev)
    masked = (key[None, :] >= nk).expand(nq_pad, nk_pad)
    if is_causal:
        masked = masked | (key[None, :] > row[:, None])
    s = s.masked_fill(masked, float("-inf"))

    if pv == "fp16":
        vv = torch.zeros(b, hk, nk_pad, dp, dtype=torch.float64, device=dev)
        vv[:, :, :nk, :d] = v.to(torch.float16).double()
        off = 0.0
    else:
        vmax = v_scale_max if v_scale_max is not None else (V_MAX_F16ACC if pv_accum_f16 else None)
        vq, vscale, vmean = quantize_v_fp8(v, smooth_v, vmax)
        vv = torch.zeros(b, hk, nk_pad, dp, dtype=torch.float64, device=dev)
        vv[:, :, :nk] = vq.double()
        off = LOG2_FP8_MAX
    vv = vv.repeat_interleave(rep, 1)

    m = torch.full((b, hq, nq_pad), float("-inf"), device=dev)
    l = torch.zeros(b, hq, nq_pad, device=dev)
    o = torch.zeros(b, hq, nq_pad, dp, dtype=torch.float64, device=dev)
    for t in range((nk_pad + block_k - 1) // block_k):
        st = s[..., t * block_k:(t + 1) * block_k]
        mx = torch.maximum(m, st.amax(-1))
        mu = torch.where(mx == float("-inf"), torch.zeros_like(mx), mx)
        corr = torch.exp2(m - mu)
        m = mx
        p = torch.exp2(st - (mu - off)[..., None])
        if pv == "fp16":
            pq = p.to(torch.float16).double()
        else:
            pq = p.clamp(max=FP8_MAX).to(torch.float8_e4m3fn).double()
        l = l * corr + (pq.sum(-1).float() if rowsum_rounded_p else p.sum(-1))
        vt = vv[:, :, t * block_k:(t + 1) * block_k]
        if pv == "fp8" and pv_accum_f16:  # an fp16 accumulator per tile, rounded after each 32-key MMA step
            acc = torch.zeros_like(o)
            for k0 in range(0, pq.shape[-1], 32):
                acc = (acc + torch.matmul(pq[..., k0:k0 + 32], vt[:, :, k0:k0 + 32])).to(torch.float16).double()
            o = o * corr[..., None].double() + acc
        else:
            o = o * corr[..., None].double() + torch.matmul(pq, vt)
    o = o / l[..., None].double()
    if pv == "fp8":
        vs, vm = vscale.repeat_interleave(rep, 1), vmean.repeat_interleave(rep, 1)
        o = o * vs[:, :, None, :].double() + (vm[:, :, None, :].double() if smooth_v else 0.0)
    o = o[:, :, :nq, :d].to(out_dtype)
    lse = ((m + torch.log2(l) - off) * LN2)[:, :, :nq]
    if smooth_k:  # scores were computed against K - mean(K): shift the LSE back
        km = k.float().mean(dim=2).repeat_interleave(rep, 1)
        lse = lse + torch.matmul(q.float(), km.unsqueeze(-1)).squeeze(-1) * scale
    if tensor_layout == "NHD":
        o = o.transpose(1, 2)
    return (o, lse) if return_lse else o


def attention_fp64(q, k, v, tensor_layout="HND", is_causal=False, sm_scale=None, return_lse=False, attn_mask=None):
    """Exact attention in float64; causal is top-left aligned (query i sees keys j <= i).
    attn_mask: as torch SDPA's (bool: True = attend; else added to the scores), [B, Hq, Nq, Nk] broadcastable."""
    q, k, v = (_to_hnd(t, tensor_layout).double() for t in (q, k, v))
    hq, hk = q.shape[1], k.shape[1]
    k, v = k.repeat_interleave(hq // hk, 1), v.repeat_interleave(hq // hk, 1)
    scale = 1.0 / math.sqrt(q.shape[-1]) if sm_scale is None else float(sm_scale)
    s = torch.matmul(q, k.transpose(-1, -2)) * scale
    if attn_mask is not None:
        m = attn_mask.to(s.device)
        s = s.masked_fill(~m, float("-inf")) if m.dtype == torch.bool else s + m.double()
    if is_causal:
        nq, nk = s.shape[-2], s.shape[-1]
        mask = torch.ones(nq, nk, dtype=torch.bool, device=s.device).tril()
        s = s.masked_fill(~mask, float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    o = torch.matmul(torch.softmax(s, dim=-1), v)
    if tensor_layout == "NHD":
        o = o.transpose(1, 2)
    return (o, lse) if return_lse else o
