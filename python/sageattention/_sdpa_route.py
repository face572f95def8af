"""patch_sdpa's speed routing: whether torch's own SDPA runs a call faster than SageAttention on this GPU.

SageAttention's call is a few kernels (quantization passes, then the attention);
for short sequences torch's fused SDPA is faster.  Where the two cross was
measured per GPU family, head dim, dtype, causal, number of (batch, head) pairs
and SDPA backend (cuDNN or flash), by ``bench/sdpa_crossover.py``, and ships as
``sdpa_crossover_<family>.json`` beside this module (the device, date and torch
it was measured with are in the file).  From those timings a row's crossover is
the shortest measured length from which SageAttention was at least as fast as
SDPA at every longer measured length (mean of the file's runs).

A call [B, H, Nq, D] x [B, Hk, Nk, D] is looked up as: the measured head dim
equal to D or the next above it (the kernels pad D to a native one), the
largest measured B*H at or below the call's (the smallest if none), and
N = min(Nq, Nk); it goes to SDPA when N is below that row's crossover.  The SDPA
backend is the one torch would pick for the call (``torch._fused_sdp_choice``;
cuDNN, the faster one, when that cannot be asked, e.g. while torch.compile traces).
A GPU family without a file keeps every call SageAttention can run on SageAttention.

``route``: "auto" (the above), "sageattention" (every call SageAttention can run,
as before the table existed) or "sdpa" (every call to torch's SDPA); patch_sdpa's
``route`` argument, else the environment variable SAGEATTN_SDPA_ROUTE, else "auto".
"""
from __future__ import annotations

import functools
import json
import math
import os
import pathlib
from dataclasses import dataclass
from typing import Dict, Optional, Tuple

import torch

ROUTES = ("auto", "sageattention", "sdpa")
ENV = "SAGEATTN_SDPA_ROUTE"
BACKENDS = ("cudnn", "flash")  # the SDPA backends a row is measured against
FORMAT = 1
DATA_DIR = pathlib.Path(__file__).resolve().parent
SPEED_REASON = "torch SDPA is faster for this call on this GPU (shorter than the measured crossover)"


class SpeedReason(str):
    """SPEED_REASON (what patch_sdpa counts) carrying the table and the call's detail (what it logs once)."""

    def __new__(cls, table: "Crossover", detail: str):
        r = super().__new__(cls, SPEED_REASON)
        r.table, r.detail = table, detail
        return r


class CrossoverError(ValueError):
    """A crossover file that cannot be read: names the file and the field."""


def resolve_route(route: Optional[str]) -> str:
    """patch_sdpa's route: the argument, else $SAGEATTN_SDPA_ROUTE, else "auto"; ValueError naming the bad one."""
    if route is None:
        env = os.environ.get(ENV, "").strip()
        if env and env not in ROUTES:
            raise ValueError(f"sageattention: {ENV}={env!r} is not a route: expected one of {', '.join(ROUTES)} "
                             f"(unset it for 'auto')")
        return env or "auto"
    if route not in ROUTES:
        raise ValueError(f"sageattention.patch_sdpa: route={route!r}: expected one of {', '.join(ROUTES)}")
    return route


def family_of(capability: Tuple[int, int], sm90_kernels: bool = True) -> str:
    """The GPU family a crossover file is measured for: "sm90" for 9.0 running the wgmma kernels, else sm_XY;
    on 9.0 with SAGEATTN_SM90=0 (the mma.sync kernels) "sm90-mma", which has no file."""
    major, minor = capability
    if (major, minor) == (9, 0) and not sm90_kernels:
        return "sm90-mma"
    return f"sm{major}{minor}"


def _median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


@dataclass(frozen=True)
class Crossover:
    """A family's measured crossovers.  ``rows[(head_dim, dtype, causal, backend)]``: ((batch_heads, min_len), ...)
    sorted by batch_heads; min_len None where SageAttention was slower even at the longest measured length."""

    family: str
    device: str
    date: str
    torch: str
    path: str
    rows: Dict[tuple, tuple]
    head_dims: tuple

    def describe(self) -> str:
        return f"{self.family} crossover measured on {self.device}, {self.date}, torch {self.torch}"

    def min_len(self, head_dim: int, dtype: str, causal: bool, backend: str, batch_heads: int):
        """The crossover length for a call (see the module's docstring); None: SDPA at every length."""
        d = next((h for h in self.head_dims if h >= head_dim), self.head_dims[-1])
        row = self.rows.get((d, dtype, bool(causal), backend))
        if row is None:
            return 0  # not measured (a dtype the file lacks): SageAttention, as without a file
        pick = row[0]
        for bh, n in row:
            if bh <= batch_heads:
                pick = (bh, n)
        return pick[1]


def _field(cond: bool, path, where: str, expected: str):
    if not cond:
        raise CrossoverError(f"sageattention: {path}: {where}: expected {expected}; regenerate the file with "
                             f"bench/sdpa_crossover.py on that GPU")


