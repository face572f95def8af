"""Python-layer tests that need torch but no GPU: argument validation, the
arch error message, build_info handling, and the fake (meta) implementations
that let torch.compile trace the ops.  Skip cleanly without torch; the fake
tests skip when the extension cannot be loaded."""
import json

import pytest

torch = pytest.importorskip("torch")
import sageattention as sa  # noqa: E402
from sageattention import _arch, _extension, _tensors  # noqa: E402
from sageattention import reference as ref  # noqa: E402

needs_ext = pytest.mark.needs_ext  # skipped by conftest.py, with the reason, where the extension is not loaded


def meta(*shape, dtype=torch.float16):
    return torch.empty(*shape, dtype=dtype, device="meta")


@pytest.mark.parametrize("fn", [sa.sageattn_qk_int8_pv_fp16_cuda, sa.sageattn_qk_int8_pv_fp8_cuda])
def test_bad_string_args(fn):
    q = torch.zeros(1, 2, 8, 64, dtype=torch.float16)
    with pytest.raises(ValueError, match="qk_quant_gran"):
        fn(q, q, q, qk_quant_gran="per_channel")
    with pytest.raises(ValueError, match="tensor_layout"):
        fn(q, q, q, tensor_layout="BHND")
    with pytest.raises(ValueError, match="pv_accum_dtype"):
        fn(q, q, q, pv_accum_dtype="int8")
    with pytest.raises(TypeError, match="unexpected keyword"):
        fn(q, q, q, no_such_option=1)


def test_cpu_tensors_rejected():
    q = torch.zeros(1, 2, 8, 64, dtype=torch.float16)
    with pytest.raises(ValueError, match="CUDA"):
        sa.sageattn_qk_int8_pv_fp16_cuda(q, q, q)
    with pytest.raises(ValueError, match="CUDA"):
        sa.sageattn(q, q, q)


@pytest.mark.parametrize("case,match", [
    ("dim3", "4-D"),
    ("float64", "float16, bfloat16 or float32"),
    ("d264", "head_dim 264 is not supported \\(at most 256"),
    ("gqa", "multiple of the number of key/value heads"),
    ("kv_mismatch", "same shape"),
    ("dtype_mix", "share a dtype"),
])
def test_shape_dtype_validation(case, match):
    q, k, v = meta(1, 4, 16, 64), meta(1, 2, 16, 64), meta(1, 2, 16, 64)
    if case == "dim3":
        q = meta(4, 16, 64)
    elif case == "float64":
        q, k, v = (t.double() for t in (q, k, v))
    elif case == "d264":
        q, k, v = meta(1, 4, 16, 264), meta(1, 2, 16, 264), meta(1, 2, 16, 264)
    elif case == "gqa":
        k, v = meta(1, 3, 16, 64), meta(1, 3, 16, 64)
    elif case == "kv_mismatch":
        v = meta(1, 2, 17, 64)
    elif case == "dtype_mix":
        v = meta(1, 2, 16, 64, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match=match):
        _tensors.prepare(q, k, v, "HND")


def test_arch_message_names_gpu_and_wheel_archs():
    msg = _arch.unsupported_arch_message((12, 0), ["8.0", "8.6", "8.9", "9.0"], "NVIDIA RTX PRO 6000")
    assert "sm_120" in msg and "12.0" in msg and "8.0, 8.6, 8.9, 9.0" in msg and "RTX PRO 6000" in msg
    assert _arch.unsupported_arch_message((8, 6), ["8.0", "9.0"]) is None  # sm_80 code runs on 8.6
    assert _arch.unsupported_arch_message((9, 0), ["8.0", "8.6", "8.9", "9.0", "12.0"]) is None
    assert _arch.unsupported_arch_message((8, 9), ["9.0", "12.0"]) is not None


