"""The GPU lab's vocabulary and defaults, shared by the library (``flatkv.gpu``), the page
(``flatkv.gpu_view``) and its link (``flatkv.app_state``): mover, layout, device and sweep names,
default pool and call sizes, rounds, and the checks of the values a link or the CLI gives.

Torch-free and app-free, so ``flatkv.gpu`` and the URL code depend on no view code, and the page
can state the very values the library uses without importing torch.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from flatkv.plan import bound_refusal, figure_text
from flatkv.units import quoted, whole_number

BENCH_REPEATS = {"cpu": 7, "cuda": 15}  # the library's and the CLI's timed rounds
# The benchmark's defaults (the page states them).
DEFAULT_POOL_BYTES = {"cpu": 512 << 20, "cuda": 8 << 30}  # pages allocated without a cap
DEFAULT_CALL_BYTES = {"cpu": 64 << 20, "cuda": 256 << 20}  # what one call moves by default
# Share of free memory a default cap leaves to the pool, in percent. The rest stays free for the
# staging buffers of the page movers, the benchmark's cache-flush buffer and everything else.
DEFAULT_SHARE_PERCENT = 40
# Share of free memory a whole benchmark (pool, two call-sized buffers, cache flush) may take.
# Host memory is overcommitted: past it Linux kills the process instead of failing the
# allocation, so the benchmark refuses up front rather than take the app down.
BENCH_SHARE_PERCENT = 80
WARMUP_ROUNDS = 2  # untimed rounds before the timed ones
MAX_REPEATS = 100


def most_bench_count(field: str) -> int:
    """The most a bench count takes: ``cpu_threads`` this machine's cores (more would time the
    scheduler; torch crashes at 100,000), ``repeats`` and ``warmup`` MAX_REPEATS rounds (a
    hundred million would run for days). One bound for the library's checks (``gpu.bench``)
    and the CLI's words (``bench_cli``), read when asked."""
    return (os.cpu_count() or 1) if field == "cpu_threads" else {
        "repeats": MAX_REPEATS, "warmup": MAX_REPEATS}[field]
# Every page mover flatkv.gpu has, by name; a device runs a subset (triton: CUDA with triton).
# flatkv.gpu names its movers from these, so the page, the URL and the library agree.
TORCH_KERNEL = "torch"
TRITON_KERNEL = "triton"
KERNELS = (TORCH_KERNEL, TRITON_KERNEL)
# The baseline each operation's figures are a share of, measured in the same rounds (a baseline
# is its own): the device moves the device copy, the state-row copy a copy of as many bytes, the
# host moves one large pinned copy each way. flatkv.gpu.bench times each against it; the page's
# charts mark each bar against it.
BASELINE_OF = {"copy": "copy", "gather": "copy", "scatter": "copy",
               "state_bytes_copy": "state_bytes_copy", "state_copy": "state_bytes_copy",
               "pinned_d2h": "pinned_d2h", "d2h": "pinned_d2h",
               "pinned_h2d": "pinned_h2d", "h2d": "pinned_h2d"}
# How a pool lays out its pages (flatkv.gpu.pool). Slot-major: one tensor per slot, as the plan's
# TensorPlans and the engines' default allocation have it; a page's rows lie one per slot tensor,
# far apart. Page-major: one buffer with each page's slot rows back to back (vLLM's "cross-layer
# KV blocks"), so moving a page is one contiguous copy; the slot tensors are strided views.
SLOT_MAJOR = "slot-major"
PAGE_MAJOR = "page-major"
POOL_LAYOUTS = (SLOT_MAJOR, PAGE_MAJOR)
# A device name: cpu, cuda or cuda:N (group 1: N). flatkv.gpu.pool resolves it on the machine.
# \Z, not $: "cpu\n" is no name (resolve_device took it for CUDA); N in ASCII digits, few
# enough for int().
DEVICE_NAME = re.compile(r"^(?:cpu|cuda(?::([0-9]{1,9}))?)\Z")
MAX_POOL_BLOCKS = 1 << 40  # a cap far past any plan; the plan's own block count bounds the pool
# What the lab sweeps: one run at the page's settings, or a sweep over one of them.
ONE_RUN = "one run"
PAGES_PER_CALL = "pages per call"
PAGE_BYTES = "page bytes"
SWEEPS = (ONE_RUN, PAGES_PER_CALL, PAGE_BYTES)


@dataclass(frozen=True)
class SettingNames:
    """How a message names the settings it asks to change: the GPU lab's labels, or the
    ``bench`` command's flags, so each caller's users read their own words."""

    max_blocks: str = "max blocks"
    pages_per_call: str = "pages per call"


LAB_NAMES = SettingNames()
FLAG_NAMES = SettingNames(max_blocks="--max-blocks", pages_per_call="--pages-per-call")


def check_max_blocks(field: str, blocks: int, *, as_typed: str | None = None,
                     flag: bool = False) -> int:
    """The lab's block cap ``blocks`` if it is 0 (automatic) or at least the two pages a
    benchmark moves; a ValueError naming ``field`` for 1: the page's widget by its label
    ("Max blocks is 1"), a link's value ``as_typed`` in the form of its other notices
    (``max_blocks='1'``, with the fix as the link writes it). One rule, in each one's words:
    with ``flag``, bench's ``--max-blocks 1`` (any value under 2: the flag left out is its
    automatic, so it takes no 0), which said "must be at least 2, got 1" where the lab said
    this."""
    if blocks == 1 or (flag and blocks < 2):
        if flag:  # the form of every flag's bound (plan.bound_refusal)
            raise ValueError(f"{field} {blocks:,} {bound_refusal(blocks, 2)} (a benchmark's pool "
                             "holds two pages): give 2 or more, or leave it out for automatic")
        named, fix = ((f"{field} is 1", "2") if as_typed is None else
                      (f"{field}={quoted(as_typed)}", f"{field}=2"))
        raise ValueError(f"{named}: a benchmark's pool holds two pages at least; give {fix} or "
                         "more, or 0 for automatic")
    return blocks


