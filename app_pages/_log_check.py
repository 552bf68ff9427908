"""Compare page: FlatKV's start-up log lines set beside a pasted engine log (``log_check``)."""

from __future__ import annotations

import re
from dataclasses import replace

import pandas as pd
import streamlit as st

from app_pages._figures import current_strategies, use_spec
from app_pages._session import kept_text, state, update
from flatkv import log_check
from flatkv.app_model import CUSTOM
from flatkv.app_state import KV_BLOCKS, KV_MEMORY, AppState, kv_memory_size
from flatkv.budget import ARCH_NOT_SAID, GPU_PRESETS, gpu_arch_of, gpu_arch_text
from flatkv.dtypes import dtype_label
from flatkv.sizing import sglang_budget_search
from flatkv.strategies import StrategyResult
from flatkv.strategies.base import CHUNKED_PREFILL_OFF
from flatkv.strategies.vllm_log import AVAILABLE_LINE
from flatkv.strategy_notes import GPU_READERS, arch_matters
from flatkv.units import count_text, sentence_case, tokens_text
from flatkv.units import markdown_literal as literal

# How each outcome reads in the table: coloured, so a differing line stands out in a long list
_OUTCOMES = {log_check.SAME: ":green[same]", log_check.DIFFERS: ":red[**differs**]",
             log_check.MISSING: ":orange[not in the log]"}


def _code(text: str) -> str:
    """``text`` as a Markdown code span: a log line character for character (Markdown text
    showed vLLM's ">=" as a "≥"), fenced by more backticks than any run inside it."""
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}"


@st.cache_data(max_entries=4, show_spinner=False)
def _read_log(text: str) -> list[log_check.LogLine]:
    """``log_check.read_log``, once a paste: a log of up to a million characters takes up to a
    second to read, and every rerun of the page (another option changed) would read it again."""
    return log_check.read_log(text)


def log_check_section(results: list[StrategyResult]) -> None:
    """A text area for an engine's log (kept in the session, not the URL: it can be long), and
    for each engine whose lines it holds a table of FlatKV's lines, same / differs / not in the
    log, under its verdict. Nothing pasted shows nothing more; text that is no log, an error."""
    st.subheader("Check against an engine's log", divider="gray")
    engines = [r for r in results if r.applies and r.extras.get("log_lines")]
    st.caption(f"Paste vLLM's or SGLang's start-up log of a run at these settings (up to "
               f"{log_check.MAX_LOG_CHARS:,} characters; it is not kept in the link). Each "
               "line FlatKV prints under the engine's formulas is found in it by its words and "
               "its figures compared exactly; parts FlatKV elides (...) are not compared. "
               "Other forms of a line are read too (vLLM's KV cache size on two lines, as "
               "older releases log it, or named for an XPU, a CPU or host pools; SGLang's KV "
               "lines without their dtype, a hybrid SWA pool's unlabelled, as before 0.5.17, or "
               "as the VA upper bound it reserves), and the table says which. Where tokens "
               "are drafted, the KV line SGLang's drafter logs after the model's is named and "
               "not compared.")
    # kept through a trip to Layout and back, which emptied the check
    text = kept_text(st.text_area, "Engine log", "compare.check_log", height=120,
                     label_visibility="collapsed",
                     placeholder="(EngineCore_DP0 pid=123) INFO 12-06 07:00:00 "
                                 "[gpu_worker.py:123] Available KV cache memory: ...")
    if not text.strip():
        return
    try:
        lines = _read_log(text)
    except ValueError as exc:
        st.error(literal(f"{sentence_case(str(exc))}."))
        return
    checks = [log_check.check_result(r, lines) for r in engines]
    found = [c for c in checks if c.found]
    if not found:  # each engine's verdict says why (another engine's log, other settings)
        # the log of the engine that does not start here (the other does): why
        if checks and (refusal := log_check.log_engine_refusal(lines, results)):
            st.warning(literal(f"{sentence_case(refusal)}."))
        else:
            for c in log_check.own_checks(checks):
                st.warning(literal(c.verdict()))
        if not checks:
            _no_engine_runs(log_check.logged_run(lines))
        return
    if any(c.differs for c in found):  # perhaps for the settings alone: said first
        _logged_run_button(log_check.logged_run(lines), lines,
                           {c.engine: c.found for c in found})
    for c in found:
        (st.error if c.differs else st.success)(literal(c.verdict()))
        st.table(pd.DataFrame([{"outcome": _OUTCOMES[row["outcome"]],
                                "FlatKV's line": _code(row["FlatKV's line"]),
                                "in the log": literal(row["in the log"])}
                               for row in log_check.check_rows(c)]), hide_index=True)


