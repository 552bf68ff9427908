"""Why a TP does not split a model, in the words of where the model came from.

Engines split a model's heads (KV heads, GDN key and value heads, Mamba heads and groups, query
heads) over the TP ranks, so a TP that does not divide one is refused. The refusal is one
``SplitRefusal`` (the field, its figure, the TP, the TPs that work), raised as a
``TPSplitError``; this module words it for the three places a model comes from:

- a model file (``--model-file``, the hand editor's draft): the file's own field names,
  ``gdn.k_heads = 16 is not divisible by tp = 3`` (the hand editor turns them into its
  labels: ``app_model.editor_words``);
- a preset, or a model the app carries as JSON (a config.json loaded, a model JSON, an edit):
  plain words, ``Qwen3-Next-80B-A3B: its linear-attention (Gated DeltaNet) layers have 16 key
  heads, and TP 3 does not divide them``, as its user never saw that file;
- a config.json: the key it gave the figure by, ``config.json linear_num_key_heads = 16, the
  linear-attention (Gated DeltaNet) layers' key heads, is not divisible by TP 3``, as its other
  errors name its fields (``hf_json.as_written``).

Pure, and free of ``flatkv.models`` (which raises these), so either may import it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

# How a figure fails to split over the TP
DIVIDE = "divide"  # the TP does not divide it
REPLICATE = "replicate"  # fewer KV heads than ranks, and the TP is no multiple of them
GROUPS = "groups"  # Mamba2 groups other than one, which engines do not replicate

# Where a model came from, which decides the words (ModelSpec's ``_origin``): a model file
# its user wrote (its field names), a config.json (its keys), or a model whose file its user
# never saw, a preset or one the app carries as JSON (plain words)
MODEL_FILE = ""
PLAIN = "plain"
CONFIG_JSON = "config.json"

SHOWN_TP = 64  # the refusal lists the TPs up to this that split the model
# How a model's notes say its query heads are two kinds' greatest common divisor (hf_config's
# note where sliding and full layers have their own): the refusal then says so, not "it has N"
HEADS_GCD = "attention_heads reads as"
_LISTED = 8  # ... at most this many of them by number

# vLLM's MambaMixer2: "If tensor parallel world size does not divide num_groups, then
# num_groups must equal 1"
_ONE_GROUP = ("engines replicate only a single group across ranks: vLLM's MambaMixer2 asserts "
              "\"num_groups must equal 1\"")

# A layer type's layers and a field's figure in plain words: (layer kind, label) -> layers
_LAYERS = {
    ("attention", "full_attention"): "full-attention layers",
    ("attention", "sliding_attention"): "sliding-window attention layers",
    ("attention", "chunked_attention"): "chunked-attention layers",
    ("gdn", ""): "linear-attention (Gated DeltaNet) layers",
    ("mamba2", ""): "Mamba2 layers",
    ("mamba1", ""): "Mamba layers",
    ("short_conv", ""): "short-convolution layers",
    ("lightning", ""): "lightning-attention layers",
}
# Kimi Delta Attention keeps GDN's state shapes under a kind of its own name, one head count
_KDA = "linear-attention (Kimi Delta Attention) layers"
_FIGURES = {
    "kv_heads": "KV heads", "k_heads": "key heads", "v_heads": "value heads",
    "n_heads": "heads", "n_groups": "groups", "d_inner": "inner channels (d_inner)",
    "channels": "channels", "heads": "heads",
}


@dataclass(frozen=True)
class SplitRefusal:
    """A figure of a model that ``tp`` ranks do not split, and what the words need of it.

    field: the layer's field (``k_heads``), or ``attention_heads`` for the query heads, which
    no layer holds. kind: the kind's name in the model (``gdn``, ``full``, ``kda``), the layer
    type where the layer stands alone; empty for the query heads. layer_kind / label: the
    layer's type and planner label (``attention``, ``sliding_attention``). fits: the TPs up to
    SHOWN_TP that split the model, None where unknown (a layer alone). config_key: the
    config.json field that gave the figure (``text_config.linear_num_key_heads``), None where
    it came from no config.json or from no one field; config_key_given: whether the
    config.json writes it (else transformers' default filled it in); heads_gcd: the query
    heads are the greatest common divisor of layers' own counts, not any layer's."""

    field: str
    value: int
    tp: int
    how: str = DIVIDE
    kind: str = ""
    layer_kind: str = ""
    label: str = ""
    model: str = ""
    fits: tuple[int, ...] | None = None
    config_key: str | None = None
    config_key_given: bool = True
    heads_gcd: bool = False


class TPSplitError(ValueError):
    """A TP that does not split a model, with its ``SplitRefusal`` for callers that word it
    otherwise (the hand editor); its text is ``words`` where given, else the model file's."""

    def __init__(self, refusal: SplitRefusal, words: str | None = None) -> None:
        super().__init__(file_words(refusal) if words is None else words)
        self.refusal = refusal


def file_words(refusal: SplitRefusal) -> str:
    """The refusal in a model file's field names: ``gdn.k_heads = 16 is not divisible by tp =
    3: choose a tp that divides it (tp up to 64 that split the model: 1, 2, 4, 8, 16)``."""
    r = refusal
    where = f"{r.kind}.{r.field}" if r.kind else r.field
    if r.field == "attention_heads":
        fix = "choose a tp that divides it, as engines split the query heads over the ranks"
    elif r.layer_kind == "attention":
        fix = "choose a tp that divides the KV heads or is a multiple of them"
    elif r.how == GROUPS:
        fix = f"choose a tp that divides it ({_ONE_GROUP})"
    else:
        fix = "choose a tp that divides it"
    fails = (f"cannot be replicated evenly over tp = {r.tp}" if r.how == REPLICATE
             else f"is not divisible by tp = {r.tp}")
    text = f"{where} = {r.value:,} {fails}: {fix}"
    if r.fits:
        listed = ", ".join(str(t) for t in r.fits[:_LISTED])
        text += (f" (tp up to {SHOWN_TP} that split the model: {listed}"
                 f"{', ...' if len(r.fits) > _LISTED else ''})")
    return text


def _choose(refusal: SplitRefusal) -> str:
    """The TPs to choose instead: ``choose TP 1, 2, 4, 8 or 16, the TPs up to 64 that split
    the model``; empty where they are unknown."""
    fits = refusal.fits or ()
    if not fits:
        return ""
    if len(fits) == 1:
        return f": choose TP {fits[0]}, the only TP up to {SHOWN_TP} that splits the model"
    if len(fits) <= _LISTED:
        listed = (f"TP {', '.join(str(t) for t in fits[:-1])} or {fits[-1]}, the TPs")
    else:
        listed = (f"TP {', '.join(str(t) for t in fits[:_LISTED])}, ... (the {len(fits)} TPs")
    closing = ")" if len(fits) > _LISTED else ""
    return f": choose {listed} up to {SHOWN_TP} that split the model{closing}"


def _why(refusal: SplitRefusal) -> str:
    """Why the figure does not split, after ``TP N ...``: what engines do with it."""
    if refusal.how == REPLICATE:
        return " (fewer KV heads than ranks are copied, each onto the same number of ranks)"
    if refusal.how == GROUPS:
        return f" ({_ONE_GROUP})"
    if refusal.field == "attention_heads":
        return " (engines split the query heads over the ranks)"
    return ""


def _what(refusal: SplitRefusal) -> tuple[str, str]:
    """A layer's figure in words: its layers (``linear-attention (Gated DeltaNet) layers``) and
    what the figure counts (``key heads``)."""
    r = refusal
    if r.kind == "kda" and r.layer_kind == "gdn":
        return _KDA, "heads"
    layers = _LAYERS.get((r.layer_kind, r.label if r.layer_kind == "attention" else ""),
                         f"{r.kind} layers")
    return layers, _FIGURES.get(r.field, r.field.replace("_", " "))


def plain_words(refusal: SplitRefusal) -> str:
    """The refusal for a model whose file its user never saw (a preset): what the figure is,
    in words, led by the model's name. ``Qwen3-Next-80B-A3B: its linear-attention (Gated
    DeltaNet) layers have 16 key heads, and TP 3 does not divide them: choose TP 1, 2, 4, 8
    or 16, the TPs up to 64 that split the model``."""
    r = refusal
    if r.heads_gcd:  # no layer has this many: the TP must divide each layer's count
        return (f"{r.model + ': ' if r.model else ''}its attention layers have query heads of "
                f"different counts, whose greatest common divisor is {r.value:,}, and TP {r.tp} "
                f"does not divide it{_why(r)}{_choose(r)}")
    layers, figure = ("", "query heads") if r.field == "attention_heads" else _what(r)
    if r.value == 1:  # one head (only a TP past 1 that divides it refuses it)
        figure = re.sub(r"\b(head|group|channel)s\b", r"\1", figure)
    has = (f"its {layers} have" if layers else "it has") + f" {r.value:,} {figure}"
    them = "it" if r.value == 1 else "them"
    fails = (f"TP {r.tp} neither divides them nor is a multiple of them" if r.how == REPLICATE
             else f"TP {r.tp} does not divide {them}")
    lead = f"{r.model}: " if r.model else ""
    return f"{lead}{has}, and {fails}{_why(r)}{_choose(r)}"


def config_words(refusal: SplitRefusal) -> str:
    """The refusal for a model read from a config.json: the key that gave the figure, as the
    file writes it (``config.json linear_num_key_heads = 16 is not divisible by TP 3: ...``);
    plain words where no one key gave it (Jamba's d_inner is mamba_expand x hidden_size)."""
    r = refusal
    if r.config_key is None:
        return plain_words(r)
    named = (f"config.json {r.config_key} = {r.value:,}" if r.config_key_given
             else f"{r.config_key} = {r.value:,} (transformers' default: the config.json gives "
                  "none)")
    if r.field != "attention_heads":  # what the key counts: hidden_size is LFM2's channels
        layers, figure = _what(r)
        named += f", the {layers}' {figure},"
    fails = (f"cannot be replicated evenly over TP {r.tp}" if r.how == REPLICATE
             else f"is not divisible by TP {r.tp}")
    return f"{named} {fails}{_why(r)}{_choose(r)}"


def words_for(refusal: SplitRefusal, origin: str) -> str:
    """The refusal in the words of the model's ``origin``: PLAIN, CONFIG_JSON or MODEL_FILE."""
    if origin == PLAIN:
        return plain_words(refusal)
    if origin == CONFIG_JSON:
        return config_words(refusal)
    return file_words(refusal)


def in_model(refusal: SplitRefusal, *, kind: str, label: str, model: str) -> SplitRefusal:
    """A layer's refusal as its model names it: the kind's name there, its label and the
    model's name."""
    return replace(refusal, kind=kind, label=label, model=model)
