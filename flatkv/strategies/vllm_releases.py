"""What vLLM does by model class and by release: the tables to revisit when a vLLM release lands.

``vllm.py`` sizes the layout from the rules every release shares; which model classes take
another path (mode all run as align, a window a token wider, drafted conv rows in P, prefill
checkpoint blocks, a float32 ssm state), which architectures a current release no longer
serves, and what older releases log are facts of a release and of its model registry. They sit
here, apart from the arithmetic, so that a new release is checked against one page of tables,
and the app, CLI and notes read them from one place.
"""

from __future__ import annotations

from collections.abc import Iterable

from flatkv.profile import CacheProfile
from flatkv.strategies.base import StrategyOptions, StrategyResult

# vLLM model classes whose get_mamba_state_shape_from_config passes num_spec (0.28; the Mamba2
# mixers of FalconH1ForCausalLM, GraniteMoeHybridForCausalLM and Zamba2ForCausalLM since 0.32):
# the config check sizes P from the state with its drafted conv rows (KimiLinearForCausalLM
# through kda_state_shape, Lfm3ForCausalLM through its own _short_conv_state_shape). The
# others with a widened conv (Lfm2ForCausalLM and Lfm2MoeForCausalLM, whose
# ShortConv.get_state_shape takes num_spec since vLLM PR #50272, up to 0.34) size P from the
# state without them, while their layers keep the widened state in that page:
# MambaSpec.page_size_bytes asserts page_size_padded >= page_size, so it must fit, else vLLM
# dies at start-up (vLLM issue #57721: granite-4.0-h-tiny with 2 ngram tokens before 0.32; PR
# #47635).
SIZES_P_WITH_DRAFTED_CONV = frozenset({
    "Qwen3NextForCausalLM", "Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM",
    "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration",
    "NemotronHForCausalLM", "Mamba2ForCausalLM", "OlmoHybridForCausalLM",
    "KimiLinearForCausalLM", "FalconH1ForCausalLM", "GraniteMoeHybridForCausalLM",
    "Zamba2ForCausalLM", "Lfm3ForCausalLM", "BailingMoeV3ForCausalLM",
})
# ... of which these only since a release: earlier ones sized P without the drafted rows
DRAFTED_CONV_SINCE = {"FalconH1ForCausalLM": "0.32", "GraniteMoeHybridForCausalLM": "0.32",
                      "Zamba2ForCausalLM": "0.32"}


# vLLM model classes (and their MTP drafts) that do not declare SupportsMambaPrefixCaching in
# MODE_ALL_RELEASE (there only NemotronH, FalconH1, GraniteMoeHybrid, Zamba2, Jamba, Mamba and
# Mamba2 do, FalconMamba served by Mamba's class). Asked for mamba cache mode all, vLLM runs
# them in align: MambaModelConfig.verify_and_update_config
# logs "Hybrid or mamba-based model detected without support for prefix caching with Mamba cache
# 'all' mode: falling back to 'align' mode." (Qwen3-Next's own code raises in mode all, but the
# fallback comes first, so the raise is not reached from the command line.) The registry's other
# names for a class are listed too, as configs name them: MiniMaxM1ForCausalLM and
# MiniMaxForCausalLM run MiniMaxText01ForCausalLM.
ALIGN_INSTEAD_OF_ALL = frozenset({
    "Qwen3NextForCausalLM", "Qwen3NextMTP", "Qwen3_5ForCausalLM",
    "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForCausalLM",
    "Qwen3_5MoeForConditionalGeneration", "Qwen3_5MTP", "Qwen3_5MoeMTP",
    "KimiLinearForCausalLM", "MiniMaxText01ForCausalLM", "MiniMaxM1ForCausalLM",
    "MiniMaxForCausalLM", "Lfm2ForCausalLM",
    "Lfm2MoeForCausalLM", "Plamo2ForCausalLM", "OlmoHybridForCausalLM",
    "BailingMoeV3ForCausalLM",
})
# The vLLM release whose code FlatKV's vLLM figures and start-up lines follow (bench/vllm_check.py
# runs its sizing code)
CURRENT_RELEASE = "0.34"
# The last vLLM release with mamba cache mode all (its config/cache.py: MambaCacheMode =
# Literal["all", "align", "none"]; 0.32's is ["align", "none"]). FlatKV's vLLM figures and
# start-up lines in mode all are this release's: its model classes and sizing code, its log.
MODE_ALL_RELEASE = "0.31"
# Model classes of state layers that later releases serve and MODE_ALL_RELEASE's registry does
# not (0.34.0's registry against 0.31.0's): no release runs them in mode all.
SERVED_AFTER_MODE_ALL = frozenset({"Lfm3ForCausalLM"})


