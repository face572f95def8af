"""GPU tests of the drop-in layer: the call patterns of real programs (ComfyUI,
``F.scaled_dot_product_attention = sageattn``, positional SDPA calls), every
upstream argument value, key-padding masks against SDPA (right, left, bool and
additive, GQA, both P.V paths), masks that must raise, sageattn_varlen against
a per-sequence reference (causal and not, lengths that are not tile multiples),
patch_sdpa's routing, and the new op arguments under opcheck / torch.compile.

References: float64 attention (accuracy) and the emulation of the quantized
algorithm run on each sequence alone (the per-sequence semantics: K mean, V
statistics and quantization groups of the sequence's own rows)."""
import sys
import types

import pytest

# skips this module without a CUDA GPU or the extension
from gpu_helpers import HAS_FP8, PATHS, emulate, make_qkv, metrics, poison_allocator, ref, run_path, sa, torch

pytestmark = pytest.mark.gpu


F = torch.nn.functional
SDPA = F.scaled_dot_product_attention  # torch's, whatever a test patches
DEFAULT_PATH = "fp8" if HAS_FP8 else "fp16"


def cos(a, b):
    return metrics(a, b)[0]


def assert_close_fp64(o, r, cos_min=0.999, l1_max=0.05):
    assert torch.isfinite(o).all(), "NaN/Inf in output"
    c, l1 = metrics(o, r)
    assert c >= cos_min and l1 <= l1_max, f"cos {c:.6f} rel-L1 {l1:.4f}"


# ---- the call patterns of real programs ------------------------------------------------------------

def test_comfyui_call_pattern():
    # comfy/ldm/modules/attention.py: sageattn(q, k, v, attn_mask=mask, is_causal=False, tensor_layout="NHD"), mask None
    q, k, v = make_qkv("randn", b=2, hq=8, hk=8, nq=1024, nk=1024, d=64, dtype=torch.bfloat16, layout="NHD")
    o = sa.sageattn(q, k, v, attn_mask=None, is_causal=False, tensor_layout="NHD")
    r = SDPA(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)).transpose(1, 2)
    assert o.shape == q.shape and o.dtype == q.dtype
    assert cos(o, r) >= 0.999


def test_sdpa_replaced_by_sageattn_keyword_calls(monkeypatch):
    # the upstream README's recipe; diffusers' native backend and transformers call with keywords
    monkeypatch.setattr(F, "scaled_dot_product_attention", sa.sageattn)
    q, k, v = make_qkv("kbias", b=2, hq=8, hk=2, nq=333, nk=333, d=128, dtype=torch.float16)
    for kw in (dict(attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=True),
               dict(attn_mask=None, dropout_p=0.0, is_causal=True, scale=0.07, enable_gqa=True)):
        o = F.scaled_dot_product_attention(query=q, key=k, value=v, **kw)
        r = SDPA(q, k, v, **kw)
        assert cos(o, r) >= 0.999, kw
    o = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, scale=0.1,
                                                         is_causal=True, enable_gqa=True)  # transformers' form
    assert cos(o, SDPA(q, k, v, is_causal=True, scale=0.1, enable_gqa=True)) >= 0.999
    with pytest.raises(ValueError, match="dropout_p"):
        F.scaled_dot_product_attention(q, k, v, dropout_p=0.1, enable_gqa=True)


def test_positional_sdpa_calls_with_sageattn():
    q, k, v = make_qkv("randn", b=2, hq=4, hk=4, nq=200, nk=300, d=64)
    mask = torch.ones(2, 1, 1, 300, dtype=torch.bool, device="cuda")
    mask[1, ..., 250:] = False
    assert cos(sa.sageattn(q, k, v, mask), SDPA(q, k, v, mask)) >= 0.999  # SDPA(q, k, v, attn_mask)
    assert cos(sa.sageattn(q, k, v, None, 0.0, True), SDPA(q, k, v, None, 0.0, True)) >= 0.999  # ..., dropout_p, is_causal


