"""The lines SGLang's start-up log prints as it sizes and allocates its pools, in its words.

The ``sglang`` package sizes the state and token pools; this module words what SGLang logs of
them, for a reviewer to set beside an engine's log: the hybrid SWA split, the state pool's cap on
running requests, the Mamba and KV pool allocations (which count the padding page and slot
the sizing leaves out), the lines a profile cannot tell, and how older releases word them.
Its functions take the figures the sizing found, so the log's wording changes here without
touching the arithmetic, and the ``sglang`` package imports this module, never the reverse.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from flatkv.plan import LINEAR_ATTENTION
from flatkv.profile import CacheProfile

# SGLang's "GB" in its pool logs is 1024**3 bytes (memory_pool.py: GB = 1024 * 1024 * 1024).
GB = 1 << 30
# How older releases print the KV pool lines (their PyPI wheels): 0.5.12 and earlier without
# the dtype, 0.5.16 and earlier a hybrid SWA pool's lines unlabelled, its SWA sub-pool's first.
OLDER_KV_LOG = "Releases before 0.5.13 (June 2026) print the KV lines without \"dtype: ...,\"."
OLDER_SWA_LOG = ("Before 0.5.17 (August 2026) a hybrid SWA pool's lines carry no \"Full\" or "
                 "\"SWA\" and its SWA line comes first.")


def _gb(nbytes: int) -> str:
    """Bytes as SGLang's pool logs print them: ``f"{nbytes / GB:.2f}"``."""
    return f"{nbytes / GB:.2f}"


def _kv_pool_bytes(split: tuple[int, ...], tokens: int, layers: int, page: int) -> list[int]:
    """The bytes of each tensor kind (K and V, or MLA's latent: ``split``, a token's bytes of
    each in one layer) a token pool of ``tokens`` over ``layers`` layers allocates: every
    layer has a page more than the pool (``size + page_size`` rows: slot 0's page takes padded
    tokens' dummy writes). An fp8 cache is stored as uint8: its bytes are the dtype's."""
    return [layers * (tokens + page) * nbytes for nbytes in split]


def _kv_pool_line(profile: CacheProfile, tokens: int, layers: int, page: int,
                  label: str = "", split: tuple[int, ...] | None = None) -> str:
    """The line a token pool logs when allocated (``KVCache._finalize_allocation_log``;
    ``label`` a hybrid SWA pool's sub-pool, ``Full`` or ``SWA``): K and V apart for
    multi-head attention, one figure for MLA's latent (with DeepSeek-V3.2's indexer keys,
    which its DSA pool allocates for the same rows and logs with it). ``split``: the layers'
    own K / V bytes where not the full layers' (Gemma 4's sliding layers)."""
    sizes = _kv_pool_bytes(split or profile.kv_tensor_bytes, tokens, layers, page)
    head = (f"{label + ' ' if label else ''}KV Cache is allocated. dtype: "
            f"torch.{profile.kv_dtype}, #tokens: {tokens}, ")
    if len(sizes) == 2:
        return head + f"K size: {_gb(sizes[0])} GB, V size: {_gb(sizes[1])} GB"
    return head + f"KV size: {_gb(sizes[0])} GB"


class StartUpLog(NamedTuple):
    """SGLang's start-up log lines (``start_up_log``), which pools they log (``state``,
    ``kv``, ``hybrid swa``) and why any line it prints is left out."""

    lines: list[str]
    pools: list[str]
    left_out: list[str]


# With speculative decoding a draft model (EAGLE, MTP) gets a ModelRunner and a token pool of
# its own after the target's, indexed by the target's token ids: its KV line has the target's
# words and #tokens but its own layers' sizes (model_runner's is_draft_worker,
# kv_pool_runtime.py); log_check reads a rank's later line as this pool's where it logs its
# model line's #tokens and dtype and smaller sizes (``log_check._drafter_lines``).
# DRAFTER_LOGS: how the lines a drafter's pool logs too begin.
DRAFTER_POOL = "the drafter's own pool, logged after the model's (speculative decoding)"
DRAFTER_LOGS = ("KV Cache is allocated.",)
# Why a line SGLang prints is left out: the profile does not say what it needs.
NO_STATE_LINE = ("no Mamba Cache line: its state tensors are not named conv and ssm, as "
                 "SGLang's are")
