"""Loading the CUDA extension ``sageattention._C`` and the build's description.

Importing ``_C`` registers ``torch.ops.sageattention.*``; the fake (meta)
kernels of ``_fake`` are registered beside them for torch.compile.  When the
extension cannot be loaded, ``extension_error()`` says why and every call that
needs the kernels raises with that reason (see ``_arch.unsupported_reason``).
"""
from __future__ import annotations

import importlib
import json
import os
from typing import Optional

import torch

_C = None
_C_ERROR: Optional[BaseException] = None
try:  # the import registers torch.ops.sageattention.*
    _C = importlib.import_module(__package__ + "._C")
except Exception as e:  # pragma: no cover - depends on the install
    _C_ERROR = e

if _C is not None:
    importlib.import_module(__package__ + "._fake")  # fake/meta implementations for torch.compile


def loaded() -> bool:
    return _C is not None


def extension_error() -> Optional[BaseException]:
    """Why ``sageattention._C`` could not be loaded, or None."""
    return _C_ERROR


BUILD_INFO_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "build_info.json")
_BUILD_INFO_CACHE: dict = {}  # path -> contents: read once per process (the routing asks on every call)


def build_info() -> Optional[dict]:
    """Contents of sageattention/build_info.json (written by the build tool), or None in a dev tree."""
    path = BUILD_INFO_PATH
    if path not in _BUILD_INFO_CACHE:
        try:
            with open(path) as f:
                _BUILD_INFO_CACHE[path] = json.load(f)
        except FileNotFoundError:
            return None
    return _BUILD_INFO_CACHE[path]
