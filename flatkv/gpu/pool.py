"""A FlatMemoryPlan made of real tensors: a uint8 tensor per TensorPlan, page id on dim 0.

Each slot tensor is ``(num_blocks, row_bytes)``: one block id addresses one row in every slot, as
in the plan. Two layouts put those tensors in memory (``flatkv.gpu_settings.POOL_LAYOUTS``):

- slot-major: one allocation per slot tensor, as the plan's TensorPlans (and engines, by default)
  have it. A page is one row in each slot tensor, so moving it touches one row per slot.
- page-major: one ``(num_blocks, page_bytes)`` allocation whose row is a whole page, its slot rows
  back to back in slot order (vLLM's "cross-layer KV blocks"); each slot tensor is a strided view
  of it. Moving a page is one contiguous copy: on one CPU core, 8 KiB pages of 1 KiB slot rows
  gather at about 1.8x and scatter at about 1.6x the slot-major rate (bench/gpu_bench.py),
  because a random row costs a memory latency however short it is. Pages of 512 KiB and more
  gain little or nothing (0.77 to 1.22x).

Page movers copy rows of ``FlatPool.page_parts``: the slot tensors (slot-major) or the one page
tensor (page-major), so the same kernels serve both.

A slot row holds several ``(group, layer)`` rows back to back, in binding order; a binding's
``row_offset`` is relative to the start of its ``(group, layer)`` row, so its offset in the slot
row is that row's start plus ``row_offset``. ``SlotLayout`` works this out once.

Plans can be 100+ GB, so the number of blocks is capped: by the caller (``max_blocks``) or by a
safe share of the device's free memory. The allocation report says what was planned and what was
allocated. A failed allocation frees what was already allocated and raises PoolAllocationError
(a ValueError) whose message says how to fit.
"""

from __future__ import annotations

import ctypes
import functools
import gc
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import torch

from flatkv.gpu_settings import (
    DEFAULT_SHARE_PERCENT,
    DEVICE_NAME,
    LAB_NAMES,
    SLOT_MAJOR,
    SettingNames,
    check_layout,
)
from flatkv.plan import (
    STATE_LAYER_TYPES,
    FlatMemoryPlan,
    LayerBinding,
    TensorPlan,
    cdiv,
    check_int,
    check_layer_labels,
    slot_offsets,
)
from flatkv.units import count_text, quoted


class PoolAllocationError(ValueError):
    """The pool (or part of it) could not be allocated; whatever was allocated has been freed."""


def resolve_device(device: str | torch.device, *, flag: str | None = None) -> torch.device:
    """``"cpu"``, ``"cuda"`` or ``"cuda:N"`` as a torch.device, checked against this machine.

    ``"cuda"`` becomes the current CUDA device with its index, so that locks and reports name one
    device. ``flag``: the command-line option it came from, which a refusal then names as its
    other options' are, "--device 'tpu': what is wrong; fix" (``_device_refused``).
    """
    text = str(device)
    match = DEVICE_NAME.match(text)
    if not match:
        raise _device_refused(
            flag, text, "not a device", "cpu, cuda or cuda:N",
            f"device must be 'cpu', 'cuda' or 'cuda:N', got {quoted(text, 40)}")
    if text == "cpu":
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise _device_refused(
            flag, text, f"torch {torch.__version__} sees no CUDA GPU", "cpu",
            f"device is {text!r} but torch {torch.__version__} sees no CUDA GPU: use device 'cpu'")
    count = torch.cuda.device_count()
    index = torch.cuda.current_device() if match.group(1) is None else int(match.group(1))
    if index >= count:
        raise _device_refused(
            flag, text, f"this machine has {count_text(count, 'CUDA device')}",
            "cuda:0" if count == 1 else f"cuda:0 to cuda:{count - 1}",
            f"device is {text!r} but this machine has {count_text(count, 'CUDA device')}: use "
            f"cuda:0 to cuda:{count - 1}")
    return torch.device("cuda", index)


