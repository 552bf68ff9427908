"""SGLang's speculative decoding (EAGLE / MTP) on a state hybrid: the tokens verified a step
(``draft_tokens``), the request slots solved jointly with the draft-token buffers out of the state
budget (``spec_request_slots``, ``spec_reserved_requests``), the speculative hook's 48 running
requests or a told --max-running-requests (``running_request_limit``), the drafter's KV, the
buffers' allocation, and what it does not serve or model. Apart because the state pool, the SWA
request cap and attention DP all read it."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from flatkv.plan import LINEAR_ATTENTION
from flatkv.profile import CacheProfile
from flatkv.strategies.base import StrategyOptions, n
from flatkv.strategies.sglang.model import pool_layers

# SGLang's pure Mamba1 architectures (configs/model_config.py PURE_MAMBA1_ARCHITECTURES,
# 0.5.23): their mixer (layers/attention/mamba/mamba1.py 230-232) asserts it never verifies
# drafted tokens, so SGLang serves them without speculative decoding only
MAMBA1_ARCHITECTURES = ("FalconMambaForCausalLM", "MambaForCausalLM")


def mamba1_draft_refusal(profile: CacheProfile, options: StrategyOptions) -> str | None:
    """Why SGLang 0.5.23 would not run a Mamba1 model drafting tokens (None where it would,
    or where nothing is drafted): its Mamba1 mixer asserts no target-verify batch, the step
    that checks drafted tokens."""
    arch = next((a for a in profile.architectures[:1] if a in MAMBA1_ARCHITECTURES), None)
    if arch is None or not options.speculative_tokens:
        return None
    return (f"its Mamba1 mixer, which runs {arch}, verifies no drafted tokens (\"Mamba-1 "
            "(Falcon-Mamba) does not support speculative decoding yet\"): set speculative "
            "tokens to 0")


def running_limit(profile: CacheProfile, options: StrategyOptions) -> int | None:
    """The max_running_requests SGLang holds before its pools, as FlatKV models it: told,
    else the speculative hook's 48 where it drafts (state hybrids where FlatKV models the
    drafting, ``draft_tokens``; any model without state), else None."""
    drafting = bool(draft_tokens(profile, options)) or (
        bool(options.speculative_tokens) and not profile.has_state)
    return running_request_limit(options, drafting=drafting)


# SGLang's speculative decoding (EAGLE / MTP, ``--speculative-algorithm NEXTN``) on a state
# hybrid, 0.5.23, in its default path (radix cache on, no --max-mamba-cache-size, no
# --max-running-requests, ReplaySSM off: --enable-linear-replayssm-spec defaults to False):
# - arg_groups/speculative_hook._handle_eagle_family sets max_running_requests to 48 ("Max
#   running requests is reset to 48 for speculative decoding") and, with --speculative-eagle-topk
#   1, speculative_num_draft_tokens D = speculative_num_steps + 1 (its auto choice for these
#   models: 3 steps, topk 1, D = 4). FlatKV's speculative tokens N are the steps: D = N + 1.
#   With --max-running-requests M it keeps M (``running_request_limit``): the same sizing with M
#   in place of 48 below (the buffers' min(M, K // S) + 1 requests, min(M, T // 2, K // S)).
# - mem_cache/kv_cache_configurator._handle_max_mamba_cache ("mamba_pool.memory_budget_spec")
#   solves the request slots K jointly with the draft-token buffers out of the state budget
#   (``spec_request_slots``), then subtracts the buffers' reservation, per_req x (min(48, K // S)
#   + 1) x D, and the K + 1 slots from the budget: the token pool gets the rest.
# - resolve_max_num_reqs: max_running_requests = min(48, T // 2, K // S).
# - The drafter's own KV: a path-less MTP drafter (Qwen3-Next's and Qwen3.5's, whose configs
#   name no num_nextn_predict_layers) leaves the target's token-pool cell as it is
#   (spec_aux_hidden_state._resolve_eagle_aux_hidden_state sets no eagle_draft_num_layers); the
#   draft worker allocates its own KV pool of max_total_num_tokens beyond this budget. With
#   --speculative-draft-model-path its layers join the cell (pool_configurator's
#   DefaultPoolConfigurator: cell + int(cell x draft layers / full layers)), which adding the
#   MTP layer to the model models.
SPECULATIVE_RUNNING_REQUESTS = 48


def hook_requests_text(per_group: int) -> str:
    """The max_running_requests SGLang's speculative hook sets, in words: its 48, or under
    attention DP a group's share of it (``running_request_limit``)."""
    if per_group == SPECULATIVE_RUNNING_REQUESTS:
        return f"the {SPECULATIVE_RUNNING_REQUESTS} its speculative hook sets"
    return (f"a group's share of the {SPECULATIVE_RUNNING_REQUESTS} its speculative hook sets, "
            f"{n(per_group)}")
