"""The lines vLLM's start-up log prints at a layout's figures, in its words and number formats.

``vllm.py`` sizes the layout; this module words what vLLM logs of it, for a reviewer to set
beside an engine's log: the block size and state page padding lines, the KV cache memory, the
padding-layers warning, the blocks fit after warm-up, and the "GPU KV cache size" line with
the figure older releases printed there (``with_logged_tokens``). Its functions take the
figures the sizing found, so the log's wording changes here without touching the arithmetic,
and ``vllm.py`` imports this module, never the reverse. Whose words the lines are (a current
release's, or in mamba cache mode all vLLM 0.31's) is a ``LogFlavour`` the layout is given
before it is sized, so each line is worded once, as that release logs it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from flatkv.profile import CacheProfile
from flatkv.strategies.base import StrategyOptions, StrategyResult, n
from flatkv.strategies.vllm_releases import (
    CURRENT_RELEASE,
    MODE_ALL_RELEASE,
    OLDER_RELEASE,
    OLDER_VLLM_LOG,
    older_log_blocker,
)

# What vLLM MODE_ALL_RELEASE (0.31, the last release with mamba cache mode all) logs first in
# that mode, whatever the model: CacheConfig's check of the mode warns it is going
# (_validate_mamba_cache_mode), as the engine's config is made
MODE_ALL_DEPRECATED_LOG = ("Mamba cache mode 'all' is deprecated and will be removed in an "
                           "upcoming release. If this is a problem, please open an issue at "
                           "https://github.com/vllm-project/vllm/issues.")
# ... then, as VllmConfig checks the model: for a model of ALIGN_INSTEAD_OF_ALL, MambaModelConfig's
# warning that it runs align instead
ALL_AS_ALIGN_LOG = ("Hybrid or mamba-based model detected without support for prefix caching "
                    "with Mamba cache 'all' mode: falling back to 'align' mode.")
# ... or, for a model that keeps mode all, that its default model runner (V2) does not run it
# (VllmConfig.use_v2_model_runner, on CUDA with VLLM_USE_V2_MODEL_RUNNER unset)
MODE_ALL_V1_RUNNER_LOG = ("Model Runner V2 does not yet support mamba cache mode 'all'; using "
                          "the V1 model runner instead.")
# ... and where tokens are drafted, the same line with the drafting method's words elided: V2
# does not run ngram, suffix, medusa or mlp_speculator drafting either, and 0.31 lists each of
# its unsupported features in one line ("... support speculative method 'ngram', mamba cache
# mode 'all'; ..."), a method FlatKV is not told (MTP's adds nothing)
MODE_ALL_V1_RUNNER_DRAFTING_LOG = MODE_ALL_V1_RUNNER_LOG.replace("support ", "support ... ")

# The older forms of the KV cache size line (log_check: where a log line reads as one): before
# vLLM PR #50462 it and the concurrency are two lines (0.26.0 logs them so, 0.31.0 one; a
# reader knows releases, not PRs), and up to 0.19 the size is older_logged_tokens
TWO_LINE_FORM = "on two lines, as vLLM 0.26 logs it (0.31 and later log one)"
OLDER_FORM = f"on two lines, its tokens as {OLDER_VLLM_LOG} count them"
# What vLLM 0.34 names the pools of that line other than "GPU" (kv_cache_utils.py's
# _kv_cache_device_name: "GPU" on CUDA and ROCm, the device type in capitals on its other
# platforms, " + host" added where HiSparse keeps KV in host memory), each with where it is
# logged so; its figures are counted alike
OTHER_POOL_NAMES = (("XPU", "on an Intel GPU"), ("CPU", "on its CPU backend"),
                    ("GPU + host", "with HiSparse's host pools"))
# ... of which MODE_ALL_RELEASE logs the device types only (it has no HiSparse host pools)
MODE_ALL_POOL_NAMES = tuple(named for named in OTHER_POOL_NAMES if named[0] != "GPU + host")


@dataclass(frozen=True)
class LogFlavour:
    """Whose words a vLLM layout's start-up lines are: what that release logs that another
    does not. ``vllm.py`` tells it to the layout before it is sized, and the builders here
    word each line once by it (``start_up_log``, ``warmup_lines``, ``with_logged_tokens``):
    a current release's (CURRENT_LOG), or in mamba cache mode all MODE_ALL_RELEASE's
    (``mode_all_log``)."""

    release: str = CURRENT_RELEASE  # whose words; another is said in extras["log_release"]
    opening: tuple[str, ...] = ()  # the lines it logs first, as it checks its config
    warmup: bool = True  # whether it logs the blocks it fits after warm-up (WARMUP_LINE)
    # the other names of the pools its KV cache size line names (OTHER_POOL_NAMES' pairs)
    pool_names: tuple[tuple[str, str], ...] = OTHER_POOL_NAMES
    # the mamba cache mode asked, where vLLM runs another (its warning among ``opening``)
    mode_asked: str | None = None

    @property
    def current(self) -> bool:
        """Whether the words are a current release's (log_words: "a current ...")."""
        return self.release == CURRENT_RELEASE


