"""The GPU lab's vocabulary and defaults, shared by the library (``flatkv.gpu``) and the page
(``flatkv.gpu_view``): mover and layout names, device names, default pool and call sizes, rounds.

Torch-free and app-free, so ``flatkv.gpu`` depends on no view code and the page can state the
very values the library uses without importing torch.
"""

from __future__ import annotations

import re

BENCH_REPEATS = {"cpu": 7, "cuda": 15}  # the library's and the CLI's timed rounds
# The benchmark's defaults (the page states them).
DEFAULT_POOL_BYTES = {"cpu": 512 << 20, "cuda": 8 << 30}  # pages allocated without a cap
DEFAULT_CALL_BYTES = {"cpu": 64 << 20, "cuda": 256 << 20}  # what one call moves by default
# Share of free memory a default cap leaves to the pool, in percent. The rest stays free for the
# staging buffers of the page movers, the benchmark's cache-flush buffer and everything else.
DEFAULT_SHARE_PERCENT = 40
WARMUP_ROUNDS = 2  # untimed rounds before the timed ones
MAX_REPEATS = 100
# Every page mover flatkv.gpu has, by name; a device runs a subset (triton: CUDA with triton).
# flatkv.gpu names its movers from these, so the page, the URL and the library agree.
TORCH_KERNEL = "torch"
TRITON_KERNEL = "triton"
KERNELS = (TORCH_KERNEL, TRITON_KERNEL)
# How a pool lays out its pages (flatkv.gpu.pool). Slot-major: one tensor per slot, as the plan's
# TensorPlans and the engines' default allocation have it; a page's rows lie one per slot tensor,
# far apart. Page-major: one buffer with each page's slot rows back to back (vLLM's "cross-layer
# KV blocks"), so moving a page is one contiguous copy; the slot tensors are strided views.
SLOT_MAJOR = "slot-major"
PAGE_MAJOR = "page-major"
POOL_LAYOUTS = (SLOT_MAJOR, PAGE_MAJOR)
# A device name: cpu, cuda or cuda:N (group 1: N). flatkv.gpu.pool resolves it on the machine.
DEVICE_NAME = re.compile(r"^(?:cpu|cuda(?::(\d+))?)$")


def check_pages_fit_pool(field: str, pages: int, pool_blocks: int, cap_field: str) -> None:
    """A call moves pages of one pool, so it moves at most the pool's blocks: a ValueError
    naming ``field``, the pool and ``cap_field`` (the setting that raises the pool) otherwise."""
    if pages > pool_blocks:
        raise ValueError(f"{field} is {pages:,}, more than the {pool_blocks:,} blocks of the "
                         f"pool: give at most {pool_blocks:,}, or raise {cap_field}")


def check_layout(field: str, value: object) -> str:
    """``value`` if it is one of POOL_LAYOUTS, else a ValueError naming ``field``."""
    if value not in POOL_LAYOUTS:
        raise ValueError(f"{field}={value!r} is not a pool layout: choose one of "
                         f"{', '.join(POOL_LAYOUTS)}")
    return value  # type: ignore[return-value]
