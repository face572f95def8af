"""The drop-in layer on a CPU machine: upstream's and SDPA's call forms, every
upstream name and option value, the key-padding mask rule, sageattn_varlen's
argument checks, patch_sdpa's routing and counts, and the fake kernels of the
new (varlen) op arguments.

Calls run end to end on meta tensors, whose ops are the fake kernels, so the
argument handling is exercised up to the kernel launch; masks are classified
on CPU tensors (the rule is device-independent); patch_sdpa is driven with CPU
tensors, which it must hand to torch's SDPA unchanged."""
import sys
import types

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import sageattention as sa  # noqa: E402
from sageattention import _args, _tensors, masks, sdpa_patch  # noqa: E402
from sageattention import _sdpa_plan as plans  # noqa: E402

needs_ext = pytest.mark.needs_ext  # skipped by conftest.py, with the reason, where the extension is not loaded

UPSTREAM_NAMES = ["sageattn", "sageattn_varlen", "sageattn_qk_int8_pv_fp16_cuda", "sageattn_qk_int8_pv_fp16_triton",
                  "sageattn_qk_int8_pv_fp8_cuda", "sageattn_qk_int8_pv_fp8_cuda_sm90"]
DENSE_FNS = [sa.sageattn, sa.sageattn_qk_int8_pv_fp16_cuda, sa.sageattn_qk_int8_pv_fp16_triton,
             sa.sageattn_qk_int8_pv_fp8_cuda, sa.sageattn_qk_int8_pv_fp8_cuda_sm90]


def meta(*shape, dtype=torch.float16):
    return torch.empty(*shape, dtype=dtype, device="meta")


def qkv(b=2, hq=8, hk=2, nq=77, nk=50, d=64, layout="HND", dtype=torch.float16):
    def t(h, n):
        return meta(b, h, n, d, dtype=dtype) if layout == "HND" else meta(b, n, h, d, dtype=dtype)
    return t(hq, nq), t(hk, nk), t(hk, nk)


# ---- names and signatures ------------------------------------------------------------------------

def test_every_upstream_name_importable_at_once():
    # diffusers imports all six in one statement: one missing name disables its whole integration
    ns = {}
    exec("from sageattention import " + ", ".join(UPSTREAM_NAMES), ns)
    assert all(callable(ns[n]) for n in UPSTREAM_NAMES)
    assert set(UPSTREAM_NAMES) <= set(sa.__all__)


def test_upstream_signatures_keep_their_positions():
    import inspect

    def params(fn):
        return list(inspect.signature(fn).parameters)[:11]
    assert params(sa.sageattn)[:7] == ["q", "k", "v", "tensor_layout", "is_causal", "sm_scale", "return_lse"]
    assert params(sa.sageattn_qk_int8_pv_fp16_cuda) == ["q", "k", "v", "tensor_layout", "is_causal", "qk_quant_gran",
                                                         "sm_scale", "pv_accum_dtype", "smooth_k", "smooth_v",
                                                         "return_lse"]
    assert params(sa.sageattn_qk_int8_pv_fp8_cuda)[:11] == params(sa.sageattn_qk_int8_pv_fp16_cuda)
    assert params(sa.sageattn_qk_int8_pv_fp16_triton)[:10] == ["q", "k", "v", "tensor_layout", "quantization_backend",
                                                                "is_causal", "attn_mask", "sm_scale", "smooth_k",
                                                                "return_lse"]
    assert params(sa.sageattn_varlen)[:10] == ["q", "k", "v", "cu_seqlens_q", "cu_seqlens_k", "max_seqlen_q",
                                                "max_seqlen_k", "is_causal", "sm_scale", "smooth_k"]



def test_core_module_keeps_its_public_names():
    # sageattention.core held the API before it was split by concern; imports of it keep working
    from sageattention import core
    for name in UPSTREAM_NAMES + ["build_info", "extension_error", "sdpa_plan", "sdpa_run", "unsupported_reason"]:
        assert getattr(core, name) is getattr(sa, name, getattr(core, name)) and callable(getattr(core, name))
    assert core.sageattn is sa.sageattn and core.sageattn_varlen is sa.sageattn_varlen