# The one vLLM class whose state layers keep no conv state (lightning attention): a state
# without one is served by it whatever the model is called (a model typed by hand names none).
LIGHTNING_CLASS = "MiniMaxText01ForCausalLM"


# vLLM classes whose state layers run MambaMixer2, which keeps one prefill checkpoint block a
# request in mamba cache mode align since vLLM 0.32 (num_prefill_checkpoint_blocks=1).
PREFILL_CHECKPOINT_CLASSES = frozenset({
    "NemotronHForCausalLM", "FalconH1ForCausalLM", "GraniteMoeHybridForCausalLM",
    "Zamba2ForCausalLM", "Mamba2ForCausalLM",
})
# vLLM classes whose GDN layers keep a prefill checkpoint block a request in mamba cache mode
# align (0.33 and later) where their prefill runs on FlashInfer, and the GPUs where it does in
# vLLM 0.34 (qwen_gdn_linear_attn's prefill backend choice), each with the key head dim it
# needs: any on SM 9.0 (Hopper); 128 on SM 10.x (B200) under CUDA 13, the runtime 0.34's wheel
# is built for. Other GPUs (A100, L40S) run it on Triton, with no checkpoint block.
GDN_CHECKPOINT_CLASSES = frozenset({
    "Qwen3NextForCausalLM", "Qwen3_5ForConditionalGeneration",
    "Qwen3_5MoeForConditionalGeneration", "Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM",
})
# ... whose checkpoints lie on a grid of this many tokens, which P aligns to in align
GDN_CHECKPOINT_GRID = 64
# By the GPU preset's compute capability (budget.compute_capability; qwen_gdn_linear_attn.py
# 321-343: is_device_capability(90), is_device_capability_family(100) with head_k_dim 128): the
# H100 and H200 (9.0) and the B200 (10.0)
FLASHINFER_GDN_CAPABILITIES: dict[tuple[int, int], int | None] = {(9, 0): None, (10, 0): 128}
# vLLM classes whose KDA layers keep a prefill checkpoint block a request in mamba cache mode
# align where their prefill runs on FlashKDA (kda_checkpoint.py 9-10: alignment 16 for
# "flashkda", else none; the layers' get_kv_cache_spec, 0.34.0: models/kimi_k3/nvidia/kda.py
# 920-928 KimiK3DeltaAttention, models/glm5next/common/kda.py 202-210 Glm5NextLinearAttention),
# each with the first release that does (0.31.0's kimi_k3/nvidia/kda.py 741-749; Glm5Next's
# since 0.32.0, kda.py 174, none in 0.31.0). They declare no get_prefill_checkpoint_alignment
# (abstract.py 71-76: None), so _align_hybrid_block_size aligns P to nothing more
# (interface.py 1101-1106). Not KimiLinearForCausalLM: Kimi-Linear's config has no
# use_full_rank_gate, so its decoder builds KimiGatedDeltaNetAttention
# (kimi_k3/nvidia/model.py 727-742), which prefills on Triton alone (kimi_gdn_linear_attn.py
# 280-289) and keeps MambaBase's spec, no checkpoint block, on any GPU.
KDA_CHECKPOINT_SINCE = {"KimiK3ForConditionalGeneration": "0.31",
                        "KimiK31ForConditionalGeneration": "0.31",
                        "Glm5NextForCausalLM": "0.32", "Glm5NextForConditionalGeneration": "0.32"}
# FlashKDA's GPUs by compute capability major (SM 9.x, 10.x, 12.x: the H100, H200 and B200
# presets, not the A100, L40S, RTX 4090) and the KDA head dim it takes, with bfloat16
# activations and a bounded gate (kimi_k3/nvidia/kda.py 370-386 is_flashkda_supported, picked
# by resolve_kda_prefill_backend's auto, 493-532; glm5next/common/kda.py 141-164). The gate's
# bound is a config field (Kimi-K3's gate_lower_bound, GLM-5.3-Flash's linear_lower_bound)
# FlatKV reads none of: taken as bounded.
FLASHKDA_CAPABILITY_MAJORS = frozenset({9, 10, 12})
FLASHKDA_HEAD_DIM = 128
# The KV dtypes of a model FlashKDA refuses on any GPU (bfloat16 input alone; kda.py 378-385,
# glm5next/common/kda.py 151-158): --kv-cache-dtype auto keeps the model's dtype, so a float16
# or float32 KV cache is a model run in it (vLLM's --kv-cache-dtype names no float32)
FLASHKDA_REFUSED_KV_DTYPES = frozenset({"float16", "float32"})
# Every vLLM class some release keeps a prefill checkpoint block for, each under its condition
CHECKPOINT_CLASSES = (PREFILL_CHECKPOINT_CLASSES | GDN_CHECKPOINT_CLASSES
                      | frozenset(KDA_CHECKPOINT_SINCE))


