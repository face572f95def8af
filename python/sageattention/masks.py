"""Which attention masks SageAttention applies: key-padding masks.

The kernels take, per batch element, the range of keys to attend (a start and
a length: ``sa_view.seq_start`` / ``seq_len`` and ``sa_attn_params.kv_seq_len``
in sageattn.h).  A mask is applied natively when it says exactly that:

* dtype ``bool`` (True = attend), or floating point used additively (0 =
  attend; a value <= -1000, such as ``-inf``, ``torch.finfo(dtype).min`` or
  diffusers' ``-10000.0`` (-9984 in bfloat16), = masked: SDPA's float32 softmax
  gives such a key a weight of exactly zero, e^-104 being the smallest it keeps,
  so dropping the key changes nothing).  Any other value is a bias, not padding;
* it broadcasts (torch SDPA's rule) to ``[batch, q_heads, q_len, kv_len]``, and
  every head and every query row of a batch element masks the same keys: by
  shape (size-1 or stride-0 dimensions) or, for a materialised mask, by value;
* the attended keys of each batch element form one contiguous range with at
  least one key (right padding, left padding, or none).

Anything else raises ``ValueError`` naming ``attn_mask``, so a caller's
fallback to another attention takes over: a mask is never ignored.

Checking values needs one host synchronisation per call with a mask (a copy of
three flags after a few small reductions on the mask's device).  A mask cannot
be checked while a CUDA graph is being captured: that raises the same
``ValueError``; under torch.compile the check is a graph break.  A mask that attends every key costs nothing more: it runs the
dense kernels.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import torch

MASKED_AT_MOST = -1e3  # additive mask values at or below this remove the key


@dataclass(frozen=True)
class KeyPadding:
    """The keys each batch element attends: ``start[b] .. start[b] + length[b]``."""

    start: torch.Tensor  # int32 [B]
    length: torch.Tensor  # int32 [B], >= 1
    valid: torch.Tensor  # bool [B, kv_len]
    left: bool  # some start > 0 (left padding): the kernels need the starts


class MaskError(ValueError):
    """A mask SageAttention cannot apply; ``reason`` says why in a few words (patch_sdpa counts them)."""

    def __init__(self, reason: str):
        super().__init__(f"sageattention: attn_mask {reason}. SageAttention applies key-padding masks only (see "
                         "sageattention.masks); use torch SDPA for this mask, or pass attn_mask=None.")
        self.reason = reason


def _error(what: str) -> MaskError:
    return MaskError(what)


def _collapse_broadcast(m: torch.Tensor) -> torch.Tensor:
    """Size-1 views of the stride-0 (expanded) dimensions: nothing to check or to read twice there."""
    for d in range(m.dim()):
        if m.size(d) > 1 and m.stride(d) == 0:
            m = m.narrow(d, 0, 1)
    return m


def key_padding(mask: torch.Tensor, batch: int, heads: int, q_len: int, kv_len: int) -> Optional[KeyPadding]:
    """Classify ``mask`` for attention of ``[batch, heads, q_len, kv_len]`` scores.

    Returns None when the mask attends every key, a KeyPadding when it is a
    key-padding mask, and raises ValueError (naming attn_mask) otherwise.
    """
    if not isinstance(mask, torch.Tensor):
        raise _error(f"must be a torch.Tensor or None, got {type(mask).__name__}")
    if mask.dim() > 4:
        raise _error(f"must have at most 4 dimensions, got shape {tuple(mask.shape)}")
    if not (mask.dtype == torch.bool or mask.is_floating_point()):
        raise _error(f"must be bool or floating point, got {mask.dtype}")
    target = (batch, heads, q_len, kv_len)
    m = mask.reshape((1,) * (4 - mask.dim()) + tuple(mask.shape))
    if any(s not in (1, t) for s, t in zip(m.shape, target)):
        raise _error(f"of shape {tuple(mask.shape)} does not broadcast to [batch, heads, q_len, kv_len] = {list(target)}")
    if m.is_cuda and torch.cuda.is_current_stream_capturing():
        raise _error("cannot be checked while a CUDA graph is being captured (the check needs a host synchronisation)")
    m = _collapse_broadcast(m)
    if m.dtype == torch.bool:
        attend, bias = m, None
    else:
        attend = m == 0
        bias = ~(attend | (m <= MASKED_AT_MOST))  # NaN counts as a bias too
    row = attend[:, :1, :1, :]
    rows_differ = (attend != row).any() if (attend.size(1) > 1 or attend.size(2) > 1) else None
    valid = row.reshape(row.size(0), row.size(3)).expand(batch, kv_len)
    count = valid.sum(dim=1, dtype=torch.int32)
    vi = valid.to(torch.int8)
    first = vi.argmax(dim=1).to(torch.int32)  # the first attended key (0 when none)
    last = (kv_len - 1) - vi.flip(1).argmax(dim=1).to(torch.int32)
    checks = {
        "has a value that is neither 0 (attend) nor <= -1000 (masked): an additive bias": bias.any() if bias is not None else None,
        "masks different keys for different heads or query rows (not a key-padding mask)": rows_differ,
        "leaves a batch element with no key to attend": (count == 0).any(),
        "attends keys that are not one contiguous range per batch element": (last - first + 1 != count).any(),
    }
    names = [k for k, v in checks.items() if v is not None]
    flags = torch.stack([checks[k] for k in names] + [(count == kv_len).all(), (first > 0).any()]).tolist()  # one sync
    for name, bad in zip(names, flags):
        if bad:
            raise _error(name)
    full, left = flags[-2], flags[-1]
    if full:
        return None
    return KeyPadding(start=first.contiguous(), length=count.contiguous(), valid=valid, left=bool(left))