def test_arch_specific_targets_run_on_their_exact_capability_only():
    assert _arch.arch_runs("9.0a", (9, 0))
    assert _arch.arch_runs("sm_100a", (10, 0))
    assert not _arch.arch_runs("10.0a", (10, 3))  # sm_100a code does not run on 10.3
    assert not _arch.arch_runs("9.0a", (9, 1))
    assert _arch.arch_runs("10.0", (10, 3))  # plain sm_100 code does
    assert _arch.unsupported_arch_message((10, 3), ["10.0a"]) is not None


def test_build_info_missing_and_present(tmp_path, monkeypatch):
    monkeypatch.setattr(_extension, "BUILD_INFO_PATH", str(tmp_path / "build_info.json"))
    assert sa.build_info() is None
    (tmp_path / "build_info.json").write_text(json.dumps({"archs": ["9.0"], "torch": {"version": "2.11.0"}}))
    assert sa.build_info()["archs"] == ["9.0"]


@needs_ext
def test_fake_quant_shapes():
    ops = torch.ops.sageattention
    q = meta(2, 300, 8, 96)  # NHD
    qi, qs = ops.quant_q(q, 1, 2)
    assert qi.shape == (2, 8, 384, 128) and qi.dtype == torch.int8
    assert qs.shape == (2, 8, 24, 8) and qs.dtype == torch.float32
    ki, ks = ops.quant_k(meta(2, 2, 100, 64), 0, 0, True)
    assert ki.shape == (2, 2, 128, 64) and ks.shape == (2, 2, 2, 4)
    vf, vs, vm = ops.quant_v_fp8(meta(2, 2, 100, 40), 0, False)
    assert vf.shape == (2, 2, 64, 128) and vf.dtype == torch.float8_e4m3fn and vs.shape == (2, 2, 64)


@needs_ext
@pytest.mark.parametrize("layout", ["HND", "NHD"])
@pytest.mark.parametrize("path", ["fp16", "fp8"])
def test_fake_end_to_end_shapes(layout, path):
    shape_q = (2, 8, 77, 104) if layout == "HND" else (2, 77, 8, 104)
    shape_k = (2, 2, 50, 104) if layout == "HND" else (2, 50, 2, 104)
    q, k, v = meta(*shape_q, dtype=torch.bfloat16), meta(*shape_k, dtype=torch.bfloat16), meta(*shape_k, dtype=torch.bfloat16)
    fn = sa.sageattn_qk_int8_pv_fp16_cuda if path == "fp16" else sa.sageattn_qk_int8_pv_fp8_cuda
    o, lse = fn(q, k, v, tensor_layout=layout, is_causal=True, qk_quant_gran="per_warp", return_lse=True)
    assert o.shape == q.shape and o.dtype == torch.bfloat16
    assert lse.shape == (2, 8, 77) and lse.dtype == torch.float32


@needs_ext
def test_fake_tensor_mode_and_compile_trace():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        q = torch.empty(1, 4, 130, 64, dtype=torch.float16, device="meta")
        o = sa.sageattn_qk_int8_pv_fp8_cuda(q, q, q)
        assert o.shape == q.shape

    def f(q, k, v):
        return sa.sageattn_qk_int8_pv_fp16_cuda(q, k, v, is_causal=True) + 1

    gm, _ = torch._dynamo.export(f)(meta(1, 4, 130, 64), meta(1, 4, 130, 64), meta(1, 4, 130, 64))
    targets = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
    assert any(t.split(".")[:2] == ["sageattention", "attn"] for t in targets), targets


def test_emulation_cpu_close_to_fp64():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 2, 130, 64, generator=g).to(torch.bfloat16) for _ in range(3))
    k = k + 5
    for pv in ("fp16", "fp8"):
        o = ref.sageattn_emulated(q, k, v, pv=pv, is_causal=True)
        r = ref.attention_fp64(q, k, v, is_causal=True)
        cos = torch.nn.functional.cosine_similarity(o.double().flatten(), r.flatten(), dim=0).item()
        assert cos > 0.999, (pv, cos)


