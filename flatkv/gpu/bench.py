"""How fast pages move: a benchmark harness with frozen results, sweeps and a per-device lock.

Method (SPEC section 4): warm up; time with CUDA events on a GPU and with wall time around
synchronous calls on the CPU; flush the last-level cache before every timed call and rotate page
sets, so caches do not flatter the figures; run the compared variants alternately in every round
and take medians. Bandwidth counts bytes read + bytes written for device figures (a gather of B
bytes counts 2B), and the bytes carried over the bus once for host <-> device figures (how PCIe
figures are quoted). Every figure is also given as a share of a baseline measured in the same run:
a plain device copy (``copy_`` of the same bytes into a preallocated buffer: a clone without the
allocation, whose first-touch page faults would otherwise cut the CPU baseline to about a fifth;
both buffers come from ``pool.empty_bytes`` like the pool, so on the host all of them sit on the
same transparent huge pages) for device figures, one large pinned copy of the same bytes for
host figures; and as a share of the device's nominal peak where known.

The Streamlit page calls ``run_benchmark`` / ``run_sweep`` with a progress callback; sessions
share one process, so ``device_lock`` keeps to one benchmark per device at a time.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field

import torch

from flatkv.gpu import kernels
from flatkv.gpu.pool import (
    DEFAULT_SHARE_PERCENT,
    AllocationReport,
    FlatPool,
    PoolAllocationError,
    allocate_pool,
    empty_bytes,
    fill_random,
    free_memory_bytes,
    resolve_device,
)
from flatkv.gpu_settings import (
    BASELINE_OF,
    BENCH_REPEATS,
    BENCH_SHARE_PERCENT,
    DEFAULT_CALL_BYTES,
    DEFAULT_POOL_BYTES,
    LAB_NAMES,
    POOL_LAYOUTS,
    SLOT_MAJOR,
    TORCH_KERNEL,
    TRITON_KERNEL,
    WARMUP_ROUNDS,
    SettingNames,
    check_layout,
    check_pages_fit_pool,
    most_bench_count,
)
from flatkv.plan import FlatMemoryPlan, cdiv, check_int
from flatkv.units import count_text, format_bytes

MiB = 1 << 20

# Nominal memory bandwidth (GB/s, 1e9 bytes/s, read + write together) by device-name fragment;
# the first fragment found in torch's device name wins, None means "known, but no single figure".
NOMINAL_PEAK_GBPS: tuple[tuple[str, float | None], ...] = (
    ("GH200", None),  # 96 GB HBM3 and 144 GB HBM3e variants differ
    ("H200", 4800.0),
    ("H100 NVL", 3900.0),
    ("H100 PCIe", 2000.0),
    ("H100", 3350.0),  # SXM
    ("A100-SXM4-80GB", 2039.0),
    ("A100 80GB PCIe", 1935.0),
    ("A100", 1555.0),  # 40 GB
    ("B200", 8000.0),
)

COUNTING = (
    "device figures count bytes read + bytes written per second; host<->device figures count "
    "the bytes carried over the bus once per second; GB/s = 1e9 bytes/s"
)

ProgressFn = Callable[[float, str], None]


# --------------------------------------------------------------------------------------------
# One benchmark per device at a time.


class DeviceBusy(RuntimeError):
    """Another benchmark holds this device's lock."""


_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


@dataclass(frozen=True)
class DeviceLock:
    """The process-wide lock of one device (shared by every Streamlit session)."""

    device: str
    _lock: threading.Lock = field(repr=False, compare=False)

    def try_acquire(self) -> bool:
        """Take the lock if it is free; never waits."""
        return self._lock.acquire(blocking=False)

    def release(self) -> None:
        self._lock.release()

    def locked(self) -> bool:
        return self._lock.locked()

    @contextmanager
    def hold(self) -> Iterator[DeviceLock]:
        """Hold the lock for a ``with`` block, or raise DeviceBusy at once if it is taken."""
        if not self.try_acquire():
            raise DeviceBusy(
                f"a benchmark is already running on {self.device}: wait for it to finish"
            )
        try:
            yield self
        finally:
            self.release()


def device_lock(device: str | torch.device) -> DeviceLock:
    """The lock of ``device``; ``"cuda"`` and ``"cuda:0"`` (when current) share one lock."""
    key = str(resolve_device(device))
    with _LOCKS_GUARD:
        lock = _LOCKS.setdefault(key, threading.Lock())
    return DeviceLock(key, lock)


# --------------------------------------------------------------------------------------------
# Results.


@dataclass(frozen=True)
class Figure:
    """One timed operation of one implementation."""

    operation: str  # one of REPORT_ORDER
    implementation: str  # torch, triton, or copy for the baselines
    payload_bytes: int  # page bytes one call moves
    counted_bytes: int  # bytes the bandwidth counts (see COUNTING)
    median_s: float
    samples_s: tuple[float, ...]
    gbps: float
    baseline: str  # operation this one is compared with, measured in the same run
    share_of_baseline: float
    share_of_peak: float | None