# ---- SDPA's arguments ----------------------------------------------------------------------------

def test_normalize_aliases_scale_gqa():
    q, k, v = qkv()
    c = _args.normalize("f", None, None, None, "HND", False, None, False,
                        dict(query=q, key=k, value=v, attn_mask=None, dropout_p=0.0, scale=0.5, enable_gqa=True))
    assert c.q is q and c.k is k and c.v is v and c.sm_scale == 0.5 and c.attn_mask is None and c.options == {}
    c = _args.normalize("f", q, k, v, "NHD", True, 0.25, True, dict(scale=0.25))  # equal values are fine
    assert c.sm_scale == 0.25 and c.is_causal and c.return_lse and c.tensor_layout == "NHD"


@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(scale=0.5), ValueError, "sm_scale=0.125 and scale=0.5"),
    (dict(dropout_p=0.1), ValueError, "dropout_p must be 0"),
    (dict(query="x"), TypeError, "both 'q' and its alias 'query'"),
    (dict(enable_gqa="yes"), TypeError, "enable_gqa must be a bool"),
    (dict(no_such_option=1), TypeError, "unexpected keyword argument 'no_such_option'"),
])
def test_normalize_errors(kwargs, exc, match):
    q, k, v = qkv()
    with pytest.raises(exc, match=match):
        _args.normalize("f", q, k, v, "HND", False, 0.125, False, kwargs)


def test_missing_tensor_names_sdpa_alias():
    with pytest.raises(TypeError, match="missing the 'k' tensor.*'key'"):
        sa.sageattn(query=meta(1, 1, 8, 64), value=meta(1, 1, 8, 64))


def test_sdpa_positional_order():
    q, k, v = qkv()
    mask = torch.ones(2, 1, 1, 50, dtype=torch.bool)
    # F.scaled_dot_product_attention(q, k, v, None, 0.0, True, scale=0.3) with sageattn in its place fills
    # sageattn's slots tensor_layout=None, is_causal=0.0, sm_scale=True
    c = _args.normalize("sageattn", q, k, v, None, 0.0, True, False, dict(scale=0.3), sdpa_positional=True)
    assert c.attn_mask is None and c.is_causal is True and c.sm_scale == 0.3 and c.return_lse is False
    c = _args.normalize("sageattn", q, k, v, mask, False, None, False, {}, sdpa_positional=True)  # (q, k, v, mask)
    assert c.attn_mask is mask and not c.is_causal and c.tensor_layout == "HND"
    with pytest.raises(ValueError, match="dropout_p"):  # (q, k, v, None, 0.5)
        _args.normalize("sageattn", q, k, v, None, 0.5, None, False, {}, sdpa_positional=True)
    with pytest.raises(TypeError, match="attn_mask twice"):
        _args.normalize("sageattn", q, k, v, mask, False, None, False, dict(attn_mask=mask))


def test_mask_with_causal_is_refused_naming_attn_mask():
    q, k, v = qkv()
    with pytest.raises(ValueError, match="attn_mask and is_causal"):
        _args.normalize("f", q, k, v, "HND", True, None, False, dict(attn_mask=torch.ones(1, dtype=torch.bool)))


@needs_ext
@pytest.mark.parametrize("fn", DENSE_FNS, ids=lambda f: f.__name__)
def test_sdpa_keyword_call_runs(fn):
    # diffusers' / transformers' call after F.scaled_dot_product_attention = fn
    q, k, v = qkv()
    o = fn(query=q, key=k, value=v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=True)
    assert o.shape == q.shape and o.dtype == q.dtype