def parse(data, path="<crossover data>") -> Crossover:
    """A Crossover from a crossover file's JSON object (CrossoverError naming the field when it is malformed)."""
    _field(isinstance(data, dict), path, "top level", "a JSON object")
    _field(data.get("format") == FORMAT, path, "format", f"{FORMAT}")
    for key in ("family", "device", "date", "torch"):
        _field(isinstance(data.get(key), str) and data[key], path, key, "a non-empty string")
    points = data.get("points")
    _field(isinstance(points, list) and points, path, "points", "a non-empty list")
    ratios: Dict[tuple, Dict[int, Dict[int, float]]] = {}
    for i, p in enumerate(points):
        where = f"points[{i}]"
        _field(isinstance(p, dict), path, where, "an object")
        for key in ("head_dim", "batch_heads", "seq_len"):
            _field(isinstance(p.get(key), int) and p[key] > 0, path, f"{where}.{key}", "a positive integer")
        _field(p.get("dtype") in ("float16", "bfloat16"), path, f"{where}.dtype", "'float16' or 'bfloat16'")
        _field(isinstance(p.get("causal"), bool), path, f"{where}.causal", "true or false")
        ms = p.get("ms")
        _field(isinstance(ms, dict), path, f"{where}.ms", "an object of timings per method")
        for m in ("sageattention",) + BACKENDS:
            t = ms.get(m)
            ok = isinstance(t, list) and t and all(isinstance(x, (int, float)) and x > 0 and math.isfinite(x)
                                                   for x in t)
            _field(ok, path, f"{where}.ms.{m}", "a non-empty list of positive milliseconds")
        ours = _median(ms["sageattention"])
        for b in BACKENDS:
            key = (p["head_dim"], p["dtype"], p["causal"], b)
            ratios.setdefault(key, {}).setdefault(p["batch_heads"], {})[p["seq_len"]] = _median(ms[b]) / ours
    rows = {}
    for key, by_bh in ratios.items():
        row = []
        for bh in sorted(by_bh):
            by_n = by_bh[bh]
            n_min = None
            for n in sorted(by_n, reverse=True):  # longest first: the crossover is where the winning run ends
                if by_n[n] < 1.0:
                    break
                n_min = n
            row.append((bh, n_min))
        rows[key] = tuple(row)
    head_dims = tuple(sorted({k[0] for k in rows}))
    return Crossover(data["family"], data["device"], data["date"], data["torch"], str(path), rows, head_dims)


def load(path) -> Crossover:
    path = pathlib.Path(path)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise CrossoverError(f"sageattention: {path}: cannot be read as JSON ({e}); regenerate it with "
                             f"bench/sdpa_crossover.py") from None
    return parse(data, path)


@functools.lru_cache(maxsize=None)
def table_for(family: str) -> Optional[Crossover]:
    """The shipped crossover file of a GPU family (sdpa_crossover_<family>.json), None when there is none."""
    path = DATA_DIR / f"sdpa_crossover_{family}.json"
    if not path.is_file():
        return None
    return load(path)


@functools.lru_cache(maxsize=None)
def _sm90_kernels() -> bool:
    """Whether 9.0 devices run the sm90 kernels: SAGEATTN_SM90, read once a process, as the library's routing
    (abi.cu, sa_route_families) reads it; table_for_device and bench/sdpa_crossover.py ask it."""
    return os.environ.get("SAGEATTN_SM90", "").strip() != "0"


def table_for_device(capability: Tuple[int, int]) -> Optional[Crossover]:
    return table_for(family_of(capability, _sm90_kernels()))


_BACKEND_NAMES = {3: "cudnn"}  # torch.nn.attention.SDPBackend values; the others are measured as flash


def sdpa_backend(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa) -> str:
    """The measured backend column for the SDPA torch would run: "cudnn" for cuDNN, else "flash" (flash, and
    the memory-efficient and math kernels, which are not faster than flash); "cudnn" when torch cannot be asked."""
    if torch.compiler.is_compiling():
        return "cudnn"
    try:
        choice = torch._fused_sdp_choice(query, key, value, attn_mask, dropout_p, is_causal, scale=scale,
                                         enable_gqa=enable_gqa)
    except Exception:  # a private function: absent or changed in another torch
        return "cudnn"
    return _BACKEND_NAMES.get(int(choice), "flash")


def sdpa_is_faster(table: Crossover, query, key, value, attn_mask, dropout_p, is_causal, scale,
                   enable_gqa) -> Optional[str]:
    """Why torch SDPA runs this call (4-D HND tensors) faster than SageAttention on ``table``'s GPU, or None."""
    b, hq, nq, d = query.shape
    n = min(nq, key.shape[2])
    dtype = str(query.dtype).replace("torch.", "")
    args = (d, dtype, bool(is_causal))
    lens = [table.min_len(*args, be, b * hq) for be in BACKENDS]
    if all(m is not None and n >= m for m in lens):
        return None  # SageAttention is at least as fast as either backend
    if all(m is None or n < m for m in lens):
        backend, m = "cudnn", lens[0]
    else:
        backend = sdpa_backend(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
        m = lens[BACKENDS.index(backend)]
        if m is not None and n >= m:
            return None
    return (f"head_dim {d}, {dtype}, {'causal' if is_causal else 'non-causal'}, {b * hq} (batch, head) pairs, "
            f"N={n}: SageAttention from N={m} against SDPA's {backend}" if m is not None else
            f"head_dim {d}, {dtype}, {'causal' if is_causal else 'non-causal'}: SDPA's {backend} faster at every "
            f"measured N")