# vLLM 0.34's default --block-size (16 before)
RECENT_VLLM_BLOCK_SIZE = 64
# Whose engine options a view starts from (SPEC 3.1's anchor log: block size 16, no prefix
# caching), in the words every page and note showing vLLM figures names them by
ANCHOR_OPTIONS = "vLLM 0.19's default engine options"

# The releases whose "GPU KV cache size" is num_blocks // groups x min block size (``vllm.py``'s
# module docstring): 0.19.0 logs it (issue #40691), 0.26.0 logs max concurrency x max_model_len.
OLDER_VLLM_LOG = "vLLM 0.19 and earlier"
OLDER_VLLM_TELL = ("a multiple of the smallest block size; the current figure divided by "
                   "max_model_len is the logged concurrency")
# ... whose layout of a state hybrid is this release's (its wheel read, vllm==0.19.0), where it
# is not a current one's: model_executor/models/config.py:200-292
# (HybridAttentionMambaModelConfig.verify_and_update_config) makes P the smallest multiple of a
# fixed alignment whose attention page covers the state page, OLDER_ALIGNMENT (16; an MLA
# model's 64, 128 on CUTLASS MLA: config.py:206-218), in mamba cache mode all lcm(chunk, it)
# (config.py:261-265), and keeps a larger --block-size as it is (config.py:279-280): neither the
# backend's kernel block nor --block-size is part of the alignment (0.23 and later: A = max(kernel
# block, block_size)), so at --block-size 64 Qwen3-Next's P is 544 in 0.19, 576 now.
OLDER_RELEASE = "0.19"
OLDER_ALIGNMENT = 16
OLDER_MLA_ALIGNMENT = 64
OLDER_CUTLASS_MLA_ALIGNMENT = 128  # (FlatKV's kernel block 128 on an MLA model: CUTLASS MLA)
# Classes whose conv state OLDER_RELEASE never widens by drafted rows, in P's sizing or in its
# layers: ShortConv's shape takes no num_spec (layers/mamba/mamba_utils.py:153-162), and
# kda_state_shape takes one but leaves it unused (mamba_utils.py:203-233; kimi_linear.py:626-643
# passes it, layers/kda.py:96-101 does not). Its MambaMixer2 and GDN layers widen theirs
# (mamba_mixer2.py:492,902-911; gdn_linear_attn.py:215-224), and FalconH1, GraniteMoeHybrid and
# Zamba2 size P without the rows (DRAFTED_CONV_SINCE: falcon_h1.py:529-560,
# granitemoehybrid.py:618-640 and zamba2.py:867-886 pass no num_spec), as 0.31 does.
OLDER_UNWIDENED_CLASSES = frozenset({"Lfm2ForCausalLM", "Lfm2MoeForCausalLM",
                                     "KimiLinearForCausalLM"})
# Classes whose KDA recurrent (ssm) state OLDER_RELEASE keeps in float32 whatever
# --mamba-ssm-cache-dtype says: its kda_state_dtype returns float32 for it and reads no ssm dtype
# (layers/mamba/mamba_utils.py:90-96; kimi_linear.py:617-623), where current releases keep a
# told bfloat16 (KDA_SSM_DTYPES)
OLDER_FLOAT32_SSM_CLASSES = frozenset({"KimiLinearForCausalLM"})
# ... and the releases between, which no log here shows: 0.23.0's kv_cache_utils (the wheel
# bench/engine_checks.sh fetches) already logs int(max_concurrency * max_model_len), its
# concurrency not checked against these figures; 0.20 to 0.22 are not read
UNCHECKED_LOG_RELEASES = ("vLLM 0.20 to 0.25 are not checked against these figures (0.23.0's "
                          "code already logs max concurrency x max_model_len)")
