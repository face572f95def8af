"""yunchang's LongContextAttention over two GPUs (and four where there are)
with SageAttention: SAGE_AUTO and each explicit SAGE_* type, Ulysses 2 x Ring 1
and Ulysses 1 x Ring 2 (2 x 2 on four GPUs), causal and not, bf16 and fp16,
head dim 64 and 128, sequences of 8k and 32k: cosine >= 0.999 against full
attention on one GPU.  All cases of one world size run in one spawned group of
processes (tests/gpu/seqpar.py); each case is its own test.  Skips without two
GPUs, NCCL or yunchang (scripts/device-seqpar.sh carries it)."""
import itertools
import os

import pytest

# skips this module without a CUDA GPU or the extension
from gpu_helpers import HAS_FP8, torch

pytestmark = pytest.mark.gpu

if torch.cuda.device_count() < 2:
    pytest.skip(f"needs 2 GPUs, this machine has {torch.cuda.device_count()}", allow_module_level=True)
if not torch.distributed.is_available() or not torch.distributed.is_nccl_available():
    pytest.skip("torch.distributed with NCCL unavailable", allow_module_level=True)
pytest.importorskip("yunchang", reason="yunchang not installed (scripts/device-seqpar.sh carries its wheel)")

import seqpar  # noqa: E402

TYPES = seqpar.SAGE_TYPES if HAS_FP8 else ("SAGE_AUTO", "SAGE_FP16", "SAGE_FP16_TRITON")
TWO = [seqpar.Case(u, r, a, dt, d, n, c) for (u, r), a, dt, d, n, c in itertools.product(
    [(2, 1), (1, 2)], TYPES, ["bf16", "fp16"], [64, 128], [8192, 32768], [False, True])]
FOUR = [seqpar.Case(2, 2, a, "bf16", 128, 32768, c) for a, c in itertools.product(TYPES, [False, True])]


def _run(world, cases, tmp_path_factory):
    out = str(tmp_path_factory.mktemp("seqpar") / f"world{world}.json")
    records = {r["key"]: r for r in seqpar.run(world, cases, out)}
    if os.environ.get("SEQPAR_LOG"):  # the device script keeps the figures
        with open(os.environ["SEQPAR_LOG"], "a") as f:
            for r in records.values():
                f.write(f"{r['key']} world={world} cos={r.get('cos')} l1={r.get('l1')} error={r['error']}\n")
    return records


@pytest.fixture(scope="module")
def two_gpus(tmp_path_factory):
    return _run(2, TWO, tmp_path_factory)


@pytest.fixture(scope="module")
def four_gpus(tmp_path_factory):
    if torch.cuda.device_count() < 4:
        pytest.skip(f"Ulysses 2 x Ring 2 needs 4 GPUs, this machine has {torch.cuda.device_count()}")
    return _run(4, FOUR, tmp_path_factory)


def check(record, case):
    assert record["error"] is None, record["error"]
    assert record["finite"], "NaN/Inf in the output"
    assert record["out_shape"] == [case.batch, case.n // record["world"], case.heads, case.d]
    assert record["out_dtype"] == str(seqpar.DTYPES[case.dtype])
    assert record["cos"] >= 0.999 and record["l1"] < 0.05, (record["cos"], record["l1"])


@pytest.mark.parametrize("case", TWO, ids=lambda c: c.key)
def test_long_context_attention_on_two_gpus(two_gpus, case):
    check(two_gpus[case.key], case)


@pytest.mark.parametrize("case", FOUR, ids=lambda c: c.key)
def test_long_context_attention_on_four_gpus(four_gpus, case):
    check(four_gpus[case.key], case)
