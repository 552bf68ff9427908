"""What SGLang makes of a model before it sizes anything: whether it serves it at all
(``sglang_blocker``), which of its token pools each attention layer rides (``swa_pool``: its hybrid
SWA pool only for the architectures on its list; ``pool_layers``, ``pool_token_bytes``), and the
window its model reports (``sglang_window``). Every other SGLang module reads these; they read
none of them."""

from __future__ import annotations

from flatkv.plan import FULL_ATTENTION, SLIDING_ATTENTION
from flatkv.profile import WINDOWED, CacheProfile
from flatkv.strategies.base import (
    SGLANG_SWA_ARCHITECTURE_CLASSES,
    SGLANG_SWA_ARCHITECTURES,
    StrategyOptions,
    n,
)


def swa_pool(profile: CacheProfile, options: StrategyOptions) -> tuple[bool, str]:
    """Whether SGLang keeps the sliding-window layers in a token pool of their own (its hybrid
    SWA pool), and why: ``sglang_swa_pool`` when set, else what SGLang picks by the config's
    architectures. A profile that names none (typed by hand) gets the pool when it has full
    layers beside its sliding ones, as every model on SGLang's list does."""
    if options.sglang_swa_pool is not None:
        return options.sglang_swa_pool, "as the SGLang sliding-window pool option sets it"
    listed = [a for a in profile.architectures if a in SGLANG_SWA_ARCHITECTURE_CLASSES]
    if listed:
        return True, f"{listed[0]} is on SGLang's hybrid SWA list"
    if profile.architectures:
        return False, (f"{', '.join(profile.architectures)} is not on SGLang's hybrid SWA list "
                       f"({SGLANG_SWA_ARCHITECTURES})")
    name = WINDOWED[swa_label(profile) or SLIDING_ATTENTION].name
    if not profile.count(FULL_ATTENTION):
        return False, f"no full-attention layer beside the {name} ones"
    return True, (f"the model names no architecture, and it has full and {name} layers as the "
                  f"models on SGLang's hybrid SWA list ({SGLANG_SWA_ARCHITECTURES}) do")


def swa_label(profile: CacheProfile) -> str | None:
    """The label of the layers SGLang's hybrid SWA pool may hold: sliding, or Llama 4's chunked
    layers (SGLang runs them as its sliding layers, the chunk as their window); None with
    neither. ``sglang_blocker`` refuses a model with both."""
    return next(iter(profile.windowed_labels), None)


def pool_layers(profile: CacheProfile, options: StrategyOptions) -> tuple[int, int]:
    """Attention layers in SGLang's full and sliding-window token pools, the kv-shared ones too
    (SGLang keeps a pool layer for each, storing nothing). Without its hybrid SWA pool
    (``swa_pool``) a sliding (or chunked) layer keeps every token in the one pool, as a full
    layer does."""
    return _pool_layers_of(profile, options,
                           profile.layer_types + profile.kv_shared_layer_types)


def _pool_layers_of(profile: CacheProfile, options: StrategyOptions,
                    layer_types: tuple[str, ...]) -> tuple[int, int]:
    """``pool_layers`` of some of the profile's layers (all of them, or the kv-shared ones)."""
    label = swa_label(profile)
    n_full = layer_types.count(FULL_ATTENTION)
    n_swa = layer_types.count(label) if label else 0
    return (n_full, n_swa) if swa_pool(profile, options)[0] else (n_full + n_swa, 0)


def pool_token_bytes(profile: CacheProfile, options: StrategyOptions) -> tuple[int, int]:
    """Bytes one token takes over all the layers of SGLang's full token pool and of its
    sliding-window pool (``pool_layers``): its ``_full_per_token x full layers`` and
    ``_swa_per_token x swa layers``, a sliding layer's bytes its own where they differ from a
    full layer's (Gemma 4)."""
    return token_bytes_of(profile, options,
                           profile.layer_types + profile.kv_shared_layer_types)


def token_bytes_of(profile: CacheProfile, options: StrategyOptions,
                    layer_types: tuple[str, ...]) -> tuple[int, int]:
    """``pool_token_bytes`` of some of the profile's layers: the storing ones, or the
    kv-shared ones alone (pool bytes SGLang keeps and never writes, as such a layer reads an
    earlier layer's cache)."""
    n_full, n_swa = _pool_layers_of(profile, options, layer_types)
    return (profile.kv_bytes_per_slot * n_full,
            profile.kv_bytes_of(swa_label(profile)) * n_swa if n_swa else 0)