NO_DRAFT_BUFFERS_LINE = ("no Mamba Cache line: with speculative decoding it gives the "
                         "draft-token buffers' sizes, which need the conv rows and whether the "
                         "state is KDA's, which this profile does not tell")
NO_KV_LINES = ("no KV Cache lines: they need the K / V split and KV dtype, which bytes typed "
               "by hand (or attention layer kinds whose K / V splits differ) do not give")
NO_LAYERLESS_KV_LINE = (
    "no KV Cache line: SGLang logs its token pool of no layers (state layers alone) as one of "
    "#tokens: context_len and K and V of 0.00 GB, in the model's dtype, which a profile of "
    "state layers alone does not carry")
NO_ALL_SWA_LINES = "no KV Cache lines for a pool of sliding layers alone (not modelled here)"
NO_SWA_SPLIT_LINE = ("no SWA KV Cache line: it needs the sliding layers' own K / V split, which "
                     "bytes typed by hand (or sliding kinds of several splits) do not give")


def logged_padding(extras: dict[str, object]) -> tuple[bool, bool]:
    """Whether a result's SGLang log lines count rows beyond its own counts: a page a KV layer
    beyond #tokens (any KV line), the state pool's padding slot beyond max_mamba_cache_size."""
    pools = set(extras.get("logged_pools", ()))
    return bool(pools & {"kv", "hybrid swa"}), "state" in pools


def _add_state_pool_line(log: StartUpLog, profile: CacheProfile, slots: int,
                     tensors: Mapping[str, int], max_mamba_cache_size: int | None,
                     draft_buffers: tuple[int, int] | None, drafting: bool) -> None:
    """MambaPool's "Mamba Cache is allocated" line onto ``log``, its sizes of all ``slots``
    (the padding slot counted), or why it is left out: drafting buffers the profile cannot
    tell, or state tensors other than conv and ssm, which the line does not name."""
    if drafting and draft_buffers is None:
        log.left_out.append(NO_DRAFT_BUFFERS_LINE)
    elif set(tensors) <= {"conv", "ssm"}:
        per_slot = {name: slots * profile.count(LINEAR_ATTENTION) * tensors.get(name, 0)
                    for name in ("conv", "ssm")}
        line = (f"Mamba Cache is allocated. max_mamba_cache_size: {max_mamba_cache_size}, "
                f"conv_state size: {_gb(per_slot['conv'])}GB, ssm_state size: "
                f"{_gb(per_slot['ssm'])}GB ")
        if draft_buffers is not None:
            line += (f"intermediate_ssm_state_cache size: {_gb(draft_buffers[0])}GB "
                     f"intermediate_conv_window_cache size: {_gb(draft_buffers[1])}GB ")
        log.lines.append(line)
        log.pools.append("state")
    else:
        log.left_out.append(NO_STATE_LINE)