@dataclass(frozen=True)
class BenchResult:
    """Everything one benchmark run measured, with the allocation it ran on."""

    device: str
    device_name: str
    torch_version: str
    triton_version: str | None
    allocation: AllocationReport
    page_bytes: int
    block_size: int  # P of the plan: tokens per page (a page-bytes sweep varies it)
    pages_per_call: int
    call_bytes: int
    state_bytes_per_page: int
    nominal_peak_gbps: float | None
    warmup: int
    repeats: int
    implementations: tuple[str, ...]
    preferred: str  # the implementation the summary reports: the fused one where present
    figures: tuple[Figure, ...]
    counting: str = COUNTING

    @property
    def layout(self) -> str:
        """The pool's layout: slot-major or page-major (flatkv.gpu.pool)."""
        return self.allocation.layout

    def figure(self, operation: str, implementation: str | None = None) -> Figure | None:
        """The figure of ``operation`` by ``implementation``; by default the preferred one's, or
        the only figure an operation has (the state-row copy is torch's on every device)."""
        found = [f for f in self.figures if f.operation == operation]
        for fig in found:
            if fig.implementation in (implementation or self.preferred, "copy"):
                return fig
        return found[0] if implementation is None and len(found) == 1 else None

    @property
    def versions_text(self) -> str:
        """``torch X`` and, when a Triton kernel was timed, ``triton Y``: an installed triton
        that timed nothing (every CPU run) is not what the figures ran on."""
        return f"torch {self.torch_version}" + (
            f", triton {self.triton_version}" if "triton" in self.implementations else "")

    def summary(self) -> dict[str, object]:
        """The flat dictionary the CLI prints as JSON (GB/s figures rounded to 0.01)."""
        out: dict[str, object] = {
            "device": self.device,
            "device_name": self.device_name,
            "implementation": self.preferred,
            "implementations": list(self.implementations),
            "pool_layout": self.layout,
            "page_bytes": self.page_bytes,
            "block_size": self.block_size,
            "pages_per_call": self.pages_per_call,
            "call_bytes": self.call_bytes,
            "planned_blocks": self.allocation.planned_blocks,
            "allocated_blocks": self.allocation.allocated_blocks,
            "planned_bytes": self.allocation.planned_bytes,
            "allocated_bytes": self.allocation.allocated_bytes,
            "nominal_peak_gbps": self.nominal_peak_gbps,
            "counting": self.counting,
        }
        for op in REPORT_ORDER:
            fig = self.figure(op)
            if fig is None:
                continue
            out[f"{op}_gbps"] = round(fig.gbps, 2)
            if fig.baseline != op:
                out[f"{op}_share_of_{fig.baseline}"] = round(fig.share_of_baseline, 4)
        out["figures"] = [
            {k: v for k, v in asdict(f).items() if k != "samples_s"} for f in self.figures
        ]
        return out


# --------------------------------------------------------------------------------------------
# Timing.


def nominal_peak_gbps(device: torch.device) -> float | None:
    if device.type != "cuda":
        return None
    return nominal_peak_for_name(torch.cuda.get_device_name(device))


def nominal_peak_for_name(name: str) -> float | None:
    """The peak of the first NOMINAL_PEAK_GBPS fragment in ``name`` (torch's device name), so
    the longer names come first: "H100 NVL" before "H100", "GH200" before "H200"."""
    for fragment, gbps in NOMINAL_PEAK_GBPS:
        if fragment in name:
            return gbps
    return None


def _device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return f"{line.split(':', 1)[1].strip()} ({_threads_text()})"
    except OSError:
        pass
    return f"cpu ({_threads_text()})"


def _threads_text() -> str:
    n = torch.get_num_threads()
    return f"{n} thread{'s' if n != 1 else ''}"


# torch CPU threads a benchmark runs with unless told otherwise. A gather or scatter is one
# parallel region per page part (each slot tensor of a slot-major pool), a copy is one in all;
# on a machine where something else holds a core (the app's own server, a browser) every region
# waits for a descheduled thread, which cut a 36-slot gather to 3% of copy on a 2-core VM while
# the copy barely moved. One thread times the movers, not the scheduler.
DEFAULT_CPU_THREADS = 1


@contextmanager
def _cpu_threads(device: torch.device, threads: int | None) -> Iterator[None]:
    """Run with ``threads`` torch CPU threads on the CPU (None: leave torch's), then restore."""
    if device.type != "cpu" or threads is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _cache_flush_bytes(device: torch.device) -> int:
    """A buffer several times the last-level cache: reading it evicts the timed data."""
    if device.type == "cuda":
        l2 = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 64 * MiB)
        return max(4 * l2, 256 * MiB)
    try:
        with open("/sys/devices/system/cpu/cpu0/cache/index3/size", encoding="ascii") as f:
            text = f.read().strip()
        llc = int(text[:-1]) * {"K": 1 << 10, "M": MiB}[text[-1]]
        return min(max(2 * llc, 16 * MiB), 256 * MiB)
    except (OSError, ValueError, KeyError):
        return 64 * MiB