# ---- every upstream argument value runs -------------------------------------------------------------

UPSTREAM_CALLS = (
    [(sa.sageattn_qk_int8_pv_fp16_cuda, dict(pv_accum_dtype=a, qk_quant_gran=g, smooth_v=sv))
     for a in ("fp32", "fp16+fp32", "fp16") for g in ("per_warp", "per_thread") for sv in (False, True)]
    + [(sa.sageattn_qk_int8_pv_fp16_triton, dict(quantization_backend=b)) for b in ("triton", "cuda")]
    + [(sa.sageattn, dict(qk_quant_dtype="int8", smooth_k=False)), (sa.sageattn, dict(pv_accum_dtype="fp32"))]
    + ([(fn, dict(pv_accum_dtype=a, qk_quant_gran=g))
        for fn in (sa.sageattn_qk_int8_pv_fp8_cuda, sa.sageattn_qk_int8_pv_fp8_cuda_sm90)
        for a in ("fp32+fp32", "fp32", "fp32+fp16") for g in ("per_warp", "per_thread")]
       + [(sa.sageattn_qk_int8_pv_fp8_cuda, dict(pv_accum_dtype="fp32", smooth_v=True))] if HAS_FP8 else []))


@pytest.mark.parametrize("fn,kw", UPSTREAM_CALLS,
                         ids=lambda x: getattr(x, "__name__", None) or ",".join(f"{a}={b}" for a, b in x.items()))
@pytest.mark.parametrize("layout", ["HND", "NHD"])
def test_every_upstream_value_runs(fn, kw, layout):
    # K with a large per-channel bias is what smoothing is for: without it INT8 K loses that
    # accuracy by design (cos ~0.997 here), so smooth_k=False runs on unbiased K.
    kind = "randn" if kw.get("smooth_k") is False else "kbias"
    q, k, v = make_qkv(kind, b=1, hq=4, hk=2, nq=300, nk=500, d=128, dtype=torch.bfloat16, layout=layout)
    o = fn(q, k, v, tensor_layout=layout, is_causal=False, **kw)
    assert o.shape == q.shape and o.dtype == q.dtype
    assert_close_fp64(o, ref.attention_fp64(q, k, v, tensor_layout=layout), cos_min=0.9992, l1_max=0.04)


# ---- masks --------------------------------------------------------------------------------------------

def padding_mask(b, nk, lengths, starts=None, kind="bool", dtype=torch.float16):
    valid = torch.zeros(b, nk, dtype=torch.bool, device="cuda")
    for i, n in enumerate(lengths):
        s = starts[i] if starts else 0
        valid[i, s:s + n] = True
    if kind == "bool":
        m = valid
    else:
        fill = {"inf": float("-inf"), "1e4": -10000.0, "min": torch.finfo(dtype).min}[kind]
        m = torch.zeros(b, nk, dtype=dtype, device="cuda").masked_fill(~valid, fill)
    return m[:, None, None, :], valid


PAD_CASES = {
    "right": ([517, 200, 1], None),
    "left": ([517, 64, 129], [0, 453, 388]),
    "middle": ([300, 65, 7], [100, 0, 510]),
}


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("pad", list(PAD_CASES))
@pytest.mark.parametrize("kind", ["bool", "inf", "1e4", "min"])
@pytest.mark.parametrize("layout", ["HND", "NHD"])
def test_key_padding_masks_match_sdpa(path, pad, kind, layout):
    b, nq, nk, d = 3, 300, 517, 128
    q, k, v = make_qkv("kbias", b=b, hq=8, hk=2, nq=nq, nk=nk, d=d, layout=layout, seed=len(pad) + len(kind))
    lengths, starts = PAD_CASES[pad]
    mask, valid = padding_mask(b, nk, lengths, starts, kind)
    poison_allocator()
    o = run_path(path, q, k, v, tensor_layout=layout, attn_mask=mask)  # the accumulator emulate() runs
    r = ref.attention_fp64(q, k, v, tensor_layout=layout, attn_mask=valid[:, None, None, :])
    assert_close_fp64(o, r, cos_min=0.9992, l1_max=0.04)
    # the per-batch semantics exactly: each batch element alone, on its own keys
    sd = 2 if layout == "HND" else 1
    for i in range(b):
        s = starts[i] if starts else 0
        ki, vi = (t[i:i + 1].narrow(sd, s, lengths[i]) for t in (k, v))
        e = emulate(q[i:i + 1], ki, vi, tensor_layout=layout, pv=path)
        assert cos(o[i:i + 1], e) >= 0.99999, (i, cos(o[i:i + 1], e))


