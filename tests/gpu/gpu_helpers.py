"""What the GPU test files share: the skip of a module without a CUDA GPU or
the extension (importing this module skips the importing test module), the
device's capabilities, the emulation with the kernel's key tile, the two paths,
accuracy metrics and input makers.  A test module starts with

    from gpu_helpers import torch, sa, ...
"""
import os

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA GPU", allow_module_level=True)
import sageattention as sa  # noqa: E402

if sa.extension_error() is not None:
    pytest.skip(f"sageattention._C unavailable: {sa.extension_error()}", allow_module_level=True)

from sageattention import reference as ref  # noqa: E402

CAP = torch.cuda.get_device_capability()
HAS_FP8 = CAP >= (8, 9)
PATHS = ["fp16"] + (["fp8"] if HAS_FP8 else [])


def _extension_has(marker: bytes) -> bool:
    import sageattention._C as ext

    with open(ext.__file__, "rb") as f:
        return marker in f.read()


HAS_SM90 = CAP == (9, 0) and _extension_has(b"attn_sm90_kernel")  # the build carries the family, and it can run
SM90_ACTIVE = HAS_SM90 and os.environ.get("SAGEATTN_SM90") != "0"


def runs_sm90(path, d):
    """Whether a call of this path at head dim d runs the sm90 (wgmma) kernel, as the library's routing
    table says (the route op): on an H100 both paths, except the FP8 P.V above head dim 128 (the mma.sync
    kernel takes those); test_attention.py's test_route_on_this_gpu checks it against SM90_ACTIVE."""
    from sageattention import _arch

    try:
        return _arch.route(CAP[0] * 10 + CAP[1], d, path).family == "sm90"
    except RuntimeError:  # no kernel of this path here (the FP8 P.V below 8.9)
        return False


def key_tile(path, d):
    # The sm90 kernel's tiles are 128 keys up to head dim 128 and 64 above, the mma.sync
    # kernels' 64; the emulation follows the same tiles (P is rounded against each tile's running max).
    return 128 if runs_sm90(path, d) and d <= 128 else 64


def emulate(q, k, v, tensor_layout="HND", pv="fp8", pv_accum_f16=False, **kw):
    """The PyTorch emulation of the kernel that runs this call here.  pv_accum_f16: the call asked for
    pv_accum_dtype "fp32+fp16"; V is scaled to +-2.25 for it everywhere, and the key tiles accumulate in fp16
    on the mma.sync kernels (the sm90 kernel keeps fp32)."""
    d = q.shape[-1]
    if pv == "fp8" and pv_accum_f16:
        kw.update(v_scale_max=2.25, pv_accum_f16=not runs_sm90(pv, d))
    # the sm90 fp8 kernel's row sums come from its P.V MMA: sums of the e4m3-rounded P
    return ref.sageattn_emulated(q, k, v, tensor_layout=tensor_layout, pv=pv, block_k=key_tile(pv, d),
                                 rowsum_rounded_p=pv == "fp8" and runs_sm90(pv, d), **kw)


def run_path(path, q, k, v, **kw):
    """The path's function; the FP8 P.V with the fp32 tile accumulator ("fp32+fp32") unless kw says, which is what
    emulate(pv="fp8") emulates (the function's default, "fp32+fp16" as upstream's, accumulates tiles in fp16)."""
    if path == "fp16":
        return sa.sageattn_qk_int8_pv_fp16_cuda(q, k, v, **kw)
    kw.setdefault("pv_accum_dtype", "fp32+fp32")
    return sa.sageattn_qk_int8_pv_fp8_cuda(q, k, v, **kw)


def metrics(o, r):
    o, r = o.double().flatten(), r.double().flatten()
    cos = torch.nn.functional.cosine_similarity(o, r, dim=0).item()
    l1 = ((o - r).abs().sum() / r.abs().sum()).item()
    return cos, l1


def poison_allocator(nbytes=1 << 26):
    # fill freed blocks of the caching allocator with NaN so unwritten outputs show
    t = torch.full((nbytes // 2,), float("nan"), dtype=torch.float16, device="cuda")
    del t


def make_qkv(kind, b=2, hq=4, hk=4, nq=1000, nk=1000, d=128, dtype=torch.float16, layout="HND", seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)

    def rn(h, n):
        shape = (b, h, n, d) if layout == "HND" else (b, n, h, d)
        return torch.randn(shape, generator=g, device="cuda", dtype=torch.float32)

    q, k, v = rn(hq, nq), rn(hk, nk), rn(hk, nk)
    if kind == "kbias":  # large per-channel bias of K (what smoothing removes)
        k = k + 8.0 * torch.randn(d, generator=g, device="cuda")
    elif kind == "sharp":  # sharp softmax
        q = q * 3.0
    return q.to(dtype), k.to(dtype), v.to(dtype)