def _device_refused(flag: str | None, text: str, problem: str, fix: str,
                    library: str) -> ValueError:
    """A device refused in the library's words, or where it came from ``flag`` in the
    command line's, "--device 'tpu': <problem>; give --device <fix>" (as --max-blocks 1 is,
    ``gpu_settings.check_max_blocks``): it said "--device must be ..." and "--device is ..."."""
    if flag is None:
        return ValueError(library)
    return ValueError(f"{flag} {quoted(text, 40)}: {problem}; give {flag} {fix}")


def free_memory_bytes(device: torch.device) -> int:
    """Bytes the device can still hand out: on CUDA the driver's free memory plus the blocks
    torch's caching allocator holds with no tensor in them; on the host the smaller of
    MemAvailable and what this process's memory cgroup still allows (a container's limit is
    where Linux kills a process that overcommitted, whatever the machine has free).

    The driver counts torch's cached blocks as used, yet a torch allocation gets them (the
    allocator hands its cache back and retries before it reports out of memory). A run that
    raised while timing leaves its pool and buffers alive in the error's traceback past the
    pool's ``empty_cache``; once the error is gone they sit in that cache, and the next run in
    the same process (the app's) would otherwise see that much less free memory."""
    if device.type == "cuda":
        free, _total = torch.cuda.mem_get_info(device)
        cached = torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
        return int(free) + int(cached)
    host = None
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    host = int(line.split()[1]) * 1024
                    break
    except OSError:
        pass
    if host is None:
        host = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    room = cgroup_room_bytes()
    return host if room is None else min(host, room)


def cgroup_room_bytes(root: Path = Path("/sys/fs/cgroup")) -> int | None:
    """Limit minus usage of the memory cgroup under ``root`` (v2 ``memory.max`` /
    ``memory.current``, else v1 ``memory/memory.limit_in_bytes`` / ``usage_in_bytes``); None
    without a limit. Usage counts page cache, so this errs on the safe side."""
    for limit_file, usage_file in (("memory.max", "memory.current"),
                                   ("memory/memory.limit_in_bytes",
                                    "memory/memory.usage_in_bytes")):
        try:
            limit_text = (root / limit_file).read_text().strip()
            usage = int((root / usage_file).read_text().strip())
        except (OSError, ValueError):
            continue
        if limit_text == "max":
            return None
        try:
            limit = int(limit_text)
        except ValueError:
            return None
        return None if limit >= 1 << 62 else max(0, limit - usage)  # v1's "no limit" is ~2**63
    return None


@dataclass(frozen=True)
class SlotLayout:
    """Where each binding of one slot tensor sits in the slot row.

    ``offsets[i]`` is the byte offset of ``bindings[i]`` within the slot row; ``state_ranges`` are
    the merged byte ranges of the state bindings, what a state-row copy moves. A binding is state
    by its group's label (STATE_LAYER_TYPES), as every plan built from layer types names it; a
    LayerBinding carries no constant-or-linear flag of its own, so a plan of other group ids is
    refused (``plan.check_layer_labels``).
    """

    name: str
    row_bytes: int
    planned_bytes: int
    bindings: tuple[LayerBinding, ...]
    offsets: tuple[int, ...]
    state_ranges: tuple[tuple[int, int], ...]


def slot_layout(tensor: TensorPlan, num_blocks: int) -> SlotLayout:
    """Lay out one TensorPlan's row: accumulate (group, layer) rows in binding order.

    Checks that each binding's ``row_offset`` is where its row packs it and that the planned
    tensor size is ``num_blocks * row_bytes``, so a pool never disagrees with its plan.
    """
    if not tensor.bindings:
        raise ValueError(f"tensor {tensor.name!r} has no bindings: a slot needs at least one row")
    offsets = slot_offsets(tensor)
    ranges: list[tuple[int, int]] = []
    cursor = 0  # end of the last binding
    for b, offset in zip(tensor.bindings, offsets):
        if offset != cursor:
            packed_at = b.row_offset + cursor - offset
            raise ValueError(
                f"tensor {tensor.name!r}: binding {b.group_id}/{b.layer}/{b.component} has "
                f"row_offset={b.row_offset}, but its row packs it at {packed_at}: the plan's "
                "bindings must list each row's components back to back"
            )
        cursor = offset + b.nbytes_per_block
        if b.group_id in STATE_LAYER_TYPES:
            if ranges and ranges[-1][1] == offset:
                ranges[-1] = (ranges[-1][0], cursor)
            else:
                ranges.append((offset, cursor))
    if tensor.nbytes != num_blocks * cursor:
        raise ValueError(
            f"tensor {tensor.name!r} plans {tensor.nbytes} bytes but {num_blocks} blocks of its "
            f"{cursor}-byte row take {num_blocks * cursor}: pass the plan the planner returned"
        )
    return SlotLayout(tensor.name, cursor, tensor.nbytes, tensor.bindings, offsets, tuple(ranges))