def check_pages_fit_pool(field: str, pages: int, pool_blocks: int, cap_field: str,
                         planned_blocks: int, *, capped_by_user: bool) -> None:
    """A call moves pages of one pool, so it moves at most the pool's blocks: a ValueError
    naming ``field``, the pool and ``cap_field`` (the setting that raises the pool) otherwise.
    A pool never holds more than the plan's ``planned_blocks``: where it holds them all,
    raising ``cap_field`` changes nothing, so the message says what plans more blocks. An
    automatic pool (``capped_by_user`` False) is a safe share of free memory, not a cap to
    raise: the message says that setting one may go past it."""
    if pages <= pool_blocks:
        return
    if pool_blocks >= planned_blocks:
        fix = "the plan's blocks (a larger cache budget or a smaller block size plans more)"
    elif capped_by_user:
        fix = f"or raise {cap_field}"
    else:
        fix = (f"or set {cap_field} (the automatic pool is a safe share of free memory; a run "
               "checks that a larger one fits)")
    # a flag's message as the command line's others ("--pages-per-call 2,000 is more ..."), a
    # label's as the lab's ("pages per call is 2,000, more ...")
    said = f"{field} {pages:,} is" if field.startswith("--") else f"{field} is {pages:,},"
    raise ValueError(f"{said} more than the {pool_blocks:,} blocks of the pool: give at most "
                     f"{pool_blocks:,}, {fix}")


def check_layout(field: str, value: object) -> str:
    """``value`` if it is one of POOL_LAYOUTS, else a ValueError naming ``field``."""
    if value not in POOL_LAYOUTS:
        raise ValueError(f"{field}={value!r} is not a pool layout: choose one of "
                         f"{', '.join(POOL_LAYOUTS)}")
    return value  # type: ignore[return-value]


def check_device_name(field: str, text: str) -> str:
    """``cpu``, ``cuda`` or ``cuda:N`` (whether this machine has it is the page's question)."""
    if not DEVICE_NAME.match(text):
        raise ValueError(f"{field}={quoted(text)} is not a device: give cpu, cuda or cuda:N")
    return text


def in_order(names: Sequence[str], options: Sequence[str]) -> tuple[str, ...]:
    """``names`` among ``options`` (KERNELS, POOL_LAYOUTS), in ``options``' order: a link and
    the widget write a choice alike."""
    return tuple(k for k in options if k in names)


# A count written with thousands commas, "8,192" or "64,128,256", where a comma separates
# counts: one number or several? (the app writes its lists "1, 4, 16", ``counts_text``)
_GROUPED = re.compile(r"(?<![\d,])[0-9]{1,3}(?:,[0-9]{3})+(?![\d,])")


def parse_counts(text: str, field: str, *, maximum: int) -> tuple[int, ...]:
    """``"1, 4, 16"`` -> ``(1, 4, 16)``: whole numbers from 1 to ``maximum``, sorted, once each.
    A count grouped by commas (``8,192``), which would read as two (8 and 192), and a count
    with a leading zero (``024``, the rest of a ``1, 024``) are refused, not guessed."""
    if grouped := _GROUPED.search(text):
        said = grouped[0]
        raise ValueError(f"{field}: {quoted(said)} reads as one number grouped by commas, "
                         f"where a comma separates counts: write {said.replace(',', '')} for "
                         f"one count, or {said.replace(',', ', ')} for several")
    values: set[int] = set()
    for part in text.replace(";", ",").split(","):
        part = part.strip()
        if not part:
            continue
        if len(part) > 1 and part.startswith("0") and part.isdigit():
            raise ValueError(f"{field}: {quoted(part)} has a leading zero: write the count "
                             f"without it, e.g. {int(part):,}" if int(part) else
                             f"{field}: {quoted(part)} is 0: give counts from 1")
        if (value := whole_number(part, f"{field}: {quoted(part)}", least=1,
                                  most=maximum)) is None:
            raise ValueError(
                f"{field}: {quoted(part)} is not a whole number; give a list such as 1, 4, 16")
        if not 1 <= value <= maximum:  # as typed: '1_000_000_0', not regrouped as 10,000,000
            raise ValueError(f"{field}: {quoted(part)} is out of range; give values from 1 to "
                             f"{maximum:,}")
        values.add(value)
    if not values:
        raise ValueError(f"{field} is empty; give a list such as 1, 4, 16")
    return check_counts(sorted(values), field, maximum=maximum)


def check_counts(values: Sequence[int], field: str, *, maximum: int) -> tuple[int, ...]:
    """``values`` if each is from 1 to ``maximum``: a list kept from a link is checked against
    the pool it now meets."""
    for n in values:
        if not 1 <= n <= maximum:
            raise ValueError(f"{field}: {figure_text(n)} is out of range; give values from 1 to "
                             f"{maximum:,}")
    return tuple(values)


def counts_text(values: Sequence[int]) -> str:
    """``(1, 4, 16)`` -> ``"1, 4, 16"``, as parse_counts reads it back."""
    return ", ".join(map(str, values))
