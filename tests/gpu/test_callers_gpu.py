"""Sequence-parallel callers on one GPU: yunchang's and xDiT's calls (flash-attn's
keywords, the LSE merged over ring steps), fp32 inputs, empty inputs and the
autograd contract, against float64 attention and torch SDPA."""
import functools

import pytest

# skips this module without a CUDA GPU or the extension
from gpu_helpers import HAS_FP8, PATHS, make_qkv, metrics, ref, run_path, sa, torch

pytestmark = pytest.mark.gpu

F = torch.nn.functional
SDPA = F.scaled_dot_product_attention

# yunchang 0.6.4's AttnType.SAGE_* partials; the FP8 ones need sm89
YUNCHANG = {
    "SAGE_AUTO": functools.partial(sa.sageattn, tensor_layout="NHD", return_lse=True),
    "SAGE_FP16": functools.partial(sa.sageattn_qk_int8_pv_fp16_cuda, pv_accum_dtype="fp32", tensor_layout="NHD",
                                   return_lse=True),
    "SAGE_FP16_TRITON": functools.partial(sa.sageattn_qk_int8_pv_fp16_triton, tensor_layout="NHD", return_lse=True),
}
if HAS_FP8:
    YUNCHANG["SAGE_FP8"] = functools.partial(sa.sageattn_qk_int8_pv_fp8_cuda, pv_accum_dtype="fp32+fp32",
                                             tensor_layout="NHD", return_lse=True)
    YUNCHANG["SAGE_FP8_SM90"] = functools.partial(sa.sageattn_qk_int8_pv_fp8_cuda_sm90, pv_accum_dtype="fp32+fp32",
                                                  tensor_layout="NHD", return_lse=True)


def ring_step(fn, q, k, v, scale, causal):
    """One step of yunchang's ring forward: its exact keywords."""
    return fn(q, k, v, dropout_p=0.0, softmax_scale=scale, causal=causal, window_size=(-1, -1), softcap=0.0,
              alibi_slopes=None, return_softmax=False)


def merge(out, lse, block_out, block_lse):
    """Blocks of one softmax merged by their LSEs (what a ring's update does): out [B, N, H, D] fp32,
    lse [B, N, H, 1]; block_lse [B, H, N] natural log."""
    block_lse = block_lse.transpose(-2, -1).unsqueeze(-1)
    block_out = block_out.float()
    if out is None:
        return block_out, block_lse
    new = torch.logaddexp(lse, block_lse)
    return torch.exp(lse - new) * out + torch.exp(block_lse - new) * block_out, new


@pytest.mark.parametrize("attn_type", sorted(YUNCHANG))
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_ring_over_four_chunks_equals_full_attention(attn_type, causal, dtype):
    # the reported failure: upstream ignores causal and softmax_scale here (cosine 0.59 for causal)
    fn = YUNCHANG[attn_type]
    q, k, v = make_qkv("kbias", b=1, hq=8, hk=8, nq=4096, nk=4096, d=128, dtype=dtype, layout="NHD", seed=3)
    scale = 0.1
    chunks = 4
    qs, ks, vs = (t.chunk(chunks, dim=1) for t in (q, k, v))
    outs = []
    for r in range(chunks):  # rank r holds query chunk r and sees key chunks 0..r (causal) or all
        out = lse = None
        for step in range(chunks):
            j = (r - step) % chunks
            if causal and step > r:
                continue
            bo, bl = ring_step(fn, qs[r], ks[j], vs[j], scale, causal and step == 0)
            assert bl.shape == (1, 8, qs[r].shape[1]) and bl.dtype == torch.float32
            out, lse = merge(out, lse, bo, bl)
        outs.append(out)
    o = torch.cat(outs, dim=1)
    r = ref.attention_fp64(q, k, v, tensor_layout="NHD", is_causal=causal, sm_scale=scale)
    cos, l1 = metrics(o, r)
    assert cos >= 0.999 and l1 < 0.05, (cos, l1)


@pytest.mark.parametrize("layout", ["HND", "NHD"])
@pytest.mark.parametrize("causal", [False, True])
def test_lse_is_natural_log_b_h_n_in_both_layouts(layout, causal):
    q, k, v = make_qkv("kbias", b=2, hq=4, hk=2, nq=700, nk=900, d=64, layout=layout, seed=4)
    o, lse = sa.sageattn(q, k, v, tensor_layout=layout, is_causal=causal, return_lse=True)  # xDiT's call
    _, lse_ref = ref.attention_fp64(q, k, v, tensor_layout=layout, is_causal=causal, return_lse=True)
    assert lse.shape == (2, 4, 700) and lse.dtype == torch.float32
    err = (lse.double() - lse_ref).abs()
    assert err.max().item() < 0.05 and err.mean().item() < 0.01, (err.max().item(), err.mean().item())