@needs_ext
def test_comfyui_call_pattern():
    q, k, v = qkv(layout="NHD", dtype=torch.bfloat16)
    o = sa.sageattn(q, k, v, attn_mask=None, is_causal=False, tensor_layout="NHD")
    assert o.shape == q.shape and o.dtype == torch.bfloat16


@needs_ext
def test_diffusers_call_pattern_with_lse():
    q, k, v = qkv(layout="NHD")
    o, lse = sa.sageattn(q=q, k=k, v=v, tensor_layout="NHD", is_causal=False, sm_scale=None, return_lse=True)
    assert o.shape == q.shape and lse.shape == (2, 8, 77)


# ---- every upstream option value -----------------------------------------------------------------

FP16_VALUES = [dict(pv_accum_dtype=a) for a in ("fp32", "fp16+fp32", "fp16")]
FP8_VALUES = [dict(pv_accum_dtype=a) for a in ("fp32+fp32", "fp32", "fp32+fp16")]
COMMON_VALUES = ([dict(qk_quant_gran=g) for g in ("per_warp", "per_thread", "per_block")]
                 + [dict(smooth_k=False), dict(smooth_v=True), dict(qk_quant_dtype="int8"), dict(return_lse=True),
                    dict(is_causal=True), dict(sm_scale=0.1)])


@needs_ext
@pytest.mark.parametrize("fn,extra", [(sa.sageattn_qk_int8_pv_fp16_cuda, e) for e in FP16_VALUES + COMMON_VALUES]
                         + [(sa.sageattn_qk_int8_pv_fp8_cuda, e) for e in FP8_VALUES + COMMON_VALUES]
                         + [(sa.sageattn_qk_int8_pv_fp8_cuda_sm90, e) for e in FP8_VALUES[:2] + COMMON_VALUES]
                         + [(sa.sageattn_qk_int8_pv_fp16_triton, e) for e in
                            [dict(quantization_backend="triton"), dict(quantization_backend="cuda"),
                             dict(smooth_k=False), dict(return_lse=True), dict(is_causal=True)]]
                         + [(sa.sageattn, e) for e in FP16_VALUES + FP8_VALUES + COMMON_VALUES],
                         ids=lambda x: getattr(x, "__name__", None) or ",".join(f"{k}={v}" for k, v in x.items()))
def test_every_upstream_value_runs(fn, extra):
    q, k, v = qkv()
    out = fn(q, k, v, **extra)
    o = out[0] if extra.get("return_lse") else out
    assert o.shape == q.shape


@pytest.mark.parametrize("fn,kw,match", [
    (sa.sageattn_qk_int8_pv_fp16_cuda, dict(pv_accum_dtype="fp32+fp32"), "pv_accum_dtype"),
    (sa.sageattn_qk_int8_pv_fp8_cuda, dict(pv_accum_dtype="fp16"), "pv_accum_dtype"),
    (sa.sageattn, dict(pv_accum_dtype="int8"), "pv_accum_dtype"),
    (sa.sageattn_qk_int8_pv_fp8_cuda, dict(qk_quant_gran="per_channel"), "qk_quant_gran"),
    (sa.sageattn_qk_int8_pv_fp8_cuda, dict(qk_quant_dtype="int2"), "qk_quant_dtype"),
    (sa.sageattn_qk_int8_pv_fp16_triton, dict(quantization_backend="cutlass"), "quantization_backend"),
    (sa.sageattn, dict(tensor_layout="BHND"), "tensor_layout"),
])
def test_bad_values_are_clear(fn, kw, match):
    q, k, v = qkv()
    with pytest.raises(ValueError, match=match):
        fn(q, k, v, **kw)


# ---- masks: the key-padding rule -----------------------------------------------------------------

def pad_mask(lengths, n, starts=None, kind="bool", shape="b11n"):
    valid = torch.zeros(len(lengths), n, dtype=torch.bool)
    for b, ln in enumerate(lengths):
        s = starts[b] if starts else 0
        valid[b, s:s + ln] = True
    m = valid if kind == "bool" else torch.zeros(valid.shape).masked_fill(~valid, {"inf": float("-inf"),
                                                                                   "1e4": -10000.0,
                                                                                   "min": torch.finfo(torch.float32).min
                                                                                   }[kind])
    return m[:, None, None, :] if shape == "b11n" else m


