"""Real programs on the GPU, with randomly initialised models built from configs
(no download):

* transformers: a small Llama with grouped-query attention run with the upstream
  README's recipe ``torch.nn.functional.scaled_dot_product_attention = sageattn``,
  and a padded batch under ``patch_sdpa()`` (its 4-D masks fall back to SDPA);
* diffusers: every SageAttention backend diffusers offers through
  ``set_attention_backend`` (the list is read from diffusers' registry), at the
  attention level (cosine >= 0.999 against its native backend) and on a small
  Flux transformer (cosine >= 0.99 on the model output), and ``patch_sdpa()``
  under diffusers' native backend.

diffusers only sees a sageattention that is installed as a distribution of
version >= 2.1.1 (it reads the metadata): run these against the installed
wheel (scripts/gpu-dropin-tests.sh); from a dev tree the diffusers tests skip."""
import importlib.metadata

import pytest

# skips this module without a CUDA GPU or the extension
from gpu_helpers import HAS_FP8, metrics, sa, torch

pytestmark = pytest.mark.gpu


F = torch.nn.functional
SDPA = F.scaled_dot_product_attention


def cos(a, b):
    return metrics(a, b)[0]


# ---- transformers ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def llama():
    transformers = pytest.importorskip("transformers")
    cfg = transformers.LlamaConfig(vocab_size=1000, hidden_size=512, intermediate_size=1024, num_hidden_layers=2,
                                   num_attention_heads=8, num_key_value_heads=2, max_position_embeddings=2048,
                                   attn_implementation="sdpa")
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(cfg).to("cuda", torch.float16).eval()


def test_transformers_llama_gqa_with_sdpa_replaced_by_sageattn(llama, monkeypatch):
    ids = torch.randint(0, 1000, (2, 500), device="cuda", generator=torch.Generator(device="cuda").manual_seed(1))
    with torch.no_grad():
        ref = llama(ids).logits.float()
        monkeypatch.setattr(F, "scaled_dot_product_attention", sa.sageattn)  # the upstream README's recipe
        out = llama(ids).logits.float()
    assert torch.isfinite(out).all()
    assert not torch.equal(out, ref)  # SageAttention ran
    assert cos(out, ref) >= 0.99, cos(out, ref)


def test_transformers_llama_padded_batch_under_patch_sdpa(llama):
    ids = torch.randint(0, 1000, (2, 300), device="cuda", generator=torch.Generator(device="cuda").manual_seed(2))
    am = torch.ones(2, 300, dtype=torch.long, device="cuda")
    am[0, :40] = 0  # left padding: a causal mask per query row, which SageAttention does not apply
    with torch.no_grad():
        ref_pad, ref = llama(ids, attention_mask=am).logits.float(), llama(ids).logits.float()
        with sa.patch_sdpa(route="sageattention") as p:  # short calls: "auto" would send them all to SDPA
            out_pad, out = llama(ids, attention_mask=am).logits.float(), llama(ids).logits.float()
    assert torch.equal(out_pad, ref_pad)  # every layer fell back to SDPA
    assert cos(out, ref) >= 0.99
    s = p.stats
    assert s["sageattention"] == 2 and s["sdpa"] == 2, s
    assert all(r.startswith("attn_mask") for r in s["fallback_reasons"]), s


# ---- diffusers ------------------------------------------------------------------------------------

EXPECTED_SAGE_BACKENDS = {"sage", "sage_varlen", "_sage_qk_int8_pv_fp8_cuda", "_sage_qk_int8_pv_fp8_cuda_sm90",
                          "_sage_qk_int8_pv_fp16_cuda", "_sage_qk_int8_pv_fp16_triton"}
FP8_BACKENDS = {"_sage_qk_int8_pv_fp8_cuda", "_sage_qk_int8_pv_fp8_cuda_sm90"}


@pytest.fixture(scope="module")
def dispatch():
    pytest.importorskip("diffusers")
    from diffusers.models import attention_dispatch as ad

    if not ad._CAN_USE_SAGE_ATTN:
        try:
            version = importlib.metadata.version("sageattention")
        except importlib.metadata.PackageNotFoundError:
            pytest.skip("sageattention is not installed as a distribution (a dev tree): diffusers reads its version "
                        "from the metadata; run against the installed wheel")
        pytest.fail(f"diffusers cannot use the installed sageattention {version}: an import of its names failed "
                    "(see the warning diffusers logged)")
    return ad