# Architectures whose SGLang model reports its window one short of the config's
# (get_attention_sliding_window_size: ``config.sliding_window - 1``); the others' window is the
# config's (model_config.sliding_window_size), a chunked model's its chunk.
WINDOW_LESS_ONE_ARCHITECTURES = frozenset({
    "GptOssForCausalLM", "Gemma4ForCausalLM", "Gemma4ForConditionalGeneration",
    "Gemma4UnifiedForConditionalGeneration",
})


def sglang_window(profile: CacheProfile) -> tuple[int, str]:
    """The sliding_window_size SGLang's model reports for its hybrid SWA pool, and how it
    reads it: the config's window, less one for ``WINDOW_LESS_ONE_ARCHITECTURES``."""
    label = swa_label(profile)
    window = profile.window(label)
    if any(a in WINDOW_LESS_ONE_ARCHITECTURES for a in profile.architectures):
        return window - 1, f"{WINDOWED[label].field} - 1 = {n(window - 1)}"
    return window, f"{WINDOWED[label].field} = {n(window)}"


# A state without a conv tensor is lightning attention's. SGLang 0.5.23 serves some: its
# Bailing (V2.5) and MiniCPM hybrids keep it in MambaPool as a Mamba2 state whose conv tensor is
# empty (configs/bailing_hybrid.py, minicpm.py: Mamba2StateShape.create(conv_kernel=1), so a
# (conv_dim, 0) conv state), which FlatKV does not model for SGLang; MiniMax-Text-01 / M1 it
# does not serve (NOT_SERVED).
NO_CONV_STATE = (
    "the state layers keep no conv state: FlatKV does not model such a state in SGLang "
    "(SGLang 0.5.23 keeps lightning attention's in its MambaPool beside an empty conv tensor "
    "for the Bailing and MiniCPM hybrids it serves, and has no MiniMax-Text-01 / M1 model); "
    "compare vLLM's layout")


# Why SGLang serves no model with both sliding and chunked layers.
TWO_WINDOWS = ("SGLang's hybrid SWA pool holds one kind of windowed layer, and this model has "
               "both sliding and chunked layers (no model it serves has)")


# Architectures with state layers SGLang has no model class for, and why (its 0.5.23 wheel,
# October 2026: no models/jamba.py, bamba.py, zamba2.py or olmo_hybrid.py; its mamba configs
# list FalconH1, NemotronH, Lfm2, GraniteMoeHybrid and a few others). Nor does its fallback to
# the transformers implementation take them: model_loader/utils.py refuses a class whose
# is_backend_compatible() is False ("has no SGlang implementation and the Transformers
# implementation is not compatible with SGLang"), as these are in transformers 5.25.
_NO_FALLBACK = ("and its fallback to the transformers implementation refuses it: compare "
                "vLLM's layout")
NOT_SERVED = {
    "JambaForCausalLM": "SGLang has no Jamba model (none in its releases up to 0.5.23, October "
                        "2026; feature request #1190 is open): compare vLLM's layout",
    "Lfm3ForCausalLM": "SGLang has no LFM3 model (none in its releases up to 0.5.23, October "
                       "2026, which serve LFM2): compare vLLM's layout",
    **{arch: f"SGLang has no {name} model (none in its releases up to 0.5.23, October 2026), "
       + _NO_FALLBACK
       for arch, name in (("BambaForCausalLM", "Bamba"), ("Zamba2ForCausalLM", "Zamba2"),
                          ("OlmoHybridForCausalLM", "OLMo Hybrid"))},
    # MiniMax's own checkpoints' names (its PRs #7443, #8124 and #11466 were closed unmerged);
    # transformers has no class of either name, so its fallback refuses them too
    **{arch: "SGLang has no MiniMax-Text-01 / M1 model (none in its releases up to 0.5.23, "
       "October 2026; its MiniMax lightning-attention PRs were closed unmerged), and its "
       "fallback to the transformers implementation finds no class of that name: compare "
       "vLLM's layout"
       for arch in ("MiniMaxM1ForCausalLM", "MiniMaxText01ForCausalLM")},
}


def sglang_blocker(profile: CacheProfile) -> str:
    """Why SGLang serves no model of this profile, whatever its options and budget ("" when it
    may): an architecture it has no model for, a state without a conv tensor, sliding and
    chunked layers together."""
    if unserved := next((NOT_SERVED[a] for a in profile.architectures if a in NOT_SERVED), ""):
        return unserved
    if profile.conv_free_state:
        return NO_CONV_STATE
    return TWO_WINDOWS if all(label in profile.layer_types for label in WINDOWED) else ""
