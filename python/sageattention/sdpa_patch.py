"""patch_sdpa(): route torch's scaled_dot_product_attention to SageAttention where it can run.

A call goes to SageAttention when it can run it as SDPA would (CUDA,
fp16/bf16 4-D [batch, heads, seq, head_dim] tensors, head_dim <= 256, no
dropout, GQA only with enable_gqa, a mask it applies: see sageattention.masks,
and no input that requires grad unless SAGEATTN_BACKWARD=sdpa /
set_backward("sdpa") opted in to exact gradients through SDPA) and to the
original SDPA, unchanged, otherwise, so a pipeline with CPU text encoders, fp32
layers, training steps and arbitrary masks runs as before.  Each handle counts
where its calls went and why they fell back, and the first fallback for each
reason is logged once per process (logger "sageattention", level WARNING).

What is patched: ``torch.nn.functional.scaled_dot_product_attention`` (every
caller that looks it up at call time, ``F.scaled_dot_product_attention(...)``,
and modules imported later), and, with ``rebind_imported=True`` (default),
module-level names already bound to it in modules imported before the patch
(``from torch.nn.functional import scaled_dot_product_attention``), outside
torch's own modules.  Not covered: references kept elsewhere (closures, default
arguments, class attributes, dispatch tables filled at import time), C++
callers (torch's fused nn.MultiheadAttention / TransformerEncoderLayer fast
paths), and torch.compile'd graphs traced before the patch.

Speed: where torch's own SDPA is faster than SageAttention on the running GPU
(short sequences), a call SageAttention could run goes to SDPA too: the
crossover per GPU family, head dim, dtype, causal and batch x heads is measured
data shipped with the package (sageattention._sdpa_route; the device and date
are in the log line said the first time).  ``patch_sdpa(route=...)`` or
SAGEATTN_SDPA_ROUTE forces it: "sageattention" (every call it can run),
"sdpa" (every call to torch), "auto" (the default).
"""
from __future__ import annotations

import collections
import logging
import sys
import threading
from typing import Callable, List, Optional, Set, Tuple

import torch.nn.functional as F

from . import _sdpa_plan as plans
from . import _sdpa_route
from .masks import MaskError

_LOCK = threading.RLock()
_ACTIVE: List["SdpaPatch"] = []  # handles in the order they were made
_ORIGINAL: Optional[Callable] = None  # what torch.nn.functional held when the first handle was made
_REBOUND: List[Tuple[dict, str]] = []  # (module __dict__, name) rebound to the router
_LOG = logging.getLogger("sageattention")
_LOGGED: Set[str] = set()  # fallback reasons already logged in this process


class SdpaPatch:
    """A patch_sdpa() handle: ``restore()``, a context manager, and the counts of its calls."""

    def __init__(self, route: str = "auto"):
        self.route = route  # _sdpa_route.ROUTES: the innermost active handle's route is the one used
        self.sageattention = 0
        self.sdpa = 0
        self.fallback_reasons: collections.Counter = collections.Counter()
        self._active = True

    @property
    def active(self) -> bool:
        return self._active

    @property
    def stats(self) -> dict:
        """{"sageattention": n, "sdpa": m, "fallback_reasons": {reason: count}} for calls made while active."""
        return {"sageattention": self.sageattention, "sdpa": self.sdpa,
                "fallback_reasons": dict(self.fallback_reasons)}

    def summary(self) -> str:
        """One line for a log: where the calls went, the fallback reasons most frequent first."""
        total = self.sageattention + self.sdpa
        line = f"scaled_dot_product_attention: {self.sageattention} of {total} calls ran SageAttention"
        if self.fallback_reasons:
            line += "; SDPA for " + ", ".join(f"{r} ({n})" for r, n in self.fallback_reasons.most_common())
        return line

    def restore(self) -> None:
        """End this handle (idempotent).  torch's function comes back when no handle is active."""
        with _LOCK:
            if not self._active:
                return
            self._active = False
            _ACTIVE.remove(self)
            if not _ACTIVE:
                _uninstall()

    def __enter__(self) -> "SdpaPatch":
        return self

    def __exit__(self, *exc) -> None:
        self.restore()

    def __repr__(self) -> str:
        return f"<SdpaPatch {'active' if self._active else 'restored'}: {self.stats}>"


