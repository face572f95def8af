"""patch_sdpa's speed routing (sageattention._sdpa_route): the crossover files, the lookup, the route
argument and SAGEATTN_SDPA_ROUTE; no GPU (synthetic tables, meta and CPU tensors)."""
import json
import logging

import pytest
import torch
import torch.nn.functional as F

import sageattention as sa
from sageattention import _sdpa_route as route
from sageattention import sdpa_patch

def point(d, n, ours, cudnn, flash=None, bh=8, dtype="bfloat16", causal=False):
    return dict(head_dim=d, dtype=dtype, causal=causal, batch_heads=bh, seq_len=n,
                ms=dict(sageattention=ours, cudnn=cudnn, flash=flash or cudnn))


def table(points, **kw):
    data = dict(format=1, family="sm90", device="Test GPU", date="2026-11-28", torch="2.11.0", points=points)
    data.update(kw)
    return data


# ---- the crossover: where SageAttention's winning run ends, measured per row ------------------------

def test_crossover_is_where_the_winning_run_of_lengths_begins():
    t = route.parse(table([
        point(128, 512, [1.0, 1.0], [0.5, 0.6]),  # SDPA faster
        point(128, 1024, [1.0, 1.0], [1.1, 1.2]),  # faster here, but not at 2048: not the crossover
        point(128, 2048, [1.0, 1.0], [0.97, 0.98]),
        point(128, 4096, [1.0, 1.0], [1.0, 1.0]),  # a tie is SageAttention's
        point(128, 8192, [1.0, 3.0], [1.9, 2.2]),  # medians: 2.0 against 2.05
    ]))
    assert t.rows[(128, "bfloat16", False, "cudnn")] == ((8, 4096),)
    assert t.min_len(128, "bfloat16", False, "cudnn", 8) == 4096


def test_a_row_sageattention_never_wins_has_no_crossover():
    t = route.parse(table([point(64, 1024, [2.0], [1.0]), point(64, 16384, [2.0], [1.9])]))
    assert t.min_len(64, "bfloat16", False, "cudnn", 8) is None


def test_lookup_head_dim_batch_heads_and_unmeasured_rows():
    pts = []
    for d, bh, n_win in ((64, 8, 2048), (64, 128, 1024), (128, 8, 4096), (128, 128, 2048)):
        for n in (1024, 2048, 4096):
            pts.append(point(d, n, [1.0], [1.5 if n >= n_win else 0.5], bh=bh))
    t = route.parse(table(pts))
    assert t.head_dims == (64, 128)
    assert t.min_len(64, "bfloat16", False, "cudnn", 8) == 2048
    assert t.min_len(96, "bfloat16", False, "cudnn", 8) == 4096  # padded to 128: 128's row
    assert t.min_len(256, "bfloat16", False, "cudnn", 8) == 4096  # above every measured one: the largest
    assert t.min_len(32, "bfloat16", False, "cudnn", 200) == 1024  # the largest measured B*H at or below
    assert t.min_len(128, "bfloat16", False, "cudnn", 127) == 4096
    assert t.min_len(128, "bfloat16", False, "cudnn", 2) == 4096  # below every measured: the smallest
    assert t.min_len(128, "float16", False, "cudnn", 8) == 0  # dtype not measured: SageAttention, as without data
    assert t.min_len(128, "bfloat16", True, "cudnn", 8) == 0


def test_backend_columns_are_separate():
    t = route.parse(table([point(128, 1024, [1.0], [0.8], flash=[1.6]), point(128, 4096, [1.0], [1.2], flash=[2.0])]))
    assert t.min_len(128, "bfloat16", False, "cudnn", 8) == 4096
    assert t.min_len(128, "bfloat16", False, "flash", 8) == 1024


