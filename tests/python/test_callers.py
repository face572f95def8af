"""Sequence-parallel callers on a CPU machine: flash-attn's keywords as yunchang
and xDiT pass them, fp32 inputs, empty inputs, and the autograd contract.

Calls run end to end on meta tensors (the fake kernels: shapes and dtypes);
the values that need no kernel (empty results, the recomputed gradients) are
checked on CPU tensors against torch SDPA."""
import functools
import logging

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import sageattention as sa  # noqa: E402
from sageattention import _args, _autograd, _tensors, sdpa_patch  # noqa: E402

needs_ext = pytest.mark.needs_ext  # skipped by conftest.py, with the reason, where the extension is not loaded

DENSE_FNS = [sa.sageattn, sa.sageattn_qk_int8_pv_fp16_cuda, sa.sageattn_qk_int8_pv_fp16_triton,
             sa.sageattn_qk_int8_pv_fp8_cuda, sa.sageattn_qk_int8_pv_fp8_cuda_sm90]
# yunchang.kernels.select_flash_attn_impl's partials for AttnType.SAGE_* (yunchang 0.6.4), by attn type
YUNCHANG = {
    "SAGE_AUTO": functools.partial(sa.sageattn, tensor_layout="NHD", return_lse=True),
    "SAGE_FP16": functools.partial(sa.sageattn_qk_int8_pv_fp16_cuda, pv_accum_dtype="fp32", tensor_layout="NHD",
                                   return_lse=True),
    "SAGE_FP16_TRITON": functools.partial(sa.sageattn_qk_int8_pv_fp16_triton, tensor_layout="NHD", return_lse=True),
    "SAGE_FP8": functools.partial(sa.sageattn_qk_int8_pv_fp8_cuda, pv_accum_dtype="fp32+fp32", tensor_layout="NHD",
                                  return_lse=True),
    "SAGE_FP8_SM90": functools.partial(sa.sageattn_qk_int8_pv_fp8_cuda_sm90, pv_accum_dtype="fp32+fp32",
                                       tensor_layout="NHD", return_lse=True),
}
# ... and the keywords its ring step passes (yunchang.ring.ring_flash_attn.ring_flash_attn_forward)
RING_STEP = dict(dropout_p=0.0, softmax_scale=0.125, causal=True, window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                 return_softmax=False)


def meta(*shape, dtype=torch.float16, grad=False):
    return torch.empty(*shape, dtype=dtype, device="meta", requires_grad=grad)


def qkv(b=2, hq=8, hk=2, nq=77, nk=50, d=64, layout="HND", dtype=torch.float16, grad=False):
    def t(h, n):
        return meta(*((b, h, n, d) if layout == "HND" else (b, n, h, d)), dtype=dtype, grad=grad)
    return t(hq, nq), t(hk, nk), t(hk, nk)


def call(**kw):
    q, k, v = qkv()
    return _args.normalize("f", q, k, v, "HND", kw.pop("is_causal", None), kw.pop("sm_scale", None), False, kw)


# ---- flash-attn's keywords -----------------------------------------------------------------------

def test_flash_attn_aliases_are_honoured():
    c = call(softmax_scale=0.3, causal=True)
    assert c.sm_scale == 0.3 and c.is_causal is True
    assert call(causal=False).is_causal is False and call().is_causal is False and call().sm_scale is None
    # the same value under both spellings is one value
    c = call(is_causal=True, causal=True, sm_scale=0.5, softmax_scale=0.5, scale=0.5)
    assert c.is_causal and c.sm_scale == 0.5


def test_every_neutral_flash_attn_value_is_accepted():
    c = call(**dict(RING_STEP, deterministic=True, return_attn_probs=False))
    assert c.options == {} and c.is_causal and c.sm_scale == 0.125
    assert call(window_size=[-1, -1], softcap=None, return_softmax=None, deterministic=False).options == {}


