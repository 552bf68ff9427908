"""Fused gather / scatter: every page part of a pool (each slot tensor) in one Triton launch.

The torch reference launches one copy per page part (``FlatPool.page_parts``: each slot tensor of
a slot-major pool, the one page tensor of a page-major pool); with many slots and small pages
those launches (2 to 4 us each) dominate. Here one program copies one chunk of one part's row of
one page: the grid is ``(pages, chunks per row, parts)``. Parts are separate allocations; the
kernel reaches them as ``part 0's pointer + delta`` with the deltas (and the rows) stored in
units of up to 16 bytes and multiplied by a compile-time constant, so the compiler can prove
16-byte alignment and use vector loads. Same part-major staging layout as ``flatkv.gpu.kernels``.

On a CUDA tensor the kernel is compiled; on a CPU tensor it runs in Triton's interpreter (how the
tests check it against the torch reference without a GPU). ``TRITON_INTERPRET`` need not be set:
the interpreter build is chosen when the kernel is first wrapped, per device type.

Importing this module never fails: without triton, ``available()`` is False and the movers raise.
"""

import os
import weakref
from contextlib import nullcontext
from dataclasses import dataclass, field
from math import gcd

import torch

from flatkv.gpu.kernels import PageIds, check_staging, page_ids, unique_ids
from flatkv.gpu.pool import FlatPool
from flatkv.plan import cdiv

try:
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover - depends on the machine
    triton = None
    tl = None

_UNIT_MAX = 16  # bytes: one vector load per thread
_CHUNK_BYTES = 64 * 1024  # bytes of a row one program copies at most
_BLOCK_BYTES = 8 * 1024  # bytes one loop iteration of a program copies
_MAX_GRID_Y = 65_535  # CUDA's limit on a grid's second dimension: chunks per row


def available() -> bool:
    """The compiled fused kernel can run: triton and a CUDA device are both present."""
    return triton is not None and torch.cuda.is_available()