# The classes FlatKV meets that CURRENT_RELEASE's model registry serves and OLDER_RELEASE's does
# not (its _VLLM_MODELS, model_executor/models/registry.py:626-637): 0.19 refuses such a model
# at start-up, so it logged no figure of it. Made, and rechecked by bench/vllm_check.py
# --vllm-older (check_older_unserved), as FlatKV's classes (transformers' classes of the model
# types it reads, hf_resolve.types_by_class, and SERVED_AS; its presets'; those this module
# tables) in 0.34.0's registry less those in 0.19.0's: 147 of 0.34's classes are not in 0.19's,
# these 20 of them FlatKV's (the Nemotron Omni and transcribe classes FLOAT32_SSM_UNLESS_TOLD
# names among them). (A class no registry holds, which an engine could only run through
# its transformers backend, is no table's: 0.19's pins transformers < 5.)
OLDER_UNSERVED_CLASSES = frozenset({
    "AliceAIForCausalLM", "BailingMoeV3ForCausalLM", "BailingMoeV3VLForConditionalGeneration",
    "Cohere2MoeForCausalLM", "ExaoneMoeForCausalLM", "Gemma4UnifiedForConditionalGeneration",
    "Glm5NextForCausalLM", "Glm5NextForConditionalGeneration", "GraniteMoeSWAForCausalLM",
    "GraniteSWAForCausalLM", "HYV3ForCausalLM", "KimiK31ForConditionalGeneration",
    "KimiK3ForConditionalGeneration", "Lfm3ForCausalLM", "Qwen3_5ForCausalLM",
    "Qwen3_5MoeForCausalLM", "NemotronH_Nano_Omni_Reasoning_V3",
    "NemotronH_Super_Omni_Reasoning_V3", "NemotronH_Omni_Reasoning_V3",
    "Nemotron3_5TranscribeForConditionalGeneration",
})


def release_before(release: str) -> str:
    """The vLLM release before ``release`` ("0.30" before "0.31"): the last one of an older
    count, in the words "0.28 to 0.30"."""
    *head, minor = release_key(release)
    return ".".join(str(part) for part in (*head, minor - 1))


def checkpoint_since(profile: CacheProfile) -> str:
    """The first vLLM release keeping prefill checkpoint blocks for the model's state layers:
    a KDA class's (KDA_CHECKPOINT_SINCE: Kimi-K3's 0.31, Glm5Next's 0.32), 0.33 for GDN's
    (GDN_CHECKPOINT_CLASSES), else 0.32, the release that brought Mamba2's (a class no release
    keeps them for is told apart by ``class_keeping_no_checkpoints``)."""
    if kda := [KDA_CHECKPOINT_SINCE[a] for a in profile.architectures
               if a in KDA_CHECKPOINT_SINCE]:
        return min(kda, key=release_key)
    return "0.33" if GDN_CHECKPOINT_CLASSES.intersection(profile.architectures) else "0.32"


def older_log_blocker(profile: CacheProfile, options: StrategyOptions) -> str:
    """Why OLDER_VLLM_LOG ran no layout of these options, so their "GPU KV cache size" is no
    figure of theirs ("" where they ran it): a model class OLDER_RELEASE does not serve
    (OLDER_UNSERVED_CLASSES: Qwen3.5's text-only Qwen3_5ForCausalLM, where its
    Qwen3_5ForConditionalGeneration is served), or prefill checkpoint blocks in mode align
    (0.32 and later).
    Mode all stays: 0.19.0 runs it (config/cache.py:25 and 109-116, its MambaCacheMode; P aligned to
    lcm(chunk, 16) in models/config.py:244-265), falling back to align for the classes 0.31
    does (config.py:447-456). Where 0.19's own layout is another or did not start (its P,
    drafted conv rows), ``vllm.older_release_layout`` says so."""
    # (vLLM serves a model by the first of its architectures its registry holds)
    if profile.architectures and OLDER_UNSERVED_CLASSES.issuperset(profile.architectures):
        return (f"{OLDER_VLLM_LOG} do not serve {profile.architectures[0]} (vLLM "
                f"{OLDER_RELEASE}'s model registry has no such class)")
    if (profile.has_state and options.mamba_cache_mode == "align"
            and options.prefill_checkpoint_blocks):
        return f"{OLDER_VLLM_LOG} had no prefill checkpoint blocks ({checkpoints_kept(profile)})"
    return ""