@pytest.mark.parametrize("kw,match", [
    (dict(is_causal=True, causal=False), r"is_causal=True and causal=False \(flash-attn's name"),
    (dict(is_causal=False, causal=True), r"is_causal=False and causal=True"),
    (dict(sm_scale=0.1, softmax_scale=0.2), r"sm_scale=0.1 and softmax_scale=0.2 \(flash-attn's name"),
    (dict(scale=0.1, softmax_scale=0.2), r"softmax_scale=0.2"),
    (dict(dropout_p=0.1), "dropout_p must be 0"),
    (dict(window_size=(128, 0)), r"window_size must be \(-1, -1\)"),
    (dict(window_size=(-1, 0)), r"window_size must be \(-1, -1\)"),
    (dict(window_size=-1), "window_size"),
    (dict(softcap=30.0), "softcap must be 0.0"),
    (dict(alibi_slopes=torch.zeros(8)), "alibi_slopes must be None"),
    (dict(return_softmax=True), "return_softmax must be False"),
    (dict(return_attn_probs=True), "return_attn_probs must be False"),
    (dict(deterministic="yes"), "deterministic must be True or False"),
])
def test_values_that_would_change_the_result_are_refused(kw, match):
    with pytest.raises(ValueError, match=match):
        call(**kw)


def test_causal_must_be_a_bool():
    with pytest.raises(TypeError, match="causal must be a bool"):
        call(causal="yes")


@needs_ext
@pytest.mark.parametrize("fn", DENSE_FNS, ids=lambda f: f.__name__)
def test_flash_attn_keywords_reach_every_function(fn):
    q, k, v = qkv()
    o = fn(q, k, v, **RING_STEP, deterministic=False, return_attn_probs=False)
    assert o.shape == q.shape
    with pytest.raises(ValueError, match="softcap"):
        fn(q, k, v, softcap=50.0)
    with pytest.raises(ValueError, match="is_causal=False and causal=True"):
        fn(q, k, v, is_causal=False, causal=True)


@needs_ext
@pytest.mark.parametrize("attn_type", sorted(YUNCHANG))
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_yunchang_ring_step_returns_what_update_out_and_lse_merges(attn_type, dtype):
    # the block's out as [B, N, H, D] and its lse as [B, H, N] fp32 (update_out_and_lse transposes it to
    # [B, N, H, 1] beside the out)
    q, k, v = qkv(b=2, hq=8, hk=8, nq=96, nk=96, layout="NHD", dtype=dtype)
    out, lse = YUNCHANG[attn_type](q, k, v, **RING_STEP)
    assert out.shape == (2, 96, 8, 64) and out.dtype == dtype
    assert lse.shape == (2, 8, 96) and lse.dtype == torch.float32
    assert lse.transpose(-2, -1).unsqueeze(-1).shape[:3] == out.shape[:3]


@needs_ext
def test_lse_is_b_h_n_in_both_layouts():
    for layout in ("HND", "NHD"):
        q, k, v = qkv(b=3, hq=4, hk=2, nq=33, nk=70, layout=layout)
        o, lse = sa.sageattn(q, k, v, tensor_layout=layout, return_lse=True)
        assert o.shape == q.shape and lse.shape == (3, 4, 33) and lse.dtype == torch.float32


# ---- dtypes --------------------------------------------------------------------------------------

def test_fp32_runs_as_bf16_which_keeps_fp32s_range():
    assert _tensors.kernel_dtype(torch.float32) == torch.bfloat16
    assert _tensors.kernel_dtype(torch.float16) == torch.float16
    big = torch.tensor([3e38, 1e5, -7e4, 1e-30])
    assert torch.isfinite(big.to(_tensors.kernel_dtype(big.dtype))).all()
    assert not torch.isfinite(big.half()).all()  # what fp16 would do to them


def test_large_fp32_values_are_scaled_into_fp16s_range_exactly():
    v = torch.tensor([[3e9, -1e5], [2.0, 0.5]]).to(torch.bfloat16)
    scaled, s = _tensors.into_fp16_range(v)
    assert s.dim() == 0 and s.item() == 2.0 ** 17 and scaled.abs().max().item() <= 32768
    assert torch.isfinite(scaled.half()).all() and torch.equal(scaled.float() * s, v.float())
    assert _tensors.into_fp16_range(torch.ones(3, dtype=torch.bfloat16))[1].item() == 1.0
    assert _tensors.into_fp16_range(torch.zeros(3, dtype=torch.bfloat16))[1].item() == 1.0