def test_quantize_scales_layout():
    x = torch.randn(1, 1, 128, 64)
    x[0, 0, 3] *= 100  # row 3 dominates its per-thread group {3, 11} of slice 0
    qi, qs, rows = ref.quantize_q(x, "per_thread")
    assert qs.shape == (1, 1, 8, 8)
    assert torch.allclose(qs[0, 0, 0, 3], x[0, 0, [3, 11]].abs().max() / 127)
    assert rows[0, 0, 11] == rows[0, 0, 3] and rows[0, 0, 4] != rows[0, 0, 3]
    assert qi.abs().max() <= 127
    k = torch.randn(1, 1, 64, 64)
    _, ks, krows = ref.quantize_k(k, "per_thread", smooth_k=False)
    assert ks.shape == (1, 1, 1, 4)
    assert krows[0, 0, 2] == krows[0, 0, 3] == krows[0, 0, 10] and krows[0, 0, 2] == ks[0, 0, 0, 1]


def test_pv_accum_dtype_choice():
    from sageattention import _args
    fp8 = lambda **o: _args.options("sageattn_qk_int8_pv_fp8_cuda", o, "fp8", dict(pv_accum_dtype="fp32+fp32"))
    assert fp8().pv_accum_f16 is False
    assert fp8(pv_accum_dtype="fp32+fp16").pv_accum_f16 is True
    assert fp8(pv_accum_dtype="fp32").pv_accum_f16 is False
    # sageattn: by GPU unless the caller says; the FP16 path's values never ask for it
    assert _args.options("sageattn", {}, "any").pv_accum_f16 is None
    assert _args.options("sageattn", {"pv_accum_dtype": "fp32+fp16"}, "any").pv_accum_f16 is True
    assert _args.options("f", {"pv_accum_dtype": "fp16"}, "fp16").pv_accum_f16 is None
    # as upstream's sageattn: sm89 and sm12x accumulate the FP8 P.V's tiles in fp16, the others in fp32
    assert [c for c in (80, 86, 89, 90, 100, 120, 121) if _arch.accum_f16_for(c)] == [89, 120, 121]


@pytest.mark.parametrize("fn,kw,f16", [
    (sa.sageattn_qk_int8_pv_fp8_cuda, {}, True),  # upstream 2.2's default, "fp32+fp16": fp16 tile accumulator
    (sa.sageattn_qk_int8_pv_fp8_cuda, dict(pv_accum_dtype="fp32+fp32"), False),
    (sa.sageattn_qk_int8_pv_fp8_cuda_sm90, {}, False),  # upstream's _sm90 keeps "fp32+fp32"
], ids=["fp8_default", "fp8_fp32+fp32", "fp8_sm90_default"])
def test_fp8_default_pv_accum_is_upstreams(monkeypatch, fn, kw, f16):
    # What run_call hands the kernels (after for_gpu), caught before they run: no GPU or extension needed.
    import inspect

    from sageattention import _dispatch
    seen = []
    monkeypatch.setattr(_dispatch, "attend", lambda call, opts: seen.append(opts) or "ran")
    q = meta(1, 2, 8, 64)
    assert fn(q, q, q, **kw) == "ran"
    assert (seen[0].pv, seen[0].pv_accum_f16) == ("fp8", f16)
    default = inspect.signature(fn).parameters["pv_accum_dtype"].default
    assert default == ("fp32+fp32" if fn is sa.sageattn_qk_int8_pv_fp8_cuda_sm90 else "fp32+fp16")


@pytest.mark.parametrize("args", [
    (None, None, False), (True, None, True), (1, 0.5, False), (False, 2, True), (0, None, False),
], ids=["defaults", "causal", "causal_int", "int_scale", "causal_0"])
@pytest.mark.parametrize("layout", ["HND", "NHD"])
def test_a_call_without_keywords_normalizes_as_the_general_path(args, layout):
    # normalize() takes a shorter path when nothing but upstream's own arguments is given; a keyword the
    # general path reads without effect (dropout_p=0.0) sends the same call through the general path.
    from sageattention import _args
    is_causal, scale, lse = args
    q = meta(1, 2, 8, 64)
    short = _args.normalize("sageattn", q, q, q, layout, is_causal, scale, lse, {})
    general = _args.normalize("sageattn", q, q, q, layout, is_causal, scale, lse, {"dropout_p": 0.0})
    assert short == general
    assert type(short.is_causal) is bool and (short.sm_scale is None or type(short.sm_scale) is float)


