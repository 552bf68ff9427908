"""CacheProfile: what the planner and the engine strategies need to know of a model.

A model specification (``flatkv.models``) or raw command-line bytes both reduce to this, per
tensor-parallel rank: one label per cache layer, the bytes one token adds to one attention cache
layer, and the constant state tensors of one state layer. Everything downstream (plans,
analyses, strategies, charts) starts from a profile, so it never needs to know where the model
came from.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from flatkv.dtypes import DTYPE_BYTES, KNOWN_DTYPES, STATE_DTYPES, check_config_ssm_dtype
from flatkv.patterns import format_layer_pattern, parse_layer_pattern
from flatkv.plan import (
    CHUNKED_ATTENTION,
    FULL_ATTENTION,
    LAYER_LABELS,
    LINEAR_ATTENTION,
    SLIDING_ATTENTION,
    ComponentSpec,
    check_int,
    components_from_layers,
)
from flatkv.units import check_name, control_character, names_text, quoted, quoted_value

# The format name of a raw profile as the Model page exports it (a model file is models.FORMAT)
PROFILE_FORMAT = "flatkv-profile/1"
# Bytes one token adds to a layer, or one state tensor: real models stay under a few MiB; a
# terabyte is a typo (and a browser's number field cannot hold much more than 2**53)
MAX_ROW_BYTES = 1 << 40
# Past any model's window or any attention kernel's block: a larger value is a typo (and the
# link the app writes for a model would be refused when reopened).
MAX_WINDOW = 1 << 31
MAX_KERNEL_BLOCK_SIZE = 1 << 20
# DeepSeek-V3.2's sparse MLA (an indexer's keys beside the latent): vLLM pages it by FlashMLA
# sparse's kernel block of 64 tokens (flashmla_sparse.py: MultipleOf(64)), whatever it is told;
# one figure for the model's profile (models) and vLLM's layout (strategies.vllm)
SPARSE_MLA_KERNEL_BLOCK_SIZE = 64
MAX_CHUNK_SIZE = 1 << 20  # a state kernel's chunk in tokens (configs say 128 to 2,048)
# State tensors of one layer: models keep one or two (conv, ssm); raw bytes may name more, but
# each is a row of every state layer: 10,000 over 2,048 layers planned for minutes, and 8 keep
# the Budget page's 54 plans of 2,048 state layers to 15 s.
MAX_STATE_TENSORS = 8
SLIDING_WINDOW_MISSING = (
    "sliding_window is not set but the model has sliding_attention layers: give the window in "
    "tokens (sliding_window in the profile or config, --sliding-window on the command line)"
)
CHUNK_SIZE_MISSING = (
    "attention_chunk_size is not set but the model has chunked_attention layers: give the chunk "
    "in tokens (attention_chunk_size in the profile or config, --attention-chunk-size on the "
    "command line)"
)


@dataclass(frozen=True)
class WindowedLabel:
    """A label whose layers keep a bounded span of history: what the text calls such a layer
    (``name``), such layers (``layers``) and their span (``noun``), the profile field that
    gives the span in tokens, and the error when that field is not given."""

    name: str
    layers: str
    noun: str
    field: str
    missing: str


WINDOWED = {
    SLIDING_ATTENTION: WindowedLabel("sliding", "sliding-window layers", "window",
                                     "sliding_window", SLIDING_WINDOW_MISSING),
    CHUNKED_ATTENTION: WindowedLabel("chunked", "chunked layers", "chunk",
                                     "attention_chunk_size", CHUNK_SIZE_MISSING),
}


# The pages' names of the planner's groups (its layer labels), which the library's prose says
# too (a strategy's reason, the CLI's notes): the ids stay where an engine or a JSON file has them
KIND_NAMES = {
    FULL_ATTENTION: "full attention",
    SLIDING_ATTENTION: "sliding attention",
    CHUNKED_ATTENTION: "chunked attention",
    LINEAR_ATTENTION: "constant state (linear attention, Mamba, short conv)",
}
# Full-attention layers that keep MLA's latent (``CacheProfile.mla``), as the Model page counts
# them: "Full attention" beside its own table's kind "mla" hid what the layers keep, and the
# charts name their bytes "KV (full attention, MLA latent)" (``charts.LABELS``)
MLA_KIND_NAME = "full attention (MLA)"


def counted_kind(label: str, *, mla: bool) -> str:
    """A layer label's kind as the pages count it (``KIND_NAMES``), MLA's full attention
    (``mla``: the profile's ``CacheProfile.mla``) named as such. Also a planner group's name in
    the pages' words (a group is the layers of one label): "Dead share of a full attention
    (MLA) block", not the planner's "full_attention", which says nothing of the latent."""
    return MLA_KIND_NAME if label == FULL_ATTENTION and mla else KIND_NAMES[label]


def group_name(label: str, *, mla: bool) -> str:
    """A planner group's name in Layout's words: its kind as ``counted_kind`` names it, but
    the state group short ("state"), as it stands inside metric labels, legends and captions
    ("Dead share of a state block", "36 state rows"), where the Model page's long kind name
    ("constant state (linear attention, Mamba, short conv)") outgrew a metric's cell."""
    return "state" if label == LINEAR_ATTENTION else counted_kind(label, mla=mla)


def pool_group_name(name: str, kind: str, *, mla: bool) -> str:
    """A pool's group (``workload.PoolGroup``: ``name``, ``kind``) as the pages and formulas
    write it: its kind (``group_name``), and where a layout cuts the kind into several groups
    (vLLM's ``linear_attention.1``, the result's id, which its JSON keeps) its index: "state 1"."""
    index = name.removeprefix(f"{kind}.") if name.startswith(f"{kind}.") else ""
    return group_name(kind, mla=mla) + (f" {index}" if index else "")


def check_window(tokens: int | None, label: str, labels: Iterable[str]) -> None:
    """A windowed label's tokens (``sliding_window`` of sliding layers, ``attention_chunk_size``
    of chunked ones) are given exactly when some layer carries the label."""
    field_name = WINDOWED[label].field
    if tokens is not None:
        check_int(field_name, tokens, minimum=1, maximum=MAX_WINDOW)
        if label not in labels:
            raise ValueError(f"{field_name} is {tokens} but layer_types has no {label} layer: "
                             f"drop {field_name} or add {label} layers")
    elif label in labels:
        raise ValueError(WINDOWED[label].missing)


def window_tokens(label: str, *, sliding_window: int | None,
                  attention_chunk_size: int | None) -> int | None:
    """The tokens a layer of ``label`` keeps at most (its window or chunk), None for full
    attention and state; ValueError naming the missing field when a windowed label has none."""
    if label not in WINDOWED:
        return None
    tokens = {"sliding_window": sliding_window,
              "attention_chunk_size": attention_chunk_size}[WINDOWED[label].field]
    if tokens is None:
        raise ValueError(WINDOWED[label].missing)
    return tokens


def split_problem(split: tuple[int, ...], total_name: str, total: int | None,
                  kv_dtype: str | None) -> str:
    """Why a K / V split (the (K, V) or (latent,) bytes SGLang's KV log lines count) cannot
    stand beside the bytes it splits, named ``total_name``, and the KV dtype those lines name;
    "" when it can. A profile refuses such a split; a link drops it with a notice
    (``app_state``), as only those log lines need it."""
    if not split:
        return ""
    if len(split) > 2:
        return "holds more than two sizes"
    if total is None:
        return f"comes without {total_name}"
    if sum(split) != total:
        return f"does not add up to {total_name}={total}"
    if kv_dtype is None:
        return "comes without kv_dtype"
    return ""


# How a model's name is fixed, where it is not text or holds a control character
NAME_FIX = "give the model's name in printable characters, e.g. 'custom'"


# An architecture is a class name (the engines look it up by name: SGLang's sliding-window
# pool list, vLLM's GDN checkpointing classes), of at most 100 characters; a config.json lists
# one, a few at most. A link writes them comma-separated, which no class name holds.
_CLASS_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_CLASS_NAME_CHARS = 100
MAX_ARCHITECTURES = 8


def architectures_problem(names: tuple[str, ...]) -> str:
    """Why ``names`` are no config's architectures (too many, one that is no class name: a
    link's arch took any text, shown on the Model page, or one longer than a class name), ""
    where they are."""
    if len(names) > MAX_ARCHITECTURES:
        return (f"{len(names)} architectures, more than a config.json lists (at most "
                f"{MAX_ARCHITECTURES})")
    # "is not None": an empty name, falsy, is no class name either (it printed "architectures: ")
    if (bad := next((name for name in names if not _CLASS_NAME.fullmatch(name)), None)) is not None:
        return f"{quoted(bad, 40)} is not a class name"
    if long := next((name for name in names if len(name) > MAX_CLASS_NAME_CHARS), None):
        return (f"{quoted(long, 40)} is longer than a class name (at most "
                f"{MAX_CLASS_NAME_CHARS} characters)")
    return ""


def check_architectures(names: object) -> tuple[str, ...]:
    """``names`` as a tuple of architecture class names, as a config.json lists them
    (``architectures_problem``)."""
    fix = ("give a list of class names, as config.json has them, e.g. [\"GptOssForCausalLM\"], "
           "or none")
    if isinstance(names, str) or not isinstance(names, (list, tuple)) or not all(
            isinstance(name, str) for name in names):
        raise ValueError(f"architectures is {quoted_value(names)}: {fix}")
    if why := architectures_problem(tuple(names)):
        shown = textwrap.shorten(repr(tuple(names)), 100, placeholder=" ...")
        raise ValueError(f"architectures is {shown}: {why}: {fix}")
    return tuple(names)


@dataclass(frozen=True)
class CacheProfile:
    """Per-TP-rank cache shape of one model.

    layer_types: one label per *cache* layer, in model order (``full_attention``,
        ``sliding_attention``, ``chunked_attention`` or ``linear_attention``: ``LAYER_LABELS``;
        every state layer, GDN or Mamba, is ``linear_attention`` as in the reference planner).
    kv_bytes_per_slot: bytes one token adds to one attention cache layer (K and V), 0 when the
        model has no attention layer.
    state_const_bytes: state tensor name -> bytes for one state layer, in row order
        (``{"conv": ..., "ssm": ...}``); empty when the model has no state layer.
    sliding_window: tokens a sliding-attention layer keeps, ``None`` without sliding layers.
    name: what the UI and the CLI call it.
    kernel_block_size: the smallest kernel block size the model's attention needs in vLLM, when
        it is an MLA model's (16 for dense MLA, FLASH_ATTN_MLA's and TRITON_MLA's; 64 for
        sparse MLA, FlashMLA sparse's) or not the backends' usual 16. vLLM's P starts from it.
    ssm_element_bytes: bytes of one element of the ``ssm`` state tensor (2 for bfloat16, 4 for
        float32) when the profile comes from a model; None for raw bytes. An engine that keeps
        the ssm state in its own dtype re-sizes it from this (SGLang: the config's
        ``mamba_ssm_dtype``, else float32, unless told; vLLM: Nemotron-H's config dtype, else
        float32, unless told).
    architectures: the config's ``architectures`` (``("GptOssForCausalLM",)``) when the profile
        comes from one, else empty. SGLang picks its sliding-window pool by this name.
    config_mamba_ssm_dtype: SGLang's: the config's ``mamba_ssm_dtype`` when it names one SGLang
        reads (float32, bfloat16, float16), else None. SGLang keeps the ssm state in it unless
        told otherwise (float32 without it), whatever the model's own ssm dtype; it re-sizes the
        ssm tensor only when ``ssm_element_bytes`` is known (raw bytes are taken as given).
        vLLM's figures never read it (Qwen3.5's hook reads that config field, which
        ``ssm_dtype`` already holds; NemotronH's reads ``config_mamba_ssm_cache_dtype``).
    config_mamba_ssm_cache_dtype: vLLM's: a config.json's own ``mamba_ssm_cache_dtype`` (float32,
        bfloat16, float16) where the model's vLLM hook reads it (Nemotron-H's, and the text
        config's of its VL classes: ``hf_dtypes.vllm_config_ssm_dtype_of``), else None. vLLM
        keeps the ssm state in it with --mamba-ssm-cache-dtype auto, whatever the model's own
        ssm dtype is edited to; SGLang does not read it.
    mamba_chunk_size: the config's ``mamba_chunk_size`` (or ``chunk_size``) of a state model,
        else None; vLLM aligns P to it in mamba cache mode all (2,048 when a config has none).
    conv_rows: the rows of the ``conv`` state (the conv kernel's K - 1) when the profile comes
        from a model whose state layers are GDN (KDA), Mamba2 or short convolutions: vLLM
        widens their conv state by a row per speculative token (``num_spec`` in its state
        shapes). None otherwise (Mamba1, whose conv vLLM keeps at K - 1, or raw bytes).
    indexer_bytes_per_slot: the bytes of ``kv_bytes_per_slot`` that are DeepSeek-V3.2's
        lightning indexer keys (132 at index_head_dim 128), None without an indexer. Both
        engines page such a model by 64 tokens (FlashMLA sparse's kernel block in vLLM, which
        takes a block size of a larger multiple of 64 and refuses any other; the NSA page in
        SGLang, whatever it is told).
    attention_chunk_size: tokens of a chunk of Llama 4's chunked local attention: a
        ``chunked_attention`` layer attends only within its chunk, so it keeps at most one chunk
        of history. ``None`` without chunked layers.
    kv_dtype: the KV cache's dtype (a canonical name, ``bfloat16``) when it is known: a model
        with attention layers gives it (raw bytes keep it while their KV bytes stand); None
        for bytes typed by hand.
    kv_tensor_bytes: ``kv_bytes_per_slot`` split by the tensors an engine keeps for one
        attention layer, when the profile comes from a model: (K, V) for multi-head attention,
        (latent,) for MLA (DeepSeek-V3.2's indexer keys counted with it); empty for raw bytes
        typed by hand.
        SGLang logs each tensor's bytes ("K size: ..., V size: ..." or "KV size: ..."); a split
        needs ``kv_dtype`` beside it.
    conv_element_bytes: bytes of one element of the ``conv`` state tensor (the model's conv
        dtype) when the profile comes from a model; None for raw bytes. SGLang keeps every conv
        state in a dtype of its own (bfloat16 unless SGLANG_MAMBA_CONV_DTYPE says otherwise),
        so it re-sizes the conv tensor from this, as it does the ssm one.
    sliding_kv_bytes_per_slot: bytes one token adds to one sliding-window layer where they
        differ from a full layer's ``kv_bytes_per_slot`` (Gemma 4: 16 KV heads x 256 on its
        sliding layers, 4 x 512 on its full ones), else None: every attention layer then adds
        ``kv_bytes_per_slot``. The planner packs such rows as any other; engines that give
        every layer one page size scale the block of the smaller page instead.
    sliding_kv_tensor_bytes: ``sliding_kv_bytes_per_slot`` split by tensor as
        ``kv_tensor_bytes`` splits the full layers' (Gemma 4's sliding K and V), when the
        profile comes from a model; empty otherwise. SGLang logs its sliding-window pool's K
        and V sizes from it.
    ssm_dtype: the ``ssm`` state tensor's dtype (a canonical name: float32, bfloat16 or
        float16) when the profile comes from a model, beside ``ssm_element_bytes``, which is
        its size; None for raw bytes. The size alone cannot tell float16 from bfloat16, and an
        engine may keep one and refuse the other (vLLM's KDA state: float32 or bfloat16 only).
    kv_shared_layer_types: the labels of the layers past ``layer_types`` that read an earlier
        layer's KV and keep none of their own (Gemma 3n's and Gemma 4's last
        num_kv_shared_layers), in model order; empty where none does. vLLM allocates nothing
        for them; SGLang 0.5.23 keeps a pool layer for each all the same (its layer ids count
        every model layer), storing nothing there.
    tp: the TP the profile's bytes are split over, when it comes from a model; None for raw
        bytes (which say nothing of heads).
    attention_dp_profiles: (D, the profile at TP ``tp // D``) for each D > 1 dividing ``tp``,
        when the profile comes from a model: SGLang's attention DP (``--attn-dp-size D``, or
        ``--enable-dp-attention --dp-size D``) runs attention and state layers over
        ``tp // D`` ranks, so a rank keeps those bytes (``sglang.attention_dp``).
    dsa_raw_fp8_bytes_per_slot: for a model with DeepSeek's lightning indexer, a token's bytes
        a layer with the latent stored raw in fp8, ``kv_lora_rank + qk_rope_head_dim`` bytes
        with no scales, beside the indexer's keys (576 + 132 = 708 for DeepSeek-V3.2), whatever
        the model's KV dtype: the layout SGLang 0.5.23's trtllm DSA backends store, its default
        on a Blackwell GPU (``sglang.sglang_dsa``). None otherwise; raw bytes, which say
        nothing of the latent's width, are taken as stored. None of these three fields enters
        equality: they restate the model, not the profile's own figures.
    learnable_sink: the config's ``learnable_sink`` for a model with DeepSeek's lightning
        indexer (``ModelSpec.learnable_sink``), else False. SGLang 0.5.23 reads it off the
        config (overrides.py 526) and then keeps DeepSeek's sparse attention in bfloat16 on
        every GPU, a Blackwell too (its auto picks fp8_e4m3 at compute capability 10 only
        without it: 532-535), on flashmla_sparse (644-663), and refuses any other
        --kv-cache-dtype (527-531: ``sglang.dsa_dtype_refusal``).
    gdn_key_head_dims: the key head dims of the model's GDN layers (its KDA layers too, whose
        state shapes are GDN's) when the profile comes from a model or raw bytes that carry
        them (a link's ``gdn_dims``, the JSON's ``gdn_key_head_dims``), else empty (not known):
        vLLM 0.34 picks their prefill kernel, and so whether it keeps a prefill checkpoint
        block, by them (``vllm.checkpoint_blocks_kept``). Not in equality: it restates the
        model, as ``dsa_raw_fp8_bytes_per_slot`` does.
    """

    layer_types: tuple[str, ...]
    kv_bytes_per_slot: int
    state_const_bytes: dict[str, int] = field(default_factory=dict)
    sliding_window: int | None = None
    name: str = "custom"
    kernel_block_size: int | None = None
    ssm_element_bytes: int | None = None
    architectures: tuple[str, ...] = ()
    config_mamba_ssm_dtype: str | None = None
    config_mamba_ssm_cache_dtype: str | None = None
    mamba_chunk_size: int | None = None
    conv_rows: int | None = None
    indexer_bytes_per_slot: int | None = None
    attention_chunk_size: int | None = None
    kv_dtype: str | None = None
    kv_tensor_bytes: tuple[int, ...] = ()
    conv_element_bytes: int | None = None
    sliding_kv_bytes_per_slot: int | None = None
    kv_shared_layer_types: tuple[str, ...] = ()
    sliding_kv_tensor_bytes: tuple[int, ...] = ()
    ssm_dtype: str | None = None
    tp: int | None = field(default=None, compare=False)
    attention_dp_profiles: tuple[tuple[int, CacheProfile], ...] = field(
        default=(), compare=False, repr=False)
    dsa_raw_fp8_bytes_per_slot: int | None = field(default=None, compare=False)
    learnable_sink: bool = False
    gdn_key_head_dims: frozenset[int] = field(default=frozenset(), compare=False)

    def __post_init__(self) -> None:
        """Every field checked, and the collections frozen, in the order that decides which
        of several wrong fields an error names: the collections' kinds first (before any is
        read), then each field on its own, then what one field says of another (attention
        layers without bytes, windows beside their layers, the KV tensors' split)."""
        self._check_collection_kinds()
        check_name("name", self.name, fix=NAME_FIX)
        if self.tp is not None:
            check_int("tp", self.tp, minimum=1, hint="the TP the bytes are split over, or None")
        self._freeze_layer_types()
        object.__setattr__(self, "architectures", check_architectures(self.architectures))
        check_config_ssm_dtype(self.config_mamba_ssm_dtype)
        check_config_ssm_dtype(self.config_mamba_ssm_cache_dtype, "config_mamba_ssm_cache_dtype")
        object.__setattr__(self, "state_const_bytes", dict(self.state_const_bytes))
        self._check_layer_labels()
        self._check_sizes()
        self._check_state_tensors()
        self._check_whole("ssm_element_bytes", "an ssm", ("element size", "elements"),
                          hint="or None when the ssm dtype is unknown")
        self._check_ssm_dtype()
        self._check_bytes_of_layers()
        self._check_whole("conv_rows", "a conv", ("rows", "rows"),
                          hint="or None when the conv state is not widened per speculative token")
        self._check_whole("conv_element_bytes", "a conv", ("element size", "elements"),
                          hint="or None when the conv dtype is unknown")
        self._check_indexer()
        for label, windowed in WINDOWED.items():
            check_window(getattr(self, windowed.field), label, self.layer_types)
        self._check_kv_tensors()
        self._check_sliding_kv()
        self._check_split("sliding_kv_tensor_bytes", "sliding_kv_bytes_per_slot")
        self._check_kv_shared()
        self._check_gdn_key_head_dims()

    def _check_gdn_key_head_dims(self) -> None:
        """``gdn_key_head_dims`` frozen, each a whole number of 1 or more."""
        dims = self.gdn_key_head_dims
        if isinstance(dims, str) or not isinstance(dims, Iterable):
            raise ValueError(f"gdn_key_head_dims is {quoted_value(dims)}: give a set of head "
                             "dims, e.g. {128}, or an empty one where not known")
        dims = [check_int("gdn_key_head_dims", dim, minimum=1, hint="a GDN layer's key head dim")
                for dim in dims]  # (each checked before hashing: a list in it is no dim)
        object.__setattr__(self, "gdn_key_head_dims", frozenset(dims))

    def _check_collection_kinds(self) -> None:
        """``layer_types`` a collection of labels (a string is one, which would read as one
        label a character), ``state_const_bytes`` a mapping of at most ``MAX_STATE_TENSORS``:
        checked before either is iterated, so no other check reads a wrong kind or a mapping
        of millions of entries."""
        if isinstance(self.layer_types, str) or not isinstance(self.layer_types, Iterable):
            raise ValueError(f"layer_types is {quoted_value(self.layer_types)}: give a list of "
                             "labels, e.g. ('linear_attention', 'full_attention')")
        if not isinstance(self.state_const_bytes, Mapping):
            raise ValueError(f"state_const_bytes is {quoted_value(self.state_const_bytes)}: give "
                             "a mapping of tensor name to bytes, e.g. {'conv': 49152}, or {}")
        if len(self.state_const_bytes) > MAX_STATE_TENSORS:
            raise ValueError(f"state_const_bytes has {len(self.state_const_bytes):,} tensors, too "
                             f"many to be real: give {MAX_STATE_TENSORS} or fewer (a state layer "
                             "keeps one or two, conv and ssm)")

    def _freeze_layer_types(self) -> None:
        """``layer_types`` as a tuple (a frozen profile's, hashable; a generator read once),
        each a string: what ``_check_layer_labels`` compares with the known labels."""
        object.__setattr__(self, "layer_types", tuple(self.layer_types))
        odd = next((x for x in self.layer_types if not isinstance(x, str)), None)
        if odd is not None:
            raise ValueError(f"layer_types holds {quoted_value(odd)}: give labels such as "
                             f"{list(LAYER_LABELS)}")

    def _check_layer_labels(self) -> None:
        """At least one layer, each of a kind FlatKV models (``LAYER_LABELS``)."""
        if not self.layer_types:
            raise ValueError("layer_types is empty: give at least one cache layer")
        unknown = sorted(set(self.layer_types) - set(LAYER_LABELS))
        if unknown:
            raise ValueError(
                f"layer_types has unknown {names_text('label', unknown)}: use one of "
                f"{', '.join(LAYER_LABELS)}"
            )

    def _check_sizes(self) -> None:
        """The attention row's bytes and the kernel's and the Mamba chunk's tokens, each a
        whole number in its range (a chunk and a kernel block of 1 or more, where set)."""
        check_int("kv_bytes_per_slot", self.kv_bytes_per_slot, maximum=MAX_ROW_BYTES)
        if self.kernel_block_size is not None:
            check_int("kernel_block_size", self.kernel_block_size, minimum=1,
                      maximum=MAX_KERNEL_BLOCK_SIZE)
        if self.mamba_chunk_size is not None:
            check_int("mamba_chunk_size", self.mamba_chunk_size, minimum=1,
                      maximum=MAX_CHUNK_SIZE, hint="the config's mamba_chunk_size / chunk_size")

    def _check_state_tensors(self) -> None:
        """Each state tensor's name and bytes: a name that reads back as itself where a link
        and the command line write ``name=bytes`` pairs, and not ``kv`` (the attention
        layers' history, which charts would draw it as); bytes of 1 or more."""
        for name, nbytes in self.state_const_bytes.items():
            if (not isinstance(name, str) or not name or name != name.strip()
                    or set(name) & {",", "="} or control_character(name)):
                raise ValueError(f"state_const_bytes has a tensor named {quoted_value(name)}: "
                                 "give a name without ',' or '=' or spaces around it or "
                                 "control characters, e.g. 'conv'")
            if name == "kv":
                raise ValueError("state_const_bytes has a tensor named 'kv', the attention "
                                 "layers' history: name the state tensor otherwise, e.g. "
                                 "'state'")
            check_int(f"state_const_bytes[{quoted_value(name)}]", nbytes, minimum=1,
                      maximum=MAX_ROW_BYTES)

    def _check_bytes_of_layers(self) -> None:
        """Attention layers with a row of bytes, state layers with state tensors: a profile
        whose layers hold nothing would plan pages of 0 bytes."""
        if self.has_attention and self.kv_bytes_per_slot == 0:
            raise ValueError(
                "kv_bytes_per_slot is 0 but layer_types has attention layers: give the bytes one "
                "token adds to one attention layer"
            )
        if self.has_state and not self.state_const_bytes:
            raise ValueError(
                "state_const_bytes is empty but layer_types has linear_attention layers: give "
                "the state tensors, e.g. {'conv': 49152, 'ssm': 2097152}"
            )

    def _check_indexer(self) -> None:
        """``indexer_bytes_per_slot``, when set, is a part of ``kv_bytes_per_slot`` (the
        lightning indexer's keys ride in the same row as the latent), so fewer bytes than it;
        ``dsa_raw_fp8_bytes_per_slot``, when set, holds those keys and a latent beside them,
        so more bytes than the keys, and needs them. The keys are checked first: the raw
        bytes are compared with them. ``learnable_sink`` a boolean, first, and true only
        beside the keys: the sinks are DeepSeek's sparse attention's, which nothing else reads,
        so true beside no indexer would be carried and exported as if it said something."""
        indexer, raw = self.indexer_bytes_per_slot, self.dsa_raw_fp8_bytes_per_slot
        if not isinstance(self.learnable_sink, bool):
            raise ValueError(f"learnable_sink is {quoted_value(self.learnable_sink)}: give true "
                             "or false (the config's learnable_sink)")
        if self.learnable_sink and indexer is None:
            raise ValueError("learnable_sink is true beside no indexer_bytes_per_slot: "
                             "learnable attention sinks are DeepSeek's sparse attention's "
                             "alone, so give the indexer's keys too, or leave it out without "
                             "an indexer")
        if indexer is not None:
            check_int("indexer_bytes_per_slot", indexer, minimum=1, maximum=MAX_ROW_BYTES,
                      hint="the indexer's part of kv_bytes_per_slot, or None without one")
            if indexer >= self.kv_bytes_per_slot:
                raise ValueError(
                    f"indexer_bytes_per_slot is {indexer} but kv_bytes_per_slot is "
                    f"{self.kv_bytes_per_slot}: the indexer's keys are a part of a token's KV "
                    "bytes (DeepSeek-V3.2's 132 of 1,284 B in bfloat16), so give fewer bytes "
                    "than kv_bytes_per_slot, or None without an indexer")
        if raw is None:
            return
        check_int("dsa_raw_fp8_bytes_per_slot", raw, minimum=1, maximum=MAX_ROW_BYTES,
                  hint="the raw fp8 latent and the indexer's keys, or None without an indexer")
        if indexer is None or raw <= indexer:
            raise ValueError(
                f"dsa_raw_fp8_bytes_per_slot is {raw!r} beside indexer_bytes_per_slot "
                f"{indexer}: it is a token's raw fp8 latent and the indexer's keys "
                "(DeepSeek-V3.2's 576 + 132), so give more bytes than the keys, or None without "
                "an indexer")

    def _check_ssm_dtype(self) -> None:
        """``ssm_dtype``, when set, is a state dtype (canonical name) whose elements are
        ``ssm_element_bytes``: a name beside no size, or beside another, would say two things."""
        dtype = self.ssm_dtype
        if dtype is None:
            return
        if dtype not in STATE_DTYPES:
            raise ValueError(f"ssm_dtype is {quoted_value(dtype)}: give one of "
                             f"{', '.join(STATE_DTYPES)} "
                             "(the dtypes engines keep a state in), or None when it is unknown")
        if self.ssm_element_bytes != DTYPE_BYTES[dtype]:
            raise ValueError(f"ssm_dtype is {dtype} ({DTYPE_BYTES[dtype]}-byte elements) but "
                             f"ssm_element_bytes is {self.ssm_element_bytes}: give the "
                             "element size of that dtype, or ssm_dtype None")

    def _check_kv_shared(self) -> None:
        """``kv_shared_layer_types``: attention labels, each of a type some cache layer keeps
        (the layer a shared one reads)."""
        shared = self.kv_shared_layer_types
        if isinstance(shared, (str, Mapping)) or not isinstance(shared, Iterable):
            raise ValueError(f"kv_shared_layer_types is {quoted_value(shared)}: give the shared "
                             "layers' "
                             "labels, e.g. ('sliding_attention', 'full_attention'), or none")
        shared = tuple(shared)
        object.__setattr__(self, "kv_shared_layer_types", shared)
        odd = next((x for x in shared if x not in self.layer_types or x == LINEAR_ATTENTION),
                   None)
        if odd is not None:
            raise ValueError(f"kv_shared_layer_types holds {quoted_value(odd)}: a shared layer "
                             "reads the KV "
                             "of an earlier attention layer of its type, so give attention "
                             f"labels layer_types has ({', '.join(sorted(set(self.layer_types)))})")

    def _check_sliding_kv(self) -> None:
        """``sliding_kv_bytes_per_slot``, when set, is a size for sliding layers beside other
        attention layers, and differs from theirs (equal is None: one size for all)."""
        sliding = self.sliding_kv_bytes_per_slot
        if sliding is None:
            return
        check_int("sliding_kv_bytes_per_slot", sliding, minimum=1, maximum=MAX_ROW_BYTES,
                  hint="or None when sliding layers add kv_bytes_per_slot too")
        if SLIDING_ATTENTION not in self.layer_types:
            raise ValueError(f"sliding_kv_bytes_per_slot is {sliding} but layer_types has no "
                             "sliding_attention layer: drop it, or add sliding layers")
        if not any(label not in (SLIDING_ATTENTION, LINEAR_ATTENTION)
                   for label in self.layer_types):
            raise ValueError(
                f"sliding_kv_bytes_per_slot is {sliding} but every attention layer slides: give "
                "their bytes as kv_bytes_per_slot, and sliding_kv_bytes_per_slot None")
        if self.indexer_bytes_per_slot is not None:
            raise ValueError(f"sliding_kv_bytes_per_slot is {sliding} beside a lightning indexer "
                             "(indexer_bytes_per_slot): no model has both; drop one")
        if sliding == self.kv_bytes_per_slot:  # one size for every layer, as None says
            object.__setattr__(self, "sliding_kv_bytes_per_slot", None)
            object.__setattr__(self, "sliding_kv_tensor_bytes", ())

    def kv_bytes_of(self, label: str) -> int:
        """Bytes one token adds to one layer of ``label``: ``sliding_kv_bytes_per_slot`` for a
        sliding layer where it is set, else ``kv_bytes_per_slot``; 0 for a state layer."""
        if label == LINEAR_ATTENTION:
            return 0
        if label == SLIDING_ATTENTION and self.sliding_kv_bytes_per_slot is not None:
            return self.sliding_kv_bytes_per_slot
        return self.kv_bytes_per_slot

    def _check_kv_tensors(self) -> None:
        """``kv_dtype`` a known dtype and ``kv_tensor_bytes`` one or two sizes that add up to
        ``kv_bytes_per_slot``."""
        if self.kv_dtype is not None and self.kv_dtype not in KNOWN_DTYPES:
            raise ValueError(f"kv_dtype is {quoted_value(self.kv_dtype)}: give one of "
                             f"{', '.join(KNOWN_DTYPES)}, or None when it is unknown")
        self._check_split("kv_tensor_bytes", "kv_bytes_per_slot")

    def _check_split(self, field: str, total_field: str) -> None:
        """``field`` (a K / V split) is one or two sizes that add up to ``total_field``, beside
        the KV dtype; () where there is no such total (sliding layers of the full ones' bytes)."""
        split = getattr(self, field)
        if isinstance(split, (str, bytes, Mapping)) or not isinstance(split, Iterable):
            raise ValueError(f"{field} is {quoted_value(split)}: give (K, V) or (latent,) bytes")
        object.__setattr__(self, field, split := tuple(split))
        for nbytes in split:
            check_int(field, nbytes, minimum=1, maximum=MAX_ROW_BYTES)
        if why := split_problem(split, total_field, getattr(self, total_field), self.kv_dtype):
            raise ValueError(f"{field} {split} {why}: give (K, V) or (latent,) bytes that add "
                             f"up to {total_field}, and the KV dtype (the engines' logs name "
                             "it), or ()")

    def _check_whole(self, field: str, tensor: str, units: tuple[str, str], hint: str) -> None:
        """``field``, when set, is a size that divides the state tensor ``tensor`` ("an ssm"):
        ``units`` name what it counts (its name, the plural of what the tensor is made of)."""
        size = getattr(self, field)
        if size is None:
            return
        check_int(field, size, minimum=1, hint=hint)
        name = tensor.split()[-1]
        nbytes = self.state_const_bytes.get(name)
        if nbytes is None or nbytes % size:
            has = f"no {name} tensor" if nbytes is None else f"{tensor} tensor of {nbytes} B"
            raise ValueError(f"{field} is {size} but state_const_bytes has {has}: give the "
                             f"{units[0]} of {tensor} tensor that is whole {units[1]}, or None")

    @property
    def has_attention(self) -> bool:
        return any(label != LINEAR_ATTENTION for label in self.layer_types)

    @property
    def has_state(self) -> bool:
        return LINEAR_ATTENTION in self.layer_types

    @property
    def mla(self) -> bool:
        """Whether the attention layers keep MLA's latent (DeepSeek's, Kimi Linear's full
        layers): one tensor a layer, not K and V (``kv_tensor_bytes`` of one part). The pages
        name such layers' KV by it, as the Model page's kinds do; raw bytes say nothing."""
        return len(self.kv_tensor_bytes) == 1

    @property
    def conv_free_state(self) -> bool:
        """State layers that keep no conv tensor: lightning attention's (MiniMax), which vLLM
        serves with one class; FlatKV does not model SGLang's (its Bailing / MiniCPM hybrids
        keep one beside an empty conv tensor)."""
        return self.has_state and "conv" not in self.state_const_bytes

    @property
    def state_bytes_per_layer(self) -> int:
        """Bytes of all state tensors of one state layer (one request's state in that layer)."""
        return sum(self.state_const_bytes.values())

    @property
    def kv_bytes_per_token(self) -> int:
        """Bytes one token adds across every attention layer (full and sliding) of one TP rank:
        what a request's history grows by, before any window drops it."""
        return sum(self.kv_bytes_of(label) for label in self.layer_types)

    @property
    def state_bytes_per_request(self) -> int:
        """Bytes of one request's state across every state layer of one TP rank."""
        return self.state_bytes_per_layer * self.count(LINEAR_ATTENTION)

    @property
    def conv_row_bytes(self) -> int | None:
        """Bytes of one row of the conv state (whole: checked on construction), None when its
        rows are not known."""
        if self.conv_rows is None:
            return None
        return self.state_const_bytes["conv"] // self.conv_rows

    def conv_bytes_with_drafts(self, speculative_tokens: int) -> int:
        """Bytes of the conv state when vLLM widens it to ``conv_rows + speculative_tokens``
        rows; the conv bytes as given when it does not (``conv_rows`` None)."""
        row = self.conv_row_bytes
        if row is None:
            return self.state_const_bytes.get("conv", 0)
        return row * (self.conv_rows + speculative_tokens)

    @property
    def windowed_labels(self) -> tuple[str, ...]:
        """The labels of this model's layers that keep a bounded span (``WINDOWED``: sliding,
        chunked), in that order; empty when every attention layer keeps all its history."""
        return tuple(label for label in WINDOWED if label in self.layer_types)

    def window(self, label: str) -> int | None:
        """Tokens a layer of ``label`` keeps at most: the sliding window, the attention chunk,
        None for full attention and state."""
        return window_tokens(label, sliding_window=self.sliding_window,
                             attention_chunk_size=self.attention_chunk_size)

    def count(self, label: str) -> int:
        """How many cache layers carry ``label``."""
        return self.layer_types.count(label)

    def components(self) -> list[ComponentSpec]:
        """The planner's ComponentSpecs for this profile (reference vocabulary and order)."""
        return components_from_layers(
            layer_types=self.layer_types,
            kv_bytes_per_slot=self.kv_bytes_per_slot,
            state_const_bytes=self.state_const_bytes,
            sliding_kv_bytes_per_slot=self.sliding_kv_bytes_per_slot,
        )


# CacheProfile fields a raw model, its link and its JSON keep as they are, under their own names
# (the others: layer_types as a pattern, state_const_bytes as pairs, name, kv_bytes_per_slot).
# Absent from a JSON means the field's default. A test checks this covers every CacheProfile field.
CARRIED_FIELDS = ("sliding_window", "kernel_block_size", "architectures", "ssm_element_bytes",
                  "config_mamba_ssm_dtype", "config_mamba_ssm_cache_dtype", "mamba_chunk_size",
                  "conv_rows", "indexer_bytes_per_slot", "attention_chunk_size", "kv_dtype",
                  "kv_tensor_bytes",
                  "conv_element_bytes", "sliding_kv_bytes_per_slot", "kv_shared_layer_types",
                  "sliding_kv_tensor_bytes", "ssm_dtype", "learnable_sink", "gdn_key_head_dims")


# The fields only a model's profile has, which raw bytes (a link's custom model, an export) do
# not carry: the TP its heads were split over and its profiles at fewer ranks (SGLang's
# attention DP) and an indexed MLA layer's raw fp8 bytes (SGLang's trtllm DSA layout), which
# bytes alone cannot re-derive. (Its GDN layers' key head dims are carried: a Qwen3-Next
# exported and loaded back keeps vLLM's prefill checkpoint block.)
MODEL_ONLY_FIELDS = ("tp", "attention_dp_profiles", "dsa_raw_fp8_bytes_per_slot")


def is_unset(value: object) -> bool:
    """Whether a carried field's ``value`` says "not given" (None, False, an empty tuple or
    set), which a link and a JSON leave out; False by identity: 0 == False, and a 0 is a
    value to refuse, not one to drop."""
    return value is None or value is False or (isinstance(value, (tuple, frozenset))
                                               and not value)


def profile_to_dict(profile: CacheProfile) -> dict:
    """The app's JSON for a model (export, and loadable again by ``load_model_json``). The
    sliding window is always written (null without sliding layers), as exports before the
    other fields had it; every other carried field (the attention chunk too) only when set."""
    carried = {f: getattr(profile, f) for f in CARRIED_FIELDS if f != "sliding_window"}
    return {
        "format": PROFILE_FORMAT,
        "name": profile.name,
        "layers": format_layer_pattern(profile.layer_types),
        "kv_bytes_per_slot": profile.kv_bytes_per_slot,
        "state_const_bytes": dict(profile.state_const_bytes),
        "sliding_window": profile.sliding_window,
        **{f: sorted(v) if isinstance(v, frozenset) else list(v) if isinstance(v, tuple)
           else v for f, v in carried.items() if not is_unset(v)},
    }


_PROFILE_KEYS = {"format", "name", "layers", "kv_bytes_per_slot", "state_const_bytes",
                 *CARRIED_FIELDS}


def profile_from_dict(data: dict) -> CacheProfile:
    """A raw profile from its export dict (``profile_to_dict``). Unknown keys are refused: a
    misspelt ``kernel_block_sise`` would otherwise plan an MLA model at the wrong page size."""
    unknown = sorted(set(data) - _PROFILE_KEYS)
    if unknown:
        raise ValueError(f"model JSON has unknown {names_text('key', unknown)}: a "
                         f"{PROFILE_FORMAT} file holds {', '.join(sorted(_PROFILE_KEYS))}")
    state = data.get("state_const_bytes", {})
    if not isinstance(state, dict):
        raise ValueError(f"model JSON state_const_bytes is {quoted_value(state)}: give an object "
                         "of tensor "
                         "name: bytes, e.g. {\"conv\": 49152}, or {} for a model without state "
                         "layers")
    # absent: the app's name for a model by hand; else text to print, as a model file's
    name = check_name("model JSON name", data.get("name", "custom"), fix=NAME_FIX)
    layers = data.get("layers")
    if isinstance(layers, list):
        layers = format_layer_pattern([str(x) for x in layers])
    if not isinstance(layers, str):
        raise ValueError("model JSON layers must be a layer pattern such as 'full*32'")
    return CacheProfile(
        layer_types=tuple(parse_layer_pattern(layers)),
        kv_bytes_per_slot=data.get("kv_bytes_per_slot", 0),
        state_const_bytes=state,
        name=name,
        **{f: data[f] for f in CARRIED_FIELDS if f in data},
    )