@pytest.mark.parametrize("mutate, field", [
    (lambda d: d.update(format=2), "format"),
    (lambda d: d.pop("device"), "device"),
    (lambda d: d.update(points=[]), "points"),
    (lambda d: d["points"][0].update(head_dim=0), "points[0].head_dim"),
    (lambda d: d["points"][0].update(dtype="float32"), "points[0].dtype"),
    (lambda d: d["points"][0].update(causal=1), "points[0].causal"),
    (lambda d: d["points"][0]["ms"].update(flash=[]), "points[0].ms.flash"),
    (lambda d: d["points"][0]["ms"].update(sageattention=[-1.0]), "points[0].ms.sageattention"),
])
def test_malformed_files_name_the_field(mutate, field, tmp_path):
    data = table([point(128, 1024, [1.0], [1.0])])
    mutate(data)
    f = tmp_path / "x.json"
    f.write_text(json.dumps(data))
    with pytest.raises(route.CrossoverError) as e:
        route.load(f)
    msg = str(e.value)
    assert str(f) in msg and f"{field}: expected" in msg and "bench/sdpa_crossover.py" in msg


def test_unreadable_file_names_it(tmp_path):
    f = tmp_path / "x.json"
    f.write_text("{not json")
    with pytest.raises(route.CrossoverError, match="x.json: cannot be read as JSON"):
        route.load(f)


# ---- the file the package ships ------------------------------------------------------------------

def test_the_shipped_sm90_table_reads_and_says_where_it_was_measured():
    t = route.table_for("sm90")
    assert t is not None and t.family == "sm90"
    assert "H200" in t.device or "H100" in t.device
    assert t.date.startswith("20") and t.torch
    assert t.head_dims == (64, 128, 256)
    for dtype in ("float16", "bfloat16"):
        for causal in (False, True):
            for d in t.head_dims:
                for backend in route.BACKENDS:
                    assert (d, dtype, causal, backend) in t.rows
    # long sequences at a large batch x heads: SageAttention's (the kernels' whole point); very short: SDPA's
    for causal in (False, True):
        m = t.min_len(128, "bfloat16", causal, "cudnn", 128)
        assert m is not None and m <= 16384
    assert route.table_for("sm80") is None and route.table_for("sm90-mma") is None


def test_family_of():
    assert route.family_of((9, 0)) == "sm90"
    assert route.family_of((9, 0), sm90_kernels=False) == "sm90-mma"
    assert route.family_of((8, 9)) == "sm89" and route.family_of((12, 0)) == "sm120"


def test_sdpa_is_faster_on_meta_tensors():
    pts = [point(128, n, [1.0], [0.5 if n < 4096 else 1.5], bh=bh) for bh in (8, 64) for n in (1024, 4096, 8192)]
    t = route.parse(table(pts))

    def qkv(b, h, n, d=128, hk=None):
        return [torch.empty(b, x, n, d, device="meta", dtype=torch.bfloat16) for x in (h, hk or h, hk or h)]

    why = route.sdpa_is_faster(t, *qkv(1, 24, 2048), None, 0.0, False, None, False)
    assert why and "N=2048" in why and "from N=4096" in why
    assert route.sdpa_is_faster(t, *qkv(1, 24, 4096), None, 0.0, False, None, False) is None
    q, k, v = qkv(1, 32, 8192, hk=8)
    k, v = k[:, :, :1000], v[:, :, :1000]  # cross-attention to 1000 keys: N = min(Nq, Nk)
    assert route.sdpa_is_faster(t, q, k, v, None, 0.0, False, None, True)
    assert route.sdpa_is_faster(t, *qkv(1, 8, 2048, d=80), None, 0.0, True, None, False) is None  # causal: unmeasured


# ---- the route: argument, environment, nesting, the log -----------------------------------------------

def test_resolve_route(monkeypatch):
    monkeypatch.delenv(route.ENV, raising=False)
    assert route.resolve_route(None) == "auto"
    monkeypatch.setenv(route.ENV, "sdpa")
    assert route.resolve_route(None) == "sdpa"
    assert route.resolve_route("sageattention") == "sageattention"  # the argument wins
    monkeypatch.setenv(route.ENV, "fast")
    with pytest.raises(ValueError, match="SAGEATTN_SDPA_ROUTE='fast' is not a route: expected one of auto"):
        sa.patch_sdpa()
    with pytest.raises(ValueError, match=r"route='sage': expected one of auto, sageattention, sdpa"):
        sa.patch_sdpa(route="sage")
    assert not sdpa_patch.is_patched()