def checkpoints_kept(profile: CacheProfile) -> str:
    """Which vLLM releases keep prefill checkpoint blocks for the model's class, in
    ``older_log_blocker``'s words: a Mamba2, GDN or KDA class's release (``checkpoint_since``);
    for another class none up to CURRENT_RELEASE (Jamba's MambaMixer takes the MambaSpec
    default, no checkpoint block), so the figures' told blocks are no release's; a model by
    hand names no class, so both are said."""
    if CHECKPOINT_CLASSES.intersection(profile.architectures):
        return f"vLLM {checkpoint_since(profile)} and later keep them"
    if keeps_none := class_keeping_no_checkpoints(profile):
        return f"no vLLM release up to {CURRENT_RELEASE} keeps them for {keeps_none}"
    return ("vLLM 0.32 and later keep them for a Mamba2 class, 0.33 and later for a GDN "
            "class; this model names no class")


def class_keeping_no_checkpoints(profile: CacheProfile) -> str:
    """The model's class where no vLLM release up to CURRENT_RELEASE keeps it a prefill
    checkpoint block (no Mamba2, GDN or KDA class of CHECKPOINT_CLASSES: Jamba's MambaMixer
    takes MambaSpec's default of none, as Kimi-Linear's Triton KDA does), so figures told some
    are no release's; "" where a release keeps them or the model names no class."""
    if not profile.architectures or CHECKPOINT_CLASSES.intersection(profile.architectures):
        return ""
    return min(profile.architectures)


# Architectures vLLM has stopped serving, with the last release that serves them (its
# registry's _PREVIOUSLY_SUPPORTED_MODELS, as of 0.34.0): later releases refuse them at start-up.
LAST_SERVED_IN = {"BambaForCausalLM": "0.23.0", "MiniMaxForCausalLM": "0.23.0",
                  "MiniMaxText01ForCausalLM": "0.23.0", "MiniMaxM1ForCausalLM": "0.23.0",
                  "Plamo2ForCausalLM": "0.26.0"}


# vLLM's start-up check of one request holds its null block back from the budget since 0.29
# (PR #47272); before, it weighed the request against the whole budget (0.23.0's
# kv_cache_utils._check_enough_kv_cache_memory, which bench/vllm_check.py --vllm-dropped runs)
NULL_BLOCK_CHECKED_SINCE = (0, 29)


def release_key(release: str) -> tuple[int, ...]:
    """A vLLM release's number as a key that sorts releases in order ("0.31" before "0.32",
    "0.23.0" before (0, 29))."""
    return tuple(int(part) for part in release.split("."))


def null_block_checked(profile: CacheProfile) -> bool:
    """Whether the vLLM releases serving this model hold the null block back in their start-up
    check: every current one does, and a model whose last release (``LAST_SERVED_IN``) is
    before NULL_BLOCK_CHECKED_SINCE was checked by releases that did not (MiniMax's 0.23.0,
    PLaMo 2's 0.26.0)."""
    last = last_release(profile)
    return last is None or release_key(last[1]) >= NULL_BLOCK_CHECKED_SINCE


def last_release(profile: CacheProfile) -> tuple[str, str] | None:
    """``(architecture, the last vLLM release serving it)`` of the first of the profile's
    architectures current releases dropped (``LAST_SERVED_IN``), None where they serve it."""
    return next(((a, LAST_SERVED_IN[a]) for a in profile.architectures if a in LAST_SERVED_IN),
                None)


def last_served_text(profile: CacheProfile) -> str:
    """Which vLLM releases serve the model where later ones have dropped its architecture (a
    reviewer's log can only be from those), "" where current releases serve it."""
    if (last := last_release(profile)) is None:
        return ""
    return (f"vLLM serves {last[0]} up to {last[1]} only, so a log of it comes from such a "
            "release: later ones refuse it, their model registry listing it as previously "
            "supported")


def last_served_note(results: Iterable[StrategyResult], profile: CacheProfile) -> str:
    """``last_served_text`` beside a comparison where vLLM's figures stand; "" where vLLM
    refuses, as its reason says it already."""
    if any(r.strategy == "vllm" and r.applies for r in results):
        return last_served_text(profile)
    return ""


# vLLM classes whose sliding layers keep one token more than the config's window (0.29 and
# later: commandr.py and cohere2_moe.py pass sliding_window + 1, as Cohere2's sliding layers see
# [pos - W, pos] in training; 0.28 and earlier passed the window as given)
WINDOW_PLUS_ONE_CLASSES = frozenset({"Cohere2ForCausalLM", "Cohere2MoeForCausalLM"})
WINDOW_PLUS_ONE_SINCE = "0.29"