@pytest.mark.parametrize("kind", ["bool", "inf", "1e4", "min"])
def test_right_and_left_padding(kind):
    kp = masks.key_padding(pad_mask([5, 9, 1], 9, kind=kind), 3, 4, 7, 9)
    assert kp.length.tolist() == [5, 9, 1] and kp.start.tolist() == [0, 0, 0] and not kp.left
    assert kp.length.dtype == torch.int32 and kp.valid.shape == (3, 9)
    kp = masks.key_padding(pad_mask([5, 9, 1], 9, starts=[4, 0, 8], kind=kind), 3, 4, 7, 9)
    assert kp.start.tolist() == [4, 0, 8] and kp.length.tolist() == [5, 9, 1] and kp.left


def test_masking_values_survive_bfloat16_rounding():
    m = torch.zeros(2, 1, 1, 9, dtype=torch.bfloat16)
    m[1, ..., 5:] = -10000.0  # diffusers' value; -9984 in bfloat16
    assert m.min().item() != -10000.0
    assert masks.key_padding(m, 2, 4, 7, 9).length.tolist() == [9, 5]
    m[0, ..., 3] = -900.0  # above the threshold: a bias
    with pytest.raises(ValueError, match="neither 0"):
        masks.key_padding(m, 2, 4, 7, 9)


def test_full_mask_is_no_mask():
    assert masks.key_padding(torch.ones(2, 1, 1, 9, dtype=torch.bool), 2, 4, 7, 9) is None
    assert masks.key_padding(torch.zeros(9), 2, 4, 7, 9) is None  # additive zeros, broadcast over everything


def test_expanded_and_materialised_masks():
    m = pad_mask([3, 6], 6)
    kp = masks.key_padding(m.expand(2, 4, 7, 6), 2, 4, 7, 6)  # stride 0: read once
    assert kp.length.tolist() == [3, 6]
    kp = masks.key_padding(m.expand(2, 4, 7, 6).contiguous(), 2, 4, 7, 6)  # materialised: checked by value
    assert kp.length.tolist() == [3, 6]
    kp = masks.key_padding(pad_mask([3], 6)[0, 0], 2, 4, 7, 6)  # [1, Nk] broadcast over the batch
    assert kp.length.tolist() == [3, 3]


@pytest.mark.parametrize("case,match", [
    ("causal", "different keys for different heads or query rows"),
    ("heads_differ", "different keys for different heads"),
    ("holes", "not one contiguous range"),
    ("empty_batch", "no key to attend"),
    ("bias", "neither 0"),
    ("nan", "neither 0"),
    ("shape", "does not broadcast"),
    ("int", "bool or floating"),
    ("rank5", "at most 4 dimensions"),
    ("not_tensor", "torch.Tensor or None"),
])
def test_masks_that_cannot_be_applied_raise_naming_attn_mask(case, match):
    b, h, nq, nk = 2, 4, 7, 9
    m = {
        "causal": torch.ones(nq, nk, dtype=torch.bool).tril(),
        "heads_differ": torch.ones(1, h, 1, nk, dtype=torch.bool),
        "holes": pad_mask([9, 9], nk).index_fill(3, torch.tensor([4]), False),
        "empty_batch": pad_mask([3, 0], nk),
        "bias": torch.randn(b, 1, 1, nk),
        "nan": torch.full((b, 1, 1, nk), float("nan")),
        "shape": torch.ones(3, 1, 1, nk, dtype=torch.bool),
        "int": torch.ones(b, 1, 1, nk, dtype=torch.int32),
        "rank5": torch.ones(1, b, 1, 1, nk, dtype=torch.bool),
        "not_tensor": [[True] * nk],
    }[case]
    if case == "heads_differ":
        m[0, 0, 0, 8] = False  # head 0 drops the last key, the others keep it
    with pytest.raises(ValueError, match=match) as e:
        masks.key_padding(m, b, h, nq, nk)
    assert isinstance(e.value, masks.MaskError) and str(e.value).startswith("sageattention: attn_mask ")