@pytest.mark.parametrize("layout,scale,causal,err,match", [
    ("BHND", None, None, ValueError, "tensor_layout"),
    ("HND", "0.1", None, TypeError, "sm_scale must be a number"),
    ("HND", None, 2, TypeError, "is_causal must be a bool"),
])
def test_a_call_without_keywords_is_still_checked(layout, scale, causal, err, match):
    from sageattention import _args
    q = meta(1, 2, 8, 64)
    with pytest.raises(err, match=match):
        _args.normalize("sageattn", q, q, q, layout, causal, scale, False, {})


def test_options_are_kept_per_function_and_values_and_still_checked():
    from sageattention import _args
    fp16 = dict(qk_quant_gran="per_thread", pv_accum_dtype="fp32", smooth_k=True, smooth_v=False)
    a = _args.options("sageattn_qk_int8_pv_fp16_cuda", {}, "fp16", fp16)
    assert _args.options("sageattn_qk_int8_pv_fp16_cuda", {}, "fp16", dict(fp16)) is a  # kept
    assert _args.options("sageattn_qk_int8_pv_fp16_cuda", {}, "fp16", dict(fp16, smooth_k=False)).smooth_k is False
    # A value equal to a kept one but of another type is checked anew: 1.0 == True, yet not a bool.
    with pytest.raises(TypeError, match="smooth_k must be a bool"):
        _args.options("sageattn_qk_int8_pv_fp16_cuda", {}, "fp16", dict(fp16, smooth_k=1.0))
    with pytest.raises(ValueError, match="qk_quant_gran"):
        _args.options("sageattn_qk_int8_pv_fp16_cuda", {}, "fp16", dict(fp16, qk_quant_gran=["per_warp"]))
    import dataclasses

    with pytest.raises(dataclasses.FrozenInstanceError):  # shared between calls, so never changed in place
        a.smooth_k = False


def test_for_gpu_resolves_what_the_call_left_open():
    from sageattention import _args, _dispatch
    q = torch.empty(1, 2, 8, 64, device="meta", dtype=torch.float16)
    o = _dispatch.for_gpu(_args.Options(), q)
    assert (o.pv, o.pv_accum_f16) == ("fp8", False)  # meta: the FP8 path, no GPU to accumulate in fp16 for
    assert _dispatch.for_gpu(_args.Options(pv="fp16", pv_accum_f16=True), q).pv_accum_f16 is False
    assert _dispatch.for_gpu(_args.Options(pv="fp8", pv_accum_f16=True), q).pv_accum_f16 is True


# ---- routing: the C table (kernels/src/route_table.h), through _routes without the extension, the op with it.

@pytest.mark.parametrize("cc,d,pv,acc,kernel", [
    (80, 64, None, None, "mma_pv_fp16"),
    (86, 256, None, None, "mma_pv_fp16"),
    (89, 128, None, None, "mma_pv_fp8_f16acc"),  # upstream's sageattn default on sm89 / sm12x
    (89, 128, "fp8", False, "mma_pv_fp8"),
    (89, 128, "fp16", None, "mma_pv_fp16"),
    (90, 128, None, None, "sm90_pv_fp8"),
    (90, 136, None, None, "sm90_pv_fp16"),  # the wgmma FP8 P.V stops at 128
    (90, 192, "fp8", None, "mma_pv_fp8"),
    (90, 64, "fp8", True, "sm90_pv_fp8"),  # the sm90 kernel takes V scaled for f16 too
    (90, 256, "fp16", None, "sm90_pv_fp16"),
    (100, 64, None, None, "mma_pv_fp8"),
    (120, 64, None, None, "mma_pv_fp8_f16acc"),
    (121, 200, "fp8", None, "mma_pv_fp8_f16acc"),
])
def test_route_of_known_gpus(cc, d, pv, acc, kernel):
    assert _arch.route(cc, d, pv, acc).kernel == kernel