CURRENT_LOG = LogFlavour()


def mode_all_log(*, fallback: bool, drafting: bool = False) -> LogFlavour:
    """The lines of vLLM MODE_ALL_RELEASE, the last release with mamba cache mode all, asked
    for that mode: its deprecation warning first, then its fallback warning (``fallback``: the
    model runs align, said in ``mode_asked``) or its model runner's (the mode kept; the drafting
    method elided where ``drafting``: MODE_ALL_V1_RUNNER_DRAFTING_LOG); its cache is the
    Available line's, so no line of blocks fit after warm-up (0.34's); and its KV cache size
    line names its pools "GPU" or the device type, never "GPU + host"."""
    runner = MODE_ALL_V1_RUNNER_DRAFTING_LOG if drafting else MODE_ALL_V1_RUNNER_LOG
    return LogFlavour(release=MODE_ALL_RELEASE,
                      opening=(MODE_ALL_DEPRECATED_LOG, ALL_AS_ALIGN_LOG if fallback else runner),
                      warmup=False, pool_names=MODE_ALL_POOL_NAMES,
                      mode_asked="all" if fallback else None)


# How the two memory lines of its log read: one budget, told as two releases tell it
WARMUP_LOG_NOTE = ("vLLM 0.34 on CUDA logs the Available line before warm-up, as an estimate, "
                   "and sizes its cache by the blocks it fits after it (the Memory after warmup "
                   "line, its GPU figures the run's: elided); up to 0.33 the Available line is "
                   "the cache")

# ... and in mamba cache mode all, whose lines are MODE_ALL_RELEASE's
MODE_ALL_MEMORY_NOTE = (f"vLLM {MODE_ALL_RELEASE} sizes its cache by the Available line: it "
                        "logs no Memory after warmup line (0.34's)")


def log_words(result: StrategyResult, *, in_brackets: bool = False) -> str:
    """Whose words a result's start-up lines are: a current release's (vLLM's named,
    CURRENT_RELEASE, apart from the 0.19 settings its figures run with), or, in mamba cache mode
    all, MODE_ALL_RELEASE's (``extras["log_release"]``: ``mode_all_log``), said to be the
    last with it after a comma or, ``in_brackets``, in brackets (within a sentence)."""
    if release := result.extras.get("log_release"):
        last = "the last release with mamba cache mode all"
        return f"vLLM {release}'s words ({last})" if in_brackets else (
            f"vLLM {release}'s words, {last}")
    if result.strategy == "vllm":  # the release, as the settings' are named (ANCHOR_OPTIONS)
        current = f"vLLM {CURRENT_RELEASE}'s words"
        return f"{current} (a current release)" if in_brackets else f"{current}, a current release"
    return "a current release's words"


def memory_log_note(result: StrategyResult) -> str:
    """How a vLLM result's memory lines read: 0.34's two (WARMUP_LOG_NOTE), or MODE_ALL_RELEASE's
    one in mamba cache mode all."""
    return MODE_ALL_MEMORY_NOTE if result.extras.get("log_release") else WARMUP_LOG_NOTE


def format_gib(nbytes: int) -> str:
    """Bytes in GiB as vLLM's log prints them (its ``format_gib``: the float rounded to two
    places, as Python prints it: 10.0, 44.59)."""
    return f"{round(nbytes / 2**30, 2)}"


def padding_layers_text(padding: int, count: int) -> str:
    """vLLM's padding-layers warning (``_get_kv_cache_groups_uniform_page_size``), its words."""
    return (f"Add {padding} padding layers, may waste at most {padding / count * 100:.2f}% KV "
            "cache memory")


def mamba_padding_percent(page: int, state: int) -> float:
    """How much vLLM pads a state page to the page, in percent, as its log line computes it
    ("Padding mamba page size by %.2f%%")."""
    return 100 * (page - state) / state