def test_mask_on_another_device_is_refused():
    q, k, v = qkv()
    with pytest.raises(ValueError, match="attn_mask is on cpu"):
        _tensors.mask_padding(torch.ones(2, 1, 1, 50, dtype=torch.bool), q, k, "HND")


def test_absolute_starts_fold_the_batch_stride():
    k = torch.zeros(3, 10, 2, 64)  # NHD contiguous: batch stride = 10 rows
    _, st = _tensors.absolute_starts(k, torch.tensor([1, 0, 4], dtype=torch.int32), "NHD")
    assert st.tolist() == [1, 10, 24]
    k = torch.zeros(3, 2, 10, 64)  # HND: a batch is 2 heads x 10 rows of the seq axis
    _, st = _tensors.absolute_starts(k, torch.tensor([1, 0, 4], dtype=torch.int32), "HND")
    assert st.tolist() == [1, 20, 44]
    kt = torch.zeros(3, 10, 2, 64).transpose(1, 2)  # HND view of NHD storage: seq stride 128, batch stride 1280
    t, st = _tensors.absolute_starts(kt, torch.tensor([1, 0, 4], dtype=torch.int32), "HND")
    assert t is kt and st.tolist() == [1, 10, 24]


@needs_ext
def test_lse_correction_uses_the_attended_keys_only():
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, 1, 3, 8, generator=g), torch.randn(2, 1, 5, 8, generator=g)
    valid = torch.tensor([[True, True, False, False, False], [True] * 5])
    corr = _tensors.lse_correction(q, k, "HND", 1.0, valid)
    expect0 = q[0, 0] @ k[0, 0, :2].mean(0)
    assert torch.allclose(corr[0, 0], expect0, atol=1e-5)
    assert torch.allclose(corr[1, 0], q[1, 0] @ k[1, 0].mean(0), atol=1e-5)


# ---- sageattn_varlen -----------------------------------------------------------------------------

def cu(*lens, dtype=torch.int32):
    c = [0]
    for n in lens:
        c.append(c[-1] + n)
    return torch.tensor(c, dtype=dtype)


def packed(tq=30, tk=40, hq=4, hk=2, d=64, dtype=torch.float16):
    return meta(tq, hq, d, dtype=dtype), meta(tk, hk, d, dtype=dtype), meta(tk, hk, d, dtype=dtype)


@pytest.mark.parametrize("kw,exc,match", [
    (dict(cu_seqlens_q=cu(10, 20).float()), ValueError, "int32 or int64"),
    (dict(cu_seqlens_k=cu(10, 10, 20)), ValueError, "same length"),
    (dict(cu_seqlens_q=[0, 10, 30]), TypeError, "must be a torch.Tensor"),
    (dict(max_seqlen_q=0), ValueError, "max_seqlen_q must be a positive int"),
    (dict(max_seqlen_k=19), ValueError, "max_seqlen_k \\(19\\) is smaller than the longest sequence"),
    (dict(cu_seqlens_q=cu(20, 10).flip(0)), ValueError, "non-decreasing"),
    (dict(cu_seqlens_k=cu(20, 30)), ValueError, "within \\[0, 40\\]"),
    (dict(return_lse=True), ValueError, "return_lse"),
    (dict(attn_mask=torch.ones(1, dtype=torch.bool)), ValueError, "takes no attn_mask"),
    (dict(dropout_p=0.2), ValueError, "dropout_p"),
    (dict(pv_accum_dtype="fp64"), ValueError, "pv_accum_dtype"),
    (dict(bogus=1), TypeError, "unexpected keyword"),
])
def test_varlen_argument_errors(kw, exc, match):
    q, k, v = packed()
    args = dict(cu_seqlens_q=cu(10, 20), cu_seqlens_k=cu(20, 20), max_seqlen_q=20, max_seqlen_k=20)
    args.update(kw)
    with pytest.raises(exc, match=match):
        sa.sageattn_varlen(q, k, v, **args)


