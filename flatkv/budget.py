"""The KV cache budget of one GPU (one TP rank), derived the way engines derive it.

vLLM and SGLang both start from the memory a process sees on the GPU, keep a fraction of it
(``--gpu-memory-utilization`` / ``--mem-fraction-static``) and give the cache what the model's
weights leave of that; or the budget is given as an engine logs it ("Available KV cache
memory"). Pure Python: the sidebar, the captions and the tests share one derivation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from flatkv.models import MAX_TP
from flatkv.plan import cdiv, check_int
from flatkv.units import MAX_BYTES, exact_bytes, folded, format_bytes


@dataclass(frozen=True)
class Budget:
    """The cache budget of one GPU (one TP rank), and what it was derived from: the captions
    read the fraction and TP from here, so they always describe this budget."""

    gpu_bytes: int
    fraction: float  # the share of the GPU an engine may use (1.0 for a given budget)
    tp: int
    usable_bytes: int  # floor(gpu_bytes * fraction)
    weights_per_rank: int  # ceil(weights / tp)
    cache_bytes: int  # usable - weights per rank
    given: bool = False  # the cache budget as an engine logs it, not derived
    # given as vLLM 0.34 logs it after warm-up: this many of vLLM's blocks (cache_bytes is
    # that many times the bytes of one), exact where its GiB figure is rounded
    vllm_blocks: int | None = None

    @property
    def rounded_in_log(self) -> bool:
        """Given as a log's GiB figure (rounded to 0.01 GiB), not as vLLM's block count."""
        return self.given and self.vllm_blocks is None

    @property
    def how_to_raise(self) -> str:
        """The sidebar settings that make this budget larger, for an error's fix."""
        if self.vllm_blocks is not None:
            return "raise the vLLM KV cache blocks in the sidebar"
        if self.given:
            return "raise the KV cache memory in the sidebar"
        return ("raise the GPU memory or the memory fraction, or lower the model weights, in "
                "the sidebar")

    @property
    def derivation(self) -> str:
        """Where the budget comes from, short, for a page's caption: a screenshot of the page
        then carries its assumptions (the weights above all, 0 B unless entered)."""
        if self.vllm_blocks is not None:
            return (f"{self.vllm_blocks:,} vLLM blocks of "
                    f"{format_bytes(self.cache_bytes // self.vllm_blocks)} as given")
        if self.given:
            return "KV cache memory as given"
        share = f"{format_bytes(self.gpu_bytes)} x {fraction_text(self.fraction)}"
        if not self.weights_per_rank:  # the default: said so, else it reads as a weightless model
            return f"{share}, no weights entered: enter them in the sidebar"
        per_rank = " per rank" if self.tp > 1 else ""
        return f"{share} - {format_bytes(self.weights_per_rank)} of weights{per_rank}"

    def gpu_bytes_for(self, cache_bytes: int) -> int | None:
        """The least GPU memory that leaves ``cache_bytes`` at this budget's memory fraction,
        weights and TP (``gpu_bytes_for``); None for a budget given as an engine logs it."""
        if self.given:
            return None
        # the weights of all ranks, which gpu_bytes_for splits by TP again
        return gpu_bytes_for(cache_bytes, self.fraction, self.weights_per_rank * self.tp,
                             self.tp)

    def beyond_gpu_text(self, gpu_bytes: int, short: bool = False) -> str:
        """Where ``gpu_bytes`` (a GPU memory run backwards) is more than this budget's GPU,
        saying so for the figure's reader ("over 79.65 GiB" where ``short``, for a narrow
        table column); else ``""``. Where the two print the same (79.65 GiB past an H100's
        79.65 GiB), by how many bytes, or the text reads as its own contradiction."""
        if self.given or gpu_bytes <= self.gpu_bytes:
            return ""
        shown = format_bytes(self.gpu_bytes)
        text = f"over {shown}" if short else f"more than this GPU's {shown}"
        if format_bytes(gpu_bytes) == shown:  # bytes: it sits in parentheses
            text += f"{'' if short else ','} by {gpu_bytes - self.gpu_bytes:,} B"
        return text

    def beyond_gpu_fix(self, cache_bytes: int | None = None) -> str:
        """What brings a GPU memory past this GPU's within it: for ``cache_bytes`` of cache,
        a higher memory fraction only where the whole GPU (fraction 1) holds them beside this
        rank's weights; for no one figure (a column of several), wherever the fraction is
        under 1."""
        room = cache_bytes is None or cache_bytes + self.weights_per_rank <= self.gpu_bytes
        fraction = ", a higher memory fraction," if self.fraction < 1 and room else ""
        return (f"a larger GPU{fraction} or more TP (weights and the model's heads split "
                "further)")

    @property
    def explanation(self) -> str:
        """The derivation with every step's figure, for the Budget page."""
        if self.vllm_blocks is not None:
            return (f"{self.vllm_blocks:,} vLLM blocks x {self.cache_bytes // self.vllm_blocks:,}"
                    f" B = {exact_bytes(self.cache_bytes)} of KV cache memory per rank, as vLLM "
                    f"0.34 logs it (\"Memory after warmup: ... {self.vllm_blocks} KV cache "
                    "blocks (X GiB) fit\"), a block the bytes of vLLM's layout at these engine "
                    "options: the memory fraction and the weights do not apply")
        if self.given:
            return (f"{exact_bytes(self.cache_bytes)} of KV cache memory per rank, as given "
                    "(vLLM logs it as \"Available KV cache memory\"): the memory fraction and "
                    "the weights do not apply")
        # exact bytes at every step: the GiB alone do not check by hand (79.65 GiB x 0.9 is
        # 71.685, shown 71.68; 126.36 - 74.51 is 51.85, shown 51.86)
        return (
            f"{exact_bytes(self.gpu_bytes)} x {fraction_text(self.fraction)} = "
            f"{exact_bytes(self.usable_bytes)} usable - weights "
            f"{exact_bytes(self.weights_per_rank)} per rank (TP {self.tp}) = "
            f"{exact_bytes(self.cache_bytes)} for the cache per rank"
        )