def start_up_log(sizing: CacheProfile, options: StrategyOptions, p: int, attn_page: int,
                 budget_bytes: int, counts: dict[str, int], padding: dict[str, int],
                 log: LogFlavour) -> list[str]:
    """The lines vLLM logs at start-up from these figures, in its words and number formats, for
    a reader to set beside an engine's log (the blocks fit after warm-up follow in
    ``warmup_lines``, the KV cache size line in ``with_logged_tokens``), in the order it logs
    them: what ``log``'s release logs first (its ``opening``: mamba cache mode all's warnings);
    ``Platform._align_hybrid_block_size`` raises the block size to P where P is larger (its
    page covers the state page P was sized from) and pads that state page; the worker logs the
    memory it has for the cache (``format_gib``: the float rounded to 0.01 GiB as Python prints
    it, 10.0, 44.59); ``_get_kv_cache_groups_uniform_page_size`` warns of padding layers
    (current releases print that warning once before the memory line too, while profiling
    CUDA graphs)."""
    lines = list(log.opening)
    if sizing.has_state and sizing.has_attention:
        if options.block_size < p:
            lines.append(f"Setting attention block size to {p} tokens to ensure that attention "
                         "page size is >= mamba page size.")
        state = sizing.state_bytes_per_layer
        if attn_page != state:
            lines.append(f"Padding mamba page size by {mamba_padding_percent(attn_page, state):.2f}"
                         "% to ensure that mamba page size and attention page size are exactly "
                         "equal.")
    lines.append(f"{AVAILABLE_LINE}{format_gib(budget_bytes)} GiB")
    lines += [padding_layers_text(padding[k], c) for k, c in counts.items() if padding[k]]
    return lines


AVAILABLE_LINE = "Available KV cache memory: "


def with_available_elided(result: StrategyResult) -> StrategyResult:
    """``result`` with the figure of its Available KV cache memory line elided, for a budget
    given as the blocks vLLM 0.34 fits after warm-up: the memory it logs before warm-up is an
    estimate of its own, which the blocks do not give back (2,155 blocks of falcon-mamba are
    39.99 GiB, where its log said 40.0), so a log's line is found but not compared."""
    lines = result.extras.get("log_lines")
    if result.strategy != "vllm" or not lines:
        return result
    log = [f"{AVAILABLE_LINE}... GiB" if line.startswith(AVAILABLE_LINE) else line
           for line in lines]
    return replace(result, extras={**result.extras, "log_lines": log})


WARMUP_LINE = "Memory after warmup: "


def warmup_lines(num_blocks: int, unit_bytes: int, log: LogFlavour) -> list[str]:
    """The line vLLM 0.34 on CUDA logs of the blocks it fits after warm-up
    (``measure_kv_cache_blocks``), the run's figures of the GPU's memory around them elided;
    none where ``log``'s release logs no such line (its cache the Available line's)."""
    if not log.warmup:
        return []
    return [f"{WARMUP_LINE}... {num_blocks} KV cache blocks "
            f"({format_gib(num_blocks * unit_bytes)} GiB) fit within the requested ... GiB. ..."]


@dataclass(frozen=True)
class OlderLayout:
    """OLDER_RELEASE's layout of a state hybrid where it is not the current one's (its P, its
    blocks, or its refusal: ``vllm.older_release_layout``), for the figure of OLDER_VLLM_LOG:
    ``with_logged_tokens`` counts it from these blocks and block size, not the layout's."""

    p: int  # its attention block size P
    min_block: int  # its smallest group block size: P, or in mode all the state's, if smaller
    num_blocks: int
    lines: tuple[str, ...]  # how it came, for the math
    refused: str = ""  # why it did not start ("" where it did): no figure then


