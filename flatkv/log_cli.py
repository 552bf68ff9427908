"""``compare --check-log``: an engine's start-up log read from a file or stdin (``read_log_file``),
checked against FlatKV's lines at the command's settings (``checked_log``), and where a figure
differs, the flags of the log's own run (``logged_run_notes``).

``log_check`` does the checking, shared with the Compare page; this module is its command-line
face: the path, the flags and the one-line errors.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import stat
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import BinaryIO

from flatkv import log_check, strategy_cli
from flatkv.budget import BLACKWELL_CAPABILITY, GPU_PRESETS, blocks_budget, gpu_arch_of
from flatkv.dtypes import ENGINE_DTYPE_NAMES, dtype_bytes
from flatkv.given_cli import GivenModel, UsageError
from flatkv.profile import CacheProfile
from flatkv.sizing import sglang_budget_search
from flatkv.strategies import run_strategy
from flatkv.strategies.base import ENGINE_NAMES, StrategyOptions
from flatkv.strategies.vllm import block_bytes as vllm_block_bytes
from flatkv.strategy_notes import arch_matters
from flatkv.units import count_text, format_size, memory_size, quoted

# The flag that sets each of a log's run's settings (``log_check.logged_changes``' names)
_LOGGED_FLAGS = {"tp": "--tp", "sglang_attn_dp_size": "--attn-dp-size",
                 "mamba_cache_mode": "--mamba-cache-mode", "vllm_blocks": "--vllm-blocks",
                 "kv_memory": "--budget", "sglang_budget": "--budget", "context": "--context",
                 "sglang_chunked_prefill_size": "--sglang-chunked-prefill-size",
                 "sglang_page_size": "--sglang-page-size",
                 "sglang_mamba_track_interval": "--mamba-track-interval",
                 "sglang_mamba_radix_cache_strategy": "--mamba-radix-cache-strategy",
                 "sglang_overlap_schedule": "--sglang-overlap-schedule",
                 "sglang_blackwell": "--sglang-blackwell",
                 "sglang_kv_cache_dtype": "--sglang-kv-cache-dtype",
                 "vllm_ssm_dtype": "--vllm-ssm-dtype"}
# ... and the RunSettings field each sets
_SETTING_FIELDS = {"sglang_attn_dp_size": "attn_dp",
                   "sglang_chunked_prefill_size": "chunk"}


def logged_run_notes(args: argparse.Namespace, context: int | None, run: log_check.LoggedRun,
                      model: GivenModel) -> tuple[str, ...]:
    """Where lines differ, the flags that check the log at its own run's settings
    (``log_check.logged_changes``: those these flags (``args``, with the budget they give) do
    not give), since at other settings every figure differs for that alone (the Compare
    page's offer). The blocks vLLM fits are known here only where --vllm-blocks gives them;
    the budget that sizes SGLang's pools as its log gives them is searched at the log's TP
    (raw bytes are one rank's: at theirs alone, and at another the note names --tp)."""
    options = strategy_cli.figures_options(args)
    profile = model.profile

    def settings_taken(taken: Mapping[str, object]) -> log_check.RunSettings:
        """``now`` with the log's ``taken`` settings that ``RunSettings`` holds as told."""
        return replace(now, **{_SETTING_FIELDS.get(name, name): value
                               for name, value in taken.items()
                               if name in ("tp", "context", "sglang_blackwell",
                                           *_SETTING_FIELDS)})

    def options_at(taken: Mapping[str, object]) -> StrategyOptions:
        """The options the figures take with the log's ``taken`` settings."""
        then = settings_taken(taken)
        return replace(
            options, sglang_attn_dp_size=then.attn_dp, sglang_chunked_prefill_size=then.chunk,
            mamba_cache_mode=taken.get("mamba_cache_mode", options.mamba_cache_mode),
            # a Blackwell taken from the log is the GPU (a preset's leaves with its budget)
            gpu_compute_capability=(BLACKWELL_CAPABILITY if then.sglang_blackwell
                                    else options.gpu_compute_capability),
            sglang_kv_cache_dtype=taken.get("sglang_kv_cache_dtype",
                                            options.sglang_kv_cache_dtype),
            vllm_ssm_dtype=taken.get("vllm_ssm_dtype", options.vllm_ssm_dtype),
            **{name: taken[name] for name in log_check.SGLANG_PAGE_FIELDS if name in taken})

    def at(taken: Mapping[str, object]) -> log_check.RunSettings:
        then, then_options = settings_taken(taken), options_at(taken)
        # SGLang's page options as it logs them there (auto as the cache it picks at the
        # overlap and page taken), and its KV cache dtype where it acts there
        then = replace(then, **log_check.sglang_page_settings(profile, then_options),
                       **log_check.sglang_kv_cache_dtype_settings(profile, then_options))
        ranked = profile if then.tp == now.tp else model.profile_at(then.tp)
        if ranked is None:
            return replace(then, sglang_tokens=None, sglang_state_slots=None,
                           sglang_kv_dtype=None, sglang_budget=None, vllm_ssm_dtype=None,
                           vllm_block_size=None)
        then = replace(then, **log_check.vllm_ssm_settings(ranked, then_options))
        return _with_sglang_pool(then, ranked, then_options, args.budget)

    now = _with_sglang_pool(log_check.RunSettings(
        tp=profile.tp, attn_dp=options.sglang_attn_dp_size,
        mamba_cache_mode=options.mamba_cache_mode, context=context,
        chunk=options.sglang_chunked_prefill_size,
        vllm_blocks=(args.vllm_blocks,) if getattr(args, "vllm_blocks", None) else (),
        # with --vllm-blocks its Available line is elided: the budget is the blocks'
        available=() if getattr(args, "vllm_blocks", None) else (
            log_check.printed_available(args.budget)),
        gpu_chunk=log_check.kept_gpu_chunk(
            options.sglang_chunked_prefill_size,
            told=getattr(args, "sglang_chunked_prefill_size", None) is not None,
            on_gpu=getattr(args, "gpu_memory", None) is not None),
        # told by --gpu-arch / --sglang-blackwell where --gpu-memory names no preset
        **log_check.sglang_blackwell_settings(
            profile, options, preset=getattr(args, "gpu_memory", None) in GPU_PRESETS),
        **log_check.sglang_page_settings(profile, options),
        **log_check.sglang_kv_cache_dtype_settings(profile, options),
        **log_check.vllm_ssm_settings(profile, options)),
        profile, options, args.budget)
    changes = log_check.logged_changes(run, now, at)
    if not changes:
        return ()
    replaced = []  # the flags those take the place of: the CLI refuses both
    if {"kv_memory", "sglang_budget", "vllm_blocks"} & changes.keys():
        if getattr(args, "gpu_memory", None) is not None:
            replaced.append("--gpu-memory")
        elif getattr(args, "vllm_blocks", None) is not None:
            if "vllm_blocks" not in changes:
                replaced.append("--vllm-blocks")
        elif "vllm_blocks" in changes:  # the budget told as --budget (its other kinds offered
            replaced.append("--budget")  # as --budget name the one flag, given a new value)
    if changes.get("sglang_blackwell") and (arch := getattr(args, "gpu_arch", None)) not in (
            None, "blackwell"):
        replaced.append(f"--gpu-arch {arch}")  # another architecture: the CLI refuses both
    if "sglang_attn_dp_size" in changes and getattr(args, "enable_dp_attention", False):
        replaced.append("--enable-dp-attention --dp-size")  # it sets D where --attn-dp-size is 1
    sink_alike = log_check.learnable_sink_alike(profile, changes)
    flags = " ".join(_flag_of(name, value) for name, value in changes.items())
    instead = f" (in place of {' and '.join(replaced)})" if replaced else ""
    if ("--gpu-memory" in replaced and not changes.get("sglang_blackwell")
            and not strategy_cli.arch_flag(args)  # one told beside the preset stays
            and _arch_matters_offered(changes, model, options_at(changes), args.budget,
                                      context)):
        flags += f" --gpu-arch {gpu_arch_of(options.gpu_compute_capability)}"
    return (f"note: this log's run had {flags}{instead}: every figure differs at other "
            f"settings, so check it again with those{f' (or {sink_alike})' if sink_alike else ''}",)


def _arch_matters_offered(changes: Mapping[str, object], model: GivenModel,
                          offered: StrategyOptions, budget: int, context: int | None) -> bool:
    """Whether the GPU preset's architecture (in ``offered``: the options with the log's
    ``changes`` taken) matters at the settings the note offers, not at those told (a figure,
    or a note that reads the GPU, ``strategy_notes.arch_matters``: the prefill checkpoint
    block vLLM 0.34 keeps Qwen3-Next on an H100 gives the fix, in align, its own mode, and so
    in mode none too, where the note on --gpu-arch says so):
    its budget (KV cache memory as printed, SGLang's searched bytes, or vLLM's blocks at the
    offered options), its context and its TP's profile, so that --gpu-arch is offered where
    that command reads it, as Compare's
    offer keeps the preset's architecture (``_log_check``)."""
    profile = model.profile
    if (tp := changes.get("tp")) is not None:
        profile = model.profile_at(tp) or profile
    if "sglang_budget" in changes:
        budget = changes["sglang_budget"]
    elif "kv_memory" in changes:
        budget = memory_size(str(changes["kv_memory"]).replace(" ", ""), "--budget")
    elif "vllm_blocks" in changes:
        # (where vLLM runs no block there, the figures at the budget told)
        with contextlib.suppress(ValueError):
            budget = blocks_budget(changes["vllm_blocks"], vllm_block_bytes(profile, offered),
                                   1).cache_bytes
    return arch_matters(profile, offered, budget, changes.get("context", context))


def _flag_of(name: str, value: object) -> str:
    """The flag that sets a log's run's setting ``name`` to ``value``: an on / off one alone,
    its --no- form for off (--no-sglang-overlap-schedule), a budget as a size."""
    flag = _LOGGED_FLAGS[name]
    if isinstance(value, bool):
        return flag if value else f"--no-{flag.removeprefix('--')}"
    return f"{flag} " + (format_size(value) if name == "sglang_budget"
                         else str(value).replace(" ", ""))


def _with_sglang_pool(settings: log_check.RunSettings, profile: CacheProfile,
                      options: StrategyOptions, budget: int) -> log_check.RunSettings:
    """``settings`` with SGLang's token pool and state slots at ``budget`` there, and the
    search for the
    budget that gives it a log's (``sizing.sglang_budget_search``)."""
    r = run_strategy("sglang", profile, budget_bytes=budget, context_tokens=settings.context,
                     options=options)
    return replace(settings, **log_check.sglang_pool_settings(r),
                   sglang_budget=sglang_budget_search(profile, settings.context, options))


# How long opening a named pipe may wait for its writer before the command says it waits
WRITER_WAIT_S = 2.0


def _opened(path: str, say: Callable[[str], None] | None) -> BinaryIO:
    """``path`` opened to read. A named pipe opens only once something opens it to write
    (``<(cmd)`` has at once): where nothing has within ``WRITER_WAIT_S``, ``say`` says what it
    waits for, as a FIFO no one writes to blocked without a word (Ctrl-C stops it; the CLI says
    so in one line)."""
    try:
        is_pipe = say is not None and stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        is_pipe = False  # open names why
    if not is_pipe:
        return open(path, "rb")  # noqa: SIM115 - the caller's with closes it
    timer = threading.Timer(WRITER_WAIT_S, say, (
        f"waiting for a writer on the named pipe {quoted(path)} (--check-log); Ctrl-C stops",))
    timer.daemon = True
    timer.start()
    try:
        return open(path, "rb")  # noqa: SIM115
    finally:
        timer.cancel()


def read_log_file(path: str, say: Callable[[str], None] | None = None) -> str:
    """The text of --check-log's file (``-``: stdin), as much as ``log_check`` reads; a
    UsageError naming the path and the fix where it cannot be read or is no log's text.
    ``say``: where a line is said while a named pipe waits for its writer (``_opened``)."""
    limit = 4 * log_check.MAX_LOG_CHARS  # UTF-8 takes at most 4 bytes a character
    try:
        if path == "-":
            data = sys.stdin.buffer.read(limit + 1)
        else:
            with _opened(path, say) as file:
                data = file.read(limit + 1)
    except OSError as exc:
        raise UsageError(f"--check-log {quoted(path)}: cannot read it ({exc.strerror or exc}): "
                         "give an engine's log file, or - to read it from stdin") from None
    if len(data) > limit:
        raise UsageError(f"--check-log {quoted(path)} is over {limit:,} bytes: give the "
                         f"engine's start-up part (this check reads "
                         f"{log_check.MAX_LOG_CHARS:,} characters)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"--check-log {quoted(path)}: byte {exc.start:,} "
                         f"({data[exc.start:exc.start + 1]!r}) is not UTF-8 text: give the "
                         "engine's log as text") from None
    try:
        return log_check.check_text(text)
    except ValueError as exc:
        raise UsageError(f"--check-log {quoted(path)}: {exc}") from None


def _kv_dtype_fix(args: argparse.Namespace, profile: CacheProfile, logged: str) -> str:
    """How to check a log again in the KV dtype its run kept (``logged``): a model's
    --kv-dtype, which re-sizes its heads; raw bytes (a --model-file's, of no TP) take no
    --kv-dtype, so their file's fields at that dtype (``log_check.raw_kv_in``: bytes of 1-byte
    int8 elements double at bfloat16), or, where those cannot be carried over, why, and the
    bytes given again."""
    if profile.tp is not None:
        return f"check it again with --kv-dtype {ENGINE_DTYPE_NAMES.get(logged, logged)}"
    file = (f"--model-file {quoted(args.model_file)} holds raw bytes, which --kv-dtype does "
            "not re-type")
    try:
        changes = log_check.raw_kv_in(profile, logged)
    except ValueError as exc:  # in the file's fields' names
        return f'{file}, and its {exc}, with "kv_dtype": "{logged}"'
    fields = ", ".join(f'"{name}": {json.dumps(list(value) if isinstance(value, tuple) else value)}'
                       for name, value in changes.items())
    was, then = dtype_bytes(profile.kv_dtype), dtype_bytes(logged)
    why = (f"{profile.kv_dtype}'s and {logged}'s elements are {count_text(was, 'byte')} alike"
           if was == then else f"its {profile.kv_dtype} bytes are elements of "
           f"{count_text(was, 'byte')}, which {logged} keeps in {then}")
    return f"{file}: check it again with the file's {fields} ({why})"


def checked_log(args: argparse.Namespace, profile: CacheProfile, context: int | None,
                 log: str) -> list[log_check.LogCheck]:
    """FlatKV's start-up lines of each engine at these settings checked against ``log``, for
    the engines whose lines it holds; ValueError where it holds none of either's."""
    lines = log_check.read_log(log)
    if not lines:
        raise ValueError(f"--check-log {quoted(args.check_log)} holds no line of text: give the "
                         "engine's start-up log, from its start to its KV cache lines")
    results = strategy_cli.compared(args, profile, context)
    checks = [log_check.check_result(r, lines) for r in results
              if r.strategy in ENGINE_NAMES and r.applies and r.extras.get("log_lines")]
    if not checks:
        # a KV dtype no engine keeps (int8) where the log names the one its run kept: that fix
        if logged := log_check.logged_kv_dtype(log_check.logged_run(lines), profile.kv_dtype):
            raise ValueError(
                f"--check-log {quoted(args.check_log)}: neither "
                f"{' nor '.join(ENGINE_NAMES.values())} keeps a KV cache in "
                f"{profile.kv_dtype}, so FlatKV has no start-up line to check; this log's run "
                f"kept its KV cache in {logged}: {_kv_dtype_fix(args, profile, logged)}")
        raise ValueError(f"--check-log {quoted(args.check_log)}: neither "
                         f"{' nor '.join(ENGINE_NAMES.values())} starts at these settings, so "
                         "FlatKV has no start-up line to check (compare without --check-log "
                         "says why): give settings an engine starts at")
    if not (found := [c for c in checks if c.found]):
        # a log of the engine that does not start here: why, not "give a log of these settings"
        if refusal := log_check.log_engine_refusal(lines, results):
            raise ValueError(f"--check-log {quoted(args.check_log)}: {refusal}")
        reads = log_check.detect_engine(lines)
        said = f" (it reads as {ENGINE_NAMES[reads]}'s)" if reads else ""
        told = log_check.own_checks(checks)  # an SGLang log: SGLang's lines alone
        raise ValueError(f"--check-log {quoted(args.check_log)}: none of the start-up lines "
                         f"{' or '.join(ENGINE_NAMES[c.engine] for c in told)}"
                         f" logs at these settings is in its {count_text(len(lines), 'line')}"
                         f"{said}: give the log of a run at these settings, from its start to "
                         "its KV cache lines")
    return found