def _count(went_sage: bool, reason: Optional[str]) -> None:
    if not went_sage and reason not in _LOGGED:
        _LOGGED.add(reason)
        if isinstance(reason, _sdpa_route.SpeedReason):
            _LOG.warning("sageattention.patch_sdpa: torch's scaled_dot_product_attention runs the calls it runs "
                         "faster on this GPU (%s; the first: %s); patch_sdpa(route='sageattention') or "
                         "SAGEATTN_SDPA_ROUTE=sageattention sends them to SageAttention (said once, counted in "
                         "SdpaPatch.stats)", reason.table.describe(), reason.detail)
        else:
            why = "as asked" if reason.startswith("route ") else "SageAttention cannot serve them"
            _LOG.warning("sageattention.patch_sdpa: torch's scaled_dot_product_attention runs calls with %s "
                         "(%s; said once per reason, counted in SdpaPatch.stats)", reason, why)
    for h in list(_ACTIVE):
        if went_sage:
            h.sageattention += 1
        else:
            h.sdpa += 1
            h.fallback_reasons[reason] += 1


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None,
                                 enable_gqa=False, **kwargs):
    """torch SDPA's signature; SageAttention where it can run the call (sageattention.sdpa_patch), else SDPA."""
    original = _ORIGINAL
    try:
        route = _ACTIVE[-1].route
    except IndexError:  # restored by another thread meanwhile
        route = "sageattention"
    plan, reason = (None, "extra keyword arguments") if kwargs else plans.sdpa_plan(
        query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa, route)
    if plan is not None:
        try:
            out = plans.sdpa_run(plan, query, key, value, is_causal, scale, attn_mask)
        except MaskError as e:  # found only while running (e.g. offsets past 32 bits)
            reason = "attn_mask " + e.reason
        else:
            _count(True, None)
            return out
    _count(False, reason)
    if enable_gqa:
        kwargs["enable_gqa"] = enable_gqa
    return original(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal, scale=scale,
                    **kwargs)


def _module_dicts():
    for name, mod in list(sys.modules.items()):
        if mod is None or name == "torch" or name.startswith(("torch.", "sageattention")):
            continue
        d = getattr(mod, "__dict__", None)
        if isinstance(d, dict):
            yield d


def _install(rebind_imported: bool) -> None:
    global _ORIGINAL
    _ORIGINAL = F.scaled_dot_product_attention
    F.scaled_dot_product_attention = scaled_dot_product_attention
    _REBOUND.clear()
    if rebind_imported:
        for d in _module_dicts():
            for name, val in list(d.items()):
                if val is _ORIGINAL:
                    d[name] = scaled_dot_product_attention
                    _REBOUND.append((d, name))


def _uninstall() -> None:
    global _ORIGINAL
    for d, name in _REBOUND:
        if d.get(name) is scaled_dot_product_attention:  # not rebound since by someone else
            d[name] = _ORIGINAL
    _REBOUND.clear()
    if F.scaled_dot_product_attention is scaled_dot_product_attention:
        F.scaled_dot_product_attention = _ORIGINAL
    _ORIGINAL = None


def patch_sdpa(rebind_imported: bool = True, route: Optional[str] = None) -> SdpaPatch:
    """Route torch.nn.functional.scaled_dot_product_attention to SageAttention where it can run the call.

    Returns an SdpaPatch: call ``.restore()`` to undo, or use it as a context manager::

        with sageattention.patch_sdpa() as p:
            image = pipe(prompt).images[0]
        print(p.summary())      # or p.stats

    Patches nest: an inner handle counts the calls made while it is active, torch's function
    comes back when the last active handle is restored (in any order), and restoring twice is a
    no-op.  ``rebind_imported``: also rebind module-level names that imported the function
    before the patch (see the module's docstring for what is and is not covered).

    ``route``: "auto" sends a call to torch's SDPA also where that is faster on this GPU (the
    crossover measured for its family, head dim, dtype, causal and batch x heads, shipped as data;
    a GPU without such data runs every call SageAttention can run); "sageattention" runs every call
    it can run; "sdpa" runs every call in torch's SDPA.  None (default): $SAGEATTN_SDPA_ROUTE, else
    "auto".  While handles nest, the innermost active one's route applies.
    """
    route = _sdpa_route.resolve_route(route)
    with _LOCK:
        if not _ACTIVE:
            _install(rebind_imported)
        h = SdpaPatch(route)
        _ACTIVE.append(h)
        return h


def is_patched() -> bool:
    """Whether torch.nn.functional.scaled_dot_product_attention is routed by an active patch_sdpa()."""
    return bool(_ACTIVE) and F.scaled_dot_product_attention is scaled_dot_product_attention


def original_sdpa() -> Callable:
    """torch's function (what the patch routes to when SageAttention cannot run a call)."""
    return _ORIGINAL if _ACTIVE else F.scaled_dot_product_attention