def start_up_log(profile: CacheProfile, page: int, n_full: int, n_swa: int, full_tokens: int,
                 swa_tokens: int, token_bytes: tuple[int, int], slots: int | None,
                 tensors: Mapping[str, int] | None, state_cap: str = "", *,
                 max_mamba_cache_size: int | None, swa_layer_bytes: int,
                 draft_buffers: tuple[int, int] | None = None,
                 drafting: bool = False, layerless: bool = False,
                 swa_split_logged: bool = True) -> StartUpLog:
    """The lines SGLang logs as it sizes and allocates these pools, in its words and number
    formats (sizes in GiB that it calls GB, two decimals), in the order it logs them: the
    hybrid SWA split (``HybridSWAPoolConfigurator``), ``state_cap``: its warning that the state
    pool caps max_running_requests (``resolve_max_num_reqs``, where it binds), the state pool
    (``MambaPool``: its ``max_mamba_cache_size`` leaves out the padding slot, its sizes count
    it), then each token
    pool (``_kv_pool_line``; a hybrid SWA pool's full sub-pool, then its sliding one, each
    labelled, then its summary, of ``token_bytes``: ``pool_token_bytes``). Lines whose
    tensors the profile does not name are left out, and said so. Its scheduler's summary line
    follows them (``max_total_num_tokens``, ``max_running_requests`` beside figures not
    modelled here).

    The sizing's figures come in, none recomputed here: ``max_mamba_cache_size`` the state
    slots that hold requests (``request_slots``), ``swa_layer_bytes`` a sliding layer's bytes a
    token (``kv_bytes_of`` its label), the K / V split logged whole where it equals a full
    layer's. With speculative decoding (``drafting``) the Mamba line goes on to its draft-token
    buffers, ``draft_buffers`` (intermediate ssm and conv-window bytes; None where the profile
    cannot tell them, and the line is left out). ``layerless``: state layers alone, whose
    token pool of no layers logs a KV line the profile cannot word (its dtype), left out.
    ``swa_split_logged`` False: a hybrid SWA pool sized from SGLang's request cap
    (--disable-radix-cache), whose configurator logs no split line (pool_configurator.py
    1005-1032: only ``_solve_pool_sizes`` logs one)."""
    log = StartUpLog([], [], [])
    if n_full and n_swa:
        if swa_split_logged:
            log.lines.append(f"Use sliding window memory pool. full_layer_tokens={full_tokens}, "
                             f"swa_layer_tokens={swa_tokens}")
    elif n_swa:
        log.lines.append("Use sliding window memory pool (all SWA). "
                         f"swa_layer_tokens={swa_tokens}")
    if state_cap:
        log.lines.append(state_cap)
    if slots is not None and tensors is not None:
        _add_state_pool_line(log, profile, slots, tensors, max_mamba_cache_size, draft_buffers,
                         drafting)
    if not n_full:
        if n_swa:
            log.left_out.append(NO_ALL_SWA_LINES)
        elif layerless:
            log.left_out.append(NO_LAYERLESS_KV_LINE)
        return log
    if profile.kv_tensor_bytes:
        log.pools.append("kv")
        if not n_swa:
            log.lines.append(_kv_pool_line(profile, full_tokens, n_full, page))
            return log
        log.lines.append(_kv_pool_line(profile, full_tokens, n_full, page, "Full"))
        if swa_layer_bytes == profile.kv_bytes_per_slot:
            log.lines.append(_kv_pool_line(profile, swa_tokens, n_swa, page, "SWA"))
        elif profile.sliding_kv_tensor_bytes:  # its sliding layers' own heads (Gemma 4)
            log.lines.append(_kv_pool_line(profile, swa_tokens, n_swa, page, "SWA",
                                           profile.sliding_kv_tensor_bytes))
        else:
            log.left_out.append(NO_SWA_SPLIT_LINE)
    else:
        log.left_out.append(NO_KV_LINES)
    if n_swa and len(profile.kv_tensor_bytes) != 1:  # K + V of both sub-pools (not MLA's)
        log.pools.append("hybrid swa")
        full_bytes, swa_bytes = token_bytes
        both = full_bytes * (full_tokens + page) + swa_bytes * (swa_tokens + page)
        log.lines.append(f"SWAKVPool mem usage: {_gb(both)} GB, swa size: {swa_tokens}, "
                         f"full size: {full_tokens}")
    return log


# An older form's name (log_check: where a log line reads as it)
OLDER_KV_FORM = "without its dtype, as SGLang before 0.5.13 logs it"
OLDER_SWA_FORM = ("unlabelled, its SWA sub-pool's line first, as SGLang 0.5.13 to 0.5.16 "
                  "logs it")
OLDEST_SWA_FORM = ("unlabelled and without its dtype, its SWA sub-pool's line first, as "
                   "SGLang before 0.5.13 logs it")
VA_BOUND_FORM = ("as SGLang 0.5.23 logs the upper bound it reserves where it sizes the pool "
                 "after CUDA graph capture (its #tokens rounded up to a page; the pool it "
                 "keeps is logged after capture, \"Post-capture KV sizing\")")
# Where an older form holds a line of a hybrid SWA pool's other sub-pool: that line's words,
# its figures elided (log_check reads "..." as anything and compares none of it)
OTHER_SUB_POOL = "KV Cache is allocated. ..."


