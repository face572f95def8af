"""yunchang's LongContextAttention over two GPUs (and four where there are)
with SageAttention: SAGE_AUTO and each explicit SAGE_* type, Ulysses 2 x Ring 1
and Ulysses 1 x Ring 2 (2 x 2 on four GPUs), causal and not, bf16 and fp16,
head dim 64 and 128, sequences of 8k and 32k: cosine >= 0.999 against full
attention on one GPU.  All cases of one world size run in one spawned group of
processes (tests/gpu/seqpar.py); each case is its own test.  The GPU tests
skip without two GPUs, NCCL or the extension; the harness itself is checked on
two CPU ranks (gloo) wherever yunchang is installed (scripts/gpu-seqpar.sh
carries it)."""
import itertools
import os

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("yunchang", reason="yunchang not installed (scripts/gpu-seqpar.sh carries its wheel)")
if not torch.distributed.is_available():
    pytest.skip("torch.distributed unavailable", allow_module_level=True)

import seqpar  # noqa: E402

GPUS = torch.cuda.device_count() if torch.cuda.is_available() else 0
HAS_FP8 = GPUS > 0 and torch.cuda.get_device_capability(0) >= (8, 9)
TYPES = seqpar.SAGE_TYPES if HAS_FP8 else ("SAGE_AUTO", "SAGE_FP16", "SAGE_FP16_TRITON")
TWO = [seqpar.Case(u, r, a, dt, d, n, c) for (u, r), a, dt, d, n, c in itertools.product(
    [(2, 1), (1, 2)], TYPES, ["bf16", "fp16"], [64, 128], [8192, 32768], [False, True])]
FOUR = [seqpar.Case(2, 2, a, "bf16", 128, 32768, c) for a, c in itertools.product(TYPES, [False, True])]


def _run(world, cases, tmp_path_factory, device="cuda"):
    out = str(tmp_path_factory.mktemp("seqpar") / f"world{world}-{device}.json")
    records = {r["key"]: r for r in seqpar.run(world, cases, out, device=device)}
    if os.environ.get("SEQPAR_LOG"):  # the device script keeps the figures
        with open(os.environ["SEQPAR_LOG"], "a") as f:
            for r in records.values():
                f.write(f"{r['key']} world={world} cos={r.get('cos')} l1={r.get('l1')} error={r['error']}\n")
    return records


def _gpus(n):
    if GPUS < n:
        pytest.skip(f"needs {n} GPUs, this machine has {GPUS}")
    if not torch.distributed.is_nccl_available():
        pytest.skip("NCCL unavailable")
    import sageattention

    if sageattention.extension_error() is not None:
        pytest.skip(f"sageattention._C unavailable: {sageattention.extension_error()}")


@pytest.fixture(scope="module")
def two_gpus(tmp_path_factory):
    _gpus(2)
    return _run(2, TWO, tmp_path_factory)


@pytest.fixture(scope="module")
def four_gpus(tmp_path_factory):
    _gpus(4)
    return _run(4, FOUR, tmp_path_factory)


def check(record, case):
    assert record["error"] is None, record["error"]
    assert record["finite"], "NaN/Inf in the output"
    assert record["out_shape"] == [case.batch, case.n // record["world"], case.heads, case.d]
    assert record["out_dtype"] == str(seqpar.DTYPES[case.dtype])
    assert record["cos"] >= 0.999 and record["l1"] < 0.05, (record["cos"], record["l1"])


@pytest.mark.gpu
@pytest.mark.parametrize("case", TWO, ids=lambda c: c.key)
def test_long_context_attention_on_two_gpus(two_gpus, case):
    check(two_gpus[case.key], case)


@pytest.mark.gpu
@pytest.mark.parametrize("case", FOUR, ids=lambda c: c.key)
def test_long_context_attention_on_four_gpus(four_gpus, case):
    check(four_gpus[case.key], case)


def test_the_harness_on_two_cpu_ranks(tmp_path_factory):
    # yunchang's exact torch backend (TORCH_MATH) on gloo: Ulysses 2 x Ring 1 needs no LSE and matches full
    # attention; with Ring 2 yunchang 0.6.4 merges its zero LSEs, and the harness must see the wrong result
    cases = [seqpar.Case(2, 1, "TORCH_MATH", "fp32", 32, 256, c, heads=4) for c in (False, True)]
    cases += [seqpar.Case(1, 2, "TORCH_MATH", "fp32", 32, 256, False, heads=4)]
    records = _run(2, cases, tmp_path_factory, device="cpu")
    for case in cases[:2]:
        r = records[case.key]
        assert r["error"] is None and r["finite"] and r["out_shape"] == [1, 128, 4, 32], r
        assert r["cos"] > 0.99999 and r["l1"] < 1e-4, r
    wrong = records[cases[2].key]
    assert wrong["error"] is None and wrong["cos"] < 0.999, wrong