@pytest.mark.parametrize("path", PATHS)
def test_key_padding_mask_return_lse(path):
    q, k, v = make_qkv("kbias", b=2, hq=4, hk=4, nq=190, nk=257, d=64)
    mask, valid = padding_mask(2, 257, [100, 200], [57, 0])
    fn = sa.sageattn_qk_int8_pv_fp16_cuda if path == "fp16" else sa.sageattn_qk_int8_pv_fp8_cuda
    o, lse = fn(q, k, v, attn_mask=mask, return_lse=True)
    _, lse_ref = ref.attention_fp64(q, k, v, attn_mask=valid[:, None, None, :], return_lse=True)
    err = (lse.double() - lse_ref).abs()
    assert err.max().item() < 0.05 and err.mean().item() < 0.01, (err.max().item(), err.mean().item())


def test_padding_rows_with_nan_do_not_leak():
    q, k, v = make_qkv("randn", b=2, hq=4, hk=4, nq=128, nk=256, d=64)
    mask, valid = padding_mask(2, 256, [100, 256], [156, 0])
    k2, v2 = k.clone(), v.clone()
    k2[0, :, :156] = float("nan")
    v2[0, :, :156] = float("inf")
    for path in PATHS:
        fn = sa.sageattn_qk_int8_pv_fp16_cuda if path == "fp16" else sa.sageattn_qk_int8_pv_fp8_cuda
        o = fn(q, k2, v2, attn_mask=mask)
        assert torch.isfinite(o).all(), path
        assert cos(o, fn(q, k, v, attn_mask=mask)) >= 0.99999, path


def test_full_mask_runs_the_dense_kernels():
    q, k, v = make_qkv("randn", b=2, hq=4, hk=4, nq=100, nk=300, d=64)
    full = torch.zeros(2, 1, 1, 300, device="cuda", dtype=torch.float16)
    assert cos(sa.sageattn(q, k, v, attn_mask=full), sa.sageattn(q, k, v)) >= 0.999999  # K mean: float atomics


@pytest.mark.parametrize("case", ["causal", "bias", "per_query_padding", "with_is_causal", "holes", "empty_batch"])
def test_masks_that_cannot_be_applied_raise_and_callers_fall_back(case):
    b, h, nq, nk = 2, 4, 128, 128
    q, k, v = make_qkv("randn", b=b, hq=h, hk=h, nq=nq, nk=nk, d=64)
    causal = False
    if case == "causal":
        mask = torch.ones(nq, nk, dtype=torch.bool, device="cuda").tril()
    elif case == "bias":  # ALiBi-like
        mask = -0.1 * torch.arange(nk, device="cuda", dtype=torch.float16).expand(b, h, nq, nk)
    elif case == "per_query_padding":  # transformers' padded causal mask
        mask = torch.ones(b, 1, nq, nk, dtype=torch.bool, device="cuda").tril()
        mask[0, :, :, :10] = False
    elif case == "with_is_causal":
        mask, causal = padding_mask(b, nk, [100, 128])[0], True
    elif case == "holes":
        mask = padding_mask(b, nk, [128, 128])[0].clone()
        mask[..., 64] = False
    else:
        mask = padding_mask(b, nk, [128, 0])[0]
    with pytest.raises(ValueError, match="attn_mask"):
        sa.sageattn(q, k, v, attn_mask=mask, is_causal=causal)

    def attention(q, k, v, mask):  # a caller's fallback (ComfyUI's pattern)
        try:
            return sa.sageattn(q, k, v, attn_mask=mask, is_causal=causal)
        except ValueError:
            return SDPA(q, k, v, attn_mask=mask, is_causal=causal)
    if case != "with_is_causal":  # SDPA refuses that one itself
        torch.testing.assert_close(attention(q, k, v, mask), SDPA(q, k, v, attn_mask=mask), rtol=0, atol=0,
                                   equal_nan=True)