GIB = 2**30
MiB = 2**20

# Memory a process sees on one GPU (nvidia-smi's total, in MiB). The app's "Custom" and the
# CLI's --gpu-memory SIZE take another card, or the exact figure of yours.
GPU_PRESETS: dict[str, int] = {
    "H100 80GB": 81_559 * MiB,
    "H200 141GB": 143_771 * MiB,
    "B200 192GB": 183_359 * MiB,
    "A100 80GB": 81_920 * MiB,
    "A100 40GB": 40_960 * MiB,
    "L40S 48GB": 46_068 * MiB,
    "RTX 4090 24GB": 24_564 * MiB,
}
# Each preset's CUDA compute capability (major, minor), which engines pick attention backends
# by (vLLM's platforms/cuda.py ``_get_backend_priorities`` and each backend's
# ``supports_compute_capability``): Ampere's A100 8.0, Ada's L40S and RTX 4090 8.9, Hopper's
# H100 and H200 9.0, Blackwell's B200 10.0 (NVIDIA's CUDA GPU table). A budget of no preset
# (a size, KV cache memory, vLLM's blocks) names no GPU, so no capability: ``compute_capability``
GPU_COMPUTE_CAPABILITIES: dict[str, tuple[int, int]] = {
    "H100 80GB": (9, 0),
    "H200 141GB": (9, 0),
    "B200 192GB": (10, 0),
    "A100 80GB": (8, 0),
    "A100 40GB": (8, 0),
    "L40S 48GB": (8, 9),
    "RTX 4090 24GB": (8, 9),
}


# The compute capability major of a Blackwell (the B200 preset, SM 10.0), by which
# ``StrategyOptions.blackwell`` is derived from the one capability and vLLM's MLA
# backends on SM 10 set the block it runs told none (``vllm.unasked_mla_block_text``)
BLACKWELL_MAJOR = 10
# The GPU architectures a budget of no GPU preset may be told (--gpu-arch, the sidebar's "GPU
# architecture", link arch), each by the compute capability of its presets above: one per
# capability those take, so a told one is laid out as its presets are (vLLM's MLA refusals on
# SM 8.x, SGLang's and vLLM's Blackwell rules), and none told stays None (a Hopper taken)
GPU_ARCHITECTURES: dict[str, tuple[int, int]] = {
    "ampere": (8, 0),
    "ada": (8, 9),
    "hopper": (9, 0),
    "blackwell": (BLACKWELL_MAJOR, 0),
}
# The sidebar's "GPU architecture" where none is said: the figures a Hopper's, which is not to
# say the GPU is one (a log's offer off an L40S leaves none said where its Ada moves nothing:
# "a Hopper taken" read as if FlatKV took the user's L40S for an H100)
ARCH_NOT_SAID = "not said (figures as on a Hopper)"
# a Blackwell told (--sglang-blackwell, a log's Blackwell offered) is the B200's SM 10.0
BLACKWELL_CAPABILITY = GPU_ARCHITECTURES["blackwell"]