def test_softmax_scale_and_causal_are_honoured():
    q, k, v = make_qkv("randn", b=1, hq=4, hk=4, nq=512, nk=512, d=64, seed=5)
    base = sa.sageattn(q, k, v, is_causal=True, sm_scale=0.05)
    flash = sa.sageattn(q, k, v, causal=True, softmax_scale=0.05)
    assert metrics(flash, base)[0] > 0.999999
    assert metrics(flash, sa.sageattn(q, k, v))[0] < 0.99  # both keywords changed the result


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("layout", ["HND", "NHD"])
def test_fp32_is_as_accurate_as_bf16(path, layout):
    q, k, v = make_qkv("kbias", b=2, hq=4, hk=4, nq=1000, nk=1000, d=128, dtype=torch.float32, layout=layout, seed=6)
    o32, lse32 = run_path(path, q, k, v, tensor_layout=layout, return_lse=True)
    assert o32.dtype == torch.float32 and lse32.dtype == torch.float32
    ob, lseb = run_path(path, q.bfloat16(), k.bfloat16(), v.bfloat16(), tensor_layout=layout, return_lse=True)
    # the same kernels on the same bf16 values (K mean's float atomics may flip single int8 steps)
    assert metrics(o32, ob)[0] > 0.999999 and (lse32 - lseb).abs().max().item() < 1e-2
    r = ref.attention_fp64(q, k, v, tensor_layout=layout)
    assert metrics(o32, r)[0] >= 0.999


@pytest.mark.parametrize("path", PATHS)
def test_fp32_values_beyond_fp16s_range_stay_finite(path):
    q, k, v = make_qkv("randn", b=1, hq=2, hk=2, nq=256, nk=256, d=64, dtype=torch.float32, seed=7)
    v = v * 1e6  # fp16 overflows above 65504; the FP16 P.V path scales V into its range
    o = run_path(path, q, k, v)
    assert torch.isfinite(o).all()
    cos, l1 = metrics(o, ref.attention_fp64(q, k, v))
    assert cos >= 0.999 and l1 < 0.05, (cos, l1)


@pytest.mark.parametrize("case", ["batch0", "no_queries", "no_keys"])
@pytest.mark.parametrize("causal", [False, True])
def test_empty_inputs_equal_sdpa(case, causal):
    sq, sk = {"batch0": ((0, 4, 16, 64), (0, 4, 9, 64)), "no_queries": ((2, 4, 0, 64), (2, 4, 9, 64)),
              "no_keys": ((2, 4, 16, 64), (2, 4, 0, 64))}[case]
    q = torch.randn(sq, device="cuda", dtype=torch.float16)
    k, v = (torch.randn(sk, device="cuda", dtype=torch.float16) for _ in range(2))
    want = SDPA(q.cpu().float(), k.cpu().float(), v.cpu().float(), is_causal=causal).to("cuda", torch.float16)
    for fn in (sa.sageattn, sa.sageattn_qk_int8_pv_fp16_cuda):
        o = fn(q, k, v, is_causal=causal)
        assert o.shape == want.shape and o.dtype == q.dtype and torch.equal(o, want), fn.__name__


@pytest.fixture
def backward_mode():
    yield sa.set_backward
    sa.set_backward(None)


def test_backward_refuses_naming_the_fallback(backward_mode):
    backward_mode("error")
    q, k, v = make_qkv("randn", b=1, hq=4, hk=4, nq=256, nk=256, d=64, seed=8)
    q.requires_grad_()
    o = sa.sageattn(q, k, v)
    assert o.requires_grad
    with pytest.raises(RuntimeError, match="patch_sdpa"):
        o.float().sum().backward()


@pytest.mark.parametrize("layout", ["HND", "NHD"])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_opted_in_gradients_are_sdpas(layout, causal, dtype, backward_mode):
    backward_mode("sdpa")
    q, k, v = make_qkv("randn", b=2, hq=8, hk=2, nq=300, nk=300, d=64, dtype=dtype, layout=layout, seed=9)
    ins = [t.clone().requires_grad_() for t in (q, k, v)]
    o = sa.sageattn(*ins, tensor_layout=layout, is_causal=causal)
    g = torch.randn_like(o)
    o.backward(g)
    refs = [t.clone().requires_grad_() for t in (q, k, v)]
    hnd = [t if layout == "HND" else t.transpose(1, 2) for t in refs]
    r = SDPA(*hnd, is_causal=causal, enable_gqa=True)
    (r if layout == "HND" else r.transpose(1, 2)).backward(g)
    for a, b in zip(ins, refs):
        torch.testing.assert_close(a.grad, b.grad, rtol=1e-3, atol=1e-3)


def test_patch_sdpa_serves_training_calls_once_opted_in(backward_mode):
    q, k, v = make_qkv("randn", b=1, hq=4, hk=4, nq=256, nk=256, d=64, dtype=torch.bfloat16, seed=10)
    backward_mode("sdpa")
    g = q.clone().requires_grad_()
    with sa.patch_sdpa(route="sageattention") as p:
        o = F.scaled_dot_product_attention(g, k, v, is_causal=True)
        o.float().sum().backward()
    assert p.stats["sageattention"] == 1 and g.grad is not None
    g2 = q.clone().requires_grad_()
    SDPA(g2, k, v, is_causal=True).float().sum().backward()
    torch.testing.assert_close(g.grad, g2.grad, rtol=1e-2, atol=1e-2)


def test_compile_with_grads(backward_mode):
    backward_mode("sdpa")
    torch._dynamo.reset()

    @torch.compile(fullgraph=True)
    def f(q, k, v):
        return sa.sageattn(q, k, v, causal=True, softmax_scale=0.125, tensor_layout="NHD")

    q, k, v = (t.requires_grad_() for t in make_qkv("randn", b=1, hq=4, hk=4, nq=256, nk=256, d=64, layout="NHD",
                                                      seed=11))
    o = f(q, k, v)
    o.float().sum().backward()
    assert q.grad is not None and torch.isfinite(q.grad).all()