def _no_engine_runs(run: log_check.LoggedRun) -> None:
    """Where neither engine runs at the pages, say so; where that is for a KV dtype no engine
    keeps (int8) and the log names the one its run kept (``log_check.logged_kv_dtype``: SGLang's
    KV line), offer to take it, as the log's other settings are offered: the model's KV dtype
    set to it, at which its lines have something to agree with. A model re-sizes its heads in
    it; raw bytes are elements of the KV dtype, re-sized by their element size
    (``log_check.raw_kv_in``: int8's 2,048 B a token a layer are bfloat16's 4,096), and where
    they cannot be (an indexer's keys in them), no button: the bytes are to be given again."""
    s = state()
    if not (logged := log_check.logged_kv_dtype(run, s.profile().kv_dtype)):
        st.warning("Neither vLLM nor SGLang runs at these settings: no lines to check.")
        return
    kept = s.profile().kv_dtype
    said = (f"Neither vLLM nor SGLang keeps a KV cache in {kept}: no lines to check. This "
            f"log's run kept its KV cache in {dtype_label(logged)}: ")
    if s.model == CUSTOM and s.raw is not None:
        try:
            changes = log_check.raw_kv_in(s.profile(), logged)
        except ValueError as exc:  # the bytes to be given again, on the Model page
            st.warning(f"{said}{exc} on the Model page, then read the check again.")
            return
        resized = changes.get("kv_bytes_per_slot", s.raw.kv_bytes_per_slot)
        st.warning(said + ("take that KV dtype" if resized == s.raw.kv_bytes_per_slot else
                           f"take that KV dtype, in which the model's {kept} bytes, "
                           f"{s.raw.kv_bytes_per_slot:,} B a token a layer, are {resized:,}")
                   + ", then read the check again.")
        st.button("Use the log's KV dtype", key="compare.log_kv_dtype", on_click=update,
                  kwargs={"raw": replace(s.raw, **changes)}, icon=":material/input:")
        return
    st.warning(f"{said}take that KV dtype, then read the check again.")
    if (spec := s.model_spec()) is not None:
        st.button("Use the log's KV dtype", key="compare.log_kv_dtype", on_click=use_spec,
                  args=(replace(spec, kv_dtype=logged),), icon=":material/input:")


def _run_settings(s: AppState) -> log_check.RunSettings:
    """The pages ``s`` as a log's run is set beside them (``log_check.RunSettings``)."""
    vllm, sglang = current_strategies(s, ("vllm", "sglang"))
    return log_check.RunSettings(
        tp=s.tp, attn_dp=s.sglang_attn_dp_size, mamba_cache_mode=s.mamba_cache_mode,
        context=s.context_length(), chunk=s.sglang_chunked_prefill(),
        vllm_blocks=(vllm.num_blocks,) if vllm.applies else (),
        # its Available line's figure, in GiB and as GB; none where it is elided (a budget of
        # blocks: the log's is vLLM's own estimate)
        available=(log_check.printed_available(vllm.budget_bytes) if any(
            line.startswith(AVAILABLE_LINE) and log_check.ELISION not in line
            for line in vllm.extras.get("log_lines", ())) else ()),
        **log_check.sglang_pool_settings(sglang),
        sglang_budget=sglang_budget_search(s.profile(), s.context_length(),
                                           s.strategy_options()),
        gpu_chunk=log_check.kept_gpu_chunk(
            s.sglang_chunked_prefill(), told=s.sglang_chunked_prefill_size is not None,
            on_gpu=s.gpu not in (KV_MEMORY, KV_BLOCKS)),
        **log_check.sglang_page_settings(s.profile(), s.strategy_options()),
        **log_check.sglang_blackwell_settings(s.profile(), s.strategy_options(),
                                              preset=s.gpu in GPU_PRESETS),
        **log_check.sglang_kv_cache_dtype_settings(s.profile(), s.strategy_options()),
        **log_check.vllm_ssm_settings(s.profile(), s.strategy_options()))