# torch.cuda._sleep counts GPU clock cycles; an H200's SM clock is at most 1.98 GHz, so assuming
# 2 GHz never spins shorter than asked (a slower clock only spins longer, outside the timing).
_SPIN_CYCLES_PER_S = 2_000_000_000
_SPIN_MIN_S = 200e-6
_SPIN_MAX_S = 20e-3


class _Timer:
    """Times one call: evict the cache, then CUDA events or wall time around the call.

    The cache is evicted by reading a buffer several times its size, written once here so that
    every page of it is real memory (an untouched page reads as the kernel's one zero page). A
    read leaves no dirty lines behind, whose write-back the timed call would otherwise pay.

    On CUDA the events time the device. A spin kernel queued before the start event keeps the GPU
    busy while the host prepares the call (Python checks, one launch per page part for the torch
    mover), so the host's work does not show up as idle GPU time between the events. Each kind
    of call (``key``) spins twice its own last host time (0.2 to 20 ms): the warm-up rounds set
    it, and a first call's compile does not make every later call spin long.
    """

    def __init__(self, device: torch.device) -> None:
        self.device = device
        flush = torch.empty(_cache_flush_bytes(device) // 8, dtype=torch.int64, device=device)
        flush.fill_(1)
        self.flush = flush
        self.spin_s: dict[object, float] = {}
        if device.type == "cuda":
            self.start = torch.cuda.Event(enable_timing=True)
            self.end = torch.cuda.Event(enable_timing=True)

    def __call__(self, fn: Callable[[], object], key: object = None) -> float:
        self.flush.sum()  # read only: evicts the cache, dirties nothing
        if self.device.type == "cuda":
            spin = self.spin_s.get(key, _SPIN_MIN_S)
            torch.cuda._sleep(int(spin * _SPIN_CYCLES_PER_S))
            self.start.record()
            t0 = time.perf_counter()
            fn()
            host_s = time.perf_counter() - t0
            self.end.record()
            self.end.synchronize()
            self.spin_s[key] = min(max(2 * host_s, _SPIN_MIN_S), _SPIN_MAX_S)
            return self.start.elapsed_time(self.end) / 1e3
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0


# --------------------------------------------------------------------------------------------
# The benchmark.

PAGE_SETS = 4  # page-id sets rotated over the rounds
# Pages of a few bytes would fill the default pool with hundreds of millions of blocks, each
# needing 8 B of page id and a row copy of its own: the default pool stops at 4 Mi blocks.
MAX_DEFAULT_POOL_BLOCKS = 1 << 22
INDEX_BYTES = 8  # a page id as the movers take it (int64)


@dataclass(frozen=True)
class _Variant:
    operation: str
    implementation: str
    payload_bytes: int
    counted_bytes: int
    run: Callable[[int], object]  # round index -> one call
    pool: int | None = None  # index of the pool it moves pages of; None: a shared baseline

    @property
    def baseline(self) -> str:
        """The operation its figure is a share of (``gpu_settings.BASELINE_OF``)."""
        return BASELINE_OF[self.operation]


def _page_bytes(plan: FlatMemoryPlan) -> int:
    return sum(sum(b.nbytes_per_block for b in t.bindings) for t in plan.tensors)


def default_max_blocks(plan: FlatMemoryPlan, device: str | torch.device,
                       free_bytes: int | None = None) -> int:
    """The default pool: DEFAULT_POOL_BYTES of pages, within DEFAULT_SHARE_PERCENT of
    ``free_bytes`` when given (a page's suggestion passes none: asking a GPU opens a context),
    and never under the two pages a benchmark needs (``_check_fits`` then says if they fit)."""
    pool_bytes = DEFAULT_POOL_BYTES[resolve_device(device).type]
    if free_bytes is not None:
        pool_bytes = min(pool_bytes, free_bytes * DEFAULT_SHARE_PERCENT // 100)
    return max(2, min(pool_bytes // _page_bytes(plan), MAX_DEFAULT_POOL_BLOCKS))


def _free_bytes(device: torch.device) -> dict[str, int]:
    """Free memory a benchmark on ``device`` draws on, by device type (the host too, on CUDA:
    the pinned buffer)."""
    free = {device.type: free_memory_bytes(device)}
    if device.type == "cuda":
        free["cpu"] = free_memory_bytes(torch.device("cpu"))
    return free


def _check_fits(plan: FlatMemoryPlan, device: torch.device, cap: int,
                counts: Sequence[int | None], free_bytes: dict[str, int],
                pools: int = 1, names: SettingNames = LAB_NAMES) -> None:
    """Refuse a benchmark whose pools (one per layout, held together), staging and copy buffers
    and cache flush would not fit in BENCH_SHARE_PERCENT of free memory (a pinned host buffer
    too, on CUDA), before allocating."""
    page = _page_bytes(plan)
    blocks = min(cap, plan.geometry.num_blocks)
    pages = max(n or default_pages_per_call(page, blocks, device) for n in counts)
    flush = _cache_flush_bytes(device)
    # a permutation of the pool's block ids while a set is drawn, then 2 x pages ids a set
    # (gather / scatter ids and the state copies' pairs) and the movers' ids of them
    ids = INDEX_BYTES * 2 * PAGE_SETS * 2 * pages
    index = INDEX_BYTES * blocks + ids
    pool_text = (f"a pool of {blocks:,} blocks" if pools == 1 else
                 f"{pools} pools (one per layout) of {blocks:,} blocks")
    places = [(device, pools * blocks * page + 2 * pages * page + flush + index,
               f"{pool_text} of {page:,} bytes, {count_text(pages, 'page')} per call in staging "
               "and copy buffers, the cache flush, the page ids")]
    if device.type == "cuda":
        places.append((torch.device("cpu"), pages * page,
                       f"a pinned buffer of {count_text(pages, 'page')} of {page:,} bytes"))
    for where, nbytes, what in places:
        free = free_bytes[where.type]
        allowed = free * BENCH_SHARE_PERCENT // 100
        if nbytes <= allowed:
            continue
        # blocks beside the rest
        fits = (allowed - 2 * pages * page - flush - ids) // (pools * page + INDEX_BYTES)
        if blocks <= 2 and pages == 1:
            fix = ("plan a smaller block size: two pages of this size are the least a benchmark "
                   "moves")
        elif where == device and fits >= max(2, pages):
            fix = (f"lower {names.max_blocks} to at most {fits:,}, or {names.pages_per_call}, or "
                   "plan a smaller block size")
        else:
            fix = (f"lower {names.pages_per_call} or {names.max_blocks}, or plan a smaller block "
                   "size")
        raise PoolAllocationError(
            f"this benchmark needs {nbytes:,} bytes ({format_bytes(nbytes)}) on {where} ({what}) "
            f"but {where} has {free:,} bytes ({format_bytes(free)}) free and a benchmark may take "
            f"{BENCH_SHARE_PERCENT}% of it: {fix}"
        )


def _check_sweep_args(max_blocks: int | None, counts: Sequence[int | None]) -> None:
    if max_blocks is not None:
        check_int("max_blocks", max_blocks, minimum=2, hint="a benchmark needs two pages")
    if not counts:
        raise ValueError("pages_per_call is empty: give at least one value (None = default)")
    for i, n in enumerate(counts):
        if n is not None:
            check_int(f"pages_per_call[{i}]", n, minimum=1)


def check_sweep_fits(plans: Sequence[FlatMemoryPlan], device: str | torch.device,
                     max_blocks: int | None, counts: Sequence[int | None],
                     pools: int = 1, names: SettingNames = LAB_NAMES) -> list[int]:
    """Each plan's block cap, after checking that all of a sweep fits in free memory with
    ``pools`` pools (one per layout) held at once, before any of it runs (PoolAllocationError
    says what to lower, in ``names``' words). Without ``max_blocks`` the pools share the
    default share of free memory. On the CPU reading free memory is cheap, so a page can call
    this before offering Run; on CUDA it opens a context on the GPU."""
    dev = resolve_device(device)
    _check_sweep_args(max_blocks, counts)
    check_int("pools", pools, minimum=1)
    free = _free_bytes(dev)  # read once for the whole sweep
    caps = [max_blocks if max_blocks is not None
            else default_max_blocks(plan, dev, free[dev.type] // pools) for plan in plans]
    for plan, cap in zip(plans, caps, strict=True):
        blocks = min(cap, plan.geometry.num_blocks)
        for n in counts:  # named in the caller's words: an index is the library's
            if n is not None:
                check_pages_fit_pool(names.pages_per_call, n, blocks, names.max_blocks,
                                     plan.geometry.num_blocks,
                                     capped_by_user=max_blocks is not None)
        _check_fits(plan, dev, cap, counts, free, pools=pools, names=names)
    return caps


def default_pages_per_call(page_bytes: int, num_blocks: int, device: torch.device) -> int:
    """Enough pages to move the default call size, at most half the pool, at least one."""
    want = cdiv(DEFAULT_CALL_BYTES[device.type], page_bytes)
    return max(1, min(want, num_blocks // 2))


def run_benchmark(
    plan: FlatMemoryPlan,
    *,
    device: str | torch.device = "cpu",
    max_blocks: int | None = None,
    pages_per_call: int | None = None,
    repeats: int | None = None,
    warmup: int = WARMUP_ROUNDS,
    implementations: Sequence[str] | None = None,
    progress: ProgressFn | None = None,
    lock: bool = True,
    cpu_threads: int | None = DEFAULT_CPU_THREADS,
    layout: str = SLOT_MAJOR,
    names: SettingNames = LAB_NAMES,
) -> BenchResult:
    """Allocate ``plan`` on ``device`` and time its page movers; frees everything at the end.

    ``max_blocks`` caps the pool (default: DEFAULT_POOL_BYTES of pages, or less when free
    memory is short). ``pages_per_call`` defaults to DEFAULT_CALL_BYTES of pages,
    at most half the pool. ``implementations`` picks movers by name (default: all that run
    compiled here). ``progress(fraction, message)`` is called as the run goes. With ``lock``
    the device's lock is held throughout (DeviceBusy if taken). ``cpu_threads``: torch threads
    on the CPU (default 1, see DEFAULT_CPU_THREADS; None leaves torch's setting). ``layout``:
    the pool's layout (slot-major or page-major, see flatkv.gpu.pool). ``names``: how errors
    name the settings to change (the GPU lab's labels, or the CLI's flags).
    """
    return run_sweep(
        [plan],
        device=device,
        max_blocks=max_blocks,
        pages_per_call=[pages_per_call],
        repeats=repeats,
        warmup=warmup,
        implementations=implementations,
        progress=progress,
        lock=lock,
        cpu_threads=cpu_threads,
        layouts=(layout,),
        names=names,
    )[0]


def _check_cpu_threads(cpu_threads: int | None) -> None:
    """``cpu_threads`` is None (torch's setting) or 1 to this machine's cores: more would time
    the scheduler (torch crashes at 100,000)."""
    if cpu_threads is None:
        return
    check_int("cpu_threads", cpu_threads, minimum=1, hint="or None for torch's setting")
    cores = most_bench_count("cpu_threads")
    if cpu_threads > cores:
        raise ValueError(f"cpu_threads {cpu_threads:,} is more than this machine's {cores:,} "
                         f"cores: give {cores:,} or fewer")


def _checked_layouts(layouts: Sequence[str]) -> list[str]:
    """``layouts`` as a list of pool layout names, each known and named once (a lone string
    is refused: iterating it would give one layout a letter)."""
    if isinstance(layouts, str):
        raise ValueError(f"layouts={layouts!r} is one name: pass a list, e.g. [{layouts!r}]")
    layouts = [check_layout(f"layouts[{i}]", name) for i, name in enumerate(layouts)]
    if not layouts:
        raise ValueError(f"layouts is empty: give at least one of {', '.join(POOL_LAYOUTS)}")
    if len(set(layouts)) != len(layouts):
        raise ValueError(f"layouts={layouts!r} names a layout twice: give each once")
    return layouts


def run_sweep(
    plans: Sequence[FlatMemoryPlan],
    *,
    device: str | torch.device = "cpu",
    max_blocks: int | None = None,
    pages_per_call: Sequence[int | None] = (None,),
    repeats: int | None = None,
    warmup: int = WARMUP_ROUNDS,
    implementations: Sequence[str] | None = None,
    progress: ProgressFn | None = None,
    lock: bool = True,
    cpu_threads: int | None = DEFAULT_CPU_THREADS,
    layouts: Sequence[str] = (SLOT_MAJOR,),
    names: SettingNames = LAB_NAMES,
) -> tuple[BenchResult, ...]:
    """One result per (plan, pages per call, layout), in that nesting: page bytes x pages per
    call sweeps, each in every pool layout.

    Each plan is allocated once per layout, all layouts held together for all its pages-per-call
    values and freed before the next plan. The layouts are timed in the same rounds against one
    copy baseline, so their figures compare directly: timed one after the other, each against
    its own copy, drift of a shared machine between the two runs would read as a layout effect.
    ``flatkv.gpu_view.plans_for_block_sizes`` makes plans of one model at several page sizes;
    ``layouts`` are pool layouts (flatkv.gpu_settings.POOL_LAYOUTS).
    """
    dev = resolve_device(device)
    plans = list(plans)
    if not plans or not all(isinstance(p, FlatMemoryPlan) for p in plans):
        raise ValueError("plans must be a non-empty list of FlatMemoryPlan")
    counts = list(pages_per_call)
    _check_sweep_args(max_blocks, counts)  # before waiting on the device lock
    reps = BENCH_REPEATS[dev.type] if repeats is None else check_int(
        "repeats", repeats, minimum=1, maximum=most_bench_count("repeats"))
    check_int("warmup", warmup, minimum=0, maximum=most_bench_count("warmup"))
    _check_cpu_threads(cpu_threads)
    layouts = _checked_layouts(layouts)
    movers = _pick_movers(dev, implementations)
    report = progress or (lambda fraction, message: None)
    results: list[BenchResult] = []
    steps = len(plans) * len(counts)
    with ExitStack() as run_scope:
        if lock:  # first: a second session is told the device is busy, not short of memory
            run_scope.enter_context(device_lock(dev).hold())
        caps = check_sweep_fits(plans, dev, max_blocks, counts, len(layouts), names)
        if dev.type == "cuda":  # CUDA events and launches go to the benchmarked device
            run_scope.enter_context(torch.cuda.device(dev))
        run_scope.enter_context(_cpu_threads(dev, cpu_threads))
        for p_index, (plan, cap) in enumerate(zip(plans, caps, strict=True)):
            which = f"plan {p_index + 1} of {len(plans)}" if len(plans) > 1 else "the plan"
            report(p_index * len(counts) / steps,
                   f"allocating {which} ({', '.join(layouts)}) on {dev}")
            with ExitStack() as held_pools:  # a failed allocation frees the pools before it
                # without the user's cap, the cap is the benchmark's own default pool
                cap_name = "max_blocks" if max_blocks is not None else "default pool"
                pools = [held_pools.enter_context(allocate_pool(plan, dev, max_blocks=cap,
                                                                layout=layout,
                                                                cap_name=cap_name,
                                                                names=names))
                         for layout in layouts]
                if pools[0].num_blocks < 2:
                    raise PoolAllocationError(
                        f"only {pools[0].num_blocks} block fits on {dev}: a benchmark needs "
                        f"two; free memory or raise {names.max_blocks}"
                    )
                for pool in pools:  # random bits, never zeros (timing does not depend on them)
                    fill_random(pool.page_parts, seed=p_index)
                for c_index, n in enumerate(counts):
                    step = p_index * len(counts) + c_index

                    def sub(fraction: float, message: str, step: int = step) -> None:
                        report((step + fraction) / steps, message)

                    results += _bench_pools(pools, n, movers, reps, warmup, sub, names)
    report(1.0, "done")
    return tuple(results)


def _out_of_memory(doing: str, dev: torch.device, pages_per_call: int, names: SettingNames,
                   err: BaseException) -> PoolAllocationError:
    """The error for memory that ran out while ``doing`` (the pools are freed as it unwinds):
    the settings to lower, in the caller's words, and torch's own first line."""
    said = str(err).strip()
    return PoolAllocationError(
        f"out of memory on {dev} {doing} ({pages_per_call:,} pages a call): pass fewer "
        f"{names.pages_per_call} or a smaller {names.max_blocks} "
        f"({said.splitlines()[0] if said else type(err).__name__})")


def _pick_movers(device: torch.device, names: Sequence[str] | None) -> tuple[kernels.Mover, ...]:
    movers = kernels.available_movers(device)
    if names is None:
        return movers
    by_name = {m.name: m for m in movers}
    picked = []
    for name in names:
        if name not in by_name:
            raise ValueError(
                f"implementation {name!r} cannot run on {device}: choose from {sorted(by_name)}"
            )
        picked.append(by_name[name])
    if not picked:
        raise ValueError("implementations is empty: give at least one, e.g. ['torch']")
    return tuple(picked)


def _page_id_sets(
    pool: FlatPool, n: int,
) -> tuple[list[kernels.PageIds], list[tuple[kernels.PageIds, kernels.PageIds]] | None, int]:
    """PAGE_SETS random sets of ``n`` page ids (valid in every pool of the plan: same blocks),
    seeded by ``n`` so each count times the same pages in every run; for a pool with state rows
    also pairs of ``state_n`` (at most half the blocks) to copy state from and to, and
    ``state_n``."""
    gen = torch.Generator().manual_seed(n)
    # the 2n ids a set uses, each whole permutation freed at once (int64: 8 B a block)
    sets = [torch.randperm(pool.num_blocks, generator=gen)[:2 * n].clone()
            for _ in range(PAGE_SETS)]
    ids = [kernels.page_ids(pool, s[:n]) for s in sets]
    state_pairs = None
    state_n = min(n, pool.num_blocks // 2)
    if pool.state_bytes_per_page:
        state_pairs = [(kernels.page_ids(pool, s[:state_n]),
                        kernels.page_ids(pool, s[state_n: 2 * state_n])) for s in sets]
    return ids, state_pairs, state_n


def _triton_version() -> str | None:
    """Triton's version for the report, None where it is not installed (CPU machines)."""
    try:
        import triton
    except ImportError:
        return None
    return triton.__version__


def _bench_pools(
    pools: Sequence[FlatPool],
    pages_per_call: int | None,
    movers: tuple[kernels.Mover, ...],
    repeats: int,
    warmup: int,
    report: ProgressFn,
    names: SettingNames = LAB_NAMES,
) -> list[BenchResult]:
    """Time the movers over each pool (one plan in each layout) in the same rounds, against one
    copy baseline (and one pair of pinned baselines on CUDA); one result per pool."""
    first = pools[0]
    if any((p.page_bytes, p.num_blocks) != (first.page_bytes, first.num_blocks) for p in pools):
        raise ValueError("pools timed together must hold the same plan: same pages, same blocks")
    pool = first  # sizes, ids and buffers are the same for every pool
    dev = pool.device
    # at most the pool: check_sweep_fits refused larger counts before anything was allocated
    n = pages_per_call or default_pages_per_call(pool.page_bytes, pool.num_blocks, dev)
    call = n * pool.page_bytes
    report(0.0, f"allocating buffers ({n:,} pages, {format_bytes(call)} a call)")
    buffers: list[torch.Tensor] = []
    staging, copy_dst, host, timer = _call_buffers(buffers, call, dev, n, names)
    ids, state_pairs, state_n = _page_id_sets(pool, n)
    # the state rows' own baseline: a copy of as many bytes, alike in every layout's pool
    state = state_n * pool.state_bytes_per_page if state_pairs is not None else None
    variants = _baseline_variants(staging, copy_dst, host, call, state)
    for k, p in enumerate(pools):
        variants += _pool_variants(k, p, movers, ids, state_pairs, state_n, staging, host, call)

    try:
        samples = _time_rounds(variants, timer, warmup, repeats, report)
    except torch.OutOfMemoryError as err:  # a kernel's own scratch (Triton's compile, say)
        raise _out_of_memory(f"timing calls of {call:,} bytes", dev, n, names, err) from None
    finally:
        buffers.clear()  # the variants hold the rest until this function returns
    report(1.0, "measured")
    peak = nominal_peak_gbps(dev)
    figures = _figures(variants, samples, peak)
    mover_names = tuple(m.name for m in movers)
    return [BenchResult(
        device=str(dev),
        device_name=_device_name(dev),
        torch_version=torch.__version__,
        triton_version=_triton_version(),
        allocation=p.report,
        page_bytes=p.page_bytes,
        block_size=p.plan.geometry.block_size,
        pages_per_call=n,
        call_bytes=call,
        state_bytes_per_page=p.state_bytes_per_page,
        nominal_peak_gbps=peak,
        warmup=warmup,
        repeats=repeats,
        implementations=mover_names,  # preferred: the fused one where it runs
        preferred=TRITON_KERNEL if TRITON_KERNEL in mover_names else mover_names[0],
        figures=in_report_order(f for k, f in figures if k in (None, index)),
    ) for index, p in enumerate(pools)]


def _call_buffers(
    buffers: list[torch.Tensor], call: int, dev: torch.device, n: int, names: SettingNames,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None, _Timer]:
    """The buffers of one call's bytes the timed calls move through: staging, the copy
    baseline's destination, on CUDA a pinned host buffer; and the timer (whose cache flush is
    a buffer too), each kept in ``buffers``; the data buffers filled with random bytes, as no
    benchmark times all-zero data (``fill_random``). Out of memory, none is kept, and the error
    says which setting to lower (``_out_of_memory``)."""
    try:
        staging = _alloc(buffers, call, dev)
        copy_dst = _alloc(buffers, call, dev)
        host = _alloc(buffers, call, torch.device("cpu"), pin=True) if dev.type == "cuda" else None
        timer = _Timer(dev)
        buffers.append(timer.flush)
    except (torch.OutOfMemoryError, RuntimeError) as err:
        buffers.clear()  # and the names below: the traceback keeps this frame alive
        staging = copy_dst = host = None
        raise _out_of_memory(f"allocating staging buffers of {call:,} bytes", dev, n, names,
                             err) from None
    fill_random([staging, copy_dst] + ([host] if host is not None else []), seed=7)
    return staging, copy_dst, host, timer


def _baseline_variants(staging: torch.Tensor, copy_dst: torch.Tensor,
                       host: torch.Tensor | None, call: int,
                       state: int | None) -> list[_Variant]:
    """The plain copies the page moves are measured against, shared by every pool: a copy of
    one call's bytes, of the ``state`` bytes of the state rows a call copies (where the pool
    has state rows), and on CUDA one call to and from pinned host memory."""
    variants = [_Variant("copy", "copy", call, 2 * call, lambda r: copy_dst.copy_(staging))]
    if state is not None:
        variants.append(_Variant("state_bytes_copy", "copy", state, 2 * state,
                                 lambda r: copy_dst[:state].copy_(staging[:state])))
    if host is not None:
        variants.append(_Variant("pinned_d2h", "copy", call, call,
                                 lambda r: host.copy_(copy_dst, non_blocking=True)))
        variants.append(_Variant("pinned_h2d", "copy", call, call,
                                 lambda r: copy_dst.copy_(host, non_blocking=True)))
    return variants


def _time_rounds(variants: Sequence[_Variant], timer: _Timer, warmup: int, repeats: int,
                 report: ProgressFn) -> list[list[float]]:
    """Seconds of each variant's timed rounds. Every round runs every variant once, starting one
    further along each round, so no variant always runs right after the same neighbour."""
    samples: list[list[float]] = [[] for _ in variants]
    rounds = warmup + repeats
    for r in range(rounds):
        report(r / rounds, f"{'warm-up' if r < warmup else 'timing'} round {r + 1}/{rounds}")
        for k in range(len(variants)):
            v_index = (k + r) % len(variants)
            seconds = timer(lambda v=variants[v_index], r=r: v.run(r), key=v_index)
            if r >= warmup:
                samples[v_index].append(seconds)
    return samples


def _figures(variants: Sequence[_Variant], samples: Sequence[Sequence[float]],
             peak: float | None) -> list[tuple[int | None, Figure]]:
    """Each variant's Figure, with the pool it belongs to (None: a shared baseline): medians,
    GB/s, and shares of its baseline measured in the same rounds and of the nominal peak."""
    medians = [statistics.median(s) for s in samples]
    gbps = {v.operation: v.counted_bytes / m / 1e9  # the shared baselines, by operation
            for v, m in zip(variants, medians, strict=True) if v.pool is None}
    figures = []
    for v, med, s in zip(variants, medians, samples, strict=True):
        rate = v.counted_bytes / med / 1e9
        device_side = v.baseline == "copy"
        figures.append((v.pool, Figure(
            operation=v.operation,
            implementation=v.implementation,
            payload_bytes=v.payload_bytes,
            counted_bytes=v.counted_bytes,
            median_s=med,
            samples_s=tuple(s),
            gbps=rate,
            baseline=v.baseline,
            share_of_baseline=rate / gbps[v.baseline],
            share_of_peak=(rate / peak) if (peak and device_side) else None,
        )))
    return figures


# The order a result lists its figures in: the device copy, the device moves it is the baseline
# of, then each pinned copy followed by the host moves measured against it.
REPORT_ORDER = ("copy", "gather", "scatter", "state_bytes_copy", "state_copy", "pinned_d2h",
                "d2h", "pinned_h2d", "h2d")


def in_report_order(figures: Iterable[Figure]) -> tuple[Figure, ...]:
    """``figures`` sorted by REPORT_ORDER, implementations in the order they were timed."""
    return tuple(sorted(figures, key=lambda f: REPORT_ORDER.index(f.operation)))


def _pool_variants(index: int, pool: FlatPool, movers: tuple[kernels.Mover, ...],
                   ids: list[kernels.PageIds], state_pairs: list | None, state_n: int,
                   staging: torch.Tensor, host: torch.Tensor | None,
                   call: int) -> list[_Variant]:
    """The timed page moves of one pool: gather and scatter by each mover, the state-row copy,
    and on CUDA the host mirror (pages to and from the pinned ``host`` buffer)."""
    variants = []
    for m in movers:
        variants.append(_Variant("gather", m.name, call, 2 * call,
                                 lambda r, m=m: m.gather(pool, ids[r % PAGE_SETS], staging),
                                 index))
        variants.append(_Variant("scatter", m.name, call, 2 * call,
                                 lambda r, m=m: m.scatter(pool, ids[r % PAGE_SETS], staging),
                                 index))
    if state_pairs is not None:
        state = state_n * pool.state_bytes_per_page
        variants.append(_Variant(
            "state_copy", TORCH_KERNEL, state, 2 * state,
            lambda r: kernels.copy_state_rows(pool, *state_pairs[r % PAGE_SETS]), index))
    if host is not None:
        for m in movers:
            variants.append(_Variant(
                "d2h", m.name, call, call,
                lambda r, m=m: kernels.copy_to_host(pool, ids[r % PAGE_SETS], host,
                                                    device_staging=staging, gather_fn=m.gather),
                index))
            variants.append(_Variant(
                "h2d", m.name, call, call,
                lambda r, m=m: kernels.copy_from_host(pool, ids[r % PAGE_SETS], host,
                                                      device_staging=staging,
                                                      scatter_fn=m.scatter),
                index))
    return variants


def _alloc(keep: list[torch.Tensor], nbytes: int, device: torch.device,
           pin: bool = False) -> torch.Tensor:
    if pin:
        t = torch.empty(nbytes, dtype=torch.uint8, device=device, pin_memory=True)
    else:  # the pool's kind of memory (huge pages on the host): copy and movers compare fairly
        t = empty_bytes(nbytes, device)
    keep.append(t)
    return t


def available_devices() -> tuple[str, ...]:
    """Devices a benchmark can run on here: ``"cpu"``, then ``"cuda:0"``, ``"cuda:1"``, ..."""
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    return ("cpu",) + tuple(f"cuda:{i}" for i in range(count))


def available_implementations(device: str | torch.device) -> tuple[str, ...]:
    """Page movers a benchmark on ``device`` can time: ``"torch"``, then ``"triton"`` where it
    runs compiled (a CUDA device with triton installed), so a page can offer only what runs."""
    return tuple(m.name for m in kernels.available_movers(resolve_device(device)))