# ---- sageattn_varlen ----------------------------------------------------------------------------------

def packed_inputs(lens_q, lens_k, hq, hk, d, dtype, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    tq, tk = sum(lens_q), sum(lens_k)
    q = torch.randn(tq, hq, d, generator=g, device="cuda").to(dtype)
    k = (torch.randn(tk, hk, d, generator=g, device="cuda") + 4 * torch.randn(d, generator=g, device="cuda")).to(dtype)
    v = torch.randn(tk, hk, d, generator=g, device="cuda").to(dtype)

    def cu(lens):
        return torch.tensor([0] + list(torch.tensor(lens).cumsum(0).tolist()), dtype=torch.int32, device="cuda")
    return q, k, v, cu(lens_q), cu(lens_k)


def per_sequence(fn, q, k, v, cq, ck, out_rows):
    """fn(q_seq, k_seq, v_seq) on each sequence alone ([1, n, H, D] NHD), packed back."""
    out = torch.zeros(out_rows, q.shape[1], q.shape[2], dtype=torch.float64, device=q.device)
    cq, ck = cq.tolist(), ck.tolist()
    for i in range(len(cq) - 1):
        if cq[i + 1] == cq[i]:
            continue
        qs, ks, vs = q[cq[i]:cq[i + 1]][None], k[ck[i]:ck[i + 1]][None], v[ck[i]:ck[i + 1]][None]
        out[cq[i]:cq[i + 1]] = fn(qs, ks, vs)[0].double()
    return out


VARLEN_LENS = {  # (q lengths, k lengths): not tile multiples, one of 1, one longer than a CTA
    "equal": ([1, 77, 300, 129, 1000], [1, 77, 300, 129, 1000]),
    "cross": ([5, 300, 64, 1000, 33], [700, 1, 65, 129, 2000]),
}


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("lens", list(VARLEN_LENS))
def test_varlen_matches_per_sequence_reference(path, causal, d, lens):
    lq, lk = VARLEN_LENS[lens]
    q, k, v, cq, ck = packed_inputs(lq, lk, 8, 2, d, torch.float16, seed=d + causal)
    poison_allocator()
    kw = dict(pv_accum_dtype="fp32+fp32") if path == "fp8" else {}
    o = sa.sageattn_varlen(q, k, v, cq, ck, max(lq), max(lk), is_causal=causal, **kw)
    assert o.shape == q.shape and o.dtype == q.dtype
    r = per_sequence(lambda a, b_, c: ref.attention_fp64(a, b_, c, tensor_layout="NHD", is_causal=causal),
                     q, k, v, cq, ck, q.shape[0])
    assert_close_fp64(o, r, cos_min=0.9992, l1_max=0.04)
    e = per_sequence(lambda a, b_, c: emulate(a, b_, c, tensor_layout="NHD", pv=path, is_causal=causal),
                     q, k, v, cq, ck, q.shape[0])
    assert cos(o, e) >= 0.99999


def test_varlen_gqa_bf16_padded_head_dim_and_options():
    lq, lk = [130, 7, 600], [200, 300, 9]
    q, k, v, cq, ck = packed_inputs(lq, lk, 12, 4, 96, torch.bfloat16, seed=5)
    r = per_sequence(lambda a, b_, c: ref.attention_fp64(a, b_, c, tensor_layout="NHD", sm_scale=0.09),
                     q, k, v, cq, ck, q.shape[0])
    for kw in (dict(sm_scale=0.09), dict(scale=0.09, qk_quant_gran="per_warp"), dict(sm_scale=0.09, smooth_k=False)):
        o = sa.sageattn_varlen(q, k, v, cq, ck, 600, 300, **kw)
        assert o.dtype == torch.bfloat16
        assert_close_fp64(o, r, cos_min=0.9992, l1_max=0.04)


def test_varlen_equals_the_dense_batch_for_uniform_lengths():
    b, n, h, d = 3, 333, 4, 64
    q, k, v = make_qkv("kbias", b=b, hq=h, hk=h, nq=n, nk=n, d=d, layout="NHD")
    cu = torch.arange(0, b + 1, device="cuda", dtype=torch.int32) * n
    o = sa.sageattn_varlen(q.flatten(0, 1), k.flatten(0, 1), v.flatten(0, 1), cu, cu, n, n, is_causal=True)
    dense = sa.sageattn_qk_int8_pv_fp16_cuda(q, k, v, tensor_layout="NHD", is_causal=True)
    assert cos(o.unflatten(0, (b, n)), dense) >= 0.999999  # same algorithm; K mean by float atomics


def test_varlen_empty_key_sequence_gives_zeros_and_gaps_stay_unwritten():
    lq, lk = [50, 60, 70], [80, 0, 90]
    q, k, v, cq, ck = packed_inputs(lq, lk, 4, 4, 64, torch.float16)
    o = sa.sageattn_varlen(q, k, v, cq, ck, 70, 90)
    assert torch.isfinite(o).all()
    assert (o[50:110] == 0).all()  # the sequence without keys
    r = per_sequence(lambda a, b_, c: ref.attention_fp64(a, b_, c, tensor_layout="NHD"), q, k, v, cq, ck, q.shape[0])
    keep = torch.ones(q.shape[0], dtype=torch.bool, device="cuda")
    keep[50:110] = False
    assert_close_fp64(o[keep], r[keep], cos_min=0.9992, l1_max=0.04)


def test_varlen_cu_seqlens_from_the_cpu_and_int64():
    lq = lk = [100, 3, 250]
    q, k, v, cq, ck = packed_inputs(lq, lk, 4, 2, 128, torch.float16)
    o1 = sa.sageattn_varlen(q, k, v, cq, ck, 250, 250, is_causal=True)
    o2 = sa.sageattn_varlen(q, k, v, cq.cpu().long(), ck.cpu().long(), 250, 250, is_causal=True)
    assert cos(o1, o2) >= 0.999999
    with pytest.raises(ValueError, match="max_seqlen_q"):
        sa.sageattn_varlen(q, k, v, cq.cpu(), ck.cpu(), 200, 250)


# ---- patch_sdpa on the GPU ----------------------------------------------------------------------------

def test_patch_sdpa_routes_and_counts():
    q, k, v = make_qkv("randn", b=2, hq=8, hk=8, nq=256, nk=256, d=64, dtype=torch.bfloat16)
    pad, _ = padding_mask(2, 256, [256, 100])
    causal_mask = torch.ones(256, 256, dtype=torch.bool, device="cuda").tril()
    calls = {  # name: (args, kwargs, expected route)
        "bf16": ((q, k, v), {}, "sage"),
        "causal": ((q, k, v), dict(is_causal=True), "sage"),
        "key_padding": ((q, k, v), dict(attn_mask=pad), "sage"),
        "gqa": ((q, k[:, :2], v[:, :2]), dict(enable_gqa=True), "sage"),
        "fp32": ((q.float(), k.float(), v.float()), {}, "sdpa"),
        "cpu": ((q.cpu(), k.cpu(), v.cpu()), {}, "sdpa"),
        "causal_mask": ((q, k, v), dict(attn_mask=causal_mask), "sdpa"),
        "dropout": ((q, k, v), dict(dropout_p=0.5), "sdpa"),
        "head_dim_264": ((torch.randn(1, 2, 64, 264, device="cuda", dtype=torch.float16),) * 3, {}, "sdpa"),
    }
    refs = {name: SDPA(*a, **kw) for name, (a, kw, _) in calls.items() if name != "dropout"}
    with sa.patch_sdpa(route="sageattention") as p:  # these short calls run faster in SDPA: route "auto" sends them there
        for name, (a, kw, route) in calls.items():
            before = p.sageattention
            out = F.scaled_dot_product_attention(*a, **kw)
            assert (p.sageattention > before) == (route == "sage"), name
            if name == "dropout":
                continue
            if route == "sage":
                assert cos(out, refs[name]) >= 0.999, name
            else:
                assert torch.equal(out, refs[name]), name
        g = q.clone().requires_grad_()
        F.scaled_dot_product_attention(g, k, v).sum().backward()  # autograd: SDPA, with its backward
        assert g.grad is not None
    s = p.stats
    assert s["sageattention"] == 4 and s["sdpa"] == 6, s
    reasons = s["fallback_reasons"]
    assert reasons["dtype float32"] == 1 and reasons["device cpu"] == 1 and reasons["dropout_p > 0"] == 1
    assert reasons["head_dim 264 > 256"] == 1 and reasons["autograd (SageAttention has no backward)"] == 1
    assert any(r.startswith("attn_mask masks different keys") for r in reasons), reasons
    assert F.scaled_dot_product_attention is SDPA


def test_patch_sdpa_auto_route_follows_the_shipped_crossover(monkeypatch, caplog):
    """route "auto": a call shorter than the GPU's measured crossover runs in torch SDPA (bit for bit), a long one
    in SageAttention; "sageattention" / "sdpa" / SAGEATTN_SDPA_ROUTE force either; the reason is logged once."""
    import logging

    from sageattention import _sdpa_route, sdpa_patch
    table = _sdpa_route.table_for_device(torch.cuda.get_device_capability())
    if table is None:
        pytest.skip(f"no crossover data shipped for {torch.cuda.get_device_name()}: every call runs SageAttention")
    monkeypatch.delenv(_sdpa_route.ENV, raising=False)
    monkeypatch.setattr(sdpa_patch, "_LOGGED", set())
    short = make_qkv("randn", b=1, hq=8, hk=8, nq=256, nk=256, d=128, dtype=torch.bfloat16)  # below every measured N
    lens = [table.min_len(128, "bfloat16", False, be, 128) for be in _sdpa_route.BACKENDS]
    assert None not in lens, table.rows
    n_min = max(lens)
    long_ = make_qkv("randn", b=1, hq=128, hk=128, nq=max(n_min, 1024), nk=max(n_min, 1024), d=128,
                     dtype=torch.bfloat16)
    ref_short, ref_long = SDPA(*short), SDPA(*long_)
    with caplog.at_level(logging.WARNING, logger="sageattention"), sa.patch_sdpa() as p:
        assert p.route == "auto"
        for _ in range(2):
            assert torch.equal(F.scaled_dot_product_attention(*short), ref_short)
        o = F.scaled_dot_product_attention(*long_)
    assert p.stats["sdpa"] == 2 and p.stats["sageattention"] == 1, p.stats
    assert p.stats["fallback_reasons"] == {_sdpa_route.SPEED_REASON: 2}
    assert cos(o, ref_long) >= 0.999 and not torch.equal(o, ref_long)
    lines = [r.getMessage() for r in caplog.records if "runs the calls it runs faster" in r.getMessage()]
    assert len(lines) == 1 and table.device in lines[0] and table.date in lines[0], lines
    with sa.patch_sdpa(route="sageattention") as p:
        o = F.scaled_dot_product_attention(*short)
    assert p.stats["sageattention"] == 1 and cos(o, ref_short) >= 0.999
    with sa.patch_sdpa(route="sdpa") as p:
        assert torch.equal(F.scaled_dot_product_attention(*long_), ref_long)
    assert p.stats["sdpa"] == 1
    monkeypatch.setenv(_sdpa_route.ENV, "sageattention")
    with sa.patch_sdpa() as p:
        F.scaled_dot_product_attention(*short)
    assert p.stats["sageattention"] == 1


def test_patch_sdpa_reaches_names_bound_at_import_time():
    mod = types.ModuleType("sa_gpu_early_importer")
    exec("from torch.nn.functional import scaled_dot_product_attention as attn", mod.__dict__)
    sys.modules[mod.__name__] = mod
    try:
        q, k, v = make_qkv("randn", b=1, hq=4, hk=4, nq=128, nk=128, d=64)
        with sa.patch_sdpa(route="sageattention") as p:
            o = mod.attn(q, k, v)
        assert p.stats["sageattention"] == 1 and cos(o, SDPA(q, k, v)) >= 0.999
        assert mod.attn is SDPA
    finally:
        del sys.modules[mod.__name__]


# ---- the new op arguments: opcheck and torch.compile -------------------------------------------------

def test_opcheck_varlen_and_padded_ops():
    ops = torch.ops.sageattention
    lens = [70, 1, 130]
    q, k, v, cq, ck = packed_inputs(lens, lens, 4, 2, 64, torch.float16)
    st, ln = cq[:-1].contiguous(), (cq[1:] - cq[:-1]).contiguous()
    torch.library.opcheck(ops.quant_q.default, (q, 2, 2, st, ln, 130))
    torch.library.opcheck(ops.quant_k.default, (k, 2, 2, True, st, ln, 130))
    qi, qs = ops.quant_q(q, 2, 2, st, ln, 130)
    ki, ks = ops.quant_k(k, 2, 2, True, st, ln, 130)
    # (no lse: its rows past a shorter sequence are left unwritten, which opcheck's comparisons would read)
    torch.library.opcheck(ops.attn_pv_fp16.default,
                          (qi, qs, ki, ks, v, 2, 130, True, 0.125, False, torch.float16, st, ln, st, ln, q.shape[0],
                           130))
    qd, kd, vd = make_qkv("randn", b=3, hq=4, hk=2, nq=100, nk=130, d=64)
    qi, qs = ops.quant_q(qd, 0, 2)
    ki, ks = ops.quant_k(kd, 0, 2, True, None, ln)
    torch.library.opcheck(ops.attn_pv_fp16.default,
                          (qi, qs, ki, ks, vd, 0, 100, False, 0.125, True, torch.float16, None, None, None, ln))
    if HAS_FP8:
        fp8_utils = ("test_faketensor", "test_autograd_registration")  # as test_attention.test_opcheck
        vf, vs, vm = ops.quant_v_fp8(vd, 0, False, None, ln)
        torch.library.opcheck(ops.attn_pv_fp8.default,
                              (qi, qs, ki, ks, vf, vs, None, 0, 100, 130, 64, False, 0.125, False, torch.bfloat16,
                               None, None, ln), test_utils=fp8_utils)


def test_torch_compile_varlen_no_graph_break():
    lens = [100, 37, 300]
    q, k, v, cq, ck = packed_inputs(lens, lens, 4, 4, 64, torch.float16)

    def f(q, k, v, cq, ck):
        return sa.sageattn_varlen(q, k, v, cq, ck, 300, 300, is_causal=True) * 2

    out = torch.compile(f, fullgraph=True)(q, k, v, cq, ck)
    assert cos(out, f(q, k, v, cq, ck)) >= 0.99999