@dataclass(frozen=True)
class TensorAllocation:
    name: str
    row_bytes: int
    planned_bytes: int
    allocated_bytes: int


@dataclass(frozen=True)
class AllocationReport:
    """What the plan asked for and what the device got (exact bytes)."""

    device: str
    page_bytes: int  # bytes of one page id over all slots: what gathering one page moves
    planned_blocks: int
    allocated_blocks: int
    planned_bytes: int
    allocated_bytes: int
    tensors: tuple[TensorAllocation, ...]
    # "plan", "max_blocks", "default pool" or "free memory": what set allocated_blocks
    cap_reason: str
    layout: str = SLOT_MAJOR  # or page-major (flatkv.gpu_settings.POOL_LAYOUTS)

    @property
    def capped(self) -> bool:
        return self.allocated_blocks < self.planned_blocks


Allocator = Callable[[tuple[int, int], torch.device], torch.Tensor]


# Transparent huge pages (Linux): 2 MiB pages, and madvise's MADV_HUGEPAGE from <sys/mman.h>.
HUGE_PAGE_BYTES = 2 << 20
_MADV_HUGEPAGE = 14


@functools.cache
def _libc_madvise() -> Callable[[int, int, int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        madvise = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):
        return None
    madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    madvise.restype = ctypes.c_int
    return madvise


def advise_huge_pages(t: torch.Tensor) -> bool:
    """Ask Linux to back the whole 2 MiB pages inside a host tensor with transparent huge pages.

    Why: a page mover reads or writes one row per page id, in the caller's (random) order. With
    4 KiB rows on 4 KiB memory pages every row is a fresh TLB miss and a page walk; with 2 MiB
    pages 512 such rows share one TLB entry. On a 1-thread CPU this lifts the gather and scatter
    of 4 KiB rows from about 55% to about 70% of a plain copy (bench/gpu_bench.py). Most
    distributions set THP to ``madvise``, so without this advice the pool gets 4 KiB pages.

    Call it before the memory is first written (``torch.empty`` has not touched it yet): pages
    are chosen at the first fault. Only the aligned interior is advised; a tensor under two huge
    pages is left alone. The advice is a hint: the contents and every result stay the same, and
    where THP is off, unsupported, or the tensor is not in host memory nothing happens. Returns
    whether the kernel took the advice.
    """
    madvise = _libc_madvise()
    if madvise is None or t.device.type != "cpu" or t.is_pinned():
        return False
    address = t.data_ptr()
    start = cdiv(address, HUGE_PAGE_BYTES) * HUGE_PAGE_BYTES
    end = (address + t.numel() * t.element_size()) // HUGE_PAGE_BYTES * HUGE_PAGE_BYTES
    if end - start < HUGE_PAGE_BYTES:
        return False
    return madvise(start, end - start, _MADV_HUGEPAGE) == 0


def empty_bytes(shape: tuple[int, ...] | int, device: torch.device) -> torch.Tensor:
    """An uninitialised uint8 tensor; in host memory, advised onto huge pages (see above).

    Pools, staging buffers and the benchmark's copy baseline all come from here, so a copy and a
    gather of the same bytes run on the same kind of memory pages.
    """
    t = torch.empty(shape, dtype=torch.uint8, device=device)
    if t.device.type == "cpu":
        advise_huge_pages(t)
    return t


class FlatPool:
    """The allocated slot tensors of a plan. Release them with ``release()`` or a ``with`` block.

    ``tensors[s]`` is slot s, shape ``(num_blocks, slots[s].row_bytes)``, uint8, with contiguous
    rows: contiguous in a slot-major pool, a strided view (row stride ``page_bytes``) in a
    page-major one. ``page_parts`` are the allocations themselves, the contiguous
    ``(num_blocks, bytes)`` tensors a page's bytes are split over, in slot order: in a slot-major
    pool each slot tensor (a page is split into one row per slot), in a page-major pool the one
    page tensor (a page is one row). Page movers copy row ``id`` of each part; a staging buffer
    holds the parts one after another.
    """

    def __init__(
        self,
        plan: FlatMemoryPlan,
        device: torch.device,
        slots: tuple[SlotLayout, ...],
        tensors: tuple[torch.Tensor, ...],
        report: AllocationReport,
        page_parts: tuple[torch.Tensor, ...],
    ) -> None:
        self.plan = plan
        self.device = device
        self.slots = slots
        self.tensors = tensors
        self.page_parts = page_parts
        self.report = report
        self.num_blocks = report.allocated_blocks

    @property
    def layout(self) -> str:
        return self.report.layout

    @property
    def page_bytes(self) -> int:
        """Bytes of one page over all slots (the plan's block_bytes, less any reserved bytes)."""
        return self.report.page_bytes

    @property
    def state_bytes_per_page(self) -> int:
        return sum(end - start for slot in self.slots for start, end in slot.state_ranges)

    @functools.cached_property
    def state_ranges_by_part(self) -> tuple[tuple[int, int, int], ...]:
        """``(part, start, end)`` of every state byte range, by ``page_parts`` row: each slot's
        own ranges in a slot-major pool; in a page-major pool the slots' ranges shifted to the
        page row and merged where one ends as the next begins, so a state-row copy makes one
        copy per contiguous run (24 state-only slots of a hybrid model are one run). Worked out
        once per pool: every state-row copy reads it."""
        if self.layout == SLOT_MAJOR:
            return tuple((s, start, end) for s, slot in enumerate(self.slots)
                         for start, end in slot.state_ranges)
        merged: list[tuple[int, int, int]] = []
        row_start = 0
        for slot in self.slots:
            for start, end in slot.state_ranges:
                start, end = row_start + start, row_start + end
                if merged and merged[-1][2] == start:
                    merged[-1] = (0, merged[-1][1], end)
                else:
                    merged.append((0, start, end))
            row_start += slot.row_bytes
        return tuple(merged)

    @property
    def released(self) -> bool:
        return not self.tensors

    def view(self, binding: LayerBinding, dtype: torch.dtype = torch.uint8) -> torch.Tensor:
        """A ``(num_blocks, nbytes_per_block // itemsize)`` view of one binding, typed."""
        self._check_live()
        if not isinstance(binding, LayerBinding) or not 0 <= binding.slot < len(self.slots):
            raise ValueError(f"binding must be a LayerBinding of this plan, got {binding!r}")
        slot = self.slots[binding.slot]
        try:
            index = slot.bindings.index(binding)
        except ValueError:
            raise ValueError(
                f"binding {binding!r} is not in slot {binding.slot} ({slot.name}) of this plan"
            ) from None
        start = slot.offsets[index]
        raw = self.tensors[binding.slot][:, start : start + binding.nbytes_per_block]
        if dtype == torch.uint8:
            return raw
        size = torch.empty((), dtype=dtype).element_size()
        # torch retypes a strided view only when its start, its length and its row stride are
        # whole elements; in a page-major pool the start counts from the page row's start
        at, stride = raw.storage_offset(), raw.stride(0)
        if at % size or binding.nbytes_per_block % size or stride % size:
            raise ValueError(
                f"binding {binding.group_id}/{binding.layer}/{binding.component} sits at byte "
                f"{at} of a {stride}-byte row ({self.layout} pool) with "
                f"{binding.nbytes_per_block} bytes: not a whole number of {dtype} elements "
                f"({size} bytes); view it as torch.uint8 or a smaller dtype"
            )
        return raw.view(dtype)

    def views(self, dtype: torch.dtype = torch.uint8) -> dict[LayerBinding, torch.Tensor]:
        """Every binding's typed view, in slot and binding order."""
        return {b: self.view(b, dtype) for slot in self.slots for b in slot.bindings}

    def release(self) -> None:
        """Drop the tensors and hand cached device memory back."""
        self.tensors = self.page_parts = ()
        _free_cached(self.device)

    def _check_live(self) -> None:
        if self.released:
            raise ValueError("this pool has been released: allocate a new one")

    def __enter__(self) -> FlatPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _free_cached(device: torch.device) -> None:
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


def _pool_blocks(planned_blocks: int, page_bytes: int, free: int, dev: torch.device, *,
                 max_blocks: int | None, share_percent: int, cap_name: str,
                 names: SettingNames) -> tuple[int, str]:
    """The blocks to allocate and what capped them (``AllocationReport.cap_reason``): the
    plan's, or fewer where ``max_blocks`` or ``share_percent`` % of free memory caps them.
    Refused before anything is allocated where no block fits, or the blocks need more than
    free memory (host memory is overcommitted: it would not fail, the process would be
    killed)."""
    if max_blocks is None:
        cap = free * share_percent // 100 // page_bytes
        cap_reason = "free memory"
    else:
        cap = check_int("max_blocks", max_blocks, minimum=1)
        cap_reason = cap_name
    if cap >= planned_blocks:
        num_blocks, cap_reason = planned_blocks, "plan"
    else:
        num_blocks = cap
    if num_blocks < 1:
        raise PoolAllocationError(
            f"{dev} has {free} bytes free; {share_percent}% of that holds no block of "
            f"{page_bytes} bytes: free device memory or give {names.max_blocks}"
        )
    if num_blocks * page_bytes > free:  # host memory is overcommitted: refuse, do not get killed
        raise PoolAllocationError(
            f"{num_blocks} blocks of {page_bytes} bytes need {num_blocks * page_bytes} bytes "
            f"but {dev} has {free} bytes free: give {names.max_blocks} of at most "
            f"{free // page_bytes}"
        )
    return num_blocks, cap_reason


def _allocate_parts(slots: tuple[SlotLayout, ...], page_bytes: int, num_blocks: int,
                    dev: torch.device, *, layout: str, allocator: Allocator,
                    names: SettingNames
                    ) -> tuple[tuple[torch.Tensor, ...], tuple[torch.Tensor, ...]]:
    """The slot tensors and the allocations behind them: one allocation a slot
    (slot-major), or one whose row is a page, each slot its columns (page-major). Out of
    memory, frees what it allocated and raises PoolAllocationError naming the part that did
    not fit."""
    # slot-major: one allocation per slot; page-major: one whose row is a page (name, row bytes)
    wanted = ([(s.name, s.row_bytes) for s in slots] if layout == SLOT_MAJOR
              else [("the page-major buffer", page_bytes)])
    parts: list[torch.Tensor] = []
    try:
        for _name, row_bytes in wanted:
            parts.append(allocator((num_blocks, row_bytes), dev))
    except (torch.OutOfMemoryError, RuntimeError) as err:
        failed_name, failed_row = wanted[len(parts)]
        parts.clear()
        _free_cached(dev)
        detail = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise PoolAllocationError(
            f"out of memory on {dev} allocating {failed_name} ({num_blocks * failed_row} "
            f"bytes, {num_blocks} blocks of {page_bytes} bytes over {len(slots)} slots); "
            f"everything allocated was freed; give a smaller {names.max_blocks} ({detail})"
        ) from None
    if layout == SLOT_MAJOR:
        return tuple(parts), tuple(parts)
    # page-major: each slot tensor its columns of the page rows, in slot order
    starts = [sum(s.row_bytes for s in slots[:i]) for i in range(len(slots))]
    return (tuple(parts[0][:, start : start + s.row_bytes]
                  for start, s in zip(starts, slots, strict=True)), tuple(parts))


def allocate_pool(
    plan: FlatMemoryPlan,
    device: str | torch.device = "cpu",
    max_blocks: int | None = None,
    *,
    share_percent: int = DEFAULT_SHARE_PERCENT,
    allocator: Allocator = empty_bytes,
    layout: str = SLOT_MAJOR,
    cap_name: str = "max_blocks",
    names: SettingNames = LAB_NAMES,
) -> FlatPool:
    """Allocate ``plan`` on ``device`` with at most ``max_blocks`` blocks, in ``layout``
    (slot-major or page-major, see the module docstring). ``cap_name``: the report's
    ``cap_reason`` where ``max_blocks`` limits the pool (a benchmark's own default cap is
    "default pool", not the user's). ``names``: how errors name the settings to change.

    Without ``max_blocks`` the cap is what fits in ``share_percent`` % of free memory; a pool
    larger than free memory is refused before anything is allocated (host memory is
    overcommitted: it would not fail, the process would be killed). Contents are
    uninitialised (see ``fill_random``). Raises PoolAllocationError when nothing fits or the device
    runs out of memory, after freeing what it allocated.
    """
    if not isinstance(plan, FlatMemoryPlan):
        raise ValueError(f"plan must be a FlatMemoryPlan, got {type(plan).__name__}")
    check_layout("layout", layout)
    dev = resolve_device(device)
    planned_blocks = plan.geometry.num_blocks
    check_int("plan.geometry.num_blocks", planned_blocks, minimum=1)
    check_layer_labels(plan, reader="the GPU lab's state-row copy")
    slots = tuple(slot_layout(t, planned_blocks) for t in plan.tensors)
    page_bytes = sum(s.row_bytes for s in slots)
    free = free_memory_bytes(dev)
    num_blocks, cap_reason = _pool_blocks(
        planned_blocks, page_bytes, free, dev, max_blocks=max_blocks,
        share_percent=share_percent, cap_name=cap_name, names=names)
    tensors, parts = _allocate_parts(slots, page_bytes, num_blocks, dev, layout=layout,
                                     allocator=allocator, names=names)
    report = AllocationReport(
        device=str(dev),
        page_bytes=page_bytes,
        planned_blocks=planned_blocks,
        allocated_blocks=num_blocks,
        planned_bytes=sum(s.planned_bytes for s in slots),
        allocated_bytes=num_blocks * page_bytes,
        tensors=tuple(
            TensorAllocation(s.name, s.row_bytes, s.planned_bytes, num_blocks * s.row_bytes)
            for s in slots
        ),
        cap_reason=cap_reason,
        layout=layout,
    )
    return FlatPool(plan, dev, slots, tensors, report, parts)


def widest_view(t: torch.Tensor) -> torch.Tensor:
    """``t`` (uint8, rows on dim 0) viewed with the widest integer element its rows allow.

    Wider elements mean fewer, larger copies per row in torch's CPU indexing kernels.
    """
    row = t.shape[-1] if t.dim() else 0
    for dtype, size in ((torch.int64, 8), (torch.int32, 4), (torch.int16, 2)):
        if row % size == 0 and t.storage_offset() % size == 0 and t.is_contiguous():
            return t.view(dtype)
    return t


def fill_random(tensors: Iterable[torch.Tensor], seed: int = 0) -> None:
    """Fill tensors with random bits (benchmarks and tests never run on all-zero data)."""
    for i, t in enumerate(tensors):
        gen = torch.Generator(device=t.device).manual_seed(seed * 1_000_003 + i)
        wide = widest_view(t)
        if wide.dtype == torch.uint8:
            wide.random_(0, 256, generator=gen)
        else:  # from the type's minimum: every bit random, in place (no tensor-sized temporary)
            wide.random_(torch.iinfo(wide.dtype).min, None, generator=gen)
