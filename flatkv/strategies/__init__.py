"""Engine comparison strategies: one model, one budget, every layout, comparable results.

    flat           our packed slabs (reference ``plan_tensors``, equalized P)
    per-component  one tensor per component (reference ``plan_component_tensors``)
    vllm           vLLM v1's hybrid KV cache manager
    sglang         SGLang's separate state and KV pools
    aliased        slab aliasing for equal history groups (gpt-oss)
    lcm            two-level parent / child pages

``run_strategy`` answers one; ``compare`` answers all, in ``STRATEGIES`` order. Results share one
shape (``StrategyResult``), byte accounting and ownership convention (``base``).
"""

from __future__ import annotations

from collections.abc import Callable

from flatkv.plan import check_int
from flatkv.profile import CacheProfile
from flatkv.strategies.aliased import aliasing_blocker, run_aliased
from flatkv.strategies.base import CATEGORIES, StrategyOptions, StrategyResult
from flatkv.strategies.flat import run_flat, run_per_component
from flatkv.strategies.lcm import run_lcm
from flatkv.strategies.sglang import run_sglang, sglang_blocker
from flatkv.strategies.vllm import run_vllm, vllm_blocker
from flatkv.strategies.vllm_releases import last_served_text
from flatkv.units import MAX_BYTES, MAX_TOKENS

Runner = Callable[..., StrategyResult]

_RUNNERS: dict[str, Runner] = {
    "flat": run_flat,
    "per-component": run_per_component,
    "vllm": run_vllm,
    "sglang": run_sglang,
    "aliased": run_aliased,
    "lcm": run_lcm,
}

STRATEGIES: tuple[str, ...] = tuple(_RUNNERS)


def _needs_attention(profile: CacheProfile) -> str:
    return "" if profile.has_attention else "the model has no attention layer"


# Why a layout serves no model of a profile, whatever its options and budget ("" when it may):
# the app offers such a layout none of its options. Each runner refuses the same models.
_MODEL_BLOCKERS: dict[str, Callable[[CacheProfile], str]] = {
    "flat": _needs_attention,
    "lcm": _needs_attention,
    "aliased": aliasing_blocker,
    "sglang": sglang_blocker,
    "vllm": vllm_blocker,
}


def model_blocker(strategy: str, profile: CacheProfile) -> str:
    """Why ``strategy`` serves no model of ``profile`` under any options ("" when it may)."""
    blocker = _MODEL_BLOCKERS.get(strategy)
    return blocker(profile) if blocker else ""


# What each engine's log calls the figure in ``StrategyResult.logged_tokens``.
LOGGED_AS: dict[str, str] = {
    "vllm": 'vLLM\'s "GPU KV cache size"',
    "sglang": "SGLang's max_total_num_tokens",
}


def logged_as(strategy: str) -> str:
    """What ``strategy``'s engine log calls its ``logged_tokens`` (a strategy not listed in
    LOGGED_AS: "<name>'s log", never a KeyError)."""
    return LOGGED_AS.get(strategy, f"{strategy}'s log")


# Its column in the app's tables and the CLI's: beside the capacity every layout counts alike,
# the figure a reviewer checks against a log.
LOGGED_COLUMN = "engine log (tokens)"
# vLLM 0.19 and earlier printed another "GPU KV cache size" (num_blocks // groups x P): its column
OLDER_LOGGED_COLUMN = "older vLLM log (tokens)"
# The words for a figure where a person reads it: the app's tables and charts and the CLI's text
# (the JSON keeps the code's keys, max_concurrency and the breakdown's kv_history, which tests
# and users parse). The CLI's text said "max concurrency" and kv_history where the app said
# "concurrency" and "kv history" for the same figures.
CONCURRENCY_COLUMN = "concurrency"
# History and state by use: the bytes of the pages each group owns, at the requests the layout
# holds. "in use" tells them from Layout's bytes by tensor ("state rows": a group's rows in every
# block, whichever group owns it), where Qwen3-Next's "state" read 53.55 GiB on Layout and
# 113.06 MiB on Compare, two bytes under one word.
CATEGORY_LABELS: dict[str, str] = {
    **{c: c.replace("_", " ") for c in CATEGORIES},
    "kv_history": "kv history in use", "state": "state in use"}

__all__ = [
    "CATEGORIES",
    "CATEGORY_LABELS",
    "CONCURRENCY_COLUMN",
    "LOGGED_AS",
    "OLDER_LOGGED_COLUMN",
    "LOGGED_COLUMN",
    "logged_as",
    "model_blocker",
    "STRATEGIES",
    "StrategyOptions",
    "StrategyResult",
    "compare",
    "last_served_text",
    "run_strategy",
]


def _check_inputs(profile, budget_bytes, context_tokens, options) -> None:
    if not isinstance(profile, CacheProfile):
        raise ValueError(
            f"profile must be a CacheProfile, got {type(profile).__name__}: build one with "
            "flatkv.profile.CacheProfile(...) or a model spec's .profile()"
        )
    check_int("budget_bytes", budget_bytes, minimum=1, maximum=MAX_BYTES,
              hint="the cache budget in bytes")
    if context_tokens is not None:
        check_int("context_tokens", context_tokens, minimum=1, maximum=MAX_TOKENS,
                  hint="the context length in tokens, or None")
    if not isinstance(options, StrategyOptions):
        raise ValueError(
            f"options must be a StrategyOptions, got {type(options).__name__}"
        )


def run_strategy(
    name: str,
    profile: CacheProfile,
    *,
    budget_bytes: int,
    context_tokens: int | None = None,
    options: StrategyOptions | None = None,
) -> StrategyResult:
    """One strategy's result for ``profile`` and ``budget_bytes`` (max_concurrency at
    ``context_tokens`` when given). A strategy that does not apply returns ``applies=False``
    and says why; bad input raises ValueError."""
    options = StrategyOptions() if options is None else options
    if not isinstance(name, str) or name not in _RUNNERS:
        raise ValueError(f"strategy is {name!r}: use one of {', '.join(STRATEGIES)}")
    _check_inputs(profile, budget_bytes, context_tokens, options)
    return _RUNNERS[name](
        profile, budget_bytes=budget_bytes, context_tokens=context_tokens, options=options
    )


def compare(
    profile: CacheProfile,
    *,
    budget_bytes: int,
    context_tokens: int | None = None,
    options: StrategyOptions | None = None,
) -> list[StrategyResult]:
    """Every strategy's result, in ``STRATEGIES`` order."""
    return [
        run_strategy(name, profile, budget_bytes=budget_bytes, context_tokens=context_tokens,
                     options=options)
        for name in STRATEGIES
    ]
