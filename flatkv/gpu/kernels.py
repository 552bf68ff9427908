"""Page movers over a FlatPool, torch reference implementation.

gather   the rows of a list of page ids, from every page part, into one contiguous staging
         buffer (offload, prefix-cache copy, disaggregated transfer).
scatter  the staging buffer back into the rows of a list of page ids.
host     the same page copies to and from a (pinned, on CUDA) host buffer: gather on the device,
         then one large DMA; or one large DMA, then scatter. In a slot-major pool a page's rows
         are spread over every slot tensor, so copying them straight over the bus would take one
         small DMA per slot and page (a page-major page is contiguous, but still one DMA per
         page, and pages in a call are scattered over the pool).
state    one page's state rows to other page ids (copy-on-write, snapshots).

The movers copy rows of the pool's ``page_parts``: its slot tensors in a slot-major pool, its
one page tensor (a row is a whole page) in a page-major pool (``flatkv.gpu.pool``).

Staging layout (part-major): for n pages the buffer holds part 0's n rows, then part 1's n rows,
and so on; part s starts at byte ``n * sum(row bytes of parts < s)``. Each part is then one
contiguous ``(n, row_bytes)`` block, which is what ``index_select(out=...)`` writes fastest. For a
slot-major pool that is slot-major staging; for a page-major pool it is page after page, each in
the pool's byte order. The Triton kernels (``flatkv.gpu.triton_kernels``) use the same layout,
so the two are interchangeable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import gcd

import torch

from flatkv.gpu.pool import FlatPool, empty_bytes
from flatkv.gpu_settings import TORCH_KERNEL, TRITON_KERNEL
from flatkv.plan import check_int
from flatkv.units import count_text

# Element sizes tried for the copies, widest first: torch's indexing kernels copy one element at
# a time within a row, so wider elements mean fewer, larger moves. complex128 is only a 16-byte
# carrier here: the kernels move its bits without arithmetic (NaN payloads included; the
# round-trip tests check this on every device), and on the CPU its index_copy_ is up to twice as
# fast as int64's for rows of 64 KiB.
_ELEMENTS = (
    (16, torch.complex128),
    (8, torch.int64),
    (4, torch.int32),
    (2, torch.int16),
    (1, torch.uint8),
)


@dataclass(frozen=True)
class PageIds:
    """Validated page ids of one pool: a 1-D int64 tensor on the pool's device, and the same ids
    on the host (checks and Python loops read those, so a timed call never waits on a GPU).

    Validate once (it may synchronize a GPU), then reuse in timed loops.
    """

    tensor: torch.Tensor
    count: int
    unique: bool
    host: torch.Tensor
    highest: int  # the largest id: a pool of fewer blocks must refuse them (Triton has no check)


def page_ids(pool: FlatPool, ids: PageIds | Sequence[int] | torch.Tensor, *,
             field: str = "ids") -> PageIds:
    """Check that ``ids`` are page ids of ``pool`` (in ``[0, num_blocks)``) and make a PageIds.
    PageIds made for another pool pass when they fit this one (a cheap check, no GPU sync)."""
    pool._check_live()
    if isinstance(ids, PageIds):
        if ids.tensor.device != pool.device:
            raise ValueError(f"{field} live on {ids.tensor.device}, the pool on {pool.device}")
        if ids.highest >= pool.num_blocks:
            raise ValueError(_outside(field, ids.highest, pool))
        return ids
    if isinstance(ids, torch.Tensor):
        if ids.dim() != 1 or ids.dtype.is_floating_point or ids.dtype in (torch.bool,):
            raise ValueError(
                f"{field} must be a 1-D integer tensor of page ids, got {ids.dtype} of shape "
                f"{tuple(ids.shape)}"
            )
        host = ids.detach().to("cpu", torch.int64, copy=True)  # the caller's stays theirs
    else:
        values = list(ids)
        for i, v in enumerate(values):
            if isinstance(v, bool) or not isinstance(v, int):
                raise ValueError(f"{field}[{i}] must be a whole page id, got {v!r}")
        host = torch.tensor(values, dtype=torch.int64)
    if host.numel() == 0:
        raise ValueError(f"{field} is empty: give at least one page id")
    low, high = int(host.min()), int(host.max())
    if low < 0 or high >= pool.num_blocks:
        raise ValueError(_outside(field, low if low < 0 else high, pool))
    unique = int(torch.unique(host).numel()) == host.numel()
    return PageIds(host.to(pool.device), host.numel(), unique, host, high)


def _outside(field: str, page_id: int, pool: FlatPool) -> str:
    return (f"{field} holds page id {page_id}, outside this pool's 0..{pool.num_blocks - 1} "
            f"({pool.num_blocks} allocated blocks)")


def staging_bytes(pool: FlatPool, count: int) -> int:
    """Bytes a staging buffer for ``count`` pages needs (``count * page_bytes``)."""
    return count * pool.page_bytes


def new_staging(pool: FlatPool, count: int, *, device: str | torch.device | None = None,
                pin: bool = False) -> torch.Tensor:
    """An uninitialised 1-D uint8 staging buffer for ``count`` pages.

    ``device`` defaults to the pool's; ``pin=True`` pins a host buffer (needs CUDA). An unpinned
    host buffer is advised onto transparent huge pages (``pool.advise_huge_pages``).
    """
    check_int("count", count, minimum=1)  # pages: "count 0 must be positive: give 1 or more"
    dev = pool.device if device is None else torch.device(device)
    if pin and (dev.type != "cpu" or not torch.cuda.is_available()):
        raise ValueError("pin=True needs a host ('cpu') buffer on a machine with CUDA")
    if pin:
        return torch.empty(staging_bytes(pool, count), dtype=torch.uint8, device=dev,
                           pin_memory=True)
    return empty_bytes(staging_bytes(pool, count), dev)  # huge pages on the host, like the pool


def check_staging(pool: FlatPool, staging: torch.Tensor, count: int) -> None:
    """Refuse a staging buffer that is not a contiguous 1-D uint8 tensor of at least ``count``
    pages (the fused mover checks this alone: it needs no views)."""
    need = staging_bytes(pool, count)
    if (
        not isinstance(staging, torch.Tensor)
        or staging.dtype != torch.uint8
        or staging.dim() != 1
        or not staging.is_contiguous()
    ):
        raise ValueError("staging must be a contiguous 1-D torch.uint8 tensor (see new_staging)")
    if staging.numel() < need:
        raise ValueError(
            f"staging holds {staging.numel()} bytes but {count} pages of {pool.page_bytes} bytes "
            f"need {need}: allocate it with new_staging(pool, {count})"
        )


def staging_views(pool: FlatPool, staging: torch.Tensor, count: int) -> list[torch.Tensor]:
    """The parts of a staging buffer: ``pool.page_parts[s]``'s as a ``(count, row_bytes)``
    view."""
    check_staging(pool, staging, count)
    views, start = [], 0
    for part in pool.page_parts:
        row_bytes = part.shape[1]
        size = count * row_bytes
        views.append(staging[start : start + size].view(count, row_bytes))
        start += size
    return views


def _same_element(*tensors: torch.Tensor) -> list[torch.Tensor]:
    """View row-major uint8 tensors with the widest element all of their rows and starts allow."""
    common = 0
    for t in tensors:
        common = gcd(common, t.shape[-1], t.storage_offset(), t.stride(0))
    for size, dtype in _ELEMENTS:
        if common % size == 0:
            return [t.view(dtype) for t in tensors]
    return list(tensors)


def gather(pool: FlatPool, ids: PageIds | Sequence[int] | torch.Tensor,
           staging: torch.Tensor) -> torch.Tensor:
    """Copy the rows of ``ids`` from every page part into ``staging``; returns staging."""
    pages = page_ids(pool, ids)
    for src, dst in zip(pool.page_parts, staging_views(pool, staging, pages.count), strict=True):
        src_w, dst_w = _same_element(src, dst)
        torch.index_select(src_w, 0, pages.tensor, out=dst_w)
    return staging


def scatter(pool: FlatPool, ids: PageIds | Sequence[int] | torch.Tensor,
            staging: torch.Tensor) -> None:
    """Copy ``staging`` back into the rows of ``ids`` in every page part."""
    pages = unique_ids(pool, ids, "ids")
    for dst, src in zip(pool.page_parts, staging_views(pool, staging, pages.count), strict=True):
        dst_w, src_w = _same_element(dst, src)
        dst_w.index_copy_(0, pages.tensor, src_w)


def unique_ids(pool: FlatPool, ids: PageIds | Sequence[int] | torch.Tensor,
                field: str) -> PageIds:
    pages = page_ids(pool, ids, field=field)
    if not pages.unique:
        raise ValueError(f"{field} repeats a page id: each page can be written once per call")
    return pages


GatherFn = Callable[[FlatPool, PageIds, torch.Tensor], object]
ScatterFn = Callable[[FlatPool, PageIds, torch.Tensor], object]


def _device_staging(pool: FlatPool, host: torch.Tensor, count: int,
                    device_staging: torch.Tensor | None) -> torch.Tensor:
    if host.device.type != "cpu":
        raise ValueError(f"host buffer must be on the CPU, got {host.device}")
    check_staging(pool, host, count)
    if pool.device.type == "cpu":
        return host  # host and device memory are the same: no DMA step
    if device_staging is None:
        device_staging = new_staging(pool, count)
    check_staging(pool, device_staging, count)
    return device_staging


def copy_to_host(pool: FlatPool, ids: PageIds | Sequence[int] | torch.Tensor, host: torch.Tensor,
                 *, device_staging: torch.Tensor | None = None,
                 gather_fn: GatherFn | None = None) -> torch.Tensor:
    """Device -> host: gather the pages into device staging, then one DMA into ``host``.

    ``host`` is a staging buffer on the CPU (pinned for speed on CUDA). On a CPU pool
    the gather writes ``host`` directly. The DMA is asynchronous on CUDA: synchronize before
    reading ``host``. Pass ``device_staging`` to avoid an allocation per call.
    """
    pages = page_ids(pool, ids)
    staging = _device_staging(pool, host, pages.count, device_staging)
    (gather_fn or gather)(pool, pages, staging)
    if staging is not host:
        nbytes = staging_bytes(pool, pages.count)
        host[:nbytes].copy_(staging[:nbytes], non_blocking=True)
    return host


def copy_from_host(pool: FlatPool, ids: PageIds | Sequence[int] | torch.Tensor,
                   host: torch.Tensor, *, device_staging: torch.Tensor | None = None,
                   scatter_fn: ScatterFn | None = None) -> None:
    """Host -> device: one DMA of ``host`` into device staging, then scatter into ``ids``.

    On CUDA the DMA from a pinned ``host`` is asynchronous: it reads ``host`` when the stream
    gets to it, after this returns, so synchronize before writing ``host`` again (the next
    pages written too soon would land in these ids). Pass ``device_staging`` to avoid an
    allocation per call.
    """
    pages = unique_ids(pool, ids, "ids")
    staging = _device_staging(pool, host, pages.count, device_staging)
    if staging is not host:
        nbytes = staging_bytes(pool, pages.count)
        staging[:nbytes].copy_(host[:nbytes], non_blocking=True)
    (scatter_fn or scatter)(pool, pages, staging)


def copy_state_rows(pool: FlatPool, src: int | PageIds | Sequence[int] | torch.Tensor,
                    dst: int | PageIds | Sequence[int] | torch.Tensor) -> int:
    """Copy the state rows of page(s) ``src`` to page(s) ``dst`` (copy-on-write, snapshot).

    Only the state bindings move (``FlatPool.state_ranges_by_part``); history rows and every other
    page stay as they were. ``src`` and ``dst`` pair up one to one and must not share a page, so
    the order of the copies cannot matter. Returns the bytes copied.
    """
    src_ids = page_ids(pool, [src] if isinstance(src, int) else src, field="src")
    dst_ids = unique_ids(pool, [dst] if isinstance(dst, int) else dst, "dst")
    if src_ids.count != dst_ids.count:
        raise ValueError(
            f"src has {count_text(src_ids.count, 'page id')} and dst {dst_ids.count}: pair them "
            "one to one"
        )
    if bool(torch.isin(dst_ids.host, src_ids.host).any()):
        raise ValueError("src and dst share a page id: copy into pages that are not sources")
    if pool.state_bytes_per_page == 0:
        raise ValueError(
            "this plan has no state rows (no binding of a state group such as "
            "'linear_attention'): there is nothing for a state-row copy to move"
        )
    pairs = None
    if src_ids.count <= _STATE_COPY_LOOP_MAX:  # a few pages: direct row copies, no temporaries
        pairs = list(zip(src_ids.host.tolist(), dst_ids.host.tolist(), strict=True))
    for index, start, end in pool.state_ranges_by_part:
        (part,) = _same_element(pool.page_parts[index][:, start:end])
        if pairs is not None:
            for s, d in pairs:
                part[d].copy_(part[s])
        else:
            part.index_copy_(0, dst_ids.tensor, part.index_select(0, src_ids.tensor))
    return src_ids.count * pool.state_bytes_per_page


# Up to this many page pairs, a state-row copy copies row by row; above it, by index kernels.
_STATE_COPY_LOOP_MAX = 16


# --------------------------------------------------------------------------------------------
# Implementations by name: what the benchmark and the CLI choose from.


@dataclass(frozen=True)
class Mover:
    """One implementation of gather and scatter, by name."""

    name: str
    gather: GatherFn
    scatter: ScatterFn


TORCH_MOVER = Mover(TORCH_KERNEL, gather, scatter)


def available_movers(device: torch.device) -> tuple[Mover, ...]:
    """The torch reference, then the fused Triton mover where it can run compiled (CUDA + triton).

    The Triton interpreter runs on the CPU too, but far too slowly to time; tests call it via
    ``flatkv.gpu.triton_kernels`` directly.
    """
    movers = [TORCH_MOVER]
    if device.type == "cuda":
        from flatkv.gpu import triton_kernels

        if triton_kernels.available():
            movers.append(Mover(TRITON_KERNEL, triton_kernels.gather, triton_kernels.scatter))
    return tuple(movers)