def test_route_sdpa_sends_every_call_to_torch_and_the_innermost_route_applies(fresh_log, monkeypatch):
    monkeypatch.delenv(route.ENV, raising=False)
    q = torch.randn(1, 2, 8, 16)
    with sa.patch_sdpa() as outer:
        assert outer.route == "auto"
        with sa.patch_sdpa(route="sdpa") as inner:
            assert torch.equal(F.scaled_dot_product_attention(q, q, q), sdpa_patch.original_sdpa()(q, q, q))
        F.scaled_dot_product_attention(q, q, q)
    assert inner.stats["fallback_reasons"] == {"route 'sdpa' (every call to torch SDPA)": 1}
    assert outer.stats["fallback_reasons"] == {"route 'sdpa' (every call to torch SDPA)": 1, "device cpu": 1}


def test_the_speed_reason_is_logged_once_with_the_table(fresh_log, caplog):
    t = route.parse(table([point(128, 1024, [1.0], [0.5])]))
    with caplog.at_level(logging.WARNING, logger="sageattention"), sa.patch_sdpa() as p:
        for _ in range(3):
            sdpa_patch._count(False, route.SpeedReason(t, "head_dim 128, N=512"))
    lines = [r.getMessage() for r in caplog.records if r.name == "sageattention"]
    assert len(lines) == 1, lines
    assert "Test GPU, 2026-11-28" in lines[0] and "head_dim 128, N=512" in lines[0]
    assert "route='sageattention'" in lines[0] and "SAGEATTN_SDPA_ROUTE" in lines[0]
    assert p.stats["sdpa"] == 3 and p.stats["fallback_reasons"] == {route.SPEED_REASON: 3}


def test_an_unmasked_calls_plan_is_kept_until_what_it_depends_on_changes(monkeypatch):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from sageattention import _autograd
    from sageattention import _sdpa_plan as plans

    planned = []
    real = plans._plan
    monkeypatch.setattr(plans, "_plan", lambda *a: planned.append(a) or real(*a))
    monkeypatch.setattr(plans, "_PLANS", {})
    monkeypatch.delenv(_autograd.ENV, raising=False)
    q = torch.randn(1, 2, 8, 16)
    first = plans.sdpa_plan(q, q, q, None, 0.0, False, None, False, "auto")
    assert plans.sdpa_plan(q, q, q, None, 0.0, False, None, False, "auto") is first
    assert plans.sdpa_plan(q.clone(), q.clone(), q.clone(), None, 0.0, False, None, False, "auto") is first
    assert len(planned) == 1
    variants = [
        lambda: plans.sdpa_plan(q, q, q, None, 0.0, True, None, False, "auto"),  # causal
        lambda: plans.sdpa_plan(q, q, q, None, 0.0, False, 0.5, False, "auto"),  # scale
        lambda: plans.sdpa_plan(q, q, q, None, 0.1, False, None, False, "auto"),  # dropout
        lambda: plans.sdpa_plan(q, q, q, None, 0.0, False, None, False, "sageattention"),  # route
        lambda: plans.sdpa_plan(q[:, :, :4], q, q, None, 0.0, False, None, False, "auto"),  # shape
        lambda: plans.sdpa_plan(q.transpose(1, 2).contiguous().transpose(1, 2), q, q, None, 0.0, False, None, False,
                                "auto"),  # strides
        lambda: plans.sdpa_plan(q.half(), q.half(), q.half(), None, 0.0, False, None, False, "auto"),  # dtype
        lambda: plans.sdpa_plan(q.clone().requires_grad_(), q, q, None, 0.0, False, None, False, "auto"),  # grad
    ]
    for v in variants:
        v()
    assert len(planned) == 1 + len(variants)
    with torch.no_grad():
        variants[-1]()  # grad mode
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        first_again = plans.sdpa_plan(q, q, q, None, 0.0, False, None, False, "auto")  # SDPA's backend switches
    monkeypatch.setenv(_autograd.ENV, "sdpa")
    variants[-1]()  # the backward mode
    assert len(planned) == 1 + len(variants) + 3 and first_again == first
    mask = torch.ones(8, 8, dtype=torch.bool)
    for _ in range(2):
        plans.sdpa_plan(q, q, q, mask, 0.0, False, None, False, "auto")  # a mask: planned every call
    assert len(planned) == 1 + len(variants) + 5