def test_varlen_shape_errors():
    q, k, v = packed()
    with pytest.raises(ValueError, match="3-D"):
        sa.sageattn_varlen(q[None], k, v, cu(10, 20), cu(20, 20), 20, 20)
    with pytest.raises(ValueError, match="multiple of the number of key/value heads"):
        sa.sageattn_varlen(meta(30, 3, 64), k, v, cu(10, 20), cu(20, 20), 20, 20)
    with pytest.raises(ValueError, match="CUDA"):
        sa.sageattn_varlen(torch.zeros(30, 4, 64, dtype=torch.half), torch.zeros(40, 2, 64, dtype=torch.half),
                           torch.zeros(40, 2, 64, dtype=torch.half), cu(10, 20), cu(20, 20), 20, 20)


@needs_ext
@pytest.mark.parametrize("extra", [{}, dict(is_causal=True), dict(pv_accum_dtype="fp32+fp32"),
                                   dict(qk_quant_gran="per_warp", smooth_k=False), dict(scale=0.2)])
def test_varlen_runs_on_fake_kernels(extra):
    q, k, v = packed(d=100, dtype=torch.bfloat16)
    o = sa.sageattn_varlen(q, k, v, cu(10, 20), cu(15, 25, dtype=torch.int64), 20, 25, **extra)
    assert o.shape == q.shape and o.dtype == torch.bfloat16


@needs_ext
def test_varlen_query_key_value_aliases():
    q, k, v = packed()
    o = sa.sageattn_varlen(query=q, key=k, value=v, cu_seqlens_q=cu(10, 20), cu_seqlens_k=cu(20, 20),
                           max_seqlen_q=20, max_seqlen_k=20)
    assert o.shape == q.shape


# ---- fake kernels of the new op arguments ---------------------------------------------------------

@needs_ext
def test_fake_packed_ops_shapes():
    ops = torch.ops.sageattention
    st, ln = meta(3, dtype=torch.int32), meta(3, dtype=torch.int32)
    x = meta(500, 6, 96)
    qi, qs = ops.quant_q(x, 2, 2, st, ln, 200)
    assert qi.shape == (3, 6, 256, 128) and qs.shape == (3, 6, 16, 8)
    ki, ks = ops.quant_k(meta(300, 2, 96), 2, 2, True, st, ln, 130)
    assert ki.shape == (3, 2, 192, 128) and ks.shape == (3, 2, 3, 4)
    vf, vs, vm = ops.quant_v_fp8(meta(300, 2, 96), 2, False, st, ln, 130)
    assert vf.shape == (3, 2, 128, 192) and vf.dtype == torch.float8_e4m3fn
    o, lse = ops.attn_pv_fp16(qi, qs, ki, ks, meta(300, 2, 96), 2, 200, True, 0.1, True, torch.bfloat16, st, ln, st, ln,
                              500, 130)
    assert o.shape == (500, 6, 96) and o.dtype == torch.bfloat16 and lse.shape == (3, 6, 200)
    o, lse = ops.attn_pv_fp8(qi, qs, ki, ks, vf, vs, None, 2, 200, 130, 96, False, 0.1, False, torch.float16, st, ln,
                             ln, 500)
    assert o.shape == (500, 6, 96) and lse.shape == (0,)
    # the three in one op; without v its V outputs are empty
    got = ops.quant_qkv(x, meta(300, 2, 96), meta(300, 2, 96), 2, 2, True, False, st, ln, 200, st, ln, 130)
    assert [tuple(t.shape) for t in got] == [(3, 6, 256, 128), (3, 6, 16, 8), (3, 2, 192, 128), (3, 2, 3, 4),
                                             (3, 2, 128, 192), (3, 2, 128), (3, 2, 128)]
    got = ops.quant_qkv(x, meta(300, 2, 96), None, 2, 2, True, False, st, ln, 200, st, ln, 130)
    assert [tuple(t.shape) for t in got[4:]] == [(0,), (0,), (0,)] and got[4].dtype == torch.float8_e4m3fn
    # dense layouts with per-batch key lengths keep their shapes
    ki, ks = ops.quant_k(meta(3, 2, 130, 64), 0, 2, True, None, ln)
    assert ki.shape == (3, 2, 192, 64)


