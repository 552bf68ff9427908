"""The current model's figures, cached: pure functions of hashable arguments, and the model
helpers the pages share (an MTP layer added, the spec used, a draft waiting for a TP)."""

from __future__ import annotations

from dataclasses import astuple, dataclass, fields
from typing import Any

import streamlit as st

from app_pages._session import PageDone, state, update
from flatkv import app_data, app_model, sizing, strategy_notes
from flatkv.analysis import PLANNER_STRATEGY, PlanAnalysis, analyze
from flatkv.app_model import CUSTOM_SPEC
from flatkv.app_state import KV_BLOCKS, AppState
from flatkv.models import MTP_SUFFIX, ModelSpec, with_mtp_layer
from flatkv.plan import BudgetTooSmall
from flatkv.profile import CacheProfile
from flatkv.strategies import STRATEGIES, StrategyOptions, StrategyResult, run_strategy
from flatkv.strategies.vllm_log import with_available_elided
from flatkv.units import MAX_TOKENS, exact_bytes
from flatkv.units import markdown_literal as literal
from flatkv.workload import longest_context

# --------------------------------------------------------------------------------------------
# Cached computations: pure functions of hashable arguments.


def profile_key(p: CacheProfile) -> tuple:
    """Every field of the profile (a new field cannot be left out of the cache key)."""
    return tuple(tuple(v.items()) if isinstance(v, dict) else v
                 for v in (getattr(p, f.name) for f in fields(p)))


@st.cache_data(max_entries=128, show_spinner=False, hash_funcs={CacheProfile: profile_key})
def cached_analysis(profile: CacheProfile, block_size: int, alignment: int, budget: int,
                    planner: str) -> PlanAnalysis:
    return analyze(profile.components(), block_size=block_size, alignment=alignment,
                   budget_bytes=budget, planner=planner)


def options_key(o: StrategyOptions) -> tuple:
    """Every knob of the options, so a cache keys on each one."""
    return astuple(o)


@st.cache_data(max_entries=128, show_spinner=False,
               hash_funcs={CacheProfile: profile_key, StrategyOptions: options_key})
def cached_strategies(profile: CacheProfile, names: tuple[str, ...], budget: int, context: int,
                      options: StrategyOptions) -> list[StrategyResult]:
    return [run_strategy(n, profile, budget_bytes=budget, context_tokens=context,
                         options=options) for n in names]


@st.cache_data(max_entries=64, show_spinner=False,
               hash_funcs={CacheProfile: profile_key, StrategyOptions: options_key})
def cached_curves(profile: CacheProfile, strategy: str, budget: int, context: int,
                  options: StrategyOptions, reach: int | None) -> app_data.Curves:
    """The Budget page's curves: a run of every layout point each, so worth keeping."""
    return app_data.curves(profile, strategy, budget, context, options, reach)


@st.cache_data(max_entries=64, show_spinner=False,
               hash_funcs={CacheProfile: profile_key, StrategyOptions: options_key})
def cached_least_budget(profile: CacheProfile, strategy: str, requests: int, context: int,
                        options: StrategyOptions) -> int | None:
    """The Budget page's least budget for its requests to hold: a bisection of many runs."""
    return sizing.least_budget_for_requests(strategy, profile, requests=requests,
                                            context_tokens=context, options=options)


@st.cache_data(max_entries=64, show_spinner=False,
               hash_funcs={CacheProfile: profile_key, StrategyOptions: options_key})
def cached_longest_context(profile: CacheProfile, strategy: str, budget: int, below: int,
                           options: StrategyOptions) -> int:
    """The Budget page's longest context that holds one request
    (``sizing.longest_context_held``): a bisection of many runs, one run for SGLang on state
    layers alone (``sizing._layerless_longest``), cached either way."""
    return sizing.longest_context_held(strategy, profile, budget_bytes=budget, below=below,
                                       options=options)