def gpu_arch_text(arch: str) -> str:
    """An architecture of ``GPU_ARCHITECTURES`` as the help and the sidebar name it, with its
    capability and presets: "ampere (SM 8.0: A100)"."""
    capability = GPU_ARCHITECTURES[arch]
    return (f"{arch} (SM {capability_text(capability)}: "
            f"{gpu_models(lambda c: c == capability)})")


def gpu_words(gpu: str, capability: tuple[int, int] | None) -> str:
    """The GPU as a note names it after "the": the preset ``gpu`` names ("H100 80GB"), else
    the architecture told ("Hopper GPU (SM 9.0)"), "" where neither says."""
    if gpu in GPU_COMPUTE_CAPABILITIES:
        return gpu
    if (arch := gpu_arch_of(capability)) is None:
        return ""
    return f"{arch.capitalize()} GPU (SM {capability_text(GPU_ARCHITECTURES[arch])})"


def gpu_arch_of(capability: tuple[int, int] | None) -> str | None:
    """The architecture's name (``GPU_ARCHITECTURES``) of ``capability``; None for None."""
    return next((arch for arch, c in GPU_ARCHITECTURES.items() if c == capability), None)


def compute_capability(gpu: str | None) -> tuple[int, int] | None:
    """The compute capability of the GPU preset ``gpu`` names (its own name, as ``gpu_name``
    gives it), None for anything else: a budget that names no preset says nothing of its GPU,
    and the figures then are those of a GPU not known (``StrategyOptions.gpu_compute_capability``
    None). The app's GPU pick and the CLI's --gpu-memory both read it here."""
    return GPU_COMPUTE_CAPABILITIES.get(gpu)  # None too where gpu is None


def capability_text(capability: tuple[int, int]) -> str:
    """``(8, 0)`` as engines and NVIDIA write it: "8.0"."""
    return f"{capability[0]}.{capability[1]}"


def gpu_models(where: Callable[[tuple[int, int]], bool]) -> str:
    """The GPU presets' models (their names less the memory: "A100", "RTX 4090") whose compute
    capability ``where`` accepts, in the presets' order, each once: "L40S, RTX 4090" for
    SM 8.9, as a refusal names the GPUs it holds for."""
    return ", ".join(dict.fromkeys(name.rsplit(" ", 1)[0] for name, capability
                                   in GPU_COMPUTE_CAPABILITIES.items() if where(capability)))


# the share of a GPU an engine may use: the app's default, vLLM's before 0.20 (0.92 from
# 0.20 to 0.33; 0.34 on CUDA takes 1.0 and sizes its cache after warm-up)
DEFAULT_MEMORY_FRACTION = 0.9
# The least memory fraction the app's link and the CLI take, one rule for both (the CLI took
# (0, 1], an engine's range, where a link took 0.05 up, the slider's start: --memory-fraction
# 0.01 gave a budget the app refused). An engine takes any share above 0; the slider can show
# none under its step of 0.01, and a link must not hold what it cannot show.
MIN_MEM_FRACTION = 0.01
# The most decimals a memory fraction may have, one rule for the link and the CLI, as the
# sidebar's slider shows it ("%.4g"): a fifth would be counted unseen there (the CLI took any,
# 0.9000001, which the link refused)
MEM_FRACTION_DECIMALS = 4


def takes_mem_fraction(value: float) -> bool:
    """Whether the app's link and the CLI take ``value`` as a memory fraction:
    ``MIN_MEM_FRACTION`` to 1 at ``MEM_FRACTION_DECIMALS`` decimals at most (the float of a
    typed 0.8503 rounds to itself; 0.85031's does not). Its bytes are exact all the same
    (``cache_budget``: the typed decimal, not the binary float)."""
    return (MIN_MEM_FRACTION <= value <= 1
            and round(value, MEM_FRACTION_DECIMALS) == value)