# vLLM classes whose config hook picks the ssm state's dtype where --mamba-ssm-cache-dtype is
# auto (its default): the config's mamba_ssm_cache_dtype, else float32
# (NemotronHForCausalLMConfig.update_mamba_ssm_cache_dtype and its
# DEFAULT_MAMBA_SSM_CACHE_DTYPE, model_executor/models/config.py 1143-1170 in 0.34.0, 678-705
# in 0.31.0; transformers' NemotronHConfig fills the field in as float32 too). vLLM 0.19.0's
# hook read the config's, else float16 (OLDER_SSM_DEFAULT: models/config.py 483-500, its own
# NemotronHConfig naming no such field). Its MODELS_CONFIG_MAP gives the hook to the first two
# classes in all three releases (OLDER_FLOAT32_SSM_UNLESS_TOLD); 0.34.0's gives the same hook,
# reading the text config's field, to the Nemotron VL, Omni and transcribe classes
# (NemotronHNanoVLV2Config, 1173-1179, and Nemotron3_5TranscribeForConditionalGenerationConfig,
# 1189-1195, each calling update_mamba_ssm_cache_dtype with hf_config.text_config; the map
# 1588-1596), whose get_mamba_state_dtype_from_config asks NemotronHForCausalLM's with that
# text config (nano_nemotron_vl.py 1775-1778, nemotron3_5_transcribe.py 623-627). 0.31.0's map
# names NemotronH_Nano_VL_V2 alone (1053, its hook 708-714: its three Omni classes, which it
# serves, keep the model's dtype there), and 0.19.0's NemotronHNanoVLV2Config sets no dtype
# (503-509): the Omni and transcribe classes are 0.34's figures, as the column is.
OLDER_FLOAT32_SSM_UNLESS_TOLD = frozenset({"NemotronHForCausalLM", "NemotronHPuzzleForCausalLM"})
FLOAT32_SSM_UNLESS_TOLD = OLDER_FLOAT32_SSM_UNLESS_TOLD | {
    "NemotronH_Nano_VL_V2", "NemotronH_Nano_Omni_Reasoning_V3",
    "NemotronH_Super_Omni_Reasoning_V3", "NemotronH_Omni_Reasoning_V3",
    "Nemotron3_5TranscribeForConditionalGeneration",
}
SSM_DEFAULT, OLDER_SSM_DEFAULT = "float32", "float16"


# vLLM classes whose KDA layers keep their recurrent (ssm) state only in KDA_SSM_DTYPES: their
# get_mamba_state_dtype_from_config (and each KDA layer's get_state_dtype) hands
# --mamba-ssm-cache-dtype to MambaStateDtypeCalculator.kda_state_dtype, which raises
# "KDA recurrent state supports only auto, float32, and bfloat16; got float16"
# (model_executor/layers/mamba/mamba_utils.py 141-157, 0.34.0; 133-149 in 0.31.0) as the
# hybrid's block size is aligned at start-up (Platform._align_hybrid_block_size). "auto" is
# float32 (KDA_AUTO_SSM_DTYPE: its line 148-149) whatever the model's dtype, a bfloat16 one too
# (Kimi Linear's get_mamba_state_dtype_from_config and its KDA layers' get_state_dtype pass the
# flag as told: models/kimi_k3/nvidia/model.py 1596-1604, kda.py 579-587).
# KimiK31ForConditionalGeneration runs KimiK3ForConditionalGeneration, which asks
# KimiLinearForCausalLM; Glm5Next's ConditionalGeneration asks its CausalLM. No config field
# reaches it: only the flag does.
# (KDA_FLOAT32_SSM_CLASSES' KDA pass no ssm dtype: no refusal there.)
KDA_SSM_DTYPES = ("float32", "bfloat16")
KDA_AUTO_SSM_DTYPE = "float32"
KDA_SSM_DTYPE_CLASSES = frozenset({
    "KimiLinearForCausalLM", "KimiK3ForConditionalGeneration", "KimiK31ForConditionalGeneration",
    "Glm5NextForCausalLM", "Glm5NextForConditionalGeneration",
})
# vLLM classes whose KDA state dtype is asked without --mamba-ssm-cache-dtype, so kda_state_dtype
# takes "auto": the recurrent state is float32 whatever the flag says (bailing_moe_v3.py's
# get_mamba_state_dtype_from_config and its KDA layers' get_state_dtype, which
# BailingMoeV3VLForConditionalGeneration's asks; alice_ai.py's, 0.34.0).
KDA_FLOAT32_SSM_CLASSES = frozenset({
    "BailingMoeV3ForCausalLM", "BailingMoeV3VLForConditionalGeneration", "AliceAIForCausalLM",
})