def longest_by_concurrency(s: AppState, r: StrategyResult, context: int) -> int | None:
    """Budget's longest context for ``r``'s layout at ``context`` (``LONGEST_BY["concurrency"]``):
    the context itself where its concurrency reaches one request, else the longest under it
    that does (0 if none); None where Budget draws another layout (its "Whose layout" set to
    an engine's: vLLM's own 1,516,752 tokens for Llama-4-Scout, not our 375,088)."""
    if s.budget_strategy not in (None, r.strategy):
        return None
    if sizing.holds_requests(r, 1):
        return context
    return cached_longest_context(s.profile(), r.strategy, s.budget().cache_bytes, context,
                                  s.strategy_options())


def longest_by_map(s: AppState, r: StrategyResult) -> int | None:
    """Layout's longest context for one request (``LONGEST_BY["map"]``) in ``r``'s pool, where
    ``r`` is the planner's layout, the one Layout draws; None for an engine's layout, a model
    Layout draws no map of (state alone), or a result without a pool."""
    if (r.strategy != PLANNER_STRATEGY[s.planner] or r.pool is None
            or not s.profile().has_attention):
        return None
    return longest_context(r, limit=MAX_TOKENS, **s.map_workload())


@st.cache_data(max_entries=64, show_spinner=False,
               hash_funcs={CacheProfile: profile_key, StrategyOptions: options_key})
def cached_context_curves(profile: CacheProfile, budget: int, contexts: tuple[int, ...],
                          options: StrategyOptions) -> sizing.ContextCurves:
    """Compare's concurrency over context lengths: a run of every layout a length."""
    return sizing.context_curves(profile, budget, contexts, options, STRATEGIES)


def current_strategies(s: AppState | None = None, names: tuple[str, ...] = STRATEGIES
                       ) -> list[StrategyResult]:
    """The engine strategies for the current view (all of them by default)."""
    s = s or state()
    results = cached_strategies(s.profile(), names, s.budget().cache_bytes,
                                s.context_length(), s.strategy_options())
    if s.gpu == KV_BLOCKS:  # vLLM's Available line is its own estimate then
        return [with_available_elided(r) for r in results]
    return results


def plan_caption(a: PlanAnalysis) -> str:
    """The line under a plan page's title: model, planner, budget and where the budget comes
    from (a screenshot then carries its assumptions)."""
    s = state()
    return (f"{literal(s.profile().name)} · {strategy_notes.PLANNER_TITLES[a.planner]} · budget "
            f"{exact_bytes(a.totals.budget_bytes)} per rank ({s.budget().derivation})")


def use_spec(spec: ModelSpec, *, drafted: bool = False) -> None:
    """Make ``spec`` the current model, an edited one (the Model page shows it so)."""
    update(**_spec_fields(spec, drafted=drafted))


def _spec_fields(spec: ModelSpec, *, drafted: bool) -> dict[str, Any]:
    """The view's fields that make ``spec`` the current model. ``drafted``: the Model page's
    draft built it, so the editor keeps that draft (``spec.filled``); any other (a config
    loaded, an MTP layer added) fills the editor afresh from it."""
    text = app_model.spec_to_json(spec)
    if drafted:
        st.session_state["spec.filled"] = (CUSTOM_SPEC, text)
    return {"model": CUSTOM_SPEC, "spec": text, "raw": None}


# The Model page's draft (Edit by hand) that the sidebar's TP alone refused (a TP its heads do
# not split over), a RefusedDraft: the TP field tries it again as it changes
# (take_refused_draft), so TP 3's error does not outlive a move to TP 2
TP_REFUSED = "spec.tp_refused"


@dataclass(frozen=True)
class RefusedDraft:
    """A draft to try at the next TP, and the model it was to replace: another model since (a
    preset picked, a file loaded) leaves the draft stale, as the editor then refills."""

    spec: ModelSpec  # the draft, a model at TP 1
    over: tuple[str, str | None]  # the view's (model, spec) it was to replace, kept meanwhile


def refuse_draft(spec: ModelSpec) -> None:
    """Keep ``spec``, refused at the sidebar's TP alone, to try at the next TP."""
    s = state()
    st.session_state[TP_REFUSED] = RefusedDraft(spec, (s.model, s.spec))