DRAFTER_KV_LINE = (
    "the drafter's KV: a path-less MTP drafter (--speculative-algorithm NEXTN with no "
    "--speculative-draft-model-path, as Qwen3-Next and Qwen3.5 are served) keeps its own KV "
    "pool of max_total_num_tokens tokens beyond this budget, which leaves the token pool's cell "
    "as it is; with a draft model path SGLang adds its layers to the cell: add the MTP layer "
    "to the model to count it so")
# State layers alone: the target's cell is 0 B, and DefaultPoolConfigurator adds a drafter's
# layers to it only where the target has some (pool_configurator.py 261-274: num_layers > 0)
DRAFTER_KV_LAYERLESS_LINE = (
    "the drafter's KV: SGLang adds a drafter's layers to the token pool's cell only where the "
    "target has attention layers, so a drafter with attention keeps its own KV pool of the "
    "token pool's T tokens beyond this budget (its bytes are not counted here)")
# Sub-case not matched: a state model beside a hybrid SWA pool (its SWA request cap reads the
# drafted tokens too).
SPECULATIVE_NOT_MODELLED = (
    "speculative tokens: not modelled for SGLang on this model, whose figures here are without "
    "speculative decoding (FlatKV models it for a state model whose attention layers keep one "
    "token pool, or that has none: its draft-token state buffers, sized with its state slots "
    "out of the state budget)"
)


def draft_tokens(profile: CacheProfile, options: StrategyOptions) -> int:
    """D, the tokens SGLang verifies a step (its speculative_num_draft_tokens), where FlatKV
    models its speculative decoding: the N steps drafted plus one, as its EAGLE hook sets them
    with --speculative-eagle-topk 1; 0 without drafted tokens, for a model without state (whose
    pools speculative decoding leaves as they are) and where it is not modelled
    (``speculative_not_modelled``)."""
    if not options.speculative_tokens or not profile.has_state:
        return 0
    return 0 if speculative_not_modelled(profile, options) else options.speculative_tokens + 1


def speculative_not_modelled(profile: CacheProfile, options: StrategyOptions) -> bool:
    """Whether tokens are drafted on a state model whose SGLang speculative sizing FlatKV does
    not match: one with a hybrid SWA pool beside its state."""
    return bool(options.speculative_tokens and profile.has_state
                and pool_layers(profile, options)[1])