def test_route_without_the_sm90_family():
    from sageattention import _routes
    no_sm90 = _routes.ALL_FAMILIES & ~4
    names = lambda row: (_routes.KERNELS[row[0]], _routes.PV[row[2]])
    assert names(_arch._select(90, 64, -1, -1, no_sm90)) == ("mma_pv_fp8", "fp8")
    assert names(_arch._select(90, 192, -1, -1, no_sm90)) == ("mma_pv_fp16", "fp16")  # as with sm90: FP16 above 128
    assert names(_arch._select(89, 64, -1, -1, 1)) == ("mma_pv_fp16", "fp16")  # a build without pv_fp8
    assert _arch._select(89, 64, 1, -1, 1) is None


@pytest.mark.parametrize("cc,d,pv,match", [(75, 64, None, "7\\.5"), (86, 64, "fp8", "FP8 P.V .*8\\.6"),
                                           (80, 264, None, "head_dim 264")])
def test_route_refuses_what_no_kernel_serves(cc, d, pv, match):
    # the library's reason with the extension, _routes' without: both name what is out of the table
    with pytest.raises(RuntimeError, match="sageattention: .*" + match):
        _arch.route(cc, d, pv)


def test_defaults_follow_the_route():
    assert [c for c in (80, 86, 89, 90, 100, 120, 121) if _arch.accum_f16_for(c)] == [89, 120, 121]
    assert _arch.accum_f16_for(90, 192) is False  # the mma.sync FP8 kernel, f32 accumulator by default
    from sageattention import _routes
    assert _tensors.MAX_HEAD_DIM == _routes.MAX_HEAD_DIM == 256


def _grid():
    for cc in (70, 75, 80, 86, 87, 89, 90, 100, 103, 110, 120, 121, 130):
        for d in list(range(8, 257, 8)) + [1, 0, 264]:
            for pv in (-1, 0, 1):
                for acc in (-1, 0, 1):
                    yield cc, d, pv, acc


@needs_ext
def test_route_op_is_the_exported_table():
    """The library's table (the op) and the generated _routes agree on every query and family set."""
    from sageattention import _routes
    ops = torch.ops.sageattention
    n_routed = 0
    for families in range(8):
        for cc, d, pv, acc in _grid():
            want = _arch._select(cc, d, pv, acc, families)
            if want is None:
                with pytest.raises(RuntimeError, match="sageattention: "):
                    ops.route(cc, d, pv, acc, families)
            else:
                assert tuple(ops.route(cc, d, pv, acc, families)) == want, (cc, d, pv, acc, families)
                n_routed += 1
    assert n_routed > 1000
    with pytest.raises(RuntimeError, match="needs compute capability >= 8.9; this GPU is 8.6"):
        ops.route(86, 64, 1, -1, _routes.ALL_FAMILIES)
    with pytest.raises(RuntimeError, match="pv_fp8 kernel family, which this build does not contain"):
        ops.route(89, 64, 1, -1, 1)
    with pytest.raises(RuntimeError, match="pv -1 \\(any\\) / 0 \\(fp16\\) / 1 \\(fp8\\)"):
        ops.route(89, 64, 2, -1, -1)


@needs_ext
def test_route_op_with_the_librarys_families():
    """families -1: the families linked into this extension (build_info.json lists the build's)."""
    ops = torch.ops.sageattention
    assert tuple(ops.route(80, 64)) == (1, 1, 0, 0)  # pv_fp16 is in every build (min_arch 8.0)
    info = _extension.build_info() or {}
    fams = info.get("kernel_families") or {}
    if fams:
        has_fp8 = "pv_fp8" in fams
        assert (tuple(ops.route(89, 64, 1, 0)) == (2, 2, 1, 0)) if has_fp8 else True
        if not has_fp8:
            with pytest.raises(RuntimeError, match="pv_fp8 kernel family"):
                ops.route(89, 64, 1, 0)