def tp_refusal(exc: ValueError, draft: ModelSpec | None) -> str:
    """The error of a model that plans at TP 1 but not at the sidebar's TP: a ``draft``'s in
    the hand editor's words (``gdn's k heads``, not the model file's ``gdn.k_heads``), a
    loaded one's (None) in its source's own (a config.json's keys, a model file's fields:
    ``tp_split.words_for``)."""
    said = str(exc) if draft is None else app_model.editor_words(str(exc), draft.kinds)
    return f"The sidebar's TP does not split it: {said}"


def take_refused_draft(tp: int) -> dict[str, Any]:
    """The TP field's ``also``: the draft refused at the TP before (``TP_REFUSED``), tried at
    ``tp`` as the TP changes, on any page; taken, it is the model that run and the sidebar
    show, its error gone; refused, its error names ``tp``. Nothing changes where none waits."""
    ss = st.session_state
    refused = ss.pop(TP_REFUSED, None)
    if refused is None or refused.over != (state().model, state().spec):
        return {}  # none, or another model came since (a preset picked): the draft is stale
    try:
        refused.spec.with_options(tp=tp).profile()
    except ValueError as exc:
        ss["spec.error"] = tp_refusal(exc, refused.spec)
        ss[TP_REFUSED] = refused
        return {}
    ss.pop("spec.error", None)
    return _spec_fields(refused.spec, drafted=True)


def mtp_added() -> bool:
    """Whether the current model carries an added MTP layer (``models.with_mtp_layer``)."""
    s = state()
    return s.model == CUSTOM_SPEC and s.model_spec().name.endswith(MTP_SUFFIX)


def speculative_note(strategy: str) -> None:
    """Where tokens are drafted: what ``strategy``'s figures count of speculative decoding,
    and a button that adds an MTP module's attention layer to the model when it has none (no
    engine option counts a drafter's layers)."""
    s = state()
    added = mtp_added()
    note = strategy_notes.speculative_text(s.profile(), strategy, s.speculative_tokens,
                                           mtp_added=added, options=s.strategy_options())
    if note:
        st.caption(note)
        mtp_button()


def mtp_button() -> None:
    """With drafted tokens, a button that adds an MTP module's attention layer to a model that
    has a full-attention layer and no added one yet."""
    s = state()
    spec = s.model_spec()
    if not s.speculative_tokens or spec is None or mtp_added():
        return
    try:
        with_mtp = with_mtp_layer(spec)
    except ValueError:  # no full-attention layer to copy
        return
    try:
        app_model.check_link_size(with_mtp)
    except ValueError as err:  # a name near the link's limit: the page's link would not reopen
        st.caption(f"No \"Add an MTP layer\" here: {err}.")
        return
    st.button("Add an MTP layer", on_click=use_spec, args=(with_mtp,), icon=":material/add:",
              key="mtp.add", help=f"Makes the model {with_mtp.name}: one more cache layer "
              "shaped as its last full-attention layer, an edited model (Model page).")


def current_analysis(s: AppState | None = None, *, other_choice: str = "") -> PlanAnalysis:
    """The plan analysis of the current view, its refusals in the page's words: a model of
    state alone under packed slabs is said here, with the planner that takes it a button
    away, and the page ends (PageDone)."""
    s = s or state()
    profile, budget = s.profile(), s.budget()  # their errors carry no planner hint
    try:
        return cached_analysis(profile, s.block_size, s.effective_alignment, budget.cache_bytes,
                               s.planner)
    except BudgetTooSmall as small:
        raise ValueError(strategy_notes.budget_too_small_text(small, budget.how_to_raise)) from None
    except ValueError:
        message = strategy_notes.state_only_text(s.planner, profile, other_choice)
        if message is None:
            raise
        # the planner that takes the model a click away, beside the words that name it (the
        # page was empty below them)
        st.error(literal(message))
        other = strategy_notes.PLANNER_TITLES["per-component"]
        st.button(f"Plan with {other}", key="planner.per_component", on_click=update,
                  kwargs={"planner": "per-component"}, icon=":material/view_agenda:")
        raise PageDone from None