@needs_ext
def test_fake_tensor_mode_varlen_and_masked_trace():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        q, k, v = (torch.empty(s, dtype=torch.float16, device="meta") for s in ((30, 4, 64), (40, 2, 64), (40, 2, 64)))
        cq, ck = torch.empty(3, dtype=torch.int32, device="meta"), torch.empty(3, dtype=torch.int32, device="meta")
        o = sa.sageattn_varlen(q, k, v, cq, ck, 20, 25, is_causal=True)
        assert o.shape == q.shape

    def f(q, k, v, cq, ck):
        return sa.sageattn_varlen(q, k, v, cq, ck, 20, 25) * 2

    args = (meta(30, 4, 64), meta(40, 2, 64), meta(40, 2, 64), meta(3, dtype=torch.int32), meta(3, dtype=torch.int32))
    gm, _ = torch._dynamo.export(f)(*args)
    targets = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
    assert any("sageattention.quant_qkv" in t for t in targets) and any("attn_pv_fp16" in t for t in targets), targets


@needs_ext
def test_export_sdpa_style_call_has_no_graph_break():
    def f(q, k, v):
        return sa.sageattn(query=q, key=k, value=v, attn_mask=None, dropout_p=0.0, is_causal=True, scale=0.1,
                           enable_gqa=True, tensor_layout="NHD") + 1

    gm, _ = torch._dynamo.export(f)(*qkv(layout="NHD"))
    targets = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
    # the dense forward is one op (quantization and attention in C++)
    assert any(t.split(".")[:2] == ["sageattention", "attn"] for t in targets), targets


# ---- patch_sdpa (CPU tensors: every call must reach torch's SDPA unchanged) -----------------------

@pytest.fixture
def clean_patch():
    before = F.scaled_dot_product_attention
    yield
    for h in list(sdpa_patch._ACTIVE):
        h.restore()
    assert F.scaled_dot_product_attention is before


def cpu_qkv(dtype=torch.float32, b=2, h=4, n=16, d=32):
    g = torch.Generator().manual_seed(0)
    return tuple(torch.randn(b, h, n, d, generator=g, dtype=torch.float32).to(dtype) for _ in range(3))


def test_patch_routes_cpu_calls_to_sdpa_with_equal_results(clean_patch):
    q, k, v = cpu_qkv()
    mask = torch.rand(2, 1, 16, 16) > 0.3
    ref = (F.scaled_dot_product_attention(q, k, v), F.scaled_dot_product_attention(q, k, v, attn_mask=mask),
           F.scaled_dot_product_attention(q, k, v, None, 0.0, True, scale=0.3))
    with sa.patch_sdpa() as p:
        assert F.scaled_dot_product_attention is not sdpa_patch.original_sdpa()
        got = (F.scaled_dot_product_attention(q, k, v), F.scaled_dot_product_attention(q, k, v, attn_mask=mask),
               F.scaled_dot_product_attention(q, k, v, None, 0.0, True, scale=0.3))
    for a, b in zip(ref, got):
        assert torch.equal(a, b)
    assert p.stats == {"sageattention": 0, "sdpa": 3, "fallback_reasons": {"device cpu": 3}}
    assert "0 of 3 calls ran SageAttention" in p.summary() and "device cpu (3)" in p.summary()
    assert not p.active