def with_logged_tokens(result: StrategyResult, profile: CacheProfile, options: StrategyOptions,
                       num_groups: int, log: LogFlavour,
                       older: OlderLayout | None = None) -> StrategyResult:
    """The result with what vLLM's log prints as "GPU KV cache size", in current releases and
    in older ones (see ``flatkv.strategies.vllm``'s module docstring), and the math of both;
    the line's pools named as ``log``'s release names them, and the extras saying whose words
    the lines are where not a current release's (``log_release``, after the mode asked where
    vLLM ran another: ``mamba_cache_mode_asked``). No older figure where those releases ran no
    such layout (a padded page, ``older_log_blocker``'s options, ``older``'s refusal):
    ``older_log_none`` says why. ``older``: OLDER_RELEASE's own layout where it is not this
    one (None where it is), whose blocks and block size the older figure counts."""
    p, blocks, context = result.block_size, result.num_blocks, result.context_tokens
    min_block, why_min = p, "P"
    said: dict[str, object] = {}
    if older is not None and not older.refused:
        p, blocks = older.p, older.num_blocks
        said["older_block_size"] = older.p
        min_block, why_min = older.min_block, f"vLLM {OLDER_RELEASE}'s P"
        if older.min_block < older.p:
            why_min = f"vLLM {OLDER_RELEASE}'s state block size in mode all"
    if options.mamba_cache_mode == "none" and profile.has_state:
        # a state group's block size is max_model_len in mode none; a state-only model has no
        # other group, so without a context its log cannot be told
        if context is not None and (context < p or not profile.has_attention):
            min_block, why_min = context, ("max_model_len, a state group's block size in mode "
                                           "none")
        elif not profile.has_attention:
            min_block = None
    elif not profile.has_attention:  # MambaModelConfig: --block-size when caching prefixes
        min_block = options.block_size
        why_min = f"block_size, a state-only model's in mode {options.mamba_cache_mode}"
    lines: list[str] = []
    none_why = (f"{OLDER_VLLM_LOG} do not start (their unify_kv_cache_spec_page_size refuses "
                "a page that does not divide the largest, where current ones pad it)"
                if result.extras.get("older_releases_refuse")
                else older_log_blocker(profile, options) or (older.refused if older else ""))
    if none_why:  # no figure of a layout those releases did not run
        min_block, said["older_log_none"] = None, none_why
        said.pop("older_block_size", None)
        lines = [f"older_logged_tokens: none, {none_why}"]
    older_tokens = None
    if min_block is not None:
        older_tokens = blocks // num_groups * min_block
        lines = [*(older.lines if older else ()),
                 f"older_logged_tokens = num_blocks // groups x min block size = {n(blocks)} "
                 f"// {num_groups} x {n(min_block)} ({why_min}) = {n(older_tokens)} (the "
                 f"\"GPU KV cache size\" line of {OLDER_VLLM_LOG})"]
    logged = None
    if context is not None:
        # vLLM: int(max_concurrency * max_model_len), max_concurrency = num_blocks / blocks per
        # request, both Python floats: the same float operations give the same integer
        logged = int(result.max_concurrency * context)
        lines.insert(0, f"logged_tokens = int(max_concurrency x max_model_len) = int({n(blocks)} "
                        f"/ {n(result.concurrency_denominator)} x {n(context)}) = {n(logged)} "
                        "(vLLM's \"GPU KV cache size: N tokens, Maximum concurrency for L "
                        "tokens per request\" line)")
    log_lines = list(result.extras.get("log_lines", ()))
    forms = dict(result.extras.get("log_line_forms", {}))
    if logged is not None:
        concurrency = (f"Maximum concurrency for {context:,} tokens per request: "
                       f"{result.max_concurrency:.2f}x")
        log_lines.append(f"GPU KV cache size: {logged:,} tokens, {concurrency}")
        forms[log_lines[-1]] = tuple(
            (name, f"GPU KV cache size: {tokens:,} tokens\n{concurrency}")
            for name, tokens in ((TWO_LINE_FORM, logged), (OLDER_FORM, older_tokens))
            if tokens is not None and (tokens != logged or name == TWO_LINE_FORM)
        ) + pool_name_forms(log_lines[-1], log.release, log.pool_names)
    if log.mode_asked:
        said["mamba_cache_mode_asked"] = log.mode_asked
    if not log.current:
        said["log_release"] = log.release
    return replace(result, logged_tokens=logged, older_logged_tokens=older_tokens,
                   formulas=(*result.formulas, *lines),
                   extras={**result.extras, "log_lines": log_lines, "log_line_forms": forms,
                           **said})


def pool_name_forms(size_line: str, release: str,
                    names: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """The "GPU KV cache size" line as vLLM ``release`` logs it where it names its pools
    otherwise (``names``: OTHER_POOL_NAMES' pairs), each form named (log_check's forms)."""
    return tuple((f"named \"{pools} KV cache size\", as vLLM {release} logs it {where}",
                  f"{pools}{size_line.removeprefix('GPU')}") for pools, where in names)