if triton is not None:  # real annotations: triton reads tl.constexpr from them

    def _move_rows(
        pool_base,
        staging,
        deltas,
        rows,
        staging_offsets,
        ids,
        n,
        GATHER: tl.constexpr,
        VEC: tl.constexpr,
        CHUNK: tl.constexpr,
        BLOCK: tl.constexpr,
    ):
        i = tl.program_id(0)  # position in ids
        c = tl.program_id(1)  # chunk of the row
        s = tl.program_id(2)  # page part: a slot tensor, or the page-major pool's one tensor
        row = tl.load(rows + s) * VEC  # elements in a row of part s
        start = c.to(tl.int64) * CHUNK
        if start < row:
            page = tl.load(ids + i).to(tl.int64)
            part_row = pool_base + tl.load(deltas + s) * VEC + page * row
            stage_row = staging + n * tl.load(staging_offsets + s) * VEC + i * row
            end = tl.minimum(start + CHUNK, row)
            # A compile-time trip count, each block tested in the loop: Triton 3.6's interpreter
            # cannot take tensor range bounds under numpy >= 2.4. Whole blocks go unmasked (the
            # compiler can prove 16-byte alignment), the row's tail masked.
            for k in range(0, (CHUNK + BLOCK - 1) // BLOCK):
                off = start + k * BLOCK
                col = off + tl.arange(0, BLOCK)
                if off + BLOCK <= end:
                    if GATHER:
                        tl.store(stage_row + col, tl.load(part_row + col))
                    else:
                        tl.store(part_row + col, tl.load(stage_row + col))
                elif off < end:
                    mask = col < end
                    if GATHER:
                        tl.store(stage_row + col, tl.load(part_row + col, mask=mask), mask=mask)
                    else:
                        tl.store(part_row + col, tl.load(stage_row + col, mask=mask), mask=mask)


_KERNELS: dict = {}


def _kernel(interpret: bool):
    """``_move_rows`` wrapped by triton.jit, compiled or interpreted (decided at wrap time)."""
    if interpret not in _KERNELS:
        knobs = getattr(triton, "knobs", None)
        if knobs is not None and hasattr(knobs.runtime, "scope"):
            with knobs.runtime.scope():
                knobs.runtime.interpret = interpret
                _KERNELS[interpret] = triton.jit(_move_rows)
        else:  # older triton reads the environment in triton.jit
            old = os.environ.get("TRITON_INTERPRET")
            os.environ["TRITON_INTERPRET"] = "1" if interpret else "0"
            try:
                _KERNELS[interpret] = triton.jit(_move_rows)
            finally:
                if old is None:
                    del os.environ["TRITON_INTERPRET"]
                else:
                    os.environ["TRITON_INTERPRET"] = old
    return _KERNELS[interpret]


@dataclass
class _PoolShape:
    """What a launch needs of a pool beyond its tensors, worked out once per pool (its page
    parts never change while it lives), so a timed call does no per-part Python work. Not
    frozen: ``metadata`` is a cache, filled per unit on first use."""

    unit: int  # the largest unit (<= 16 bytes) dividing every row and every part's address
    max_row: int  # the longest row in bytes
    metadata: dict = field(default_factory=dict)  # unit -> (deltas, rows, staging offsets)


_SHAPES: "weakref.WeakKeyDictionary[FlatPool, _PoolShape]" = weakref.WeakKeyDictionary()


def _pool_shape(pool: FlatPool) -> _PoolShape:
    if pool not in _SHAPES:
        unit = _UNIT_MAX
        for t in pool.page_parts:
            unit = gcd(unit, t.shape[1], t.data_ptr())
        _SHAPES[pool] = _PoolShape(unit, max(t.shape[1] for t in pool.page_parts))
    return _SHAPES[pool]


def _metadata(pool: FlatPool, unit: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """deltas, rows and staging offsets of the pool's page parts, in ``unit`` bytes, on its
    device."""
    cached = _pool_shape(pool).metadata
    if unit not in cached:
        base = pool.page_parts[0].data_ptr()
        rows = [t.shape[1] // unit for t in pool.page_parts]
        offsets = [sum(rows[:s]) for s in range(len(rows))]
        deltas = [(t.data_ptr() - base) // unit for t in pool.page_parts]
        cached[unit] = tuple(
            torch.tensor(v, dtype=torch.int64, device=pool.device) for v in (deltas, rows, offsets)
        )
    return cached[unit]


def _block_and_chunk(max_row: int) -> tuple[int, int]:
    """Bytes one loop iteration copies and bytes one program copies, for rows of up to
    ``max_row`` bytes: powers of two, so a row spans at most _MAX_GRID_Y chunks (a page-major
    row is a whole page, which can pass 4 GiB at 64 KiB chunks)."""
    fit = 1 << max(0, (max_row - 1).bit_length())  # next power of two
    block_bytes = min(_BLOCK_BYTES, fit)
    chunk_bytes = max(block_bytes, min(_CHUNK_BYTES, fit))
    while cdiv(max_row, chunk_bytes) > _MAX_GRID_Y:
        chunk_bytes *= 2
    return block_bytes, chunk_bytes


def launch_arguments(pool: FlatPool, pages: PageIds, staging: torch.Tensor,
                     gather_rows: bool) -> tuple[tuple[int, int, int], tuple, dict]:
    """The grid, arguments and compile-time constants of one launch of ``_move_rows`` (what the
    movers launch, and what a test compiles for a GPU it does not have)."""
    if triton is None:
        raise ValueError("triton is not installed: use the torch mover (implementation 'torch')")
    check_staging(pool, staging, pages.count)
    if staging.device != pool.device:
        raise ValueError(f"staging lives on {staging.device}, the pool on {pool.device}")
    shape = _pool_shape(pool)
    max_row = shape.max_row
    unit = gcd(shape.unit, staging.data_ptr())
    element = min(unit, 8)
    dtype = {8: torch.int64, 4: torch.int32, 2: torch.int16, 1: torch.uint8}[element]
    deltas, rows, offsets = _metadata(pool, unit)
    block_bytes, chunk_bytes = _block_and_chunk(max_row)
    grid = (pages.count, cdiv(max_row, chunk_bytes), len(pool.page_parts))
    base = pool.page_parts[0].view(-1).view(dtype)
    stage = staging.view(dtype) if staging.numel() % element == 0 else staging[
        : staging.numel() - staging.numel() % element].view(dtype)
    constants = {
        "GATHER": gather_rows,
        "VEC": unit // element,
        "CHUNK": chunk_bytes // element,
        "BLOCK": block_bytes // element,
        "num_warps": max(1, min(4, block_bytes // 2048)),
    }
    return grid, (base, stage, deltas, rows, offsets, pages.tensor, pages.count), constants


def _launch(pool: FlatPool, pages: PageIds, staging: torch.Tensor, gather_rows: bool) -> None:
    grid, args, constants = launch_arguments(pool, pages, staging, gather_rows)
    on_device = torch.cuda.device(pool.device) if pool.device.type == "cuda" else nullcontext()
    with on_device:  # launch on the pool's GPU, not the current one
        _kernel(pool.device.type != "cuda")[grid](*args, **constants)


def gather(pool: FlatPool, ids, staging: torch.Tensor) -> torch.Tensor:
    """Fused ``flatkv.gpu.kernels.gather``: every page part in one launch."""
    _launch(pool, page_ids(pool, ids), staging, True)
    return staging


def scatter(pool: FlatPool, ids, staging: torch.Tensor) -> None:
    """Fused ``flatkv.gpu.kernels.scatter``: every page part in one launch."""
    _launch(pool, unique_ids(pool, ids, "ids"), staging, False)