def _pages_at(s: AppState, changes: dict) -> AppState:
    """The pages ``s`` with a log's ``changes`` taken, before its budget: a Blackwell told
    beside a GPU preset, which sets it, leaves the preset for its budget as KV cache memory
    (the log's own budget is offered with it: ``log_check.logged_changes``)."""
    changes = dict(changes)
    if changes.pop("sglang_blackwell", None):  # the log's Blackwell: its architecture
        changes["gpu_arch"] = "blackwell"
        if s.gpu in GPU_PRESETS:
            changes.update(gpu=KV_MEMORY, kv_memory=s.budget().cache_bytes)
    return replace(s, **changes).after(s)


def _logged_run_changes(run: log_check.LoggedRun, s: AppState) -> tuple[dict, list[str]]:
    """The changes that set the pages at ``s`` to the log's run (``log_check.logged_changes``),
    as the pages take them, and what each is in words."""
    found = log_check.logged_changes(run, _run_settings(s), lambda changes: _run_settings(
        _pages_at(s, changes)))
    changes, said = {}, []
    for name, value in found.items():
        if name == "vllm_blocks":
            changes.update(gpu=KV_BLOCKS, kv_blocks=value)
            said.append(f"{value:,} vLLM KV cache blocks a rank (fit after warm-up)")
        elif name == "kv_memory":
            changes.update(gpu=KV_MEMORY, kv_memory=kv_memory_size(value))
            # a log in GB (10**9 B) gives its budget exactly, as printed; FlatKV's line is
            # vLLM's GiB, and differs in its unit alone
            in_gb = (f", which prints GB to 0.01 GB: the budget is the figure as printed, "
                     f"{changes['kv_memory']:,} B, and FlatKV's line, in GiB, differs in its "
                     "unit alone" if value.endswith(" GB") else "")
            said.append(f"{value} of KV cache memory a rank (its \"Available KV cache "
                        f"memory\" line{in_gb})")
        elif name == "sglang_budget":
            changes.update(gpu=KV_MEMORY, kv_memory=value)
            # state layers alone log the context as their tokens: their slots size the pool
            slots = (f"{run.sglang_state_slots:,} request state slots"
                     if run.sglang_state_slots is not None else "")
            pool = (f"token pool of {run.sglang_tokens:,} tokens"
                    + (f" beside {slots}" if slots else "") if s.profile().has_attention
                    else slots)
            said.append(f"SGLang's {pool} (a rank with {value:,} B of KV cache memory sizes "
                        "its pools so)")
        elif name == "sglang_chunked_prefill_size" and value == s.sglang_chunked_prefill():
            # the chunk the pages take already: the GPU's, kept as told (gpu_chunk)
            changes[name] = value
            said.append(f"SGLang's prefill chunk of {tokens_text(value)} (the {s.gpu}'s, kept)")
        elif name == "sglang_blackwell":
            changes["gpu_arch"] = "blackwell"
            kept = f", the {s.gpu}'s, kept" if s.on_blackwell() else ""
            said.append(f"SGLang on a Blackwell GPU (a B200: DeepSeek's sparse attention in "
                        f"fp8{kept})")
        else:
            changes[name] = value
            said.append(_setting_words(name, value, run))
    if changes.get("gpu") in (KV_MEMORY, KV_BLOCKS):
        changes = {**_arch_off_the_preset(s, changes), **changes}
    return changes, said