def too_many_decimals(value: float) -> str:
    """The refusal of a memory fraction of more decimals than ``MEM_FRACTION_DECIMALS``, after
    its field and value (the link's ``frac='0.912345'``, the CLI's ``--memory-fraction
    0.912345``): the rule and the value rounded to it, which both take."""
    return (f"has more than {MEM_FRACTION_DECIMALS} decimals: give at most "
            f"{MEM_FRACTION_DECIMALS}, e.g. {round(value, MEM_FRACTION_DECIMALS):g}")
DEFAULT_GPU = "H100 80GB"  # the app's first view, and the CLI bench's default budget


def gpu_name(text: str) -> str:
    """A GPU preset's name in any case and spacing (``h100 80gb``) as its own (``H100 80GB``),
    as --preset reads a model's: the CLI's --gpu-memory and the link's gpu read it here, so
    both take the same names and a link writes the preset's own back; anything else as typed
    (a size for --gpu-memory, a memory source or a refusal for the link)."""
    key = folded(text)
    return next((name for name in GPU_PRESETS if folded(name) == key), text)


def printed_range(cache_bytes: int, decimals: int = 2) -> tuple[int, int] | None:
    """The budgets a log line that prints ``cache_bytes`` in GiB to ``decimals`` places can stand
    for: vLLM's "Available KV cache memory: 44.59 GiB" is any of about 0.01 GiB of budgets
    (10,737,418 B), and a figure counted from one of them can be off the engine's by a few
    blocks. ``(lowest, highest)`` bytes that print the same (an exact tie such as 44.625 GiB
    prints as the even digit, 44.62, as Python's format does); None when
    ``cache_bytes`` is not such a printed value read back (``floor(44.59 x 2**30)``, as the
    sidebar reads it), or past 2**53 B, where the log's float print parts from exact
    rounding."""
    check_int("cache_bytes", cache_bytes, minimum=1, maximum=MAX_BYTES)
    if cache_bytes >= 2**53:
        return None
    shown = round(Fraction(cache_bytes, GIB), decimals)
    if shown * GIB // 1 != cache_bytes:
        return None
    half = Fraction(1, 2 * 10**decimals)

    def prints_shown(b: int) -> bool:
        return round(Fraction(b, GIB), decimals) == shown

    low, high = math.ceil((shown - half) * GIB), math.floor((shown + half) * GIB)
    low += not prints_shown(low)  # a tie at either end goes to the even neighbour
    high -= not prints_shown(high)
    return low, high


def gpu_bytes_for(cache_bytes: int, fraction: float, weights: int, tp: int) -> int:
    """The least GPU memory whose ``fraction``, less the weights per rank, leaves
    ``cache_bytes`` for the cache (``cache_budget``'s derivation run backwards):
    ``ceil((cache + ceil(weights / tp)) / fraction)``."""
    check_int("cache bytes", cache_bytes, minimum=1)
    check_int("weights", weights)
    check_int("TP", tp, minimum=1)
    check_fraction(fraction)
    return math.ceil((cache_bytes + cdiv(weights, tp)) / exact_fraction(fraction))


def given_budget(cache_bytes: int, tp: int) -> Budget:
    """A budget as an engine logs it (vLLM's "Available KV cache memory: 44.59 GiB")."""
    check_int("KV cache memory", cache_bytes, minimum=1)
    check_int("TP", tp, minimum=1)
    return Budget(cache_bytes, 1.0, tp, cache_bytes, 0, cache_bytes, given=True)


# vLLM's blocks a budget may be given in: vLLM needs 2; a GPU's 141 GB holds 2**31 blocks only
# of 66 B, far under any model's block (a page of 16 tokens in each of its tensors)
MIN_VLLM_BLOCKS, MAX_VLLM_BLOCKS = 2, 1 << 31