def sage_backends(ad):
    names = {b.value for b in ad._AttentionBackendRegistry._backends
             if b.value.lstrip("_").startswith("sage") and "hub" not in b.value}
    assert EXPECTED_SAGE_BACKENDS <= names, names  # the list diffusers offers (0.42); any newer one is tested too
    return sorted(n for n in names if HAS_FP8 or n not in FP8_BACKENDS)


BACKENDS = sorted(EXPECTED_SAGE_BACKENDS)


def bnhd(b=2, n=1101, h=8, d=128, dtype=torch.bfloat16, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return tuple(torch.randn(b, n, h, d, generator=g, device="cuda").to(dtype) for _ in range(3))


def test_diffusers_offers_every_sage_backend(dispatch):
    assert len(sage_backends(dispatch)) >= (6 if HAS_FP8 else 4)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("d", [64, 128])
def test_diffusers_backend_attention_matches_native(dispatch, backend, d):
    if backend not in sage_backends(dispatch):
        pytest.skip(f"{backend}: needs the FP8 path (sm89+)")
    q, k, v = bnhd(d=d, seed=d)
    ref = dispatch.dispatch_attention_fn(q, k, v, backend="native")
    out = dispatch.dispatch_attention_fn(q, k, v, backend=backend)
    assert out.shape == ref.shape and out.dtype == ref.dtype
    assert cos(out, ref) >= 0.999, cos(out, ref)


def test_diffusers_sage_varlen_with_a_key_padding_mask(dispatch):
    q, k, v = bnhd(n=777)
    mask = torch.ones(2, 777, dtype=torch.bool, device="cuda")
    mask[1, 500:] = False  # the text-encoder padding diffusers passes as [batch, kv_len]
    ref = dispatch.dispatch_attention_fn(q, k, v, attn_mask=mask, backend="native")
    out = dispatch.dispatch_attention_fn(q, k, v, attn_mask=mask, backend="sage_varlen")
    assert cos(out, ref) >= 0.999


@pytest.fixture(scope="module")
def flux():
    diffusers = pytest.importorskip("diffusers")
    torch.manual_seed(0)
    model = diffusers.FluxTransformer2DModel(patch_size=1, in_channels=16, num_layers=2, num_single_layers=2,
                                             attention_head_dim=128, num_attention_heads=4, joint_attention_dim=64,
                                             pooled_projection_dim=32, guidance_embeds=False,
                                             axes_dims_rope=(16, 56, 56)).to("cuda", torch.bfloat16).eval()
    g = torch.Generator(device="cuda").manual_seed(3)
    b, side, txt = 2, 32, 77
    img_ids = torch.stack(torch.meshgrid(torch.zeros(1), torch.arange(side * 1.0), torch.arange(side * 1.0),
                                         indexing="ij"), -1).reshape(-1, 3).cuda()
    inputs = dict(hidden_states=torch.randn(b, side * side, 16, generator=g, device="cuda").bfloat16(),
                  encoder_hidden_states=torch.randn(b, txt, 64, generator=g, device="cuda").bfloat16(),
                  pooled_projections=torch.randn(b, 32, generator=g, device="cuda").bfloat16(),
                  timestep=torch.full((b,), 0.5, device="cuda").bfloat16(), img_ids=img_ids,
                  txt_ids=torch.zeros(txt, 3, device="cuda"))
    return model, inputs


def run_flux(flux):
    model, inputs = flux
    with torch.no_grad():
        return model(**inputs).sample.float()


@pytest.mark.parametrize("backend", BACKENDS)
def test_diffusers_flux_with_each_sage_backend(dispatch, flux, backend):
    if backend not in sage_backends(dispatch):
        pytest.skip(f"{backend}: needs the FP8 path (sm89+)")
    model, _ = flux
    model.set_attention_backend("native")
    ref = run_flux(flux)
    model.set_attention_backend(backend)
    try:
        out = run_flux(flux)
    finally:
        model.set_attention_backend("native")
    assert torch.isfinite(out).all() and not torch.equal(out, ref)
    assert cos(out, ref) >= 0.99, cos(out, ref)


def test_diffusers_flux_under_patch_sdpa(dispatch, flux):
    model, _ = flux
    model.set_attention_backend("native")  # diffusers' native backend calls torch's SDPA with keywords
    ref = run_flux(flux)
    with sa.patch_sdpa(route="sageattention") as p:  # a tiny model's short calls: "auto" would run them in SDPA
        out = run_flux(flux)
    assert cos(out, ref) >= 0.99, cos(out, ref)
    assert p.stats["sageattention"] == 4 and p.stats["sdpa"] == 0, p.stats  # 2 double + 2 single blocks