def _arch_off_the_preset(s: AppState, changes: dict) -> dict[str, str]:
    """The GPU architecture a log's ``changes``, leaving the GPU preset of ``s`` for a budget
    of their own, set beside it (a Blackwell they offer takes its place): the preset's
    (``AppState.arch_kept_off``) where it matters at the settings offered
    (``strategy_notes.arch_matters``: a figure, or a word that reads the GPU, such as the
    prefill checkpoint block vLLM 0.34 keeps Qwen3-Next on an H100, which the checkpoint note
    reads in align and the "vLLM 0.34's defaults" button in mode none too), as ``compare
    --check-log`` offers --gpu-arch (``log_cli``): vLLM refuses DeepSeek-V3.2 on the A100 it
    left, where none said (a Hopper taken) started it. Else none said (""), the preset's
    figures and words alike: not one told before the preset, which the field kept hidden and
    would wake, nor an architecture the user never chose that Compare then says changes no
    figure (an L40S's Ada, for Llama)."""
    if "gpu_arch" in changes or not (kept := s.arch_kept_off(changes["gpu"])):
        return {}
    offered = replace(s, **{**kept, **changes}).after(s)
    matters = arch_matters(offered.profile(), offered.strategy_options(),
                           offered.budget().cache_bytes, offered.context_length(),
                           results=current_strategies(offered, GPU_READERS))
    return kept if matters else {"gpu_arch": ""}


def _arch_left_text(s: AppState, changes: dict) -> str:
    """Where a log's ``changes`` leave the GPU preset of ``s`` and say no architecture
    (``_arch_off_the_preset``: nothing reads it at the log's settings) though the preset's is
    no Hopper's (an L40S's Ada, for Llama), that, beside the offer: the select then reads
    ARCH_NOT_SAID, which says nothing of the user's GPU, and "not said (a Hopper taken)" read
    as if FlatKV took their L40S for an H100. "" elsewhere (a Hopper's left unsaid is the GPU
    the figures take)."""
    left = gpu_arch_of(s.gpu_capability()) if s.gpu in GPU_PRESETS else None
    if changes.get("gpu_arch") != "" or left in (None, "hopper"):
        return ""
    return (f"The {s.gpu}'s architecture, {gpu_arch_text(left)}, changes no figure or note "
            f"at the log's settings, so GPU architecture is left at \"{ARCH_NOT_SAID}\": "
            f"these figures are the {s.gpu}'s too.")


# how a setting taken from a log reads, by its name (the prefill chunk's words need the run)
_SETTING_WORDS = {
    "tp": lambda v: f"TP {v}",
    "sglang_attn_dp_size": lambda v: f"SGLang's attention DP {v}",
    "mamba_cache_mode": lambda v: f"vLLM's mamba cache mode {v}",
    "sglang_page_size": lambda v: f"SGLang's page size {v}",
    "sglang_mamba_track_interval": lambda v: f"SGLang's mamba track interval of {tokens_text(v)}",
    "sglang_mamba_radix_cache_strategy": lambda v: f"SGLang's mamba radix cache strategy {v}",
    "sglang_kv_cache_dtype": lambda v: f"SGLang's --kv-cache-dtype {v}",
    "vllm_ssm_dtype": lambda v: (f"vLLM's ssm cache dtype {v} (--mamba-ssm-cache-dtype: "
                                 "its \"Setting attention block size\" line's P)"),
    "sglang_overlap_schedule": lambda v: ("SGLang's overlap scheduling on" if v else
                                          "SGLang's overlap scheduling off "
                                          "(--disable-overlap-schedule)"),
    "context": lambda v: f"{tokens_text(v)} a request",
}


def _setting_words(name: str, value: object, run: log_check.LoggedRun) -> str:
    """One setting taken from a log's ``run``, in words."""
    if name in _SETTING_WORDS:
        return _SETTING_WORDS[name](value)
    if value == CHUNKED_PREFILL_OFF:
        return "SGLang's chunked prefill off"
    group = f" ({run.chunk:,} a group of {value // run.chunk})" if value != run.chunk else ""
    return f"SGLang's prefill chunk of {tokens_text(value)}{group}"