def blocks_budget(blocks: int, block_bytes: int, tp: int) -> Budget:
    """A budget as vLLM 0.34 logs it after warm-up: ``blocks`` of its blocks, each
    ``block_bytes`` (``strategies.vllm.block_bytes`` at the view's options)."""
    check_int("vLLM KV cache blocks", blocks, minimum=MIN_VLLM_BLOCKS, maximum=MAX_VLLM_BLOCKS,
              hint="the N of vLLM's \"Memory after warmup: ... N KV cache blocks\" line "
              "(vLLM needs 2 at least)")
    check_int("vLLM block bytes", block_bytes, minimum=1)
    check_int("TP", tp, minimum=1)
    cache = blocks * block_bytes
    if cache > MAX_BYTES:
        raise ValueError(f"vLLM KV cache blocks is {blocks:,}: {blocks:,} x {block_bytes:,} B "
                         f"is past {format_bytes(MAX_BYTES)}; give the N of vLLM's log line")
    return Budget(cache, 1.0, tp, cache, 0, cache, given=True, vllm_blocks=blocks)


def check_fraction(fraction: object) -> None:
    """A memory fraction: a number in (0, 1]; a ValueError naming it otherwise (a string, None
    or True would meet a bare comparison as a TypeError, or as 1)."""
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float, Fraction)) or not (
            0 < fraction <= 1):
        raise ValueError(f"memory fraction is {fraction!r}: give a number in (0, 1], e.g. 0.9")


def fraction_text(fraction: float) -> str:
    """The fraction as typed, every digit (``0.9000001``, ``1``, ``0.00000015``): the one
    exact_fraction computes with, where ``:g`` kept six digits (0.9000001 read as 0.9,
    1.0000001 as 1), without repr's exponent where it is short (1.5e-07)."""
    text = repr(float(fraction))
    if "e" in text and len(plain := format(Decimal(text), "f")) <= 24:
        text = plain  # 1.5e-07 written out, 0.00000015; 1e-300 stays as it is
    return text.removesuffix(".0")


def exact_fraction(fraction: float) -> Fraction:
    """The fraction as the user typed it, not the binary float: its shortest decimal (0.57 is
    57/100, where the float is a hair under it). Every digit typed counts: the CLI takes any
    decimal, and the app's link and slider keep 4."""
    return Fraction(repr(float(fraction)))


def least_tp_with_room(weights: int, usable: int, splits: Callable[[int], bool]) -> int | None:
    """The least TP up to MAX_TP whose share of the weights leaves cache room on a rank of
    ``usable`` bytes and that ``splits`` the model; None when there is none. Room means
    ``usable - ceil(weights / tp) >= 1``, that is ``tp >= ceil(weights / (usable - 1))``."""
    if usable < 2:
        return None
    return next((t for t in range(max(1, cdiv(weights, usable - 1)), MAX_TP + 1) if splits(t)),
                None)


def cache_budget(gpu_bytes: int, fraction: float, weights: int, tp: int, *,
                 splits: Callable[[int], bool] = lambda tp: True) -> Budget:
    """Bytes left for the KV cache on one rank; ValueError when nothing is left, naming the
    least TP that leaves room among those that ``splits`` the model."""
    check_int("GPU memory", gpu_bytes, minimum=1)
    check_int("weights", weights)
    check_int("TP", tp, minimum=1)
    check_fraction(fraction)
    usable = int(gpu_bytes * exact_fraction(fraction))
    per_rank = cdiv(weights, tp)
    cache = usable - per_rank
    if usable <= 0:
        raise ValueError(
            f"GPU memory {gpu_bytes:,} B x memory fraction {fraction_text(fraction)} leaves no "
            "usable memory: give the GPU's memory (e.g. 80GB) and the share of it an engine may "
            "use (e.g. 0.9)"
        )
    if cache <= 0:
        least = least_tp_with_room(weights, usable, splits)
        # a higher fraction is offered only where one leaves room: at 1, the whole GPU
        fraction_helps = fraction < 1 and gpu_bytes > per_rank
        if least is None:
            fix = (f"{'raise the memory fraction or ' if fraction_helps else ''}pick a larger "
                   f"GPU (no TP up to {MAX_TP:,} that splits the model leaves room)")
        else:
            fix = (f"raise TP ({least} is the least that splits the model and leaves room)"
                   f"{', the memory fraction,' if fraction_helps else ''} or pick a larger GPU")
        raise ValueError(f"weights per rank ({format_bytes(per_rank)}) fill the usable memory "
                         f"({format_bytes(usable)}): {fix}")
    return Budget(gpu_bytes, fraction, tp, usable, per_rank, cache)