def spec_request_slots(budget_bytes: int, r: Fraction, slot_bytes: int, drafts: int,
                       per_request: int) -> int:
    """K, SGLang's max_mamba_cache_size with ``drafts`` (D) tokens verified a step, in its own
    float arithmetic (``_handle_max_mamba_cache``, "mamba_pool.memory_budget_spec"): the state
    budget ``budget x r / (1 + r)`` holds K + 1 slots and the draft-token buffers of K / S + 1
    requests, D slots' bytes each, so ``K = int((budget_state - per_req x (1 + D)) // (per_req x
    (1 + D / S)))``. Negative where not even the padding slot's buffers fit."""
    ratio = float(r)
    pool = budget_bytes * ratio / (1 + ratio)
    return int((pool - slot_bytes * (1 + drafts)) // (slot_bytes * (1 + drafts / per_request)))


def spec_reserved_requests(request_slots_: int, per_request: int,
                           limit: int = SPECULATIVE_RUNNING_REQUESTS) -> int:
    """The requests SGLang reserves draft-token buffers for, less its padding slot: its
    ``capped_reqs = min(max(1, max_running_requests), K // S)`` (kv_cache_configurator.py
    3372-3376), ``limit`` the max_running_requests told, else the 48 its hook sets."""
    return min(limit, request_slots_ // per_request)


def running_request_limit(options: StrategyOptions, *, drafting: bool) -> int | None:
    """The max_running_requests SGLang 0.5.23 resolves from before its token pool (T // 2) and
    state pool (K // S) cap it (``resolve_max_num_reqs``, kv_cache_configurator.py 3126-3129):
    --max-running-requests where told (``sglang_max_running_requests``), whether it drafts or
    not (its speculative hook resets it only when it is not given: speculative_hook.py
    1086-1090, ``_handle_eagle_family``); else the hook's 48 where tokens are ``drafting`` (as
    FlatKV models them), max(1, 48 // D) for one of D attention-DP groups (``attention_dp``);
    None where it derives one from the token pool and the context."""
    if options.sglang_max_running_requests is not None:
        return options.sglang_max_running_requests
    per_group = max(1, SPECULATIVE_RUNNING_REQUESTS // options.sglang_attn_dp_size)
    return per_group if drafting else None


# Architectures whose SGLang state is KDA's (hybrid_arch.hybrid_kda_config: Kimi Linear's
# config, GLM-5 Next): MambaPool keeps their draft tokens' conv windows dense, D windows of K - 1
# rows (memory_pool.conv_window_dedup_enabled); the others' share one window of D + K - 2 rows.
# Bailing hybrids take KDA by a config flag (use_kda) the profile does not carry.
KDA_ARCHITECTURES = frozenset({"KimiLinearForCausalLM", "KimiK3ForConditionalGeneration",
                               "Glm5NextForConditionalGeneration"})


def draft_buffer_allocation(profile: CacheProfile, tensors: Mapping[str, int], drafts: int,
                            running: int) -> tuple[int, int] | None:
    """(intermediate ssm, intermediate conv window) bytes MambaPool allocates for ``drafts`` (D)
    tokens verified a step and ``running`` requests (max_running_requests; one more row for its
    padding slot), on a CUDA GPU with topk 1 (memory_pool.MambaPool: ``[layers, running + 1, D,
    ssm shape]`` in the ssm dtype, the conv windows deduplicated to D + K - 2 rows, or dense D x
    (K - 1) rows for KDA). None where the profile does not tell the conv rows (raw bytes) or
    whether the state is KDA's (Bailing)."""
    arch = profile.architectures[0] if profile.architectures else None
    conv, ssm = tensors.get("conv"), tensors.get("ssm", 0)
    if conv is None or (arch or "").startswith("Bailing"):
        return None
    rows = profile.conv_rows
    if arch in KDA_ARCHITECTURES:
        window = drafts * conv
    elif rows is None:
        return None
    else:
        window = conv // rows * (drafts + rows - 1)
    layers_rows = profile.count(LINEAR_ATTENTION) * (running + 1)
    return layers_rows * drafts * ssm, layers_rows * window


def allocated_draft_buffers(profile: CacheProfile, drafts: int, formulas: list[str],
                             extras: dict[str, object]) -> tuple[int, int] | None:
    """What MambaPool allocates of the draft-token buffers SGLang reserved
    (``draft_buffer_allocation``), for its max_running_requests + 1 requests; None where that
    is unknown (state layers alone without a context) or the profile cannot tell it. Appends
    its formula; the figures count the whole reservation, as SGLang's sizing does."""
    counted = "; the figures here count the reservation, as its sizing does"
    if "max_running_requests" not in extras:  # state layers alone, no context
        formulas.append(
            "MambaPool allocates draft-token buffers for max_running_requests + 1 requests, "
            "which its token pool of context_len tokens sets: unknown without a context"
            + counted)
        return None
    running_max = extras["max_running_requests"]
    allocated = draft_buffer_allocation(profile, extras["state_tensor_bytes"], drafts,
                                        running_max)
    if allocated is None:
        formulas.append("MambaPool allocates of the draft-token buffers bytes this profile "
                        "cannot tell (it gives no conv rows, or does not say whether its state "
                        "is KDA's)" + counted)
        return None
    extras["draft_buffers_allocated"] = sum(allocated)
    windows = ("D x (K - 1) rows, dense for KDA"
               if KDA_ARCHITECTURES.intersection(profile.architectures[:1])
               else "D + K - 2 rows shared by the D tokens")
    formulas.append(
        f"MambaPool allocates of the draft-token buffers intermediate ssm {n(allocated[0])} B "
        f"+ conv windows {n(allocated[1])} B = {n(sum(allocated))} B for max_running_requests "
        f"+ 1 = {n(running_max + 1)} requests (their ssm states, and conv windows of {windows}), "
        "the rest of its reservation staying free" + counted)
    return allocated