@needs_ext
@pytest.mark.parametrize("fn", DENSE_FNS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("layout", ["HND", "NHD"])
def test_fp32_in_fp32_out(fn, layout):
    q, k, v = qkv(layout=layout, dtype=torch.float32)
    o, lse = fn(q, k, v, tensor_layout=layout, return_lse=True)
    assert o.shape == q.shape and o.dtype == torch.float32 and lse.dtype == torch.float32


@needs_ext
def test_fp32_reaches_the_kernels_as_bf16():
    def f(q, k, v):
        return sa.sageattn(q, k, v)

    gm, _ = torch._dynamo.export(f, aten_graph=True)(*qkv(dtype=torch.float32))
    attn = [n for n in gm.graph.nodes if n.op == "call_function" and "sageattention" in str(n.target)]
    assert attn and all(a.meta["val"].dtype == torch.bfloat16 for a in attn[0].args[:3]), attn


@needs_ext
def test_varlen_fp32():
    q, k, v = meta(30, 4, 64, dtype=torch.float32), meta(40, 2, 64, dtype=torch.float32), meta(40, 2, 64,
                                                                                               dtype=torch.float32)
    o = sa.sageattn_varlen(q, k, v, torch.tensor([0, 10, 30], dtype=torch.int32),
                           torch.tensor([0, 25, 40], dtype=torch.int32), 20, 25)
    assert o.shape == q.shape and o.dtype == torch.float32


def test_other_dtypes_are_refused():
    q = meta(1, 2, 8, 64, dtype=torch.float64)
    with pytest.raises(ValueError, match="float16, bfloat16 or float32, got torch.float64"):
        _tensors.validate(q, q, q, "HND")


# ---- empty inputs: torch SDPA's shapes and values ------------------------------------------------

EMPTY = {  # name: (q shape, k shape) in HND
    "batch0": ((0, 4, 16, 32), (0, 2, 9, 32)),
    "no_queries": ((2, 4, 0, 32), (2, 2, 9, 32)),
    "no_keys": ((2, 4, 16, 32), (2, 2, 0, 32)),
}
NO_HEADS = ((2, 0, 16, 32), (2, 0, 9, 32))  # torch 2.11's SDPA dies of SIGFPE on these (CPU): shapes only


@pytest.mark.parametrize("case", sorted(EMPTY))
@pytest.mark.parametrize("layout", ["HND", "NHD"])
@pytest.mark.parametrize("causal", [False, True])
def test_empty_results_equal_sdpa(case, layout, causal):
    sq, sk = EMPTY[case]
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(sq, generator=g), torch.randn(sk, generator=g)
    v = torch.randn(sk, generator=g)
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
    if layout == "NHD":
        q, k, v, ref = (t.transpose(1, 2) for t in (q, k, v, ref))
    assert _tensors.is_empty(q, k, layout)
    o, lse = _tensors.empty_result(q, v, layout, None, True)
    assert o.shape == ref.shape and torch.equal(o, ref) and o.dtype == ref.dtype
    b, h, n = sq[:3]
    assert lse.shape == (b, h, n) and lse.dtype == torch.float32 and (lse == float("-inf")).all()


@needs_ext
@pytest.mark.parametrize("fn", DENSE_FNS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("case", sorted(EMPTY) + ["no_heads"])
def test_empty_inputs_run_through_every_function(fn, case):
    sq, sk = EMPTY.get(case, NO_HEADS)
    q, k = meta(*sq), meta(*sk)
    o = fn(q, k, k, is_causal=True)
    assert o.shape == sq
    o, lse = fn(q.transpose(1, 2), k.transpose(1, 2), k.transpose(1, 2), tensor_layout="NHD", return_lse=True)
    assert o.shape == q.transpose(1, 2).shape and lse.shape == sq[:3]


def test_empty_inputs_still_check_the_mask_and_heads():
    q, k = torch.zeros(2, 4, 16, 32), torch.zeros(2, 2, 0, 32)
    assert _tensors.empty_result(q, k, "HND", torch.ones(2, 1, 1, 0, dtype=torch.bool), False).shape == (2, 4, 16, 32)
    with pytest.raises(ValueError, match="attn_mask of shape"):
        _tensors.empty_result(q, k, "HND", torch.ones(3, 1, 1, 5, dtype=torch.bool), False)
    with pytest.raises(ValueError, match="no heads but q has 4"):
        _tensors.validate(meta(1, 4, 8, 32), meta(1, 0, 8, 32), meta(1, 0, 8, 32), "HND")


# ---- autograd ------------------------------------------------------------------------------------

@pytest.fixture
def backward_mode():
    yield _autograd.set_backward
    _autograd.set_backward(None)


@needs_ext
@pytest.mark.parametrize("fn", DENSE_FNS, ids=lambda f: f.__name__)
def test_output_stays_in_the_graph_and_backward_names_the_fallback(fn, backward_mode):
    backward_mode("error")
    q, k, v = qkv(grad=True)
    o = fn(q, k, v)
    assert o.requires_grad and o.grad_fn is not None
    with pytest.raises(RuntimeError, match="no backward pass.*patch_sdpa.*SAGEATTN_BACKWARD=sdpa"):
        o.sum().backward()


@needs_ext
def test_only_the_key_requiring_grad_still_keeps_the_graph(backward_mode):
    backward_mode("error")
    q, k, v = qkv()
    o = sa.sageattn(q, k.clone().requires_grad_(), v)
    with pytest.raises(RuntimeError, match="no backward pass"):
        o.sum().backward()


@needs_ext
def test_inference_adds_nothing():
    q, k, v = qkv(grad=True)
    with torch.no_grad():
        assert sa.sageattn(q, k, v).grad_fn is None
    with torch.inference_mode():
        assert sa.sageattn(*qkv()).grad_fn is None
    assert sa.sageattn(*qkv()).grad_fn is None  # nothing requires grad


@needs_ext
@pytest.mark.parametrize("layout", ["HND", "NHD"])
def test_opted_in_backward_gives_gradients_of_every_input(layout, backward_mode):
    backward_mode("sdpa")
    q, k, v = qkv(layout=layout, grad=True)
    o = sa.sageattn(q, k, v, tensor_layout=layout, is_causal=True)
    o.sum().backward()
    assert q.grad.shape == q.shape and k.grad.shape == k.shape and v.grad.shape == v.shape


@needs_ext
def test_gradient_through_the_lse_is_refused(backward_mode):
    backward_mode("sdpa")
    q, k, v = qkv(grad=True)
    o, lse = sa.sageattn(q, k, v, return_lse=True)
    o.sum().backward(retain_graph=True)  # the output alone is fine
    with pytest.raises(RuntimeError, match="through the returned LSE"):
        lse.sum().backward()


@needs_ext
def test_varlen_output_stays_in_the_graph_and_refuses_backward(backward_mode):
    backward_mode("sdpa")  # no recompute for packed sequences: it refuses anyway
    q, k, v = meta(30, 4, 64, grad=True), meta(40, 2, 64), meta(40, 2, 64)
    o = sa.sageattn_varlen(q, k, v, torch.tensor([0, 10, 30], dtype=torch.int32),
                           torch.tensor([0, 25, 40], dtype=torch.int32), 20, 25)
    with pytest.raises(RuntimeError, match="sageattn_varlen has no backward"):
        o.sum().backward()


@pytest.mark.parametrize("layout", ["HND", "NHD"])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("mask", [None, "padding", "additive_grad"])
def test_recomputed_gradients_equal_sdpas(layout, causal, mask):
    g = torch.Generator().manual_seed(1)
    q, k, v = torch.randn(2, 4, 12, 16, generator=g), torch.randn(2, 2, 12, 16, generator=g), torch.randn(
        2, 2, 12, 16, generator=g)
    m = None
    if mask == "padding":
        m = torch.ones(2, 1, 1, 12, dtype=torch.bool)
        m[1, ..., 8:] = False
    elif mask == "additive_grad":
        m = torch.randn(2, 1, 1, 12, generator=g).requires_grad_()
    if m is not None and causal:
        return  # SDPA refuses a mask with is_causal
    ins = [t.clone().requires_grad_() for t in (q, k, v)]
    ref = F.scaled_dot_product_attention(*ins, attn_mask=m, is_causal=causal, scale=0.3, enable_gqa=True)
    grad_o = torch.randn(ref.shape, generator=g)
    want = torch.autograd.grad(ref, ins + ([m] if mask == "additive_grad" else []), grad_o)
    tq, tk, tv = (t if layout == "HND" else t.transpose(1, 2) for t in (q, k, v))
    tq.requires_grad_()
    c = _args.Call(None, None, None, layout, causal, 0.3, False, None)
    got = _autograd.sdpa_grads(tq, tk, tv, m, c, grad_o if layout == "HND" else grad_o.transpose(1, 2))
    assert got[1] is None and got[2] is None  # k and v do not require grad here
    dq = got[0] if layout == "HND" else got[0].transpose(1, 2)
    # fp32 on the CPU: SDPA's math path and the recomputation sum in different
    # orders (and with the CPU's own SIMD width): agreement to 1e-4 relative;
    # a wrong gradient is off by its own size.
    torch.testing.assert_close(dq, want[0], rtol=1e-4, atol=1e-5)
    if mask == "additive_grad":
        torch.testing.assert_close(got[3], want[3], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("case", sorted(EMPTY) + ["no_heads"])
def test_recomputed_gradients_of_empty_inputs_are_zeros(case):
    sq, sk = EMPTY.get(case, NO_HEADS)
    q, k, v = torch.randn(sq).requires_grad_(), torch.randn(sk).requires_grad_(), torch.randn(sk)
    c = _args.Call(None, None, None, "HND", False, None, False, None)
    dq, dk, dv, dm = _autograd.sdpa_grads(q, k, v, None, c, torch.ones(sq))
    assert torch.equal(dq, torch.zeros(sq)) and torch.equal(dk, torch.zeros(sk)) and dv is None and dm is None


def test_backward_mode_from_the_environment(monkeypatch, backward_mode):
    monkeypatch.delenv(_autograd.ENV, raising=False)
    assert _autograd.backward_mode() == "error"
    monkeypatch.setenv(_autograd.ENV, "sdpa")
    assert _autograd.backward_mode() == "sdpa"
    backward_mode("error")
    assert _autograd.backward_mode() == "error"  # set_backward wins over the environment
    backward_mode(None)
    monkeypatch.setenv(_autograd.ENV, "fast")
    with pytest.raises(ValueError, match="SAGEATTN_BACKWARD='fast'"):
        _autograd.backward_mode()
    with pytest.raises(ValueError, match="mode must be one of"):
        sa.set_backward("yes")


@needs_ext
@pytest.mark.parametrize("mode", ["error", "sdpa"])
def test_compile_traces_the_graph_node_without_a_break(mode, backward_mode):
    backward_mode(mode)

    def f(q, k, v):
        return sa.sageattn(q, k, v, causal=True, softmax_scale=0.2, tensor_layout="NHD") * 2

    torch._dynamo.reset()
    compiled = torch.compile(f, backend="eager", fullgraph=True)
    q, k, v = qkv(layout="NHD", grad=True)
    o = compiled(q, k, v)
    assert o.shape == q.shape and o.requires_grad
    if mode == "sdpa":
        o.sum().backward()
        assert q.grad.shape == q.shape and k.grad.shape == k.shape


# ---- patch_sdpa: a once-only line per fallback reason ---------------------------------------------

def test_patch_logs_each_fallback_reason_once(fresh_log, caplog):
    g = torch.Generator().manual_seed(0)
    q = torch.randn(1, 2, 8, 16, generator=g)
    with caplog.at_level(logging.WARNING, logger="sageattention"), sa.patch_sdpa() as p:
        for _ in range(3):
            F.scaled_dot_product_attention(q, q, q)
        F.scaled_dot_product_attention(q.to("meta"), q.to("meta"), q.to("meta"))
    lines = [r.getMessage() for r in caplog.records if r.name == "sageattention"]
    assert len(lines) == 2 and "device cpu" in lines[0] and "device meta" in lines[1], lines
    assert p.stats["sdpa"] == 4


# ---- yunchang itself (where installed): its calls reach every function ---------------------------

@needs_ext
def test_yunchang_long_context_attention_runs_every_sage_type():
    # one process (gloo, world 1: Ulysses 1 x Ring 1) on meta tensors: yunchang's own code calls ours
    pytest.importorskip("yunchang", reason="yunchang not installed (pip install yunchang --no-deps)")
    import os
    import socket

    import torch.distributed as dist
    from yunchang import LongContextAttention, set_seq_parallel_pg
    from yunchang.kernels import AttnType

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=0, world_size=1)
    try:
        set_seq_parallel_pg(1, 1, 0, 1)
        for name in YUNCHANG:
            for dtype in (torch.float16, torch.bfloat16):
                q = meta(1, 256, 8, 64, dtype=dtype)
                with torch.no_grad():
                    o = LongContextAttention(attn_type=AttnType[name])(q, q, q, causal=True, softmax_scale=0.1)
                assert o.shape == q.shape and o.dtype == dtype, name
    finally:
        dist.destroy_process_group()
