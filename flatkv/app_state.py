"""The app's whole view as one value, and its round trip through the URL.

``AppState`` holds the model choice and every setting a page reads. ``encode_query`` writes the
values that differ from the defaults as URL query parameters (short links); ``decode_query``
reads them back, validating each one: a bad or stale value falls back to its default and leaves
a notice that says which value, why, and what was used instead. Pure Python, no streamlit, so
the round trip is tested without a browser.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from fractions import Fraction

from flatkv import app_model, gpu_settings, presets
from flatkv.analysis import PLANNERS
from flatkv.budget import (
    DEFAULT_GPU,
    DEFAULT_MEMORY_FRACTION,
    GPU_ARCHITECTURES,
    GPU_PRESETS,
    MAX_VLLM_BLOCKS,
    MIN_MEM_FRACTION,
    MIN_VLLM_BLOCKS,
    Budget,
    blocks_budget,
    cache_budget,
    compute_capability,
    given_budget,
    gpu_arch_of,
    gpu_arch_text,
    gpu_name,
    gpu_words,
    takes_mem_fraction,
    too_many_decimals,
)
from flatkv.dtypes import STATE_DTYPES, canonical_dtype
from flatkv.engine_options import (
    ENGINE_DEFAULTS,
    ENGINE_FIELDS,
    ENGINE_LABELS,
    STRATEGY_FIELDS,
    acting_engine_options,
)
from flatkv.models import MAX_CONV_KERNEL, MAX_DIM, MAX_TP, ModelSpec
from flatkv.plan import alignment_or_block_size, bound_fix, bound_refusal
from flatkv.profile import (
    MAX_CHUNK_SIZE,
    MAX_KERNEL_BLOCK_SIZE,
    MAX_WINDOW,
    CacheProfile,
    architectures_problem,
    is_unset,
    split_problem,
)
from flatkv.strategies import STRATEGIES, StrategyOptions, last_served_text
from flatkv.strategies.base import (
    CHUNKED_PREFILL_OFF,
    MAMBA_CACHE_MODES,
    MAX_ATTN_DP_SIZE,
    MAX_CHECKPOINT_BLOCKS,
    MAX_MAMBA_CACHE_SIZE,
    MAX_RUNNING_REQUESTS,
    MAX_SLOTS_PER_REQUEST,
    MAX_SPECULATIVE_TOKENS,
    PADDING_BOUND_EXAMPLE,
    PADDING_BOUND_RANGE,
    RATIO_EXAMPLE,
    RATIO_RANGE,
    SGLANG_KV_CACHE_DTYPES,
    SGLANG_RADIX_CACHE_STRATEGIES,
    SGLANG_SSM_DTYPES,
    SWA_RATIO_RANGE,
    sglang_kv_cache_dtype_named,
    to_fraction,
)
from flatkv.strategies.sglang import (
    CHUNK_OFF_WORD,
    parse_chunked_prefill,
    sglang_default_chunked_prefill,
)
from flatkv.strategies.sglang import slots_per_request as sglang_slots_per_request
from flatkv.strategies.sglang import ssm_dtype as sglang_ssm_dtype
from flatkv.strategies.sglang import swa_pool as sglang_swa_pool
from flatkv.strategies.vllm import block_bytes as vllm_block_bytes
from flatkv.strategies.vllm import checkpoint_blocks_kept
from flatkv.strategies.vllm import kernel_block_size as vllm_kernel_block_size
from flatkv.strategies.vllm import mamba_chunk_size as vllm_mamba_chunk_size
from flatkv.strategies.vllm import ssm_dtype as vllm_ssm_dtype
from flatkv.strategies.vllm_releases import ANCHOR_OPTIONS, RECENT_VLLM_BLOCK_SIZE
from flatkv.tp_split import PLAIN, words_for
from flatkv.units import (
    MAX_BLOCK_SIZE,
    MAX_BYTES,
    MAX_TOKENS,
    ascii_digits,
    decimal_number,
    folded,
    format_size,
    gpu_memory_size,
    kv_memory_size,
    listed,
    memory_size,
    parse_size,
    parse_tokens,
    quoted,
    quoted_value,
    renamed,
    whole_example,
    whole_number,
)

CUSTOM_GPU = "Custom"
# The cache budget per rank given as such, the way an engine logs it (vLLM's "Available KV cache
# memory: 44.59 GiB"): no GPU, memory fraction or weights to derive it from.
KV_MEMORY = "KV cache memory"
# ... or as vLLM 0.34 logs it after warm-up, a count of its blocks ("Memory after warmup: ... N
# KV cache blocks (X GiB) fit"): exact, where the GiB beside it is rounded.
KV_BLOCKS = "vLLM KV cache blocks"
MEMORY_SOURCES = (CUSTOM_GPU, KV_MEMORY, KV_BLOCKS)  # after the GPU presets
# as the GPU picker shows them: help texts name them by the words before " (log)" (the
# whole of "vLLM KV cache blocks (from a log)" did not fit the sidebar)
MEMORY_SOURCE_TITLES = {source: f"{source} (log)" for source in (KV_MEMORY, KV_BLOCKS)}
MAX_CONTEXT = MAX_TOKENS
DEFAULT_CONTEXT = app_model.DEFAULT_CONTEXT
MAX_REQUESTS = 4096
DEFAULT_REQUESTS = 4  # Layout's live requests until one is typed (fewer where fewer fit)
@dataclass(frozen=True)
class AppState:
    """Everything the app shows is a function of this value (and nothing else)."""

    model: str = app_model.DEFAULT_MODEL  # a preset name, "spec" (edited spec) or "custom" (raw)
    raw: app_model.RawModel | None = None  # the raw profile when model == "custom"
    spec: str | None = None  # the edited spec's JSON (spec_to_json) when model == "spec"
    block_size: int = ENGINE_DEFAULTS.block_size
    alignment: int | None = None  # None: the block size (the planner's default)
    planner: str = "packed"
    gpu: str = DEFAULT_GPU
    gpu_memory: int = 80 * 10**9  # used when gpu == "Custom"
    kv_memory: int = 40 * 2**30  # used when gpu == KV_MEMORY: the cache budget per rank itself
    kv_blocks: int = 6_000  # used when gpu == KV_BLOCKS: the budget in vLLM's blocks
    # the GPU's architecture (a name of ``budget.GPU_ARCHITECTURES``; "": not said, the figures
    # a Hopper's), read where the budget names no GPU preset (Custom, KV cache memory, vLLM's
    # blocks): a preset sets it (``gpu_capability``)
    gpu_arch: str = ""
    mem_fraction: float = DEFAULT_MEMORY_FRACTION
    weights: int = 0  # model weights, all ranks together; each rank holds weights / tp
    tp: int = 1
    context: int | None = None  # tokens per request; None: the model's (context_length)
    # live requests in the page-id view; None: DEFAULT_REQUESTS, or as many as fit if fewer
    requests: int | None = None
    # requests the Budget page gives the least budget for; None: one more than fit
    hold_requests: int | None = None
    uniform_rows: bool = False  # Layout draws rows padded to the page row (uniform pages)
    # Layout's page-id map charges state prefix-caching snapshots (SPEC 3.5), not the mamba
    # cache mode's state pages (the engine's log's count, the concurrency at the top)
    map_snapshots: bool = False
    # Layout's bytes chart's view: a focus id of charts.icicle_focus_options (a group, or a
    # group/component as app_data.bytes_tree names them); "budget" (charts.ICICLE_ROOT): the
    # whole budget. In the link, so a link shared in a review opens on the part it shows; the
    # page checks it against the model's parts (a link can name any)
    bytes_focus: str = "budget"
    # Engine options (StrategyOptions; the Compare and Budget pages). Ratios are floats read as
    # their shortest decimal (0.9 is 9/10 exactly), as StrategyOptions reads them.
    kernel_block_size: int | None = ENGINE_DEFAULTS.kernel_block_size  # None: the model's
    mamba_cache_mode: str = ENGINE_DEFAULTS.mamba_cache_mode
    speculative_tokens: int = ENGINE_DEFAULTS.speculative_tokens
    prefill_checkpoint_blocks: int = ENGINE_DEFAULTS.prefill_checkpoint_blocks
    mamba_chunk_size: int | None = ENGINE_DEFAULTS.mamba_chunk_size  # None: the model's
    vllm_ssm_dtype: str | None = ENGINE_DEFAULTS.vllm_ssm_dtype  # None: vLLM's auto
    vllm_hybrid_manager: bool = ENGINE_DEFAULTS.vllm_hybrid_manager
    vllm_async_scheduling: bool = ENGINE_DEFAULTS.vllm_async_scheduling
    mamba_full_memory_ratio: float = float(ENGINE_DEFAULTS.mamba_full_memory_ratio)
    swa_full_tokens_ratio: float = float(ENGINE_DEFAULTS.swa_full_tokens_ratio)
    sglang_slots_per_request: int | None = ENGINE_DEFAULTS.sglang_slots_per_request  # SGLang's
    # None: SGLang's own max_running_requests (from its pools and the context, 48 drafting)
    sglang_max_running_requests: int | None = ENGINE_DEFAULTS.sglang_max_running_requests
    # None: SGLang's own state slots (a share of the budget)
    sglang_max_mamba_cache_size: int | None = ENGINE_DEFAULTS.sglang_max_mamba_cache_size
    sglang_overlap_schedule: bool = ENGINE_DEFAULTS.sglang_overlap_schedule
    sglang_disable_radix_cache: bool = ENGINE_DEFAULTS.sglang_disable_radix_cache
    sglang_attn_dp_size: int = ENGINE_DEFAULTS.sglang_attn_dp_size  # 1: no attention DP
    sglang_page_size: int = ENGINE_DEFAULTS.sglang_page_size
    sglang_mamba_track_interval: int = ENGINE_DEFAULTS.sglang_mamba_track_interval
    sglang_mamba_radix_cache_strategy: str = ENGINE_DEFAULTS.sglang_mamba_radix_cache_strategy
    # auto: SGLang's own (fp8 for DeepSeek's sparse attention on a Blackwell); bfloat16 told
    sglang_kv_cache_dtype: str = ENGINE_DEFAULTS.sglang_kv_cache_dtype
    sglang_ssm_dtype: str | None = ENGINE_DEFAULTS.sglang_ssm_dtype  # None: by the config
    sglang_swa_pool: bool | None = ENGINE_DEFAULTS.sglang_swa_pool  # None: by architecture
    # None: SGLang's own, by the GPU's memory (sglang_chunked_prefill)
    sglang_chunked_prefill_size: int | None = ENGINE_DEFAULTS.sglang_chunked_prefill_size
    max_batched_tokens: int = ENGINE_DEFAULTS.max_batched_tokens
    lcm_padding_bound: float = float(ENGINE_DEFAULTS.lcm_padding_bound)
    budget_strategy: str | None = None  # the Budget page's layout; None: the planner's own
    # GPU lab run settings. None means "the default here": the first GPU else the CPU, every
    # kernel the device runs, the device's rounds, a sweep suggested from the pool or P.
    lab_device: str | None = None
    lab_kernels: tuple[str, ...] | None = None
    lab_layouts: tuple[str, ...] = (gpu_settings.SLOT_MAJOR,)  # pool layouts to time
    lab_rounds: int | None = None
    lab_max_blocks: int = 0  # 0: automatic
    lab_pages: int = 0  # pages per call, 0: automatic
    lab_sweep: str = gpu_settings.SWEEPS[0]
    lab_sweep_pages: tuple[int, ...] | None = None
    lab_sweep_blocks: tuple[int, ...] | None = None

    def recent_vllm_changes(self) -> dict[str, object]:
        """What this view sets apart from vLLM 0.34's own layout defaults, where the app keeps
        SPEC 3.1's anchor (vLLM up to 0.19 run without prefix caching): the block size, 64;
        for a model with state, mamba cache mode align, in which vLLM 0.28 and later start a
        hybrid (prefix caching on by default), and for a Mamba2 model its prefill checkpoint
        block (0.32); for a model with sliding or chunked layers, async scheduling's two
        batches in flight (0.26). Not the memory: 0.34 on CUDA sizes its cache after warm-up
        (the help says which figure to give). Empty when the view already matches, and for a
        model current vLLM no longer serves (its log is an older release's)."""
        changes: dict[str, object] = {}
        profile = self.profile()
        if last_served_text(profile):
            return changes
        if self.block_size != RECENT_VLLM_BLOCK_SIZE:
            changes["block_size"] = RECENT_VLLM_BLOCK_SIZE
        if profile.has_state and self.mamba_cache_mode != "align":
            changes["mamba_cache_mode"] = "align"
        expected = self.vllm_checkpoint_blocks()
        if expected is not None and self.prefill_checkpoint_blocks != expected:
            changes["prefill_checkpoint_blocks"] = expected
        if profile.windowed_labels and not self.vllm_async_scheduling:
            changes["vllm_async_scheduling"] = True
        return changes

    def vllm_checkpoint_blocks(self) -> int | None:
        """The prefill checkpoint blocks vLLM 0.34 keeps a request for this model in align on
        the GPU picked (``vllm.checkpoint_blocks_kept``: a preset's or the architecture told;
        none said, as with a KV cache memory or blocks given: not known)."""
        return checkpoint_blocks_kept(self.profile(), self.gpu_capability())

    def gpu_named(self) -> str:
        """The GPU as the notes name it (``budget.gpu_words``): the preset picked, or the
        architecture told ("Hopper GPU (SM 9.0)"); "" where neither says."""
        return gpu_words(self.gpu, self.gpu_capability())

    def runs_recent_vllm_defaults(self) -> bool:
        """Whether this view holds vLLM 0.34's own layout defaults for a model it serves (the
        "vLLM 0.34's defaults" button set them, or the user did): no change left to make."""
        return not last_served_text(self.profile()) and not self.recent_vllm_changes()

    def profile(self) -> CacheProfile:
        """The current model's CacheProfile at this TP (raw profiles are per rank already).
        Raises ValueError for a bad model, or a TP its heads cannot be split over."""
        if self.model == app_model.CUSTOM:
            if self.raw is None:
                raise ValueError("model is 'custom' but no layers were given: edit the model")
            return self.raw.profile()
        if self.model != app_model.CUSTOM_SPEC and self.model not in app_model.model_names():
            raise ValueError(
                f"model {self.model!r} is unknown: pick one of {', '.join(app_model.model_names())}"
            )
        return app_model.profile_for(self.model, self.spec, self.tp)

    def context_length(self) -> int:
        """The tokens a request holds on every page: the context set, else the model's
        max_model_len (vLLM's default --max-model-len, so the figures are those of vLLM's
        log), else DEFAULT_CONTEXT for a model that does not give one (raw bytes, or a spec
        in error, which the page explains). The length does not depend on the TP: a TP the
        model refuses leaves it as it is."""
        if self.context is not None:
            return self.context
        own = self.model_max_len()
        return DEFAULT_CONTEXT if own is None else own

    def model_max_len(self) -> int | None:
        """The model's max_model_len (vLLM's default --max-model-len), read at TP 1 since no
        TP changes it; None for raw bytes, a model that gives none, or a spec in error."""
        spec = self._length_spec()
        return None if spec is None else spec.max_model_len

    def model_max_len_assumed(self) -> bool:
        """Whether the model's max_model_len is the 2,048 vLLM assumes for a config that
        gives no length (the pages say so beside a context)."""
        spec = self._length_spec()
        return spec is not None and spec.max_model_len_assumed

    def _length_spec(self) -> ModelSpec | None:
        """The spec at TP 1 the model's length is read from; None for raw bytes or a spec in
        error."""
        if self.model == app_model.CUSTOM:
            return None
        try:
            return app_model.spec_for(self.model, self.spec, 1)
        except ValueError:
            return None

    def model_spec(self) -> ModelSpec | None:
        """The current ModelSpec at this TP, or None for a raw profile."""
        if self.model == app_model.CUSTOM:
            return None
        return app_model.spec_for(self.model, self.spec, self.tp)

    @property
    def effective_alignment(self) -> int:
        return alignment_or_block_size(self.alignment, self.block_size)

    def map_workload(self) -> dict[str, object]:
        """Layout's page-id map's workload beside its requests and context (``Workload``'s
        fields): the step, the drafted tokens, and state by the mamba cache mode, or, with
        ``map_snapshots``, as prefix caching keeps it (``state_mode`` None)."""
        return {"scheduled_tokens": self.max_batched_tokens,
                "speculative_tokens": self.speculative_tokens,
                "state_mode": None if self.map_snapshots else self.mamba_cache_mode,
                "checkpoint_blocks": self.prefill_checkpoint_blocks}

    def strategy_options(self) -> StrategyOptions:
        """The engine strategies' knobs for this view; ValueError names a bad one."""
        return StrategyOptions(  # alignment None stays "the block size", whatever it becomes
            block_size=self.block_size, alignment=self.alignment,
            **{name: getattr(self, name) for name in ENGINE_FIELDS}
            | {"sglang_chunked_prefill_size": self.sglang_chunked_prefill(),
               # the GPU, as vLLM's MLA backends and SGLang's DeepSeek layout read it
               "gpu_compute_capability": self.gpu_capability()},
        )

    def gpu_capability(self) -> tuple[int, int] | None:
        """The GPU's compute capability: the GPU preset picked says, else the sidebar's "GPU
        architecture" (``gpu_arch``), where the budget names no preset's GPU; None where
        neither says (the figures a Hopper's). A name no architecture has is refused where
        it is read, not taken for a Hopper (a link's is refused before: ``decode_query``)."""
        if (by_gpu := compute_capability(self.gpu)) is not None:
            return by_gpu
        if self.gpu_arch and self.gpu_arch not in GPU_ARCHITECTURES:
            raise ValueError(f"gpu_arch is {self.gpu_arch!r}: give one of "
                             f"{', '.join(GPU_ARCHITECTURES)} (budget.GPU_ARCHITECTURES), or '' "
                             "where the architecture is not said")
        return GPU_ARCHITECTURES.get(self.gpu_arch)

    def arch_kept_off(self, gpu: str) -> dict[str, str]:
        """Where the memory source ``gpu`` (Custom, KV cache memory, vLLM's blocks) takes the
        place of the GPU preset picked here, the "GPU architecture" select set to the
        preset's ({"gpu_arch": "ampere"} off an A100), so the GPU stays the one it was and
        the select shows it; {} elsewhere. Without it the select kept what was told before
        the preset, or none (a Hopper taken): DeepSeek-V3.2 left an A100 to start on vLLM."""
        if self.gpu not in GPU_PRESETS or gpu in GPU_PRESETS:
            return {}
        return {"gpu_arch": gpu_arch_of(self.gpu_capability()) or ""}

    def on_blackwell(self) -> bool:
        """Whether the engines run on a Blackwell GPU here (``gpu_capability``'s major):
        SGLang stores DeepSeek's sparse attention in fp8 there."""
        return self.strategy_options().blackwell

    def sglang_chunked_prefill(self) -> int:
        """The --chunked-prefill-size SGLang's figures take: the one set, else SGLang's own on
        the GPU picked (a custom GPU's by its memory too), or the one assumed where the budget
        names no GPU (KV cache memory, vLLM's blocks): ``sglang_default_chunked_prefill``."""
        if self.sglang_chunked_prefill_size is not None:
            return self.sglang_chunked_prefill_size
        return self._chunked_prefill_choice()[0]

    def acting_engine_options(self, strategies: tuple[str, ...] = tuple(STRATEGY_FIELDS)
                              ) -> tuple[str, ...]:
        """The engine options one of ``strategies`` reads for this model (``strategy_fields``)
        and that act with the other options as set: an option in its mamba cache mode only
        (``only_in_mode``: the chunk size in "all", checkpoint blocks in "align"), SGLang's
        sliding / full ratio with its sliding pool only. The pages offer, count and name these;
        every option where the model is in error (the page says why)."""
        try:
            profile = self.profile()
        except ValueError:
            return ENGINE_FIELDS
        return acting_engine_options(profile, self.strategy_options(), strategies)

    def changed_engine_options(self, names: tuple[str, ...] = ENGINE_FIELDS
                               ) -> dict[str, object]:
        """The engine options among ``names`` that differ from the engines' defaults. An option
        whose default is the model's own (None: "as the engine decides") counts as changed only
        where its value differs from what the engine decides for this model: a kernel block of
        16 kept from an MLA model is no change on Qwen3-Next, whose own is 16."""
        try:
            own = self.engine_choices()
        except ValueError:  # the model is in error: the defaults are all there is to compare
            own = {}
        return {name: value for name in names
                if (value := getattr(self, name)) != getattr(DEFAULT, name)
                and not (name in own and value == own[name][0])}

    def engine_choices(self) -> dict[str, tuple[object, str]]:
        """What the engines pick for this model where an option is left to them (None), and
        why: the widgets' "as SGLang decides" and the change count both read it. ValueError
        while the model is in error."""
        profile, defaults = self.profile(), StrategyOptions()
        return {"kernel_block_size": vllm_kernel_block_size(profile, defaults),
                "mamba_chunk_size": vllm_mamba_chunk_size(profile, defaults),
                "sglang_ssm_dtype": sglang_ssm_dtype(profile, defaults),
                "vllm_ssm_dtype": vllm_ssm_dtype(profile, defaults),
                # SGLang's own S depends on its overlap scheduling, page size and radix cache
                "sglang_slots_per_request": sglang_slots_per_request(profile, replace(
                    defaults, sglang_overlap_schedule=self.sglang_overlap_schedule,
                    sglang_page_size=self.sglang_page_size,
                    sglang_disable_radix_cache=self.sglang_disable_radix_cache,
                    sglang_mamba_radix_cache_strategy=self.sglang_mamba_radix_cache_strategy)),
                "sglang_swa_pool": sglang_swa_pool(profile, defaults),
                "sglang_chunked_prefill_size": self._chunked_prefill_choice()}

    def _chunked_prefill_choice(self) -> tuple[int, str]:
        """SGLang's own --chunked-prefill-size for the GPU picked, and why."""
        if self.gpu in (KV_MEMORY, KV_BLOCKS):
            return (sglang_default_chunked_prefill(None), "assumed: the budget names no GPU, and "
                    "SGLang picks it by the GPU's memory (8,192 on an H100 or H200)")
        chunk = sglang_default_chunked_prefill(self.gpu_bytes)
        gpu = "this GPU" if self.gpu == CUSTOM_GPU else f"the {self.gpu}"
        return chunk, f"as SGLang 0.5.23 picks it by the GPU's memory on {gpu}"

    def after(self, old: AppState) -> AppState:
        """This view, come from ``old``: a chunk set for a model stays with models of the same
        own chunk; a model whose config says another starts at its own (a chunk is a property
        of the model's state kernel, not of the engine, unlike the kernel block size). Another
        model drops the bytes chart's focus (``bytes_focus``): the parts are the model's."""
        if self.bytes_focus != DEFAULT.bytes_focus and self.bytes_focus == old.bytes_focus and (
                self.model, self.raw, self.spec) != (old.model, old.raw, old.spec):
            # another model's parts: its bytes chart opens on its whole budget, not on a notice
            # that the part is gone (Layout's, for a link's part the model lacks)
            return replace(self, bytes_focus=DEFAULT.bytes_focus).after(old)
        if self.mamba_chunk_size is None or old.mamba_chunk_size != self.mamba_chunk_size:
            return self  # nothing set, or set just now
        try:
            ours, theirs = (s.engine_choices()["mamba_chunk_size"][0] for s in (self, old))
        except ValueError:  # a model in error: keep the setting until it plans again
            return self
        return self if ours == theirs else replace(self, mamba_chunk_size=None)

    def engine_options_text(self, names: tuple[str, ...] = ENGINE_FIELDS, *,
                            defaults: str = ANCHOR_OPTIONS) -> str:
        """``engine options: kernel block 64, mamba cache mode align``, or ``defaults``;
        ``names`` limits it to the options that act on what a page shows."""
        changed = self.changed_engine_options(names)
        if not changed:
            return defaults
        def shown(k: str, v: object) -> str:
            if isinstance(v, bool):
                return "on" if v else "off"
            if k == "sglang_chunked_prefill_size" and v == CHUNKED_PREFILL_OFF:
                return f"off ({CHUNKED_PREFILL_OFF})"  # as SGLang's command line writes it
            return f"{v:g}" if isinstance(v, float) else str(v)

        return "engine options: " + ", ".join(f"{ENGINE_LABELS[k]} {shown(k, v)}"
                                              for k, v in changed.items())

    @property
    def gpu_bytes(self) -> int:
        return GPU_PRESETS.get(self.gpu, self.gpu_memory)

    def budget(self) -> Budget:
        if self.gpu == KV_MEMORY:
            return given_budget(self.kv_memory, self.tp)
        if self.gpu == KV_BLOCKS:
            return blocks_budget(self.kv_blocks,
                                 vllm_block_bytes(self.profile(), self.strategy_options()),
                                 self.tp)
        return cache_budget(self.gpu_bytes, self.mem_fraction, self.weights, self.tp,
                            splits=self._splits_over())

    def plannable_tp(self) -> tuple[AppState, str]:
        """This view, or the same at TP 1 when its TP does not split the model, and why (empty
        when it plans as it is); the model's own ValueError when it plans at no TP."""
        try:
            self.profile()
            return self, ""
        except ValueError as at_tp:
            problem = str(at_tp)
        at_one = replace(self, tp=1)
        at_one.profile()
        return at_one, problem

    def _splits_over(self) -> Callable[[int], bool]:
        """Whether the model plans at a TP (a raw profile is per rank: any TP; a model in
        error: none), the spec built once for the search over TPs."""
        if self.model == app_model.CUSTOM:
            return lambda tp: True
        try:
            return app_model.spec_for(self.model, self.spec, 1).splits_over
        except ValueError:
            return lambda tp: False


# --------------------------------------------------------------------------------------------
# URL round trip

DEFAULT = AppState()
IGNORED_KEYS = frozenset({"embed", "embed_options"})  # streamlit's own


def _in_key_value(key: str, text: str, message: str, field: str) -> str:
    """A parser's refusal of a link's value in the form of a link's other notices, "key=value:
    what is wrong; fix" (``units.renamed``): ``layers='zz' has unknown ...``, its example as
    the link writes it (``e.g. layers=(3*linear,full)*12``)."""
    return renamed(message, field, text, f"{key}={quoted(text)}", example=f"{key}=")


def _layer_labels(key: str, text: str) -> tuple[str, ...]:
    """Layer labels from a link's pattern (``kv_shared=4*sliding,full``)."""
    try:
        return tuple(app_model.parse_layer_pattern(text))
    except ValueError as exc:
        raise ValueError(_in_key_value(key, text, str(exc), "layer pattern")) from None


def _state(key: str, text: str) -> tuple[tuple[str, int], ...]:
    """A link's state tensors (``state=conv=49152,ssm=2097152``)."""
    try:
        return app_model.parse_state_text(text)
    except ValueError as exc:
        raise ValueError(_in_key_value(key, text, str(exc), "state tensors")) from None


_NO_REAL_BOUND = 1 << 40  # an upper bound past any real size: not named when a value is too low
# typical values a refusal suggests for keys whose bounds are no size to use (``_int``):
# transformers' Mamba2 chunk_size, Mistral's sliding window, Llama 4's attention chunk
TYPICAL_CHUNK, TYPICAL_WINDOW, TYPICAL_ATTENTION_CHUNK = 256, 4096, 8192


def _int(lo: int, hi: int, example: int | None = None,
         fits: Callable[[int], bool] | None = None) -> Callable[[str, str], int]:
    """A whole number of ``lo`` to ``hi``. A refusal names the value as the link gives it
    (``sg_page='1_000_000_0'``, not regrouped as 10,000,000, which reads as another figure;
    400 nines by their start and length) and one the key takes, as the link writes it (out
    of range it said the range alone): where it is no number ``example``, by default the one
    nearest 12 (``units.whole_example``); where it is out of range the nearest in range
    (``req='0' must be positive: give req=1``, ``req='5000' is more than 4,096: give
    req=4096``, in the form of every bound's refusal, ``plan.bound_refusal``), or ``example``
    where the key is given one, a typical value that runs beside the other defaults, as
    frac's 0.9 (``block='0' must be positive: e.g. block=16``, where block=1 read as a size
    to use; SGLang's page and track interval: sg_track=1 splits no page of 512). ``fits``:
    what a fix must pass besides the range (``_nearest_fit``), as a link's tp is given the
    model's (``tp='2048' ...: give tp=16``)."""
    chosen = example is not None and fits is None
    example = whole_example(lo, hi) if example is None else example

    def parse(key: str, text: str) -> int:
        shown = f"{key}={quoted(text)}"
        fix = example if fits is None else _nearest_fit(text, example, lo, hi, fits)
        value = whole_number(text, shown, least=lo, most=hi, example=fix, key=key, fits=fits)
        # a range of 19 digits reads as noise: its lower bound alone
        takes = f"of {lo:,} or more" if hi >= _NO_REAL_BOUND else f"from {lo:,} to {hi:,}"
        if value is None:
            raise ValueError(f"{shown} is not a whole number: give one {takes}, e.g. "
                             f"{key}={example}")
        if lo <= value <= hi:
            return value
        near = example if chosen else _nearest(min(max(value, lo), hi), example, lo, hi,
                                               fits or (lambda n: True))
        fix = f"{'e.g.' if chosen else 'give'} {key}={near}"
        # the form of every bound's refusal (plan.bound_refusal), as the link's ctx reads: '0'
        # must be positive, '2T' is more than its bound (not "too large to be real": req's
        # 4,096 is the page's bound, not the engines')
        wrong = f"is more than {hi:,}" if value > hi else bound_refusal(value, lo, hi)
        raise ValueError(f"{shown} {wrong}: {fix}")

    return parse


def _nearest_fit(text: str, example: int, lo: int, hi: int, fits: Callable[[int], bool]) -> int:
    """The fix a refusal of ``text`` suggests where ``fits`` must pass too: the number it
    writes (``+80``, ``٨٠``: 80) where it fits, else the nearest that does (the lower of two
    as near), else ``example``: tp='+80' suggested tp=80, which Qwen3-Next's 16 key heads do
    not split over (a second notice followed), where tp=16 opens as asked."""
    digits = ascii_digits(text.strip()).lstrip("+-").replace("_", "")
    near = min(max(int(digits), lo), hi) if digits.isdigit() and len(digits) <= 9 else example
    return _nearest(near, example, lo, hi, fits)


def _nearest(near: int, example: int, lo: int, hi: int, fits: Callable[[int], bool]) -> int:
    """The number of ``lo`` to ``hi`` nearest ``near`` that ``fits`` (the lower of two as
    near), else ``example``."""
    return next((t for d in range(hi - lo + 1) for t in (near - d, near + d)
                 if lo <= t <= hi and fits(t)), example)


def _tp(fits: Callable[[int], bool] | None = None) -> Callable[[str, str], int]:
    """A link's tp; ``fits``: the TPs its model splits over, where the link's model is known
    (``decode_query``), so that a refusal suggests one of them."""
    return _int(1, MAX_TP, 2, fits)  # 2: every preset splits over it


def _fraction(key: str, text: str) -> float:
    """The memory fraction of ``MIN_MEM_FRACTION`` to 1 at 4 decimals, as the slider shows it
    (``budget.takes_mem_fraction``, the CLI's --memory-fraction's rule too).
    Each refusal ends with a value the key takes, as a whole number's does (``_int``): ``frac=
    0.0x`` said only "is not a number"."""
    shown, example = f"{key}={quoted(text)}", f"e.g. {key}={DEFAULT.mem_fraction:g}"
    value = decimal_number(text, shown, takes=takes_mem_fraction, key=key)
    if value is None or value != value:  # nan, which float() reads
        raise ValueError(f"{shown} is not a number: give one from {MIN_MEM_FRACTION} to 1, "
                         f"{example}")
    if not MIN_MEM_FRACTION <= value <= 1:
        raise ValueError(f"{shown} is outside {MIN_MEM_FRACTION}..1: {example}")
    if not takes_mem_fraction(value):  # the slider shows 4 decimals: more would count unseen
        raise ValueError(f"{key}={quoted(text)} {too_many_decimals(value)}")
    return value


def _dtype(key: str, text: str) -> str:
    """A dtype's canonical name from a name or an alias (``bf16``, ``fp8``)."""
    try:
        return canonical_dtype(text)
    except ValueError as exc:
        raise ValueError(f"{key}={quoted(text)}: {exc}") from None


def _sizes(hi: int, most: int, typical: int | None = None
           ) -> Callable[[str, str], tuple[int, ...]]:
    """Up to ``most`` whole numbers of 1..``hi``, comma-separated (``1024,1024``); a
    refusal's example is ``typical`` where given (``_int``'s)."""
    one = _int(1, hi) if typical is None else _int(1, hi, typical)

    def parse(key: str, text: str) -> tuple[int, ...]:
        parts = text.split(",")
        if len(parts) > most:
            # a bound of the field, not "too large to be real": said as _int's req='5000' is
            raise ValueError(f"{key}={quoted(text)} holds {len(parts)} numbers, which is more "
                             f"than {most}: {bound_fix(len(parts), 1, most)}")
        return tuple(one(key, part.strip()) for part in parts)

    return parse


def _choice(options: Callable[[], list[str]],
            named: Callable[[str], object] = lambda text: text, *,
            example: Callable[[], str] | None = None) -> Callable[[str, str], str]:
    """One of ``options``, after ``named`` reads an alias the option takes as one of them. A
    refusal lists them, in their order, and gives one as the link writes it (it listed them
    alone): the one ``text`` is a typo of (``mamba=Align``, ``planner=packd``), else
    ``example``'s (the default's), else the first."""
    def parse(key: str, text: str) -> str:
        names = options()
        if (value := named(text)) not in names:
            likeliest = _likeliest(text, names, example() if example else None)
            # named by its first 40 characters, past any option's: the list follows
            raise ValueError(f"{key}={quoted(text, 40)} is not one of {', '.join(names)}: give one "
                             f"of them, e.g. {key}={likeliest}")
        return str(value)

    return parse


def _likeliest(text: str, names: list[str], fallback: str | None = None) -> str:
    """The one of ``names`` that ``text`` most likely meant: the same case and spacing aside
    (``units.folded``, as ``budget.gpu_name`` reads a GPU preset), else the closest spelling
    (difflib's, at least 0.75 alike), else the first with a word that starts so (gpu=B200 is
    the B200 192GB, gpu=4090 the RTX 4090 24GB, where the first, H100 80GB, moved every
    figure to another GPU), else ``fallback`` where given, else the first."""
    said = folded(text)
    by_key = {folded(name): name for name in names}
    if (same := by_key.get(said)) is not None:
        return same
    close = difflib.get_close_matches(said, list(by_key), n=1, cutoff=0.75)
    holding = [name for key, name in by_key.items() if said and f" {said}" in f" {key}"]
    return by_key[close[0]] if close else (holding or [fallback or names[0]])[0]


def _ratio(bounds: tuple[Fraction, Fraction],
           example: str = RATIO_EXAMPLE) -> Callable[[str, str], float]:
    """A ratio option (StrategyOptions' own check, so the message gives the range and an
    example of its kind)."""

    def parse(key: str, text: str) -> float:
        return float(to_fraction(key, text, bounds=bounds, low_inclusive=True, example=example,
                                 key_value=True))

    return parse


def _tokens(maximum: int) -> Callable[[str, str], int]:
    """A token count, with the suffixes vLLM's command line reads (``ctx=256K``)."""
    return lambda key, text: parse_tokens(text, key, maximum=maximum, key_value=True)


def _chunked_prefill(key: str, text: str) -> int:
    """SGLang's --chunked-prefill-size in a link: tokens, or chunked prefill off (``off``, as
    the link writes it, or a whole number 0 or less, as SGLang reads it), as the CLI reads it
    (``sglang.parse_chunked_prefill``)."""
    return parse_chunked_prefill(text, key, maximum=MAX_CONTEXT, key_value=True)


def _write_chunked_prefill(value: object) -> str:
    return CHUNK_OFF_WORD if value == CHUNKED_PREFILL_OFF else str(value)


def _flag(key: str, text: str) -> bool:
    if text not in ("0", "1"):
        raise ValueError(f"{key}={quoted(text)} is not 0 or 1")
    return text == "1"


def _auto(parse: Callable[[str, str], object]) -> Callable[[str, str], object]:
    """A setting whose default (None) is "auto" in a link."""
    return lambda key, text: None if text in ("", "auto") else parse(key, text)


def _write_auto(write: Callable[[object], str]) -> Callable[[object], str]:
    return lambda v: "auto" if v is None else write(v)


def _names(options: tuple[str, ...]) -> Callable[[str, str], tuple[str, ...]]:
    """A comma-separated list of some of ``options``, read back in ``options``' order."""

    def parse(key: str, text: str) -> tuple[str, ...]:
        names = [t.strip() for t in text.split(",") if t.strip()]
        unknown = sorted(set(names) - set(options))
        if unknown or not names:
            which = (f": {listed(unknown, quoted)} {'is' if len(unknown) == 1 else 'are'} none "
                     "of them" if unknown and len(unknown) < len(names) else "")
            raise ValueError(f"{key}={quoted(text)} is not a list of {' / '.join(options)}"
                             f"{which}; give one or more, comma-separated, e.g. "
                             f"{key}={','.join(options)}")
        return gpu_settings.in_order(names, options)

    return parse


def _write_counts(values: object) -> str:
    return ",".join(map(str, values))  # type: ignore[call-overload]


def _counts(maximum: int) -> Callable[[str, str], tuple[int, ...]]:
    """A link's list of counts (``sweep_pages=1,4,16``), refused in the form of its other
    notices: ``sweep_pages='1,0': '0' is out of range; ...``, where the lab's field says
    ``pages per call: '0' is out of range`` (``gpu_settings.parse_counts``); its example as the
    link writes it."""
    def parse(key: str, text: str) -> tuple[int, ...]:
        try:
            return gpu_settings.parse_counts(text, key, maximum=maximum)
        except ValueError as exc:
            said = str(exc).replace("a list such as 1, 4, 16", f"a list such as {key}=1,4,16")
            rest = said.removeprefix(f"{key}: ").removeprefix(f"{key} ")
            one = f"{quoted(text.strip())} "  # the list's one entry: named once
            if rest.startswith(one):  # its fix then the whole value's: e.g. sweep_pages=24
                rest = rest[len(one):].replace("e.g. ", f"e.g. {key}=", 1)
            elif not rest.startswith("is "):  # ("is empty")
                rest = f": {rest}"
            raise ValueError(f"{key}={quoted(text)}{'' if rest[0] == ':' else ' '}{rest}"
                             ) from None

    return parse


def _focus(key: str, text: str) -> str:
    """A link's bytes chart view (``focus=linear_attention/ssm``), read as a name only: which
    parts there are is the model's, which Layout checks: here only a name's form (at most
    ``MAX_FOCUS_CHARS``, no control character nor blank at either end: DeepSeek-V3.2's
    ``full_attention/indexer keys`` has one inside), so junk is refused as any key's."""
    if not text or len(text) > MAX_FOCUS_CHARS or not text.isprintable() or text != text.strip():
        raise ValueError(f"{key}={quoted(text, 40)} is not a part's name: give a group or a "
                         f"group/component, as Layout's bytes chart names them, e.g. "
                         f"{key}=linear_attention/ssm")
    return text


MAX_FOCUS_CHARS = 100  # a focus id's longest: a group's id, "/" and a component's name

# Defaults that are no figure a link writes, in words (a bad link's notice names them).
_NONE_DEFAULTS = {"context": f"the model's max_model_len, else {DEFAULT_CONTEXT:,}",
                  "requests": f"{DEFAULT_REQUESTS} live requests, or as many as fit",
                  "hold_requests": "one request more than fit",
                  "gpu_arch": "no architecture said, the figures as on a Hopper",
                  "bytes_focus": "the whole budget, focus=budget"}

# URL key -> (AppState field, parser, writer). The model keys are handled apart.
_SETTINGS: dict[str, tuple[str, Callable[[str, str], object], Callable[[object], str]]] = {
    # sizes, kernels and chunks: a refusal's example a typical one (``_int``), not 1
    "block": ("block_size", _int(1, MAX_BLOCK_SIZE, ENGINE_DEFAULTS.block_size), str),
    "align": ("alignment", _auto(_int(1, MAX_BLOCK_SIZE, ENGINE_DEFAULTS.block_size)),
              _write_auto(str)),
    "planner": ("planner", _choice(lambda: list(PLANNERS)), str),
    "gpu": ("gpu", lambda key, text: _choice(lambda: [*GPU_PRESETS, *MEMORY_SOURCES])(
        key, gpu_name(text)), str),  # a preset in any case, as --gpu-memory reads it
    "gpu_mem": ("gpu_memory", lambda key, text: gpu_memory_size(text, key, key_value=True),
                format_size),
    "kv_mem": ("kv_memory", lambda key, text: kv_memory_size(text, key, key_value=True),
               format_size),
    "kv_blocks": ("kv_blocks", _int(MIN_VLLM_BLOCKS, MAX_VLLM_BLOCKS, DEFAULT.kv_blocks), str),
    # listed in GPU_ARCHITECTURES' order, as --gpu-arch and gpu_capability's refusals list them
    # and the select shows them; a refusal's example the default GPU's architecture
    "gpu_arch": ("gpu_arch", _choice(lambda: list(GPU_ARCHITECTURES), example=lambda: str(
        gpu_arch_of(compute_capability(DEFAULT_GPU)))), str),
    "frac": ("mem_fraction", _fraction, lambda v: f"{v:g}"),
    "weights": ("weights", lambda key, text: memory_size(text, key, weights=True, key_value=True),
                format_size),
    "tp": ("tp", _tp(), str),
    "ctx": ("context", _tokens(MAX_CONTEXT), str),
    "req": ("requests", _int(1, MAX_REQUESTS), str),
    "hold": ("hold_requests", _int(1, MAX_REQUESTS), str),
    "uniform": ("uniform_rows", _flag, lambda v: "1" if v else "0"),
    "snap": ("map_snapshots", _flag, lambda v: "1" if v else "0"),
    "focus": ("bytes_focus", _focus, str),
    "kernel": ("kernel_block_size", _auto(_int(1, MAX_BLOCK_SIZE, ENGINE_DEFAULTS.block_size)),
               _write_auto(str)),
    "mamba": ("mamba_cache_mode", _choice(lambda: list(MAMBA_CACHE_MODES)), str),
    "spec_tokens": ("speculative_tokens", _int(0, MAX_SPECULATIVE_TOKENS), str),
    "ckpt": ("prefill_checkpoint_blocks", _int(0, MAX_CHECKPOINT_BLOCKS), str),
    "chunk": ("mamba_chunk_size", _auto(_int(1, MAX_CHUNK_SIZE, TYPICAL_CHUNK)),
              _write_auto(str)),
    "v_hybrid": ("vllm_hybrid_manager", _flag, lambda v: "1" if v else "0"),
    "v_async": ("vllm_async_scheduling", _flag, lambda v: "1" if v else "0"),
    "v_ssm": ("vllm_ssm_dtype", _auto(_choice(lambda: list(SGLANG_SSM_DTYPES))),
              _write_auto(str)),
    "sg_ratio": ("mamba_full_memory_ratio", _ratio(RATIO_RANGE), repr),
    "sg_swa": ("swa_full_tokens_ratio", _ratio(SWA_RATIO_RANGE), repr),
    "sg_slots": ("sglang_slots_per_request", _auto(_int(1, MAX_SLOTS_PER_REQUEST)),
                 _write_auto(str)),
    "sg_maxrun": ("sglang_max_running_requests", _auto(_int(1, MAX_RUNNING_REQUESTS)),
                  _write_auto(str)),
    "sg_mamba_size": ("sglang_max_mamba_cache_size", _auto(_int(1, MAX_MAMBA_CACHE_SIZE)),
                      _write_auto(str)),
    "sg_overlap": ("sglang_overlap_schedule", _flag, lambda v: "1" if v else "0"),
    "sg_noradix": ("sglang_disable_radix_cache", _flag, lambda v: "1" if v else "0"),
    "sg_dp": ("sglang_attn_dp_size", _int(1, MAX_ATTN_DP_SIZE), str),
    # examples SGLang's own defaults, pages that divide any track interval and the reverse
    "sg_page": ("sglang_page_size", _int(1, MAX_BLOCK_SIZE, DEFAULT.sglang_page_size), str),
    "sg_track": ("sglang_mamba_track_interval",
                 _int(1, MAX_TOKENS, DEFAULT.sglang_mamba_track_interval), str),
    "sg_strategy": ("sglang_mamba_radix_cache_strategy",
                    _choice(lambda: list(SGLANG_RADIX_CACHE_STRATEGIES)), str),
    # SGLang's bf16 read as bfloat16, as the CLI and StrategyOptions read it
    "sg_kvdtype": ("sglang_kv_cache_dtype", _choice(lambda: list(SGLANG_KV_CACHE_DTYPES),
                                                    named=sglang_kv_cache_dtype_named), str),
    "sg_ssm": ("sglang_ssm_dtype", _auto(_choice(lambda: list(SGLANG_SSM_DTYPES))),
               _write_auto(str)),
    "sg_swa_pool": ("sglang_swa_pool", _auto(_flag), _write_auto(lambda v: "1" if v else "0")),
    "sg_chunk": ("sglang_chunked_prefill_size", _auto(_chunked_prefill),
                 _write_auto(_write_chunked_prefill)),
    "mbt": ("max_batched_tokens", _tokens(MAX_CONTEXT), str),
    "lcm_pad": ("lcm_padding_bound", _ratio(PADDING_BOUND_RANGE, PADDING_BOUND_EXAMPLE),
                repr),
    "b_layout": ("budget_strategy", _auto(_choice(lambda: list(STRATEGIES))), _write_auto(str)),
    "device": ("lab_device", _auto(gpu_settings.check_device_name), _write_auto(str)),
    "kernels": ("lab_kernels", _auto(_names(gpu_settings.KERNELS)), _write_auto(",".join)),
    "layouts": ("lab_layouts", _names(gpu_settings.POOL_LAYOUTS), ",".join),
    "rounds": ("lab_rounds", _auto(_int(1, gpu_settings.MAX_REPEATS)), _write_auto(str)),
    "max_blocks": ("lab_max_blocks", lambda key, text: gpu_settings.check_max_blocks(
        key, _int(0, gpu_settings.MAX_POOL_BLOCKS, fits=lambda n: n != 1)(key, text),
        as_typed=text), str),  # (a fix of 1, which it refuses, is never suggested)
    "pages": ("lab_pages", _int(0, gpu_settings.MAX_POOL_BLOCKS), str),
    "sweep": ("lab_sweep", _choice(lambda: list(gpu_settings.SWEEPS)), str),
    "sweep_pages": ("lab_sweep_pages", _auto(_counts(gpu_settings.MAX_POOL_BLOCKS)),
                    _write_auto(_write_counts)),
    "sweep_blocks": ("lab_sweep_blocks", _auto(_counts(MAX_BLOCK_SIZE)),
                     _write_auto(_write_counts)),
}
# The budget keys only one memory source reads, by the source: a link writes one only beside
# its gpu, and one given without a gpu picks its source (``_memory_source``): kv_mem=44.59GiB
# pasted from vLLM's log opened the H100's budget, its figures another budget's, in silence.
_SOURCE_KEYS = {"gpu_mem": CUSTOM_GPU, "kv_mem": KV_MEMORY, "kv_blocks": KV_BLOCKS}


def _architectures(key: str, text: str) -> tuple[str, ...]:
    """A link's architectures, comma-separated, as a profile takes them
    (``profile.architectures_problem``: class names, a few at most; the link took any text)."""
    names = tuple(a.strip() for a in text.split(",") if a.strip())
    if why := architectures_problem(names):
        raise ValueError(f"{key}={quoted(text)}: {why}: give the config.json's architectures, "
                         f"comma-separated, e.g. {key}=Gemma3ForConditionalGeneration")
    return names


# the GDN (KDA) layers' key head dims: a model's share one, so a few are room enough; 128 is
# the one vLLM's FlashInfer and FlashKDA prefill takes
_head_dims = _sizes(MAX_DIM, most=4, typical=128)

# URL key -> (RawModel field, parser, writer): the fields a raw model carries as they are
# (profile.CARRIED_FIELDS), each written only when set.
_CARRIED_KEYS: dict[str, tuple[str, Callable[[str, str], object], Callable[[object], str]]] = {
    "window": ("sliding_window", _int(1, MAX_WINDOW, TYPICAL_WINDOW), str),
    "model_kernel": ("kernel_block_size", _int(1, MAX_KERNEL_BLOCK_SIZE,
                                               ENGINE_DEFAULTS.block_size), str),
    "arch": ("architectures", _architectures, ",".join),
    "ssm_el": ("ssm_element_bytes", _int(1, 8), str),
    "cfg_ssm": ("config_mamba_ssm_dtype", _choice(lambda: list(SGLANG_SSM_DTYPES)), str),
    "cfg_ssm_cache": ("config_mamba_ssm_cache_dtype", _choice(lambda: list(SGLANG_SSM_DTYPES)),
                      str),
    "model_chunk": ("mamba_chunk_size", _int(1, MAX_CHUNK_SIZE, TYPICAL_CHUNK), str),
    "conv_rows": ("conv_rows", _int(1, MAX_CONV_KERNEL - 1), str),
    "indexer": ("indexer_bytes_per_slot", _int(1, MAX_BYTES), str),
    "attn_chunk": ("attention_chunk_size", _int(1, MAX_WINDOW, TYPICAL_ATTENTION_CHUNK), str),
    "kv_dtype": ("kv_dtype", _dtype, str),
    "kv_split": ("kv_tensor_bytes", _sizes(MAX_BYTES, most=2), lambda v: ",".join(map(str, v))),
    "conv_el": ("conv_element_bytes", _int(1, 8), str),
    "swa_kv": ("sliding_kv_bytes_per_slot", _int(1, MAX_BYTES), str),
    "kv_shared": ("kv_shared_layer_types", _layer_labels,
                  lambda labels: app_model.format_layer_pattern(labels, short=True)),
    "swa_split": ("sliding_kv_tensor_bytes", _sizes(MAX_BYTES, most=2),
                  lambda v: ",".join(map(str, v))),
    "ssm_dtype": ("ssm_dtype", _choice(lambda: list(STATE_DTYPES)), str),
    "sink": ("learnable_sink", _flag, lambda v: "1"),  # written only when true
    "gdn_dims": ("gdn_key_head_dims", lambda key, text: frozenset(_head_dims(key, text)),
                 lambda v: ",".join(map(str, sorted(v)))),
}
_MODEL_KEYS = ("model", "layers", "kv", "state", "spec", *_CARRIED_KEYS)
# the older link's key for a Blackwell told (sg_bw=1), read as gpu_arch=blackwell; none writes it
_OLD_BLACKWELL_KEY = "sg_bw"


def encode_query(state: AppState) -> dict[str, str]:
    """Query parameters for ``state``: only what differs from the defaults, in a stable order."""
    out: dict[str, str] = {}
    if state.model != DEFAULT.model or state.raw is not None:
        out["model"] = state.model
    if state.model == app_model.CUSTOM_SPEC and state.spec:
        out["spec"] = app_model.pack_spec(state.spec)
    if state.model == app_model.CUSTOM and state.raw is not None:
        out["layers"] = state.raw.layers
        out["kv"] = str(state.raw.kv_bytes_per_slot)
        if state.raw.state:
            out["state"] = app_model.format_state_text(state.raw.state)
        for key, (name, _parse, write) in _CARRIED_KEYS.items():
            if not is_unset(value := getattr(state.raw, name)):
                out[key] = write(value)
    for key, (name, _parse, write) in _SETTINGS.items():
        value = getattr(state, name)
        # gpu_arch beside a GPU preset is not carried: the preset decides it; nor a budget
        # key beside another memory source (it would pick its own where no gpu is written)
        if value != getattr(DEFAULT, name) and not (
                name == "gpu_arch" and state.gpu in GPU_PRESETS) and _SOURCE_KEYS.get(
                key, state.gpu) == state.gpu:
            out[key] = write(value)
    return out


def _as_typed(text: str) -> str:
    """A link's value, or a key the app does not know, as a notice shows it: one rule, short
    or long (a short one was shown bare, a long one quoted): quoted as repr writes it, an odd
    character escaped (a line break, an ESC), and past 40 characters its start and length."""
    return quoted(text, 40)


def _key_shown(key: str) -> str:
    """A link's key as a notice shows it: the app's own name bare, as the other notices name
    it (tp, block); any other as typed (``_as_typed``)."""
    return key if key in _SETTINGS or key in _MODEL_KEYS else _as_typed(key)


def _single(value: str | list[str]) -> str:
    return value[-1] if isinstance(value, list) else str(value)


def decode_query(params: Mapping[str, str | list[str]]) -> tuple[AppState, list[str]]:
    """The state a URL describes, and one notice per value that was ignored.

    Never raises: every bad value falls back to its default, so any link opens the app.
    """
    q = {k: _single(v) for k, v in params.items() if k not in IGNORED_KEYS}
    known = {*_SETTINGS, *_MODEL_KEYS, _OLD_BLACKWELL_KEY}  # an unknown key repeated: ignored
    notices: list[str] = [
        f"The link gives {_key_shown(k)} {len(v):,} times "
        f"({listed([str(x) for x in v], _as_typed)}): using the last, "
        f"{_key_shown(k)}={_as_typed(str(v[-1]))}." for k, v in params.items()
        if k in known and isinstance(v, list) and len(set(v)) > 1]
    changes: dict[str, object] = {}
    model, raw, spec, model_notice = _decode_model(q)
    for key, (name, parse, write) in _SETTINGS.items():
        if key not in q:
            continue
        if key == "tp":  # its fix one the link's model splits over (its spec built only here)
            parse = _tp(AppState(model=model, raw=raw, spec=spec)._splits_over())
        try:
            changes[name] = parse(key, q[key])
        except ValueError as exc:
            # The default as a link would write it: 80GB, auto, 0.9, never a Python repr; a
            # default that is no figure (the context's, the live requests') in words
            default = _NONE_DEFAULTS.get(name) or f"{key}={write(getattr(DEFAULT, name))}"
            notices.append(f"{exc}; using the default ({default}).")
    if model_notice:
        notices.append(model_notice)
    arch_key = "gpu_arch" if "gpu_arch" in q else _OLD_BLACKWELL_KEY
    if arch_key == _OLD_BLACKWELL_KEY and arch_key in q:
        try:
            changes["gpu_arch"] = "blackwell" if _flag(arch_key, q[arch_key]) else ""
        except ValueError as exc:
            notices.append(f"{exc}; using the default ({_OLD_BLACKWELL_KEY}=0).")
    notices.extend(_memory_source(changes, q))
    if arch_notice := _preset_arch(changes, arch_key):
        notices.append(arch_notice)
    state, notice = _plannable(replace(DEFAULT, model=model, raw=raw, spec=spec, **changes))
    if notice:
        notices.append(notice)
    unknown = sorted(set(q) - known)
    if unknown:
        notices.append(f"Ignored unknown link parameter{'s' if len(unknown) > 1 else ''}: "
                       f"{listed(unknown, _as_typed)}.")
    notices.extend(_unread_model_keys(q, state.model))
    return state, notices


def _memory_source(changes: dict[str, object], q: Mapping[str, str]) -> list[str]:
    """The memory source a link's budget keys pick (``_SOURCE_KEYS``): one given without a gpu
    key sets it into ``changes`` (kv_mem=44.59GiB: KV cache memory), and says so: a link the
    app wrote carries its gpu beside such a key, and older ones gave kv_mem beside the default
    gpu unwritten, which opened on the H100's budget. Those the budget does not
    read are dropped from it, each said as typed with the gpu that reads it: beside a gpu of
    another source (or one the link gets wrong), or two kinds with no gpu to choose."""
    given = [k for k in _SOURCE_KEYS if _SETTINGS[k][0] in changes]
    if "gpu" not in q and len(given) == 1:
        changes["gpu"] = _SOURCE_KEYS[given[0]]
        return [f"{given[0]} given without gpu: read as gpu={_SOURCE_KEYS[given[0]]} (add "
                f"gpu={DEFAULT.gpu} for the {DEFAULT.gpu}'s own budget)."]
    gpu = changes.get("gpu", DEFAULT.gpu)
    unread = [k for k in given if _SOURCE_KEYS[k] != gpu]
    for key in unread:  # ignored as the notice says: the sidebar's value stays the default
        del changes[_SETTINGS[key][0]]
    if unread and "gpu" not in q:  # two kinds of budget, and no gpu to choose between them
        return [f"Ignored {listed([f'{k}={_as_typed(q[k])}' for k in unread], str)}: each is "
                f"another kind of budget ({listed([f'gpu={_SOURCE_KEYS[k]}' for k in unread], str)}"
                f"), and the link gives no gpu to choose; using the default (gpu={DEFAULT.gpu}):"
                f" give the gpu whose budget the link means."]
    alone = ", or leave gpu out," if len(given) == 1 else ""  # (else keys of two sources)
    return [f"Ignored {k}={_as_typed(q[k])}: only gpu={_SOURCE_KEYS[k]} reads it, and the "
            f"budget here is gpu={gpu}; using that budget (give gpu={_SOURCE_KEYS[k]}{alone} "
            f"to use {k})." for k in unread]


def _preset_arch(changes: dict[str, object], key: str) -> str:
    """A link's architecture (``key``: gpu_arch, or the older sg_bw=1 for a Blackwell) beside a
    GPU preset, which sets it: dropped from ``changes`` (the preset's own, silently), and
    beside a preset of another a notice naming both."""
    gpu, arch = changes.get("gpu", DEFAULT.gpu), changes.get("gpu_arch")
    if not arch or (capability := compute_capability(gpu)) is None:
        return ""
    del changes["gpu_arch"]
    if GPU_ARCHITECTURES[arch] == capability:
        return ""
    typed = f"{key}={arch}" if key == "gpu_arch" else f"{key}=1"
    return (f"{typed} says the GPU is {gpu_arch_text(arch)}, but gpu={gpu} is "
            f"{gpu_arch_text(gpu_arch_of(capability))}; using the preset's (pick a preset of "
            f"that architecture, or a memory source: {listed(list(MEMORY_SOURCES), str)}).")


# the model keys only one kind of model reads, and the words that name it
_RAW_KEYS = ("layers", "kv", "state", *_CARRIED_KEYS)
_KEYS_READ_BY = ((_RAW_KEYS, "a model given as raw bytes", app_model.CUSTOM),
                 (("spec",), "an edited model", app_model.CUSTOM_SPEC))


def _unread_model_keys(q: Mapping[str, str], model: str) -> list[str]:
    """One notice per kind of model whose keys the link gives beside another model (a raw
    model's kv_dtype beside a preset, layers without model=custom): read as nothing, they
    must not pass in silence (``model``: the model the link opens)."""
    said = []
    for keys, what, reader in _KEYS_READ_BY:
        unread = sorted(k for k in keys if k in q and q.get("model") != reader)
        if unread:
            them = "them" if len(unread) > 1 else "it"
            said.append(f"Ignored link parameter{'s' if len(unread) > 1 else ''} "
                        f"{', '.join(unread)}: only {what} (model={reader}) reads {them}; "
                        f"the link's model is {model}.")
    return said


def _plannable(state: AppState) -> tuple[AppState, str]:
    """``state`` when its model plans at its TP, else at TP 1 (a TP the model's heads do not
    split over), else the default model (a spec that plans at no TP, e.g. attention kinds of
    different bytes per token); and the notice that says why, empty when nothing changed."""
    try:
        plannable, tp_problem = state.plannable_tp()
        return plannable, f"{tp_problem}; using TP 1." if tp_problem else ""
    except ValueError as at_tp1:
        model_problem = str(at_tp1)
    default = replace(state, model=DEFAULT.model, raw=None, spec=None)
    try:
        default.profile()
        return default, f"{model_problem}; using the default model ({DEFAULT.model})."
    except ValueError:
        return (replace(default, tp=1),
                f"{model_problem}; using the default model ({DEFAULT.model}) at TP 1.")


# The raw model's fields as a link names them: a profile's error names its fields, and its
# hints say "or None" where a link leaves the key out
_LINK_KEYS = {"layer_types": "layers", "kv_bytes_per_slot": "kv", "state_const_bytes": "state",
              **{name: key for key, (name, _parse, _write) in _CARRIED_KEYS.items()}}
_LINK_FIELD = re.compile(r"\b(" + "|".join(_LINK_KEYS) + r")\b")
_LINK_NONE = re.compile(r"\b(\w+) is None\b|\bor (\w+ )?None\b")
_LINK_KEY = "|".join(dict.fromkeys(_LINK_KEYS.values()))
_KEY_IS_NUMBER = re.compile(rf"\b({_LINK_KEY}) is (\d[\d,]*)(?![\d.])")
_KEY_NOT_SET = re.compile(rf"\b({_LINK_KEY}) is not set\b")
_RAW_LAYERS = re.compile(r"^the layers ('[^']*') have")


def in_link_keys(message: str) -> str:
    """A raw profile's error in a link's words: its fields by their keys (kv_bytes_per_slot
    -> kv, conv_rows stays), its "or None", "ssm_element_bytes is None" as a key left out of
    the link, and no hint for a profile file or the command line ("(sliding_window in the
    profile or config, --sliding-window on the command line)"); what the link gave, quoted,
    stays as given."""
    def none(m: re.Match) -> str:
        if m[1]:
            return f"the link gives no {m[1]}"
        return f"or leave {m[2].strip()} out" if m[2] else "or leave it out"

    # RawModel's own words of the pattern it was given, as a link gives it (layers='4*linear')
    message = _RAW_LAYERS.sub(r"layers=\1 has", message).replace("e.g. conv=", "e.g. state=conv=")
    parts = app_model.QUOTED.split(app_model.COMMAND_LINE_HINT.sub("", message))
    said = "".join(part if i % 2 else _LINK_FIELD.sub(
        lambda m: _LINK_KEYS[m[1]], _LINK_NONE.sub(none, part)) for i, part in enumerate(parts))
    # a key's value as the link writes it (kv=0, window=4096), one not given as the link has it
    said = _KEY_IS_NUMBER.sub(lambda m: f"{m[1]}={m[2].replace(',', '')}", said)
    return _KEY_NOT_SET.sub(r"the link gives no \1", said)


def _decode_model(q: Mapping[str, str]) -> tuple[str, app_model.RawModel | None, str | None, str]:
    name = q.get("model", DEFAULT.model)
    fallback = f"using the default model ({DEFAULT.model})."
    if name == app_model.CUSTOM_SPEC:
        try:
            spec = app_model.unpack_spec(q.get("spec", ""))
            return name, None, spec, _spec_tp_notice(spec, q.get("tp"))
        except ValueError as exc:
            notice = f"The model in the link is not valid ({exc}); {fallback}"
            return DEFAULT.model, None, None, notice
    if name != app_model.CUSTOM:
        if (preset := presets.preset_name(name)) is not None:  # any case, or the file's stem
            return preset, None, None, ""
        return DEFAULT.model, None, None, (
            f"model={quoted(name)} is not a known model (one of "
            f"{', '.join(app_model.model_names())}); {fallback}")
    try:
        if "layers" not in q:
            raise ValueError("the link gives no layers: give the cache layers' pattern, e.g. "
                             "layers=(3*linear,full)*12")
        _layer_labels("layers", q["layers"])  # refused in the link's words, not the profile's
        kv = parse_size(q.get("kv", "0"), field="kv", whole=True, key_value=True)
        carried = {name: parse(key, q[key]) for key, (name, parse, _write)
                   in _CARRIED_KEYS.items() if q.get(key, "") != ""}
        notice = _drop_bad_splits(carried, kv)  # a kv edited in the link: the model stays
        raw = app_model.RawModel(
            layers=q["layers"], kv_bytes_per_slot=kv, state=_state("state", q.get("state", "")),
            **carried)
        try:
            raw.profile()  # validate now, so a bad link never reaches a page
        except ValueError as exc:  # the profile's fields named by the link's keys
            raise ValueError(in_link_keys(str(exc))) from None
    except ValueError as exc:
        return (DEFAULT.model, None, None,
                f"The custom model in the link is not valid ({exc}); {fallback}")
    return app_model.CUSTOM, raw, None, notice


def _spec_tp_notice(spec_json: str, link_tp: str | None) -> str:
    """Why a tp a link's spec holds is not read (``app_model.spec_from_json``: a link gives its
    TP as its tp parameter, and the app writes none into a spec): that the link gives one
    (``link_tp``, read and checked as any link's tp), else the tp parameter to give instead
    or, where that TP does not split the model, why in plain words (not in the JSON's field
    names: the link's user never wrote the JSON); "" where the spec holds none (or 1)."""
    tp = app_model.json_tp(spec_json)
    if tp == 1 and type(tp) is int:
        return ""
    lead = (f"The link's spec holds tp {quoted_value(tp)}, which is not read there: a link "
            "gives the TP as its tp parameter")
    if link_tp is not None:
        return f"{lead}, as this one does."
    if type(tp) is not int or not 1 <= tp <= MAX_TP:
        return f"{lead}."
    refusal = app_model.spec_from_json(spec_json).tp_refusal(tp)
    if refusal is None:
        return f"{lead} (tp={tp})."
    return f"{lead}, and TP {tp} does not split the model: {words_for(refusal, PLAIN)}."


def _drop_bad_splits(carried: dict[str, object], kv: int) -> str:
    """Drops from a link's ``carried`` fields a K / V split that cannot stand beside its bytes
    (it does not add up to them, or no KV dtype comes with it): the full layers' with the KV
    dtype (and the sliding layers' split, which needs it), the sliding layers' alone. The model
    stays, its bytes as given; returns why, "" when nothing was dropped."""
    said = []
    for key, field, total_key, total in (
            ("kv_split", "kv_tensor_bytes", "kv", kv),
            ("swa_split", "sliding_kv_tensor_bytes", "swa_kv",
             carried.get("sliding_kv_bytes_per_slot"))):
        split = carried.get(field)
        if not (why := split_problem(split or (), total_key, total,
                                     carried.get("kv_dtype"))):
            continue
        text = f"{key}={','.join(map(str, split))} {why}"
        del carried[field]
        if field == "kv_tensor_bytes":
            carried.pop("kv_dtype", None)
            both = carried.pop("sliding_kv_tensor_bytes", None) is not None  # it needs the dtype
            said.append(f"{text}: the model is kept without its K / V split"
                        + (" (and its sliding layers')" if both else "")
                        + " and KV dtype, which only SGLang's KV log lines need.")
        else:
            said.append(f"{text}: the model is kept without its sliding layers' K / V split, "
                        "which only SGLang's SWA KV log line needs.")
    return " ".join(said)