def test_patch_call_that_stays_and_restore(clean_patch):
    orig = F.scaled_dot_product_attention
    p = sa.patch_sdpa()
    assert sdpa_patch.is_patched() and F.scaled_dot_product_attention is sdpa_patch.scaled_dot_product_attention
    F.scaled_dot_product_attention(*cpu_qkv(torch.bfloat16))
    assert p.stats["sdpa"] == 1
    p.restore()
    p.restore()  # twice is a no-op
    assert F.scaled_dot_product_attention is orig and not sdpa_patch.is_patched()
    F.scaled_dot_product_attention(*cpu_qkv())
    assert p.stats["sdpa"] == 1  # not counted after restore


def test_nested_patches_count_and_restore_in_any_order(clean_patch):
    orig = F.scaled_dot_product_attention
    q, k, v = cpu_qkv()
    outer = sa.patch_sdpa()
    F.scaled_dot_product_attention(q, k, v)
    inner = sa.patch_sdpa()
    F.scaled_dot_product_attention(q, k, v)
    outer.restore()  # out of order: still patched for inner
    assert sdpa_patch.is_patched()
    F.scaled_dot_product_attention(q, k, v)
    assert (outer.stats["sdpa"], inner.stats["sdpa"]) == (2, 2)
    inner.restore()
    assert F.scaled_dot_product_attention is orig
    with sa.patch_sdpa() as a, sa.patch_sdpa() as b:
        F.scaled_dot_product_attention(q, k, v)
    assert a.stats["sdpa"] == b.stats["sdpa"] == 1 and F.scaled_dot_product_attention is orig


def test_patch_rebinds_names_imported_before_it(clean_patch):
    mod = types.ModuleType("sa_test_early_importer")
    exec("from torch.nn.functional import scaled_dot_product_attention", mod.__dict__)
    sys.modules[mod.__name__] = mod
    try:
        orig = mod.scaled_dot_product_attention
        with sa.patch_sdpa() as p:
            assert mod.scaled_dot_product_attention is sdpa_patch.scaled_dot_product_attention
            mod.scaled_dot_product_attention(*cpu_qkv())
        assert mod.scaled_dot_product_attention is orig and p.stats["sdpa"] == 1
        with sa.patch_sdpa(rebind_imported=False):
            assert mod.scaled_dot_product_attention is orig
    finally:
        del sys.modules[mod.__name__]


def test_patch_leaves_a_later_patch_by_someone_else(clean_patch):
    orig = F.scaled_dot_product_attention

    def theirs(*a, **kw):
        return orig(*a, **kw)

    p = sa.patch_sdpa()
    F.scaled_dot_product_attention = theirs
    p.restore()
    assert F.scaled_dot_product_attention is theirs
    F.scaled_dot_product_attention = orig


def test_patch_passes_sdpa_arguments_through(clean_patch):
    q, k, v = cpu_qkv(n=8)
    kv = (k[:, :2], v[:, :2])
    ref = F.scaled_dot_product_attention(q, *kv, enable_gqa=True, scale=0.2)
    with sa.patch_sdpa() as p:
        got = F.scaled_dot_product_attention(q, *kv, enable_gqa=True, scale=0.2)
        with pytest.raises(TypeError):  # torch's own signature: scale is keyword-only
            F.scaled_dot_product_attention(q, k, v, None, 0.0, False, 0.2)
    assert torch.equal(ref, got) and p.stats["sdpa"] == 1


@pytest.mark.parametrize("case,reason", [
    ("cpu", "device cpu"),
    ("meta_fp32", "device meta"),
])
def test_sdpa_plan_reasons_off_gpu(case, reason):
    t = torch.zeros(1, 2, 8, 64) if case == "cpu" else meta(1, 2, 8, 64, dtype=torch.float32)
    plan, why = plans.sdpa_plan(t, t, t, None, 0.0, False, None, False)
    assert plan is None and why == reason