def older_forms(lines: Sequence[str]) -> dict[str, tuple[tuple[str, str], ...]]:
    """The forms other releases and paths log these lines in, named (``log_check.check_lines``'
    forms, their lines parted by a line break): each KV pool line without its "dtype: torch.X,
    " (``OLDER_KV_LOG``); a hybrid SWA pool's Full and SWA lines unlabelled, with and without
    the dtype, as two lines, the SWA sub-pool's first (``OLDER_SWA_LOG``: swa_memory_pool.py
    allocates its swa_kv_pool, then its full_kv_pool, and logs neither's name), the other
    sub-pool's line elided, so that each of two lines of the same words is read as the line
    its place says it is; and 0.5.23's "VA upper bound" wording of the KV and SWAKVPool lines
    (``VA_BOUND_FORM``: memory_pool.py's ``_finalize_allocation_log`` and swa_memory_pool.py
    where post_capture_active)."""
    dtype = re.compile(r"(KV Cache is allocated\.) dtype: torch\.\w+, (#tokens)")
    sub_pool = re.compile(r"(Full|SWA) (KV Cache is allocated\..*)")
    forms: dict[str, tuple[tuple[str, str], ...]] = {}
    for line in lines:
        found: list[tuple[str, str]] = []
        if (labelled := sub_pool.fullmatch(line)) is not None:
            for name, words in ((OLDER_SWA_FORM, labelled[2]),
                                (OLDEST_SWA_FORM, dtype.sub(r"\1 \2", labelled[2]))):
                pair = (words, OTHER_SUB_POOL) if labelled[1] == "SWA" else (OTHER_SUB_POOL,
                                                                           words)
                found.append((name, "\n".join(pair)))
        elif (older := dtype.sub(r"\1 \2", line)) != line:
            found.append((OLDER_KV_FORM, older))
        if "KV Cache is allocated." in line or line.startswith("SWAKVPool mem usage:"):
            found.append((VA_BOUND_FORM, line.replace("KV Cache is allocated.",
                                                      "KV Cache VA upper bound.").replace(
                "SWAKVPool mem usage:", "SWAKVPool VA upper bound:")))
        if found:
            forms[line] = tuple(found)
    return forms


def state_cap_line(extras: Mapping[str, object]) -> str:
    """SGLang's warning where its state pool caps max_running_requests
    (``resolve_max_num_reqs``), in its words."""
    return (f"max_running_requests is capped to {extras['running_request_cap']} by the mamba "
            f"state cache (max_mamba_cache_size={extras['request_state_slots']}, "
            f"{extras['slots_per_request']} state slots per request). To raise it: increase "
            "--mamba-full-memory-ratio or --max-mamba-cache-size, or halve the state size with "
            "--mamba-ssm-dtype bfloat16.")


# What SGLang's scheduler line gives of figures FlatKV does not model, or does not know at
# these settings: its elision (log_check reads it as anything and compares none of it)
NOT_MODELLED = "..."


def scheduler_line(max_total_num_tokens: int | None, chunk: int | None,
                   max_running_requests: int | None, context_len: int | None) -> str:
    """The summary SGLang's scheduler logs once its pools are sized (scheduler.py 1267-1276,
    on TP rank 0 alone), in its words, up to context_len: the token pool it schedules over
    (``max_total_num_tokens``: the full pool of a hybrid SWA model, tp_worker.py 576 and
    pool_configurator.py 896-898), the prefill ``chunk`` (SGLang prints what it was told: with
    chunked prefill off its help's -1, ``CHUNKED_PREFILL_OFF``, which a logged 0 agrees with;
    under attention DP the chunk // D, 0 where that turns it off),
    ``max_running_requests`` (``resolve_max_num_reqs``) and ``context_len``
    (--context-length). A figure that is None is elided (``NOT_MODELLED``): one these settings
    do not fix (no context: neither context_len nor the max_running_requests it sets); so is
    max_prefill_tokens, which nothing here models. The memory left (available_gpu_mem) that
    follows is left out. "" where no figure is known."""
    figures = (max_total_num_tokens, chunk, max_running_requests, context_len)
    if all(figure is None for figure in figures):
        return ""
    said = [NOT_MODELLED if figure is None else str(figure) for figure in figures]
    return (f"max_total_num_tokens={said[0]}, chunked_prefill_size={said[1]}, "
            f"max_prefill_tokens={NOT_MODELLED}, max_running_requests={said[2]}, "
            f"context_len={said[3]}")


def reduced_line(requested: int, running: int) -> str:
    """SGLang's warning where its token pool cuts the max_running_requests it was given (told,
    or its speculative hook's 48) and its state pool does not (``resolve_max_num_reqs``,
    kv_cache_configurator.py 3161-3171), in its words."""
    return (f"max_running_requests was reduced from the requested {requested} to {running} "
            "(per dp worker) due to the available KV cache capacity.")