def _not_agreeing(s: AppState, lines: list[log_check.LogLine],
                  found: dict[str, int]) -> tuple[int, int]:
    """How many of FlatKV's lines at the pages ``s`` would not agree with the log, and how many
    of their figures would differ, for the engines whose lines it holds (``found``: how many
    of each engine's it holds now): lines that differ, those it would no longer hold, and all
    an engine's where it would not start at ``s``. A line the log lacks either way (an older
    release's) is left out, as is a figure that differs in its unit alone (a log in GB: no
    setting changes the unit, ``LineCheck.value_differences``)."""
    checks = {r.strategy: log_check.check_result(r, lines)
              for r in current_strategies(s, tuple(found))
              if r.applies and r.extras.get("log_lines")}
    lines_off = sum(held if (c := checks.get(name)) is None else
                    sum(1 for line in c.lines if line.value_differences)
                    + max(held - c.found, 0) for name, held in found.items())
    figures_off = sum(line.value_differences for c in checks.values() for line in c.lines)
    return lines_off, figures_off


def _log_settings(run: log_check.LoggedRun, lines: list[log_check.LogLine],
                  found: dict[str, int]) -> tuple[dict, list[str], int]:
    """The changes that bring the pages to the log's run, in words, and how many of FlatKV's
    lines would still not agree at them (``_not_agreeing``): its TP, attention DP, mamba cache
    mode, budget, context and chunk (``_logged_run_changes``); where lines would still not
    agree and the pages keep vLLM 0.19's defaults, those with vLLM 0.34's defaults too (a log
    of 0.34 run with its own: ``AppState.recent_vllm_changes``), where that makes them all
    agree. None where taking them brings no line or figure closer."""
    s = state()
    now = _not_agreeing(s, lines, found)
    try:
        changes, said = _logged_run_changes(run, s)
        still = _not_agreeing(replace(s, **changes).after(s), lines, found)
        if still[0] and (recent := s.recent_vllm_changes()):
            recent_pages = replace(s, **recent).after(s)
            more, more_said = _logged_run_changes(run, recent_pages)
            if not _not_agreeing(replace(recent_pages, **more).after(s), lines, found)[0]:
                return {**recent, **more}, [*more_said, "vLLM 0.34's defaults"], 0
    except ValueError:  # settings the pages cannot take: nothing to offer
        return {}, [], 0
    return (changes, said, still[0]) if changes and still < now else ({}, [], 0)


def _logged_run_button(run: log_check.LoggedRun, lines: list[log_check.LogLine],
                       found: dict[str, int]) -> None:
    """Where lines differ and the log's run had other settings than the pages (its TP,
    attention DP, mamba cache mode, budget, context or chunk, or vLLM 0.34's defaults), say so
    and offer to take them: at other settings every
    figure differs, and not for a reason worth reading. Whether its settings explain it is
    checked first, by the lines at them (``_log_settings``): where some would still differ,
    other settings differ too (the TP, the weights), and the offer says so rather than
    promise; where none would agree more, nothing is offered. ``found``: the engines whose
    lines the log holds, and how many of each it holds."""
    changes, said, still = _log_settings(run, lines, found)
    if not changes:
        return
    had = "This log's run had " + (f"{', '.join(said[:-1])} and {said[-1]}" if len(said) > 1
                                   else said[0])
    if still:
        st.info(f"{had}: take {'them' if len(said) > 1 else 'it'}, and "
                f"{count_text(still, 'line')} would still differ, so other settings differ too "
                f"(an engine release's defaults, the TP, attention DP, the weights).",
                icon=":material/tune:")
    else:
        st.info(f"{had}: the figures here are at other settings, so its lines differ for that "
                f"alone. Take its settings, then read the check again.",
                icon=":material/tune:")
    if left := _arch_left_text(state(), changes):
        st.caption(left)
    if sink_alike := log_check.learnable_sink_alike(state().profile(), changes):
        st.caption(f"Or {sink_alike}.")
    st.button("Use the log's settings", key="compare.log_settings", on_click=update,
              kwargs=changes, icon=":material/input:")
