"""Set FlatKV's start-up log lines for an engine beside a real engine log, figure by figure.

FlatKV prints, under vLLM's and SGLang's math, the lines the engine logs at start-up for the
current settings (``StrategyResult.extras["log_lines"]``). A reviewer's check is to find each
in a real log and compare its figures; this module does it for a pasted log. Real lines carry
prefixes (vLLM: ``(EngineCore_DP0 pid=123) INFO 12-06 07:00:00 [gpu_worker.py:123] ``; SGLang:
``[2026-12-06 07:00:00 TP0] ``), colour codes, may wrap, and print numbers with or without
thousands separators; so a line is found by its words with its figures masked, anchored where
the engine's message starts, and its figures compared exactly (as decimals, never floats that
could hide a difference). Where FlatKV elides a part of a line (``...``: the run's own GPU
figures in vLLM's "Memory after warmup" line) that part matches anything and is not compared;
a memory unit right after it ("the requested ... GiB") is that elided figure's, in either unit.
A line of its words whose figure reads as no number (nan, a copy's damaged 4,413,4400, or
40. 0 with a space inside) differs, naming what it holds, rather than go unread beside another
rank's that agrees; so does one that prints a figure in the other memory unit (GB for GiB: an
engine prints one a release), naming both and whether the value agrees once converted.
Pure functions of text: the Compare page and ``compare --check-log`` share them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import ROUND_HALF_EVEN, Decimal

from flatkv.budget import (
    BLACKWELL_CAPABILITY,
    MAX_VLLM_BLOCKS,
    MIN_VLLM_BLOCKS,
)
from flatkv.dtypes import UNSTORED_KV_DTYPE, canonical_dtype, dtype_bytes
from flatkv.engine_options import acting_engine_options, strategy_fields
from flatkv.models import MAX_TP
from flatkv.profile import CacheProfile
from flatkv.strategies.base import (
    CHUNKED_PREFILL_OFF,
    ENGINE_NAMES,
    MAMBA_CACHE_MODES,
    SGLANG_KV_CACHE_DTYPES,
    SGLANG_RADIX_CACHE_STRATEGIES,
    StrategyOptions,
    StrategyResult,
)
from flatkv.strategies.sglang import (
    CHUNKED_PREFILL_ASSUMED,
    blackwell_dsa_bytes,
    logged_overlap,
    logged_strategy,
)
from flatkv.strategies.sglang_log import DRAFTER_LOGS, DRAFTER_POOL
from flatkv.strategies.sglang_log import GB as SGLANG_GB
from flatkv.strategies.sglang_log import older_forms as sglang_older_forms
from flatkv.strategies.vllm import run_vllm
from flatkv.strategies.vllm_log import format_gib
from flatkv.units import (
    MAX_BLOCK_SIZE,
    MAX_BYTES,
    MAX_TOKENS,
    control_character,
    count_text,
    parse_size,
)

# The most a pasted log may hold: a start-up log is some hundred lines (~100 KB); a pasted
# day of request logs would make the page slow for nothing, so it is refused, and said so.
MAX_LOG_CHARS = 1_000_000
# How FlatKV writes a part of a line it does not know (the run's own figures): see vllm_log
ELISION = "..."
# A line is read up to this many characters, a wrapped line's rest joined on included: an
# engine's start-up line is a few hundred, but SGLang 0.5.23's server_args line is some 18,000
# (546 fields; its mamba_radix_cache_strategy past the 10,000th). 1 MB of lines this long, made
# of FlatKV's own lines' words, is checked in under half a second.
MAX_LINE_CHARS = 100_000
# The most digits a figure of the run a log gives (``logged_run``) is read with: 2**64 has 20;
# a longer one is no engine's count
MAX_RUN_FIGURE_DIGITS = 20
# The widest a terminal's wrapped line is taken to be: only a line this short is joined to the
# next in a log without prefixes (``_wrapped``)
MAX_WRAP_WIDTH = 1_000
# What an elision (...) stands for: the run's figures FlatKV elides, a few words, not a line
# (bounded, so that a line of many "Memory after warmup:" is not searched to its end from each)
MAX_ELIDED_CHARS = 400
# How an older form of one of FlatKV's lines (``check_lines``' forms) marks where the engine
# ends one log line and starts the next: vLLM before PR #50462 logs the KV cache size and the
# maximum concurrency as two lines
FORM_BREAK = "\n"
# How many log lines after a form's line its next is looked for, in the lines of the same
# process or rank (another's lines come between: a TP worker's, a progress bar)
MAX_FORM_GAP = 8

SAME, DIFFERS, MISSING = "same", "differs", "not in the log"

# Every number this module reads is written in ASCII digits, [0-9]: re's \d matches any
# Unicode digit, and int() and Decimal read them ("٢" is 2, "２" is 2), so a copy's or an
# edit's Arabic-Indic or fullwidth digit would read as a figure no engine printed. Where a
# number is bounded, the bound is any digit (\d): "40٢" reads as no number, never as 40.
# A figure in FlatKV's line: a number (a sign, thousands separators or none, decimals), not a
# word's digits (bfloat16, TP0); or a torch dtype, which SGLang's KV lines name.
_FIGURE = re.compile(
    r"(?<![\w.])-?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?(?!\d)|torch\.\w+")
# What a figure matches in the log: the same kinds, printed either way, a sign or none (SGLang's
# chunked_prefill_size=-1, off, beside FlatKV's chunk: it differs, rather than going unfound).
_LOG_NUMBER = (r"(?<![\d.,])(-?(?:[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?|[0-9]+(?:\.[0-9]+)?))"
               r"(?!\d)")
_LOG_DTYPE = r"(torch\.\w+)"
# A figure the log prints, whole: what ``_LOG_NUMBER`` captures
_WHOLE_NUMBER = re.compile(r"-?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?")
# Colour codes, with their ESC or with it lost in a copy ("[32mINFO[0m"), and terminal titles
# (OSC: ESC ], to a BEL or ESC \): one runs to the next ESC at most, so that a line of many
# never ended is not searched to its end from each (90 s for a line of 333,000).
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\[[0-9;]*m")
# vLLM's "%(levelname)s %(asctime)s [%(fileinfo)s:%(lineno)d] " (datefmt %m-%d %H:%M:%S),
# after its process tag "(%(vllm_process_name)s pid=%(process)d) " (vllm/logger.py's _FORMAT
# in 0.34, every line; older releases add it to a worker's lines: "(EngineCore_DP0 pid=123) ",
# "(Worker_TP1 pid=9) ", "(APIServer pid=1) "), and after VLLM_LOGGING_PREFIX where one is
# set (any text: the prefix is searched for, see ``_prefixed``); its ColoredFormatter's codes
# (cyan tag, green level, grey time and file) go first (``_ANSI``). A message of several lines
# carries the prefix on each (NewLineFormatter: "\r\n" and the prefix).
_VLLM_PREFIX = re.compile(
    r"(?:\((?P<source>[^()]*)\)\s+)?(?:INFO|WARNING|WARN|DEBUG|ERROR|CRITICAL)\s+"
    r"[0-9]{2}-[0-9]{2}\s+[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?\s+\[[^\]]*\]\s?")
# SGLang's "[%(asctime)s%(prefix)s] " (configure_logger: datefmt %Y-%m-%d %H:%M:%S, ".%(msecs)03d"
# with SGLANG_LOG_MS; its prefix "" at TP 1, " TP0", " DP0 TP0 EP0", " PP1 TP3", or one with
# brackets of its own, " encode_dp_worker[0]").
_SGLANG_PREFIX = re.compile(
    r"\[[0-9]{4}-[0-9]{2}-[0-9]{2}\s+[0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]+)?"
    r"(?P<source>(?:[^\[\]]|\[[^\[\]]*\])*)\]\s?")
# vLLM's process tag alone, on what a worker prints past the logger ("(APIServer pid=1)
# `torch_dtype` is deprecated!", a blank "(Worker_TP0 pid=9) "; Ray's "(pid=9, ip=10.0.0.2)"):
# a line of that process, not the wrapped rest of the line before it
_VLLM_TAG = re.compile(r"\((?P<source>(?:[\w.:-]+ )?pid=[0-9]+(?:, ip=[^()]*)?)\)(?:\s|$)")
# How far into a line an engine's prefix is looked for (a runner's or journal's lead first)
MAX_LEAD_CHARS = 200
_PREFIXES = (("vllm", _VLLM_PREFIX), ("vllm", _VLLM_TAG), ("sglang", _SGLANG_PREFIX))
# A progress bar (tqdm's "| 67/67 [00:06<00:00, 10.53it/s]", vLLM's "100% Completed | 41/41
# [03:35<..."): a line of its own, printed between an engine's lines, never a wrapped rest
_PROGRESS = re.compile(r"\|\s*[0-9]+/[0-9]+\s*\[[0-9]")
# Where an SGLang run starts in a log: its launcher logs its server_args once a run
# (entrypoints/engine.py 311, "server_args={...}"), before any rank's scheduler allocates its
# pools; a KV line after it is a new run's, never the drafter's of a line before it
_SGLANG_RUN_START = re.compile(r"\bserver_args=")
# Words only one engine's log holds, for a log pasted without prefixes: vLLM's own messages
# (gpu_worker.py's Available memory, extensible_kv_cache.py's "Memory after warmup",
# kv_cache_utils.py's "Maximum concurrency for %s tokens per request", on the KV cache size
# line or, up to 0.26, a line of its own), so a paste of its key lines alone reads as vLLM's
_ENGINE_WORDS = {"vllm": re.compile(r"\bvllm\b|[GXC]PU(?: \+ host)? KV cache size|"
                                    "Available KV cache memory|Memory after warmup:|"
                                    r"Maximum concurrency for [0-9][0-9,]* tokens per request",
                                    re.IGNORECASE),
                 # SGLang's server_args line (vLLM logs its args as "non-default args: ")
                 "sglang": re.compile(r"\bsglang\b|KV Cache is allocated|max_total_num_tokens|"
                                      r"\bserver_args=", re.IGNORECASE)}


@dataclass(frozen=True)
class LogLine:
    """One line of the pasted log as its engine wrote it: where it starts in the paste
    (``number``, from 1), which process or rank wrote it (``source``: ``TP1``, ``EngineCore_DP0
    pid=123``; "" where none is told), which engine's prefix it carries (None: none), and its
    message, without prefix or colour codes, a wrapped rest joined on."""

    number: int
    source: str
    engine: str | None
    message: str


@dataclass(frozen=True)
class Figure:
    """A figure of a line that differs: named by the words before it in FlatKV's line."""

    name: str
    flatkv: str
    log: str
    # where the log prints the figure in another memory unit than FlatKV's: both told with
    # their units, and what the log's is in FlatKV's (``_with_units``)
    with_units: str = ""
    # ... and whether its value, set in FlatKV's unit, is FlatKV's: it differs in its unit alone
    unit_alone: bool = False

    def text(self) -> str:
        if self.with_units:
            return f"{self.name}: {self.with_units}"
        return f"{self.name}: FlatKV {self.flatkv}, log {self.log}"


@dataclass(frozen=True)
class Occurrence:
    """A log line that reads as one of FlatKV's (its words, figures masked), and the figures in
    it that differ from FlatKV's (none: it agrees). ``form``: the older form of FlatKV's line it
    reads as, named ("" FlatKV's own); ``last``: the log line a form of several lines ends in
    (None: one line)."""

    line: LogLine
    differences: tuple[Figure, ...]
    form: str = ""
    last: int | None = None
    # why its figures are not compared ("" where they are): a later pool's line of the same
    # process or rank, with FlatKV's words (``check_lines``' ``later_pools``)
    not_compared: str = ""
    # the older form's text it reads as, FlatKV's figures as that release counts them ("":
    # FlatKV's own line): what a check quotes (``LineCheck.shown``)
    form_text: str = ""

    def where(self) -> str:
        span = (f"lines {self.line.number}-{self.last}" if self.last is not None
                else f"line {self.line.number}")
        return span + (f" ({self.line.source})" if self.line.source else "")


def _lines(where: list[str]) -> str:
    """``line 3 (TP0)``, ``lines 3 (TP0), 5 (TP1)``, ``lines 3-4 (EngineCore_DP0 pid=9)``: log
    lines named for a reader."""
    if len(where) == 1:
        return where[0]
    return "lines " + ", ".join(re.sub("^lines? ", "", w) for w in where)


@dataclass(frozen=True)
class LineCheck:
    """One of FlatKV's lines and every log line that reads as it: the same where all agree
    (one a TP rank, say), differs where any does not."""

    expected: str
    occurrences: tuple[Occurrence, ...]

    @property
    def outcome(self) -> str:
        if not self.occurrences:
            return MISSING
        return (DIFFERS if any(o.differences and not o.not_compared for o in self.occurrences)
                else SAME)

    @property
    def shown(self) -> str:
        """FlatKV's line as the log has it: where every log line compared reads as one older
        form of it, that form, its lines parted by " / " (vLLM 0.19's two lines of its own
        count, 973,760 tokens, where FlatKV's line says 3,871,083: a "same" row quoted the
        figure no line of the log has); else FlatKV's own."""
        forms = {o.form_text for o in self.occurrences if not o.not_compared}
        if len(forms) == 1 and (form := forms.pop()):
            return form.strip().replace(FORM_BREAK, " / ")
        return self.expected

    @property
    def value_differences(self) -> int:
        """How many figures of the compared log lines differ in value: a figure the log prints
        in another unit whose value agrees (``Figure.unit_alone``) is left out, as no setting
        changes the unit an engine prints."""
        return sum(1 for o in self.occurrences if not o.not_compared
                   for f in o.differences if not f.unit_alone)

    def detail(self) -> str:
        """Which figures differ, in which log lines (those that differ alike together), which
        lines agree beside them, and which are not compared (another pool's)."""
        if not self.occurrences:
            return "no log line has these words"
        alike: dict[tuple[tuple[Figure, ...], str], list[str]] = {}
        others: dict[str, list[str]] = {}
        for o in self.occurrences:
            if o.not_compared:
                others.setdefault(o.not_compared, []).append(o.where())
            else:
                alike.setdefault((o.differences, o.form), []).append(o.where())

        def said(where: list[str], form: str) -> str:
            return _lines(where) + (f", {form}" if form else "")

        parts = [f"{said(where, form)}: {'; '.join(f.text() for f in diffs)}"
                 for (diffs, form), where in alike.items() if diffs]
        for (diffs, form), where in alike.items():
            if not diffs:  # "line 3 agrees", "lines 3, 5 agree", "lines 3-4 agree"
                one = len(where) == 1 and where[0].startswith("line ")
                parts.append(f"{said(where, form)}{',' if form else ''} "
                             f"agree{'s' if one else ''}")
        parts += [f"{_lines(where)}: not compared, {why}" for why, where in others.items()]
        return " | ".join(parts)


@dataclass(frozen=True)
class LogCheck:
    """FlatKV's lines for ``engine`` checked against a log (``lines`` in FlatKV's order), the
    engine the log reads as (``log_engine``; None where it does not say) and how many lines
    it holds."""

    engine: str
    log_engine: str | None
    lines: tuple[LineCheck, ...]
    log_lines: int

    def count(self, outcome: str) -> int:
        return sum(1 for c in self.lines if c.outcome == outcome)

    @property
    def found(self) -> int:
        return len(self.lines) - self.count(MISSING)

    @property
    def differs(self) -> bool:
        return self.count(DIFFERS) > 0

    @property
    def other_engine(self) -> bool:
        """Whether the log is the other engine's: none of these lines can be in it."""
        return self.log_engine is not None and self.log_engine != self.engine

    def verdict(self) -> str:
        """One line: whether the log agrees with FlatKV's figures, and what to do where it
        cannot say."""
        name, total = ENGINE_NAMES[self.engine], len(self.lines)
        missing = self.count(MISSING)
        if self.other_engine and not self.found:
            return (f"This log is {ENGINE_NAMES[self.log_engine]}'s, not {name}'s: check it "
                    f"against {ENGINE_NAMES[self.log_engine]}'s lines.")
        if total == 1:
            return self._verdict_of_one(name)
        if not self.found:
            return (f"None of FlatKV's {total} {name} lines is in this log "
                    f"({count_text(self.log_lines, 'line')} read): paste {name}'s start-up log "
                    "of a run at these settings, from its start to its KV cache lines.")
        absent = f"; {missing} not in the log" if missing else ""
        absent += self._not_compared()
        every = "both lines" if total == 2 else f"all {total} lines"
        if self.differs:
            differ, agree = self.count(DIFFERS), self.count(SAME)
            if differ == total:
                return f"{name}: {every} differ from the log{self._not_compared()}."
            return (f"{name}: {differ} of {total} lines differ{'s' if differ == 1 else ''} from "
                    f"the log, {agree} agree{'s' if agree == 1 else ''}{absent}.")
        if not missing:
            return (f"{name}: {every} are in the log and agree with it"
                    f"{self._not_compared()}.")
        return (f"{name}: {self.found} of {total} lines are in the log and agree with it; "
                f"{missing} not in it{self._not_compared()}.")

    def _not_compared(self) -> str:
        """``; 2 log lines not compared: the drafter's own pool ...``, where any are."""
        skipped = [o.not_compared for c in self.lines for o in c.occurrences if o.not_compared]
        if not skipped:
            return ""
        return f"; {count_text(len(skipped), 'log line')} not compared: {skipped[0]}"

    def _verdict_of_one(self, name: str) -> str:
        """``verdict`` where FlatKV has one line for the engine (SGLang's scheduler line of a
        model typed in bytes, whose KV lines it cannot word): "its one line", not "all 1
        lines"."""
        outcome = self.lines[0].outcome
        if outcome == MISSING:
            return (f"FlatKV's one {name} line is not in this log "
                    f"({count_text(self.log_lines, 'line')} read): paste {name}'s start-up log "
                    "of a run at these settings, from its start to its KV cache lines.")
        if outcome == DIFFERS:
            return f"{name}: its one line differs from the log."
        return f"{name}: its one line is in the log and agrees with it."


@dataclass(frozen=True)
class _Template:
    """FlatKV's line as a pattern: its words, whitespace free to wrap, its figures captured and
    its elisions matching anything; ``figures`` what FlatKV prints for each capture, ``names``
    the words before each."""

    pattern: re.Pattern[str]
    figures: tuple[str, ...]
    names: tuple[str, ...]
    words: tuple[str, ...]  # its words, each in any line that reads as it: a quick test first
    # the words alone, each figure any text (``_ANY_FIGURE``): a line of ours whose figure
    # reads as no number (nan, a damaged 4,413,4400) differs, never goes unread
    loose: re.Pattern[str] | None = None
    # the memory unit FlatKV prints after each figure (GiB, GB; "" none): the log may print
    # the other, and its line is found and differs (``_with_units``), not read as missing
    units: tuple[str, ...] = ()

    def find(self, line: LogLine, *, loose: bool = False) -> re.Match[str] | None:
        """The pattern in ``line`` (see ``_find``; ``loose``: its ``loose`` one), after a quick
        test that its words are."""
        if not all(word in line.message for word in self.words):
            return None
        pattern = self.loose if loose else self.pattern
        return None if pattern is None else _find(line, pattern)


def _literal(text: str) -> str:
    """Words as a pattern: as written, any whitespace (or none: a wrap) between them."""
    return r"\s*".join(re.escape(word) for word in text.split())


# Where a figure goes in ``template``'s parts, and what one matches in a line of its words whose
# figure reads as no number (``_Template.loose``): any text but a space, as short as it can be,
# or a figure's characters with one space inside (a copy's "40. 0", "torch.bf oat16"); bounded
# (a line of many slots is not searched from each for long)
_FIGURE_SLOT = "\x00figure"
_ANY_FIGURE = r"(\S{1,64}?|[\w.,]{1,32} [\w.,]{1,32})"
# Where a loose figure that ends FlatKV's line ends in the log: at a space, a separator (", ":
# SGLang's key=value lines may go on, ", available_gpu_mem=..."), a ";", a ")" or the line's end;
# else, nothing after it, the shortest text would be its first character (context_len=8١٩٢
# read as 8, a difference the log does not hold)
_LOOSE_END = r"(?=,\s|[\s;)]|$)"
# Words a figure's name does not end in ("block size to 544": "block size")
_LINKING_WORDS = frozenset({"to", "for", "of", "by", "per", "is", "at"})
# An earlier figure of the same phrase, masked where a name is looked for
_EARLIER = "\x00"


def _trimmed(words: list[str]) -> list[str]:
    while words and words[-1] in _LINKING_WORDS:
        words = words[:-1]
    return words


def _name(before: str, after: str) -> str:
    """A figure's name in FlatKV's line: the words of its phrase (since the comma, parenthesis
    or sentence before it) before an earlier figure of that phrase (``Maximum concurrency``
    for the x of "Maximum concurrency for 262,144 tokens per request: 6.62x"); else its last
    three words since the figure before it, and its unit where one follows (``KV cache blocks
    (GiB)``); else the words after it (``3212 KV cache blocks``). Words that only link (to,
    for, per) do not end a name. ``before``: the line up to the figure, its earlier figures
    masked (``_EARLIER``)."""
    phrase = re.split(r"[.,(]", before)[-1].replace("=", " ").replace(":", " ").split()
    if _EARLIER in phrase and (lead := _trimmed(phrase[:phrase.index(_EARLIER)])):
        return " ".join(lead) + _unit(after)
    if re.match(r"\s*tokens per request", after):
        return "tokens per request"
    # the words since the figure before, less that figure's unit ("11.46GB intermediate...")
    since = _UNIT.sub("", before.rsplit(_EARLIER, 1)[-1], count=1) if _EARLIER in before else before
    pieces = [p.replace("=", " ").replace(":", " ").split() for p in re.split(r"[.,(]", since)]
    words = _trimmed(next((p for p in reversed(pieces) if p), []))[-3:]
    # a verb before its object ("Add 4 padding layers") is no name: the object is
    if words and not (len(words) == 1 and not re.search(r"[:=]\s*$", since)):
        return " ".join(words) + _unit(after)
    return " ".join(_trimmed(re.split(r"[.,(:=]", after)[0].split()[:3]))


# A unit right after a figure (a space or none between): the figure's
_UNIT = re.compile(r"^\s*(GiB|GB|tokens|x|%)(?![\w])")


# A memory unit right after a figure, and what one matches in a log: an engine prints one
# unit a release (vLLM GiB, SGLang its GB), so the other is another release's or a hand edit
_MEMORY_UNIT = re.compile(r"\s*(GiB|GB)(?!\w)")
_ANY_MEMORY_UNIT = r"(?:GiB|GB)"
# ... and after an elision (a figure FlatKV does not print): a unit word, not a word's letters
_ELIDED_UNIT = rf"(?<![A-Za-z]){_ANY_MEMORY_UNIT}(?!\w)"
# Bytes a memory unit stands for in each engine's log: SGLang's GB is 1024**3 (memory_pool.py)
_UNIT_BYTES = {"vllm": {"GiB": 1 << 30, "GB": 10**9},
               "sglang": {"GiB": 1 << 30, "GB": SGLANG_GB}}


def _unit(after: str) -> str:
    """`` (GiB)``, `` (tokens)``...: the unit right after a figure, for its name; else ""."""
    unit = _UNIT.match(after)
    return f" ({unit[1]})" if unit else ""


def template(expected: str) -> _Template:
    """The pattern of one of FlatKV's lines (see ``_Template``); a memory unit after a figure
    matches either (``_MEMORY_UNIT``)."""
    parts, figures, names, words, units = [], [], [], [], []
    for i, segment in enumerate(expected.strip().split(ELISION)):
        at = 0
        if i:
            parts.append(f".{{0,{MAX_ELIDED_CHARS}}}?")
            # an elided figure's unit ("the requested ... GiB"): the elision ends at the first
            # unit, in either unit, so it is not read as a later figure's ("... Torch may
            # reserve up to 4.61 GiB"), nor a log in GB read as missing; elided, not compared
            if elided_unit := _MEMORY_UNIT.match(segment):
                parts.append(_ELIDED_UNIT)
                at = elided_unit.end()
        for match in _FIGURE.finditer(segment):
            parts.append(_literal(segment[at:match.start()]))
            words += segment[at:match.start()].split()
            parts.append(_FIGURE_SLOT)
            figures.append(match[0])
            names.append(_name(_FIGURE.sub(_EARLIER, segment[:match.start()]),
                               segment[match.end():]))
            at = match.end()
            unit = _MEMORY_UNIT.match(segment, at)
            units.append(unit[1] if unit else "")
            if unit:
                parts.append(_ANY_MEMORY_UNIT)
                at = unit.end()
        parts.append(_literal(segment[at:]))
        words += segment[at:].split()

    def joined(*figure_patterns: str, end: str = "") -> re.Pattern[str]:
        each = iter(figure_patterns)
        return re.compile(r"\s*".join(next(each) if p == _FIGURE_SLOT else p
                                       for p in parts if p) + end)

    ends_in_figure = [p for p in parts if p][-1:] == [_FIGURE_SLOT]
    return _Template(
        joined(*(_LOG_DTYPE if f.startswith("torch.") else _LOG_NUMBER for f in figures)),
        tuple(figures), tuple(names), tuple(words),
        joined(*(_ANY_FIGURE for _ in figures), end=_LOOSE_END if ends_in_figure else "")
        if figures else None, tuple(units))


def _clean(line: str) -> str:
    """A physical line without colour codes, tabs as spaces, any other character that acts on
    a terminal (``units.control_character``: a control, a bidirectional override) shown as
    U+FFFD, as the CLI prints what it found."""
    line = _ANSI.sub("", line).replace("\t", " ")
    if line.isprintable():  # the common case, checked at C speed
        return line
    return "".join("\ufffd" if control_character(c) else c for c in line)


def _prefixed(line: str) -> tuple[str | None, str, str]:
    """The engine whose prefix ``line`` has in its first ``MAX_LEAD_CHARS`` (after what a
    container runner or journal puts first: ``vllm-1  | ``), the source it names and the
    message after it; (None, "", line) where it has none."""
    lead = line[:MAX_LEAD_CHARS]
    found = [(m.start(), -m.end(), engine, m) for engine, prefix in _PREFIXES
             if (m := prefix.search(lead))]
    if not found:
        return None, "", line
    *_, engine, match = min(found, key=lambda f: f[:2])  # the first, the longest there
    return engine, " ".join((match["source"] or "").split()), line[match.end():]


def check_text(text: str) -> str:
    """``text`` where it can be read as a log; ValueError naming the problem and the fix where
    it is too long to be a start-up log or is not text."""
    if len(text) > MAX_LOG_CHARS:
        raise ValueError(f"the log is {len(text):,} characters, over the {MAX_LOG_CHARS:,} this "
                         "check reads: paste the engine's start-up part (its first few hundred "
                         "lines, to its KV cache lines)")
    if "\x00" in text:
        raise ValueError(f"the log holds a NUL character (at character {text.index(chr(0)):,}): "
                         "it is binary data, not a log's text; paste the text the engine "
                         "printed")
    controls = sum(1 for c in text if unicodedata.category(c) == "Cc" and c not in "\n\r\t\x1b")
    if controls > max(8, len(text) // 100):
        raise ValueError(f"the log holds {controls:,} control characters in "
                         f"{len(text):,}: it reads as binary data, not a log's text; paste the "
                         "text the engine printed")
    return text


# Where a line ends, as an editor numbers lines: CR LF, LF, or a lone CR (a progress bar
# redrawn); not str.splitlines' form feed, NEL or U+2028, which a line may hold (as U+FFFD)
_LINE_END = re.compile(r"\r\n|\r|\n")


def read_log(text: str) -> list[LogLine]:
    """The lines of a pasted log as its engine wrote them (see ``LogLine``). Where a line
    carries an engine's prefix, the lines after it without one are its wrapped rest (joined on
    with nothing between: a terminal wraps mid-word); a blank line or a progress bar
    (``_PROGRESS``, a line of its own) ends it. A line is read to ``MAX_LINE_CHARS``.
    ValueError for text that is no log (``check_text``)."""
    lines: list[LogLine] = []
    joins = False  # whether the last line is an engine's, which a line without prefix goes on
    for number, raw in enumerate(_LINE_END.split(check_text(text)), 1):
        engine, source, message = _prefixed(_clean(raw))
        if not message.strip() and engine is None:
            joins = False  # a blank line ends a message
            continue
        message = message[:MAX_LINE_CHARS]
        if engine is None and _PROGRESS.search(message):
            lines.append(LogLine(number, source, engine, message))
            joins = False
            continue
        if engine is None and joins and (
                len(lines[-1].message) + len(message) <= MAX_LINE_CHARS):
            last = lines[-1]
            lines[-1] = LogLine(last.number, last.source, last.engine, last.message + message)
            continue
        lines.append(LogLine(number, source, engine, message))
        joins = engine is not None
    return lines


def detect_engine(lines: Sequence[LogLine]) -> str | None:
    """The engine a log is from where it is clear: by its lines' prefixes, else by words only
    one engine logs; None where neither says or both do alike (the larger must be twice the
    other)."""
    counts = {e: sum(1 for line in lines if line.engine == e) for e in ENGINE_NAMES}
    if not any(counts.values()):
        counts = {e: sum(1 for line in lines if words.search(line.message))
                  for e, words in _ENGINE_WORDS.items()}
    (first, most), (_, other) = sorted(counts.items(), key=lambda kv: -kv[1])
    return first if most and most >= 2 * other else None


def _same(flatkv: str, logged: str) -> bool:
    """Whether a logged figure is FlatKV's: a dtype as text, a number as an exact decimal
    (thousands separators dropped: 1,736,095 is 1736095; 40.0 is 40.00)."""
    if flatkv.startswith("torch.") or logged.startswith("torch."):
        return flatkv == logged
    number = _number(logged)
    return number is not None and Decimal(flatkv.replace(",", "")) == number


def _number(logged: str) -> Decimal | None:
    """A logged figure as a number, thousands separators dropped; None where it reads as none
    (a ``_Template.loose`` match's nan, 2155.0.0, 20.0, or 4,413,4400, or a dtype)."""
    if _WHOLE_NUMBER.fullmatch(logged) is None:
        return None
    return Decimal(logged.replace(",", ""))


def _find(line: LogLine, pattern: re.Pattern[str]) -> re.Match[str] | None:
    """``pattern`` where the line's message starts (after its prefix), or, in a line of no
    known prefix, wherever words begin ("Full KV Cache" is not "KV Cache" in a prefixed line)."""
    if line.engine is not None:
        return pattern.match(line.message.lstrip())
    return next((m for m in pattern.finditer(line.message)
                 if m.start() == 0 or not line.message[m.start() - 1].isalnum()), None)


def _wrapped(lines: Sequence[LogLine], i: int, t: _Template) -> LogLine | None:
    """Line ``i`` of a log without prefixes joined to the next (up to three more, consecutive
    in the paste, each joined line no wider than a terminal, ``MAX_WRAP_WIDTH``) where that
    reads as FlatKV's line starting in line ``i``: a wrap that no prefix marks."""
    message, number = lines[i].message, lines[i].number
    if t.words and t.words[0] not in message:  # a message starts in it, its first word whole
        return None
    for after in lines[i + 1:i + 4]:
        if (after.engine is not None or after.number != number + 1
                or len(message) > MAX_WRAP_WIDTH):
            return None
        message, number = message + after.message, after.number
        joined = LogLine(lines[i].number, "", None, message)
        if (match := t.find(joined)) is not None:
            return joined if match.start() < len(lines[i].message) else None
    return None


# The rest of a number a terminal's wrap cut: digits at a line's start, then the line's end or
# what an engine writes after a figure that ends one of FlatKV's lines (SGLang's key=value
# lines: a comma, ", available_gpu_mem=..."); not a date (2026-12-06), a progress bar, nor a
# figure a line of its own starts with, a word after it ("1765004401.250 INFO ...", an epoch
# time; "12 requests ...")
_NUMBER_REST = re.compile(r"[0-9]+(?:\.[0-9]+)?(?:\s*$|[,;)])")


def _bare_width(lines: Sequence[LogLine]) -> int:
    """The widest line of no prefix in the paste, in characters: each is one line of the paste
    as written (``read_log`` joins only a prefixed line's rests), so where a terminal wrapped
    them, none is wider than it, and a line it cut is this wide."""
    return max((len(line.message) for line in lines if line.engine is None), default=0)


def _cut_in_figure(lines: Sequence[LogLine], i: int, match: re.Match[str], width: int) -> bool:
    """Whether line ``i``, of no prefix, may end inside the figure that ends ``match`` (FlatKV's
    line read in it): that figure runs to the line's end; the line is as wide as the paste's
    widest of no prefix (``width``, ``_bare_width``: a terminal cuts a line at its width, so a
    wider line shows this one ended where its engine ended it); and the next line of the paste,
    of no prefix either, is the number's rest (``_NUMBER_REST``). ``_wrapped``
    then joins them: a bare line of 81 characters wrapped at 80 ("swa_layer_tokens=51781",
    "5") read as 51,781. A line of its own that starts with a figure after FlatKV's whole line
    (an epoch time, a count) is not joined to its last figure."""
    message = lines[i].message
    if (not match.re.groups or match.end(match.re.groups) != len(message) or i + 1 == len(lines)
            or len(message) < width):
        return False
    after = lines[i + 1]
    return (after.engine is None and after.number == lines[i].number + 1
            and _NUMBER_REST.match(after.message) is not None)


# Figures whose every value of 0 or less means one thing: SGLang prints the chunked prefill
# size it was told, and reads any told 0 or less as chunked prefill off (scheduler.py 1372-1373)
_OFF_AT_ZERO_OR_LESS = frozenset({"chunked_prefill_size"})


def _agrees(name: str, flatkv: str, logged: str) -> bool:
    """Whether the logged figure ``name`` says what FlatKV's does: the same figure, or both
    off (FlatKV writes chunked prefill off as -1; a run told 0 logs 0)."""
    if _same(flatkv, logged):
        return True
    return (name in _OFF_AT_ZERO_OR_LESS and (number := _number(logged)) is not None
            and Decimal(flatkv) <= 0 and number <= 0)


def _differences(templates: Sequence[_Template], matches: Sequence[re.Match[str]],
                 engine: str) -> tuple[Figure, ...]:
    """The figures of ``matches`` (one a template, in order) that differ from FlatKV's: in
    value, or printed in another memory unit (``_with_units``)."""
    found = []
    for t, m in zip(templates, matches, strict=True):
        for k, (name, want, got) in enumerate(zip(t.names, t.figures, m.groups(), strict=True)):
            unit = t.units[k] if t.units else ""
            logged = _MEMORY_UNIT.match(m.string, m.end(k + 1)) if unit else None
            if logged and logged[1] != unit:
                said, agrees = _with_units(engine, want, unit, got, logged[1])
                found.append(Figure(name, want, got, said, agrees))
            elif not _agrees(name, want, got):
                found.append(Figure(name, want, got))
    return tuple(found)


def _with_units(engine: str, flatkv: str, unit: str, logged: str,
                log_unit: str) -> tuple[str, bool]:
    """A figure the log prints in another memory unit than FlatKV's: both, with their units,
    and the log's set in FlatKV's unit at FlatKV's precision, and whether that is FlatKV's
    (``FlatKV 40.0 GiB, log 42.95 GB (the log prints GB, FlatKV GiB: 42.95 GB is 40.0 GiB, as
    FlatKV's)``), and whether it is. A differing unit is told as a difference even where the
    value agrees: an engine prints one unit a release, so the log is another release's or was
    edited."""
    bytes_of = _UNIT_BYTES[engine]
    said = f"the log prints {log_unit}, FlatKV {unit}"
    if bytes_of[log_unit] == bytes_of[unit]:
        said += f", {ENGINE_NAMES[engine]}'s GB being a GiB"
    agrees = False
    if (number := _number(logged)) is not None:
        exact = Decimal(flatkv.replace(",", ""))
        value = (number * bytes_of[log_unit] / bytes_of[unit]).quantize(
            Decimal(1).scaleb(exact.as_tuple().exponent), rounding=ROUND_HALF_EVEN)
        agrees = value == exact
        said += (f": {logged} {log_unit} is {value} {unit}, "
                 + ("as FlatKV's" if agrees else f"not FlatKV's {flatkv}"))
    return f"FlatKV {flatkv} {unit}, log {logged} {log_unit} ({said})", agrees


def _form_at(lines: Sequence[LogLine], i: int, form: str, templates: Sequence[_Template],
             taken: frozenset[int], engine: str) -> Occurrence | None:
    """An older form of FlatKV's line (``templates``: its lines) where it starts in line ``i``:
    each of its next lines in one of the ``MAX_FORM_GAP`` lines after the last, of the same
    process or rank. ``taken``: the log lines that read as one of FlatKV's own lines, which a
    form neither starts in nor goes on to (a paste without prefixes of SGLang's labelled "SWA
    KV Cache is allocated" holds the words of its unlabelled older form)."""
    if i in taken or (first := templates[0].find(lines[i])) is None:
        return None
    matches, at = [first], i
    for t in templates[1:]:
        for j in range(at + 1, min(len(lines), at + 1 + MAX_FORM_GAP)):
            if (j not in taken and lines[j].source == lines[i].source
                    and (match := t.find(lines[j])) is not None):
                matches.append(match)
                at = j
                break
        else:
            return None
    return Occurrence(lines[i], _differences(templates, matches, engine), form,
                      lines[at].number if at != i else None)


def log_engine_refusal(lines: Sequence[LogLine], results: Sequence[StrategyResult]) -> str:
    """Where the log reads as an engine's (``detect_engine``) that has no lines at these
    settings, as it does not start or apply here (its result among ``results`` with
    ``applies`` False: DeepSeek-V3.2's vLLM log pasted at an A100 preset), that and why, for a
    log of none of the other engine's lines: "check it against vLLM's lines" pointed at lines
    there are none of. One phrase, lower case, for the CLI's error and the Compare page alike;
    "" elsewhere (where neither engine starts, both surfaces say so already)."""
    engine = detect_engine(lines)
    refused = [r for r in results if r.strategy == engine and not r.applies]
    if not refused:
        return ""
    name = ENGINE_NAMES[engine]
    return (f"this log is {name}'s, but here {refused[0].reason}; the log's run was on another "
            "GPU or at other settings")


def own_checks(checks: Sequence[LogCheck]) -> list[LogCheck]:
    """The checks of ``checks`` that a log of none of their lines is to be told by: where it
    reads as one engine's and that engine's lines are among them, those alone (an SGLang log
    also got "None of FlatKV's 5 vLLM lines is in this log", as if vLLM's were missing from
    it); else all (a log of neither engine's, or of an engine whose lines none are checked)."""
    return [c for c in checks if not c.other_engine] or list(checks)


def check_lines(expected: Sequence[str], engine: str, lines: Sequence[LogLine],
                forms: Mapping[str, Sequence[tuple[str, str]]] | None = None,
                later_pools: Mapping[str, str] | None = None) -> LogCheck:
    """Each of FlatKV's ``expected`` lines for ``engine`` beside every log line that reads as
    it (see ``LineCheck``). ``forms``: for a line of FlatKV's, the older forms releases log it
    in, each named (how and which releases) and worded with FlatKV's figures as they count
    them, its lines parted by ``FORM_BREAK``; a log line that reads as none of FlatKV's lines
    but starts one of them reads as the form whose figures differ least (the first on a
    tie). ``later_pools``: for a line of FlatKV's that a second pool built after the model's
    in the same process logs in the same words (SGLang's drafter: ``sglang_log.DRAFTER_POOL``),
    that pool's name; see ``_later_pool``."""
    checks, templates = [], [template(text) for text in expected]
    width = _bare_width(lines)
    taken = frozenset(i for i, line in enumerate(lines) if forms
                      and any(t.find(line) is not None for t in templates))
    run_starts = _run_starts(lines) if later_pools else []
    for text, t in zip(expected, templates, strict=True):
        older = [(name, form, [template(part) for part in form.split(FORM_BREAK)])
                 for name, form in (forms or {}).get(text, ())]
        found = []
        for i, line in enumerate(lines):
            match = t.find(line)
            if line.engine is None and (
                    match is None or _cut_in_figure(lines, i, match, width)) and (
                    joined := _wrapped(lines, i, t)) is not None:
                line, match = joined, t.find(joined)
            if match is not None:
                found.append(Occurrence(line, _differences([t], [match], engine)))
            elif seen := [replace(o, form_text=form) for name, form, ts in older
                          if (o := _form_at(lines, i, name, ts, taken, engine))]:
                found.append(min(seen, key=lambda o: len(o.differences)))
            elif (match := t.find(line, loose=True)) is not None:
                found.append(Occurrence(line, _differences([t], [match], engine)))
        if pool := (later_pools or {}).get(text):
            found = _later_pool(found, pool, t, run_starts)
        checks.append(LineCheck(text.strip(), tuple(found)))
    return LogCheck(engine, detect_engine(lines), tuple(checks), len(lines))


def _run_starts(lines: Sequence[LogLine]) -> list[int]:
    """The log line numbers where an SGLang run starts (``_SGLANG_RUN_START``: its
    server_args line), in order: a restarted run's pools are no drafter's of the run before."""
    return [line.number for line in lines
            if line.engine in ("sglang", None) and _SGLANG_RUN_START.search(line.message)]


@dataclass(frozen=True)
class _PoolLine:
    """A KV pool line of the log as ``_drafter_lines`` reads it: where it is (``number``,
    ``source``: its process or rank, "" none named), its figures but its sizes as logged
    (``others``: #tokens and dtype, a number as its value), and its sizes as logged (None: one
    that reads as no number, or in another unit than FlatKV's)."""

    number: int
    source: str
    others: tuple[object, ...]
    sizes: tuple[Decimal | None, ...]


def _drafter_lines(pool_lines: Sequence[_PoolLine], run_starts: Sequence[int]) -> set[int]:
    """The numbers of the KV pool lines (``pool_lines``, in the log's order) that are a
    drafter's (speculative decoding), for the check (``_later_pool``) and the run's KV size
    (``_target_kv_sizes``) alike. SGLang's scheduler allocates the target's pool and then the
    drafter's (``Scheduler.init_memory_pools``, managers/scheduler.py 1098-1111 in 0.5.23) in
    each rank's process, the drafter's indexed by the target's token ids: its line follows its
    model's line in the same rank, with the same #tokens and dtype and smaller sizes, each a
    number (its own layers: DeepSeek-V3.2's one MTP layer beside 61). One such line a model
    line; any other is a model line of its own, and compared: a larger one, one of other
    #tokens, a third of a rank. A run's start (``run_starts``: a restart's server_args line)
    leaves no model line before it to draft; without one between them, a restart of the same
    #tokens and smaller sizes reads as a drafter's (the lines alone do not tell them apart).
    A rank's next line follows its last model line alone. Lines that name no rank (a paste
    without prefixes; SGLang's TP 1 prefix names none) may be several ranks' (TP0's and TP1's
    model lines, then their drafters'), so there a line may be the drafter's of any model line
    before it not yet drafted; as all ranks of a run log the same #tokens (each sizes its pool
    by the least free memory across ranks: kv_pool_runtime.py 69-73 calls
    get_available_gpu_memory distributed, an all_reduce MIN, utils/common.py 569-573), a line
    of other #tokens or dtype is another run's, and the model lines before it are dropped."""
    starts = iter(run_starts)
    start = next(starts, None)
    models: dict[str, list[_PoolLine]] = {}  # each source's model lines not yet drafted
    drafters: set[int] = set()
    for line in pool_lines:
        while start is not None and line.number > start:  # a new run: its ranks anew
            models.clear()
            start = next(starts, None)
        pending = models.setdefault(line.source, [])
        model = next((m for m in pending if m.others == line.others and line.sizes
                      and len(line.sizes) == len(m.sizes) and all(
                          size is not None and of is not None and size < of
                          for size, of in zip(line.sizes, m.sizes, strict=True))), None)
        if model is not None:
            pending.remove(model)
            drafters.add(line.number)
            continue
        if line.source or any(m.others != line.others for m in pending):
            pending.clear()
        pending.append(line)
    return drafters


def _later_pool(found: Sequence[Occurrence], pool: str, t: _Template,
                run_starts: Sequence[int] = ()) -> list[Occurrence]:
    """``found`` (the log lines that read as FlatKV's line ``t``) with the later pool's lines
    marked as not compared: those ``_drafter_lines`` reads as a drafter's, by the figures each
    logs (FlatKV's where it does not differ from them), so that the same lines are marked at
    any settings: a drafter's line, of its model line's #tokens, is not compared where FlatKV's
    #tokens differ from both, and one of other #tokens than its model line's is compared where
    FlatKV's are its own."""
    drafters = _drafter_lines([_as_logged(o, t) for o in found], run_starts)
    return [replace(o, not_compared=pool) if o.line.number in drafters else o for o in found]


def _as_logged(o: Occurrence, t: _Template) -> _PoolLine:
    """The log line ``o`` of FlatKV's line ``t`` as ``_drafter_lines`` reads it: each figure
    the log's where it differs from FlatKV's (a size in another unit: None), FlatKV's where
    not."""
    logged: dict[str, str | None] = dict(zip(t.names, t.figures, strict=True))
    logged.update({f.name: None if f.with_units else f.log for f in o.differences})

    def value(text: str | None) -> object:
        return text if text is None or (number := _number(text)) is None else number

    return _PoolLine(
        o.line.number, o.line.source,
        tuple(value(text) for name, text in logged.items() if "size" not in name),
        tuple(None if text is None else _number(text)
              for name, text in logged.items() if "size" in name))


def line_forms(result: StrategyResult) -> dict[str, tuple[tuple[str, str], ...]]:
    """The older forms of a result's start-up lines (see ``check_lines``): vLLM's from the
    result (``vllm_log.with_logged_tokens``: its two-line KV cache size needs the older
    figure), SGLang's from its lines' words (``sglang_log.older_forms``)."""
    forms = dict(result.extras.get("log_line_forms", {}))
    if result.strategy == "sglang":
        forms.update(sglang_older_forms(result.extras.get("log_lines", ())))
    return forms


def check_result(result: StrategyResult, lines: Sequence[LogLine]) -> LogCheck:
    """A result's start-up lines (``extras["log_lines"]``) and their older forms checked
    against a log's lines: what the Compare page and ``compare --check-log`` show."""
    log_lines = result.extras["log_lines"]
    drafter = {line: DRAFTER_POOL for line in log_lines if line.startswith(DRAFTER_LOGS)
               } if result.extras.get("drafter_pool") else {}
    return check_lines(log_lines, result.strategy, lines, line_forms(result), drafter)


def check_log(expected: Sequence[str], engine: str, text: str) -> LogCheck:
    """FlatKV's ``expected`` start-up lines for ``engine`` (``vllm`` or ``sglang``) checked
    against a pasted log ``text``; ValueError where the text is no log (``check_text``)."""
    if engine not in ENGINE_NAMES:
        raise ValueError(f"engine is {engine!r}: give one of {', '.join(ENGINE_NAMES)}")
    return check_lines(expected, engine, read_log(text))


def check_rows(check: LogCheck) -> list[dict[str, str]]:
    """A table of the check: a row a FlatKV line, its outcome, and where the log has it and
    which figures differ."""
    return [{"outcome": c.outcome, "FlatKV's line": c.shown, "in the log": c.detail()}
            for c in check.lines]


def check_report(check: LogCheck) -> list[str]:
    """The check as text lines for the CLI: the verdict, then each line's outcome and, where it
    differs, its figures."""
    out = [check.verdict()]
    for c in check.lines:
        out.append(f"  {c.outcome}: {c.shown}")
        if c.outcome == DIFFERS:
            out.append(f"    {c.detail()}")
        elif c.outcome == SAME:
            out.append(f"    ({c.detail()})")
    return out


@dataclass(frozen=True)
class LoggedRun:
    """What a log says of its own run's budget, context and prefill chunk, so that the pages
    can be set to them before its lines are checked: a log checked at other settings differs
    in every figure, and the reader wants the ones that differ at the same settings.
    ``blocks``: the KV cache blocks vLLM 0.34 fits after warm-up (its cache's size there);
    ``memory``: vLLM's Available KV cache memory as printed ("44.59 GiB"; up to 0.33 the
    cache's size), or in GB where a build prints GB (10**9 B: "47.88 GB"), each rounded to
    0.01 of its unit, so the budget it gives is the figure as printed; ``context``: the tokens
    per request of vLLM's Maximum concurrency line (its --max-model-len) or SGLang's scheduler
    line's context_len (its --context-length);
    ``chunk``: that line's chunked_prefill_size (``CHUNKED_PREFILL_OFF`` for any 0 or less,
    as SGLang reads it); ``tp``: the tensor parallel size its settings line gives (vLLM's
    engine config, SGLang's server_args); ``least_tp``: where no settings line gives it and its
    lines' prefixes name ranks past TP0, the highest rank + 1 (a paste can leave ranks out:
    the least TP that has them); ``mamba_cache_mode``: the mode vLLM says it set
    ("Mamba cache mode is set to 'align'", models/config.py 1096-1117) or, 0.31, that all is
    deprecated (config/cache.py 346); ``attn_dp``: SGLang's attention DP size in its
    server_args (``attn_dp_size``; before its arg groups, ``dp_size`` with
    ``enable_dp_attention`` True, 1 with it False); ``sglang_page_size`` and
    ``sglang_mamba_track_interval``: its server_args' page_size and mamba_track_interval
    (--page-size, --mamba-track-interval; a page_size of None, left to SGLang, is not read),
    ``sglang_mamba_radix_cache_strategy`` its mamba_radix_cache_strategy
    (--mamba-radix-cache-strategy, as logged: "extra_buffer" or "no_buffer" too),
    ``sglang_overlap_schedule`` whether its disable_overlap_schedule is False (overlap
    scheduling on; as logged: True where auto picked no_buffer, ``sglang.logged_overlap``).
    None where the log does not say, or says two things (two runs). ``sglang_tokens``:
    SGLang's token pool, its scheduler line's max_total_num_tokens (SGLang logs no budget:
    the pools are what a budget is found for), ``sglang_state_slots`` its state pool's
    max_mamba_cache_size, ``sglang_kv_dtype`` the dtype its KV pool lines give (``float8_e4m3fn``
    on a B200 for DeepSeek's sparse attention: ``logged_changes`` offers the Blackwell setting
    where that dtype is its layout's), ``sglang_kv_size`` the one KV size its KV pool line
    gives, in SGLang's GB (2**30 B) as printed ("40.00": MLA's latent, one figure), which
    tells a Blackwell's raw fp8 from a Hopper's scaled fp8, logged in the same dtype: the
    model's pool's, where a drafter's pool logs its own after it (``_target_kv_sizes``).
    ``vllm_block_size``: the P vLLM says it raised the attention block to ("Setting attention
    block size to 528 tokens ...", a hybrid's page: platforms/interface.py), which the ssm
    state's dtype moves (``logged_changes`` offers the one giving it)."""

    blocks: int | None = None
    memory: str | None = None
    context: int | None = None
    chunk: int | None = None
    tp: int | None = None
    mamba_cache_mode: str | None = None
    attn_dp: int | None = None
    least_tp: int | None = None
    sglang_tokens: int | None = None
    sglang_state_slots: int | None = None
    sglang_page_size: int | None = None
    sglang_mamba_track_interval: int | None = None
    sglang_mamba_radix_cache_strategy: str | None = None
    sglang_overlap_schedule: bool | None = None
    sglang_kv_dtype: str | None = None
    sglang_kv_size: str | None = None
    vllm_block_size: int | None = None


def _server_arg(name: str, value: str = r"([0-9]+)(?!\d)") -> re.Pattern[str]:
    """SGLang's server_args field ``name`` (``value``: the pattern of its value, a whole
    number by default, a quoted word for a string): ``'name': 4`` in its dict (since its arg groups,
    entrypoints/engine.py 311), ``name=4`` in its ServerArgs(...) before."""
    return re.compile(rf"\bserver_args=.*?(?:'{name}':\s*|\b{name}=){value}")


# The dtype SGLang's KV pool lines give (a hybrid SWA pool's Full and SWA lines alike; a
# drafter's in another dtype leaves the run's unsaid, as two things said)
SGLANG_KV_DTYPE = re.compile(r"\bKV Cache is allocated\. dtype: torch\.(\w+),")
# SGLang's one-figure KV line (MLA's latent), with or without its dtype (before 0.5.13): its
# #tokens and KV size (``_target_kv_sizes``)
_SGLANG_KV_SIZE = re.compile(r"\bKV Cache is allocated\.(?: dtype: torch\.(\w+),)? "
                             r"#tokens: ([0-9]+), KV size: ([0-9]+\.[0-9]+) GB")
# Each figure of the run, the engine whose lines give it and where. SGLang logs no budget that
# the pages take: its pools are sized from the memory it profiles, and a budget is found that
# sizes them so (``RunSettings.sglang_budget``)
_SGLANG_SCHEDULER = r"\bmax_total_num_tokens=[0-9]+, "
_RUN_FIGURES = (
    ("sglang_tokens", "sglang", re.compile(r"\bmax_total_num_tokens=([0-9]+), ")),
    ("sglang_kv_dtype", "sglang", SGLANG_KV_DTYPE),
    ("sglang_state_slots", "sglang", re.compile(
        r"Mamba Cache is allocated\. max_mamba_cache_size: ([0-9]+),")),
    ("sglang_state_slots", "sglang", re.compile(
        r"capped to [0-9]+ by the mamba state cache \(max_mamba_cache_size=([0-9]+),")),
    ("blocks", "vllm", re.compile(
        r"Memory after warmup:.*?(?<![\d.,])([0-9]+) KV cache blocks \(")),
    # its memory in GiB (format_gib), or in GB where a build or another engine prints GB
    ("memory", "vllm", re.compile(
        r"Available KV cache memory: ([0-9]+(?:\.[0-9]+)? (?:GiB|GB))(?!\w)")),
    ("context", "vllm", re.compile(
        r"Maximum concurrency for ([0-9]{1,3}(?:,[0-9]{3})+|[0-9]+) tokens per request")),
    ("context", "sglang", re.compile(_SGLANG_SCHEDULER + r".*?\bcontext_len=([0-9]+)(?!\d)")),
    ("chunk", "sglang", re.compile(
        _SGLANG_SCHEDULER + r"chunked_prefill_size=(-?[0-9]+)(?!\d)")),
    # vLLM's "Initializing a V1 LLM engine ... with config: ..., tensor_parallel_size=4, ..."
    # (config/vllm.py 2904); SGLang's server_args, a dict since its arg groups ('tp_size': 4,
    # entrypoints/engine.py 311), a ServerArgs(...) before (tp_size=4)
    ("tp", "vllm", re.compile(r"\btensor_parallel_size=([0-9]+)(?!\d)")),
    ("tp", "sglang", _server_arg("tp_size")),
    ("attn_dp", "sglang", _server_arg("attn_dp_size")),
    # its --page-size and --mamba-track-interval (the names its checks read them by:
    # validate_mamba_extra_buffer's mamba_track_interval % page_size, sglang/state.py)
    ("sglang_page_size", "sglang", _server_arg("page_size")),
    ("sglang_mamba_track_interval", "sglang", _server_arg("mamba_track_interval")),
    # its --mamba-radix-cache-strategy, a quoted string in either form ('extra_buffer_lazy')
    ("sglang_mamba_radix_cache_strategy", "sglang",
     _server_arg("mamba_radix_cache_strategy", r"'(\w+)'")),
    # its --disable-overlap-schedule, True or False in either form (as resolved: True where
    # auto picked no_buffer and turned overlap scheduling off itself); quoted, 'True', as no
    # SGLang logs it (its repr of a bool), it is read as the bool it says, not dropped unsaid
    ("sglang_overlap_schedule", "sglang", _server_arg(
        "disable_overlap_schedule", r"(?:(True|False)\b|'(True|False)'|\"(True|False)\")")),
    # the older spelling, read where the log gives no attn_dp_size: with enable_dp_attention
    # True its dp_size groups share the TP; False, attention runs over the whole TP (D is 1)
    ("dp_attention", "sglang", re.compile(
        r"\bserver_args=(?=.*?(?:'enable_dp_attention':\s*|\benable_dp_attention=)True)"
        r".*?(?:'dp_size':\s*|\bdp_size=)([0-9]+)(?!\d)")),
    ("dp_attention", "sglang", re.compile(
        r"\bserver_args=.*?(?:'enable_dp_attention':\s*|\benable_dp_attention=)(False)")),
    # (the hybrid's line alone: vLLM logs the same words before "so the quantized primary KV
    # page covers ..." for another block, and "[XPU]Setting ..." for its XPU's multiple)
    ("vllm_block_size", "vllm", re.compile(r"Setting attention block size to ([0-9]+) tokens "
                                           r"to ensure that attention page size")),
    ("mamba_cache_mode", "vllm", re.compile(r"Mamba cache mode is set to '(\w+)'")),
    ("mamba_cache_mode", "vllm", re.compile(r"Mamba cache mode '(all)' is deprecated")),
)


# A tensor-parallel rank in a line's prefix: vLLM's worker (Worker_TP1, Worker_PP0_TP1,
# Worker_TP1_EP1, Worker_TP1_DCP1), SGLang's ranks (TP1, DP0 TP1 EP0)
_TP_RANK = re.compile(r"(?:^|[\s_])TP([0-9]+)(?![\d.])")


def _ranks(lines: Sequence[LogLine]) -> int:
    """The TP ranks the lines' prefixes name, as a TP size: the highest rank + 1 (a log of
    ranks TP0 and TP1 is of TP 2 at least; a paste can leave ranks out, not add them); 0 where
    none names one."""
    return max((int(m[1]) + 1 for line in lines if (m := _TP_RANK.search(line.source))),
               default=0)


def logged_run(lines: Sequence[LogLine]) -> LoggedRun:
    """The run's budget, context and chunk as its lines give them (``LoggedRun``): a figure
    from the lines of the engine that logs it (or of no engine's prefix), told once."""
    said: dict[str, set[str]] = {key: set() for key, _, _ in _RUN_FIGURES}
    for line in lines:
        for key, engine, pattern in _RUN_FIGURES:
            if line.engine in (engine, None) and (match := pattern.search(line.message)):
                # the group that matched (a pattern of forms captures one a form)
                figure = next(g for g in match.groups() if g is not None).replace(",", "")
                # a figure longer than any count an engine prints is no run's: not read
                # (past 4,300 digits int() refuses it, and a line now reads 100,000 characters)
                if len(figure.lstrip("-")) <= MAX_RUN_FIGURE_DIGITS:
                    said[key].add(figure)
    said["sglang_kv_size"] = _target_kv_sizes(lines)
    one = {key: next(iter(values)) for key, values in said.items() if len(values) == 1}
    chunk = int(one["chunk"]) if "chunk" in one else None
    return LoggedRun(
        blocks=int(one["blocks"]) if "blocks" in one else None,
        memory=one.get("memory"),
        context=int(one["context"]) if "context" in one else None,
        chunk=CHUNKED_PREFILL_OFF if chunk is not None and chunk <= 0 else chunk,
        tp=int(one["tp"]) if "tp" in one else None,
        least_tp=(ranks if not said["tp"] and (ranks := _ranks(lines)) > 1 else None),
        mamba_cache_mode=one.get("mamba_cache_mode"),
        attn_dp=(int(one["attn_dp"]) if "attn_dp" in one else
                 None if said["attn_dp"] or "dp_attention" not in one
                 else 1 if one["dp_attention"] == "False" else int(one["dp_attention"])),
        sglang_tokens=int(one["sglang_tokens"]) if "sglang_tokens" in one else None,
        sglang_state_slots=(int(one["sglang_state_slots"]) if "sglang_state_slots" in one
                            else None),
        sglang_kv_dtype=one.get("sglang_kv_dtype"),
        sglang_kv_size=one.get("sglang_kv_size"),
        vllm_block_size=int(one["vllm_block_size"]) if "vllm_block_size" in one else None,
        **{key: _PAGE_READ[key](one[key]) for key in SGLANG_PAGE_FIELDS if key in one},
    )


def _target_kv_sizes(lines: Sequence[LogLine]) -> set[str]:
    """The KV sizes SGLang's one-figure KV lines give for the model's own pool, as printed
    (``LoggedRun.sglang_kv_size``): a drafter's pool (speculative decoding) logs the line too,
    of the model's #tokens and its own layers' size, and is not read; which lines are a
    drafter's is read as in the check (``_drafter_lines``). A line of other #tokens is another
    run's, and told beside the first, says no one size."""
    printed: dict[int, str] = {}
    pool_lines = []
    for line in lines:
        if line.engine not in ("sglang", None) or not (
                match := _SGLANG_KV_SIZE.search(line.message)):
            continue
        dtype, tokens, size = match.groups()
        if len(size) > MAX_RUN_FIGURE_DIGITS:  # no figure SGLang prints (``logged_run``)
            continue
        printed[line.number] = size
        pool_lines.append(_PoolLine(line.number, line.source,
                                    (Decimal(tokens), dtype),
                                    (Decimal(size),)))
    drafters = _drafter_lines(pool_lines, _run_starts(lines))
    return {size for number, size in printed.items() if number not in drafters}


@dataclass(frozen=True)
class RunSettings:
    """The settings a page or a command runs at, as a log's run is set beside them
    (``logged_changes``): its TP (None: a profile of bytes, told none), SGLang's attention DP,
    vLLM's mamba cache mode, the context, the SGLang chunk its figures take
    (``CHUNKED_PREFILL_OFF``: off), the blocks vLLM fits there and the Available memory its
    lines print (``printed_available``), SGLang's token pool and state slots there (each
    where known: a figure of the run found among them is not offered;
    ``sglang_pool_settings``), and ``sglang_budget``:
    the budget at these settings that gives SGLang's pool the tokens and state slots (None:
    not known) a log gives, where one does (``sizing.budget_for_sglang_token_pool``); None
    where budgets are not searched."""

    tp: int | None
    attn_dp: int
    mamba_cache_mode: str
    context: int | None
    chunk: int
    vllm_blocks: tuple[int, ...] = ()
    available: tuple[str, ...] = ()
    sglang_tokens: int | None = None
    sglang_state_slots: int | None = None
    sglang_budget: Callable[[int, int | None], int | None] | None = field(
        default=None, compare=False, repr=False)
    # the chunk SGLang takes on the GPU the settings name, where none is told and it is not
    # the one assumed without a GPU: a budget of its own (blocks, memory) leaves the GPU, and
    # the log's lines were at this chunk, so it is kept as told
    gpu_chunk: int | None = None
    # SGLang's page size, mamba track interval and mamba radix cache strategy (as its
    # server_args logs it: "auto" resolved), each where it acts on the model (None: not
    # compared; ``sglang_page_settings``)
    sglang_page_size: int | None = None
    sglang_mamba_track_interval: int | None = None
    sglang_mamba_radix_cache_strategy: str | None = None
    # ... and its overlap scheduling, as its server_args logs it (``sglang.logged_overlap``:
    # off where auto picked no_buffer), where it changes SGLang's figures (None: not compared)
    sglang_overlap_schedule: bool | None = None
    # whether SGLang's figures are a Blackwell's (``StrategyOptions.blackwell``), where
    # it acts on them (None: not compared; ``sglang_blackwell_settings``), whether a GPU
    # preset sets it, and the dtype of the KV pool lines SGLang logs at them (None: none)
    sglang_blackwell: bool | None = None
    blackwell_preset: bool = False
    sglang_kv_dtype: str | None = None
    # SGLang's --kv-cache-dtype told (``StrategyOptions.sglang_kv_cache_dtype``), where it acts
    # on its figures (None: not compared; ``sglang_kv_cache_dtype_settings``)
    sglang_kv_cache_dtype: str | None = None
    # vLLM's --mamba-ssm-cache-dtype told (``StrategyOptions.vllm_ssm_dtype``, None: its
    # auto) and vLLM's P at these settings, where the ssm dtype acts on a hybrid's P (both
    # None: not compared; ``vllm_ssm_settings``)
    vllm_ssm_dtype: str | None = None
    vllm_block_size: int | None = None
    # SGLang's pool page at them: (tokens a page, bytes a page over its layers), where its
    # layout applies (``sglang_pool_settings``), from which the KV size its line prints for
    # any tokens follows (``_kv_size_printed``). Held, not derived when the check reads it:
    # the check is given these settings alone, not SGLang's result at them, and nothing else
    # here gives the bytes exactly (the page size is None where it does not act, as beside
    # DeepSeek's sparse attention; the KV line the result logs is its own tokens' to 0.01 GB)
    sglang_pool_page: tuple[int, int] | None = None


# SGLang's --kv-cache-dtype when none is told (``SGLANG_KV_CACHE_DTYPES``: its default first),
# offered beside a Blackwell where the settings' told one keeps a Hopper's layout there
_SGLANG_KV_CACHE_AUTO = SGLANG_KV_CACHE_DTYPES[0]


def sglang_blackwell_settings(profile: CacheProfile, options: StrategyOptions, *,
                              preset: bool) -> dict[str, bool | None]:
    """``options.blackwell`` as ``RunSettings`` holds it: None where a Blackwell stores
    ``profile`` as a Hopper does at SGLang's --kv-cache-dtype auto (no DeepSeek sparse
    attention: ``sglang.blackwell_dsa_bytes``), so that it is offered or kept only where it
    acts. At auto, not at the one told: bfloat16 told keeps a Hopper's layout on a Blackwell,
    but a log of auto's is still a Blackwell's, offered with auto (``_blackwell_logged``), and
    a B200's preset told bfloat16 keeps its Blackwell, where that dtype acts, beside a budget
    of the log's own. ``preset``: a GPU preset sets it (the B200's, kept where a budget of the
    log's own leaves the preset; a Hopper's, told only then)."""
    acts = blackwell_dsa_bytes(profile, replace(
        options, gpu_compute_capability=BLACKWELL_CAPABILITY,
        sglang_kv_cache_dtype=_SGLANG_KV_CACHE_AUTO)) is not None
    return {"sglang_blackwell": options.blackwell if acts else None,
            "blackwell_preset": preset}


def sglang_kv_cache_dtype_settings(profile: CacheProfile,
                                   options: StrategyOptions) -> dict[str, str | None]:
    """``options.sglang_kv_cache_dtype`` as ``RunSettings`` holds it: None where it changes no
    SGLang figure of ``profile`` (``engine_options.acting_engine_options``: DeepSeek's sparse
    attention in the KV dtype bfloat16 on a Blackwell alone), so that it is offered only
    where it acts (``logged_changes``)."""
    acts = "sglang_kv_cache_dtype" in acting_engine_options(profile, options, ("sglang",))
    return {"sglang_kv_cache_dtype": options.sglang_kv_cache_dtype if acts else None}


def vllm_ssm_settings(profile: CacheProfile, options: StrategyOptions) -> dict[str, object]:
    """``options.vllm_ssm_dtype`` (None: vLLM's auto) and vLLM's P at ``options`` as
    ``RunSettings`` holds them: both None where the ssm dtype acts on no vLLM figure of
    ``profile`` (``engine_options.acting_engine_options``) or vLLM starts no layout there, so
    that a log's P is matched to an ssm dtype only where one moves it (``logged_changes``)."""
    if "vllm_ssm_dtype" not in acting_engine_options(profile, options, ("vllm",)):
        return {"vllm_ssm_dtype": None, "vllm_block_size": None}
    result = run_vllm(profile, budget_bytes=MAX_BYTES, context_tokens=None, options=options)
    return {"vllm_ssm_dtype": options.vllm_ssm_dtype,
            "vllm_block_size": result.block_size if result.applies else None}


# vLLM's --mamba-ssm-cache-dtype values a log's P is tried at, bfloat16 (most weights') first:
# float16's elements are as wide, so its P is bfloat16's, which is offered
_VLLM_SSM_OFFERS = ("bfloat16", "float32", "float16")


def _ssm_dtype_logged(run: LoggedRun, then: RunSettings,
                      at: Callable[[str], RunSettings]) -> str | None:
    """The --mamba-ssm-cache-dtype whose P is the log's (its "Setting attention block size"
    line) where the settings ``then`` give another and the ssm dtype moves it (``at``: the
    settings with that dtype told), None elsewhere: a default vLLM log of Nemotron-H (float32,
    P 1,040) checked against the preset told bfloat16 (P 528) is offered its auto's float32
    by name. A dtype vLLM refuses there (a KDA model's float16) gives no P: not offered."""
    if run.vllm_block_size is None or then.vllm_block_size in (None, run.vllm_block_size):
        return None
    return next((dtype for dtype in _VLLM_SSM_OFFERS if dtype != then.vllm_ssm_dtype
                 and at(dtype).vllm_block_size == run.vllm_block_size), None)


def learnable_sink_alike(profile: CacheProfile, changes: Mapping[str, object]) -> str:
    """Where a log's run is said to have had SGLang's --kv-cache-dtype bfloat16 for DeepSeek's
    sparse attention without learnable sinks, that a run told none of its config with
    ``learnable_sink: true`` logs the same lines (SGLang keeps that in bfloat16 on a Blackwell
    too: ``CacheProfile.learnable_sink``): a reader who told no --kv-cache-dtype has the other
    cause. "" elsewhere. The CLI's note and Compare's offer say it alike."""
    if (changes.get("sglang_kv_cache_dtype") != "bfloat16" or profile.learnable_sink
            or profile.indexer_bytes_per_slot is None):
        return ""
    return ("a run told no --kv-cache-dtype of the model's config.json with learnable_sink: "
            "true logs the same lines, as SGLang keeps that in bfloat16 there too: give that "
            "config instead if so")


# SGLang's options of its pages and their radix cache that a log's server_args gives, by their
# StrategyOptions (and RunSettings, LoggedRun) names, each with the logged values offered: a
# page a block of the pages takes, an interval of tokens, overlap scheduling on or off, a
# strategy of SGLang's (each of the settings' as it logs it, ``logged_overlap``,
# ``logged_strategy``: a logged extra_buffer where auto runs it is no change). In the order
# they are taken: the strategy last, as SGLang logs auto as the cache it picks at the page and
# overlap (``logged_changes``)
_SGLANG_PAGE_OFFERS = {"sglang_page_size": range(1, MAX_BLOCK_SIZE + 1),
                       "sglang_mamba_track_interval": range(1, MAX_TOKENS + 1),
                       "sglang_overlap_schedule": (True, False),
                       "sglang_mamba_radix_cache_strategy": SGLANG_RADIX_CACHE_STRATEGIES}
SGLANG_PAGE_FIELDS = tuple(_SGLANG_PAGE_OFFERS)
# How each is read from the server_args' text (``_RUN_FIGURES``): a page size and an interval
# are numbers (ASCII digits), the strategy a word, and overlap scheduling is on where
# disable_overlap_schedule is False
_PAGE_READ: dict[str, Callable[[str], int | str | bool]] = {
    "sglang_page_size": int, "sglang_mamba_track_interval": int,
    "sglang_overlap_schedule": lambda disabled: disabled == "False",
    "sglang_mamba_radix_cache_strategy": str}
# The strategy acts where the interval does, on a model SGLang runs with its extra_buffer
# radix cache (elsewhere SGLang refuses the extra buffer, and no_buffer is auto's or unread)
_ACTS_AS = {"sglang_mamba_radix_cache_strategy": "sglang_mamba_track_interval"}
# The one SGLang logs as it resolves it from those before it: its strategy, auto logged as
# the cache it picks at the page size and overlap scheduling (``logged_changes``)
_LOGGED_AT_THOSE_TAKEN = frozenset({"sglang_mamba_radix_cache_strategy"})


def sglang_page_settings(profile: CacheProfile,
                         options: StrategyOptions) -> dict[str, int | str | bool | None]:
    """SGLang's page size, mamba track interval, overlap scheduling and mamba radix cache
    strategy in ``options``, as ``RunSettings`` holds them: each None where it acts on no
    SGLang figure or check of ``profile`` (``engine_options.strategy_fields``: DeepSeek's
    sparse attention runs its own page of 64 whatever is told; the interval, the overlap and
    the strategy act only where an extra_buffer radix cache runs; the overlap, too, not where
    another option leaves it nothing to set, ``engine_options.idle_engine_option``: S told,
    the radix cache off), so that a log's is not offered where taking it would change
    nothing, or make SGLang refuse the settings. The overlap and the strategy as SGLang's
    server_args logs them (``sglang.logged_overlap``, ``sglang.logged_strategy``): it logs
    "auto" as the cache it picks, and overlap scheduling off where that is no_buffer."""
    acting = strategy_fields("sglang", profile)
    if "sglang_overlap_schedule" not in acting_engine_options(profile, options, ("sglang",)):
        acting = tuple(name for name in acting if name != "sglang_overlap_schedule")
    told = {**{name: getattr(options, name) for name in SGLANG_PAGE_FIELDS},
            "sglang_overlap_schedule": logged_overlap(profile, options),
            "sglang_mamba_radix_cache_strategy": logged_strategy(profile, options)}
    return {name: told[name] if _ACTS_AS.get(name, name) in acting else None
            for name in SGLANG_PAGE_FIELDS}


def kept_gpu_chunk(chunk: int, *, told: bool, on_gpu: bool) -> int | None:
    """``RunSettings.gpu_chunk``: the chunk SGLang's figures take (``chunk``), where none is
    told (``told``), the budget comes from a GPU preset (``on_gpu``), and it is not the one
    assumed without a GPU (a B200's 16,384): a budget of the log's own would leave the GPU, and
    with it that chunk, unless kept. None otherwise."""
    return chunk if on_gpu and not told and chunk != CHUNKED_PREFILL_ASSUMED else None


def sglang_pool_settings(result: StrategyResult) -> dict[str, int | str | None]:
    """SGLang's token pool, request state slots, KV lines' dtype and pool page in ``result``
    (its layout's run), as ``RunSettings`` holds them: None where it does not apply, keeps no
    state pool or logs no KV line."""
    if not result.applies:
        return {"sglang_tokens": None, "sglang_state_slots": None, "sglang_kv_dtype": None,
                "sglang_pool_page": None}
    dtypes = {m[1] for line in result.extras.get("log_lines", ())
              if (m := SGLANG_KV_DTYPE.search(line))}
    return {"sglang_tokens": result.logged_tokens,
            "sglang_state_slots": result.extras.get("request_state_slots"),
            "sglang_kv_dtype": dtypes.pop() if len(dtypes) == 1 else None,
            "sglang_pool_page": (result.block_size, result.block_bytes)}


def printed_available(budget_bytes: int) -> tuple[str, str]:
    """The figure of vLLM's Available KV cache memory line at ``budget_bytes`` as it prints it
    (``format_gib``: to 0.01 GiB, ``44.59 GiB``) and as a build that prints GB would (to 0.01
    GB, GB 10**9 B, half to even: ``47.88 GB``): ``RunSettings.available``, so that a log's
    figure that the settings print already, in either unit, is not offered as their budget."""
    gb = (Decimal(budget_bytes) / 10**9).quantize(Decimal("0.01"), rounding=ROUND_HALF_EVEN)
    return f"{format_gib(budget_bytes)} GiB", f"{gb} GB"


def _printed_among(memory: str, printed: Sequence[str]) -> bool:
    """Whether a logged memory figure (``44.59 GiB``, ``47.88 GB``) is one of ``printed``: the
    same number in the same unit (``47.9 GB`` is ``47.90 GB``)."""
    def figure(text: str) -> tuple[Decimal, str] | None:
        number, _, unit = text.partition(" ")
        return (Decimal(number), unit) if _number(number) is not None else None

    return (said := figure(memory)) is not None and said in {figure(p) for p in printed}


def _budget_takes(memory: str) -> bool:
    """Whether a budget (--budget, the KV cache memory field) takes a log's Available memory
    (``44.59 GiB``): 0 B (a run that had no room) or past 1 EiB is no budget, and offering it
    would only be refused."""
    try:
        return parse_size(memory.replace(" ", ""), field="Available KV cache memory") > 0
    except ValueError:
        return False


def _kv_size_printed(settings: RunSettings, tokens: int) -> Decimal | None:
    """The KV size SGLang's one-figure KV line prints for a pool of ``tokens`` at
    ``settings`` (its page's bytes, ``RunSettings.sglang_pool_page``), in its GB to 0.01:
    every layer holds a page more than the pool (``sglang_log._kv_pool_bytes``), so (994,432
    + 64) x 61 x 708 B = 40.00 GB on a Blackwell, x 788 B = 44.52 GB on a Hopper in fp8.
    None where the page is not known."""
    if settings.sglang_pool_page is None:
        return None
    page, page_bytes = settings.sglang_pool_page
    return Decimal(f"{(tokens + page) * page_bytes // page / SGLANG_GB:.2f}")


def _kv_size_matches(run: LoggedRun, settings: RunSettings) -> bool | None:
    """Whether ``settings`` print the log's one KV size for the log's tokens
    (``_kv_size_printed``); None where the log reads no KV size or tokens, or the settings'
    page is not known, so that neither size can be set beside the other."""
    if run.sglang_tokens is None or run.sglang_kv_size is None:
        return None
    printed = _kv_size_printed(settings, run.sglang_tokens)
    return None if printed is None else printed == Decimal(run.sglang_kv_size)


def _kv_size_can_agree(run: LoggedRun, settings: RunSettings) -> bool:
    """Whether a budget of the log's own can make ``settings``' KV line print the log's KV size:
    the pool's bytes a token are the settings' at any budget, so where the log's one KV size
    is read and these settings print another for the log's tokens (``_kv_size_printed``), no
    budget does. A Hopper's fp8 DeepSeek-V3.2 log (893,504 tokens of 61 x 788 B, 40.00 GB)
    on the B200 preset was offered --budget 38588650752B (893,504 x 61 x 708) with the
    Blackwell kept, at which its KV line read 35.94 GB. True where either size is not known."""
    return _kv_size_matches(run, settings) is not False


def _blackwell_logged(run: LoggedRun, now: RunSettings,
                      blackwell: Callable[[Mapping[str, object]], RunSettings]
                      ) -> dict[str, object]:
    """The changes that set the settings ``now`` to the log's run on SGLang on a Blackwell,
    where they are not on one (``now.sglang_blackwell`` False): its KV lines' dtype differs
    from theirs and is the one they give on a Blackwell (``blackwell(extra)``: the settings
    there with ``extra`` taken too, run only where the rest holds: DeepSeek's sparse attention
    in fp8_e4m3, ``sglang.sglang_dsa``). Where the Blackwell alone gives another dtype, the
    --kv-cache-dtype told there (idle off a Blackwell: bfloat16, a Hopper's layout again) is
    set to auto beside it, if that gives the log's: a B200's log of auto pasted on Hopper
    settings told bfloat16 is that run, not a budget of 548,352 tokens' bytes. Where the
    dtype's name is theirs already, it tells no layout apart (a Hopper's fp8 DSA, 656 + 132 =
    788 B a token a layer with its scales, logs float8_e4m3fn as a Blackwell's raw 708 B
    does): the Blackwell is offered where its layout prints the log's KV size for the log's
    tokens and theirs does not (``_kv_size_printed``), at any budget, since a budget that sizes
    those tokens in 788 B leaves the KV size line differing (44.52 GB for the log's 40.00):
    settings at that budget, whose tokens are the log's, are offered it too; where the log's
    KV size is not read, where its settings give the log's tokens and theirs do not. Where the
    dtype's name differs the Blackwell is offered only where its layout prints the log's KV
    size for its tokens too, where that size is read. Empty otherwise."""
    if now.sglang_blackwell is not False or run.sglang_kv_dtype is None:
        return {}
    same_name = run.sglang_kv_dtype == now.sglang_kv_dtype

    def sized_as_logged(settings: RunSettings) -> bool:
        """Whether ``settings`` print the log's KV size for its tokens, both known."""
        return _kv_size_matches(run, settings) is True

    # the log's tokens at the settings already say nothing of the layout where its KV size is
    # read and theirs differs: at 994,432 x 61 x 788 B a Hopper's fp8 holds a B200's tokens
    if same_name and (run.sglang_tokens is None or (
            run.sglang_tokens == now.sglang_tokens
            and (run.sglang_kv_size is None or sized_as_logged(now)))):
        return {}

    # a log whose KV size its Blackwell layout does not print for its tokens was no run of
    # it, whatever its dtype: a Hopper's fp8 log (893,504 tokens of 788 B, 40.00 GB) at a
    # Hopper's bfloat16 settings is not offered the Blackwell's 708 B (35.94 GB there)
    sizes_unread = run.sglang_kv_size is None or run.sglang_tokens is None
    for extra in ({}, {"sglang_kv_cache_dtype": _SGLANG_KV_CACHE_AUTO}):
        there = blackwell(extra)
        if there.sglang_kv_dtype == run.sglang_kv_dtype and (
                not same_name and (sizes_unread or sized_as_logged(there))
                or (sized_as_logged(there) and not sized_as_logged(now))
                or (there.sglang_tokens == run.sglang_tokens and run.sglang_kv_size is None)):
            return {"sglang_blackwell": True, **extra}
    return {}


def _kv_cache_dtype_logged(run: LoggedRun, then: RunSettings,
                           told: Callable[[str], RunSettings]) -> str | None:
    """SGLang's --kv-cache-dtype the log's run was told where the settings ``then`` tell
    another and it acts there (``then.sglang_kv_cache_dtype`` not None): its KV lines' dtype
    differs from theirs and is the one that value gives them (``told(value)``); a B200's log
    told bfloat16 (torch.bfloat16) beside auto's fp8_e4m3 layout. None otherwise."""
    if (run.sglang_kv_dtype is None or then.sglang_kv_cache_dtype is None
            or then.sglang_kv_dtype == run.sglang_kv_dtype):
        return None
    return next((value for value in SGLANG_KV_CACHE_DTYPES
                 if value != then.sglang_kv_cache_dtype
                 and told(value).sglang_kv_dtype == run.sglang_kv_dtype), None)


def logged_kv_dtype(run: LoggedRun, kv_dtype: str | None) -> str | None:
    """The KV dtype the log's ``run`` kept its cache in (canonical: ``float8_e4m3fn``), where
    the settings' ``kv_dtype`` is one no engine keeps (``UNSTORED_KV_DTYPE``, int8): there
    neither engine starts, so FlatKV has no line to check, and the dtype the log names is the
    fix that makes its lines comparable. Only SGLang's KV line names it ("KV Cache is
    allocated. dtype: torch.float8_e4m3fn"); none of vLLM's lines FlatKV reads does (its
    Available memory, KV cache size and concurrency lines give bytes and tokens alone). None
    where the log names none, or one FlatKV does not know (SGLang's uint8 store of fp4)."""
    if kv_dtype != UNSTORED_KV_DTYPE or run.sglang_kv_dtype is None:
        return None
    try:
        dtype = canonical_dtype(run.sglang_kv_dtype)
    except ValueError:
        return None
    return None if dtype == UNSTORED_KV_DTYPE else dtype


# The byte counts of a raw profile's KV, each a number of the KV dtype's elements: a token's
# bytes a layer, the sliding layers' where they differ, and the K / V splits SGLang logs
RAW_KV_FIELDS = ("kv_bytes_per_slot", "kv_tensor_bytes", "sliding_kv_bytes_per_slot",
                 "sliding_kv_tensor_bytes")


def raw_kv_in(profile: CacheProfile, dtype: str) -> dict[str, object]:
    """The KV fields of a raw ``profile`` (bytes typed per rank, with no heads to re-size: its
    ``tp`` None) in the KV dtype ``dtype``, by their names (``RAW_KV_FIELDS`` and
    ``kv_dtype``), for the Compare page's and ``compare --check-log``'s offer of a log's KV
    dtype (``logged_kv_dtype``). Its bytes are elements of its ``kv_dtype``, so they scale by
    the element sizes: int8's 1 byte an element is fp8's too (the bytes stand), bfloat16 keeps
    2 (they double: 2,048 B a token a layer at int8 is 4,096 at bfloat16), else the engine's
    run of the log's dtype holds half the tokens FlatKV's lines would say. ValueError, naming
    why and that the bytes are to be given again, where they cannot be carried over: an
    indexer's keys (fp8 whatever the dtype) and, at 1 byte, fp8_ds_mla's scales are in them,
    which an element size does not scale; the profile names no KV dtype; the bytes scaled are
    no whole bytes, or past a profile's bounds."""
    again = f"give the KV bytes in {dtype} again"
    if profile.kv_dtype is None:
        raise ValueError(f"kv_dtype is None: the KV bytes name no dtype to re-size from; {again}")
    was, then = dtype_bytes(profile.kv_dtype), dtype_bytes(dtype)
    if was == then:
        return {"kv_dtype": dtype}
    if profile.indexer_bytes_per_slot is not None:
        raise ValueError(
            f"kv_bytes_per_slot {profile.kv_bytes_per_slot:,} holds an indexer's keys "
            f"(indexer_bytes_per_slot {profile.indexer_bytes_per_slot:,}, fp8 whatever the KV "
            f"dtype){' and fp8_ds_mla scales' if was == 1 else ''}, which {dtype}'s element "
            f"size does not scale; {again}")
    sizes = {name: value for name in RAW_KV_FIELDS
             if (value := getattr(profile, name)) not in (None, ())}
    for name, value in sizes.items():
        if any(n * then % was for n in (value if isinstance(value, tuple) else (value,))):
            raise ValueError(f"{name} {value} is no whole number of {dtype}'s {then}-byte "
                             f"elements once re-sized from {profile.kv_dtype}'s {was}; {again}")
    changes: dict[str, object] = {"kv_dtype": dtype, **{
        name: tuple(n * then // was for n in value) if isinstance(value, tuple)
        else value * then // was for name, value in sizes.items()}}
    try:
        replace(profile, **changes)
    except ValueError as exc:  # past MAX_ROW_BYTES: "... is too large to be real: give N or less"
        said, _, fix = str(exc).partition(": give ")
        raise ValueError(f"{said} once re-sized from {profile.kv_dtype}'s {was}-byte elements "
                         f"to {dtype}'s {then} ({fix or 'a bound'}); {again}") from None
    return changes


def logged_changes(run: LoggedRun, now: RunSettings,
                   at: Callable[[Mapping[str, object]], RunSettings]) -> dict[str, object]:
    """The settings of the log's ``run`` that the ones ``now`` lack, by their options' names
    (``tp``, ``sglang_attn_dp_size``, ``mamba_cache_mode``, ``sglang_page_size``,
    ``sglang_mamba_track_interval``, ``sglang_overlap_schedule``,
    ``sglang_mamba_radix_cache_strategy``, ``vllm_blocks``, ``kv_memory``: the
    Available memory as printed, in GiB or GB, ``sglang_budget``: the bytes that size
    SGLang's pools as its log gives them, ``context``, ``sglang_chunked_prefill_size``), in
    the order a reader takes them: first what moves every figure a rank holds (TP, attention
    DP, mamba cache mode, SGLang's page size, the track interval its radix cache checks, its
    overlap scheduling and its strategy, ``sglang_blackwell``: a Blackwell GPU, where the
    settings are none and its layout gives the log's KV dtype (with --kv-cache-dtype auto
    where the one told keeps a Hopper's layout there), ``_blackwell_logged``, and
    ``sglang_kv_cache_dtype``: SGLang's --kv-cache-dtype told, where another gives the log's
    KV dtype, ``_kv_cache_dtype_logged``, and ``vllm_ssm_dtype``: vLLM's
    --mamba-ssm-cache-dtype whose P is the log's, ``_ssm_dtype_logged``), then
    the budget, context and chunk at the settings with those taken (``at``). The strategy is
    set beside the log's at the page and overlap taken, as SGLang logs auto as the cache it
    picks there: a run of auto without overlap logs no_buffer, which overlap off taken gives
    (a told no_buffer beside overlap on, which SGLang refuses, is not offered). vLLM 0.34
    sizes its cache by the blocks it fits after warm-up, so those are taken over the
    Available memory an older release sizes it by; under attention DP SGLang logs a group's
    chunk, chunked_prefill_size // D, so the option is D times it. A budget of its own taken
    off a GPU preset keeps what it set (``_off_the_preset``). Figures out of what the pages
    and flags take are left out."""
    changes: dict[str, object] = {}
    known: dict[tuple[tuple[str, object], ...], RunSettings] = {(): now}

    def settings_at(taken: Mapping[str, object]) -> RunSettings:
        """``at`` the changes ``taken``, each once (it runs the engines' figures)."""
        key = tuple(taken.items())
        if key not in known:
            known[key] = at(dict(taken))
        return known[key]

    if run.tp is not None and now.tp is not None and run.tp != now.tp and 0 < run.tp <= MAX_TP:
        changes["tp"] = run.tp
    elif (run.least_tp is not None and now.tp is not None and now.tp < run.least_tp <= MAX_TP):
        changes["tp"] = run.least_tp  # its ranks: at least that many, the settings' fewer
    if run.attn_dp is not None and run.attn_dp != now.attn_dp and 0 < run.attn_dp <= MAX_TP:
        changes["sglang_attn_dp_size"] = run.attn_dp
    if run.mamba_cache_mode in MAMBA_CACHE_MODES and run.mamba_cache_mode != now.mamba_cache_mode:
        changes["mamba_cache_mode"] = run.mamba_cache_mode
    # SGLang's page (its pools are whole pages), the track interval its radix cache checks,
    # the overlap scheduling and the strategy that set its tracking slots
    for name, offered in _SGLANG_PAGE_OFFERS.items():
        told = settings_at(changes) if name in _LOGGED_AT_THOSE_TAKEN else now
        logged, set_now = getattr(run, name), getattr(told, name)
        if logged is not None and set_now is not None and logged != set_now and (
                logged in offered):
            changes[name] = logged
    changes.update(_blackwell_logged(run, now, lambda extra: settings_at(
        {**changes, "sglang_blackwell": True, **extra})))
    if kv := _kv_cache_dtype_logged(run, settings_at(changes), lambda value: settings_at(
            {**changes, "sglang_kv_cache_dtype": value})):
        changes["sglang_kv_cache_dtype"] = kv
    if ssm := _ssm_dtype_logged(run, settings_at(changes), lambda value: settings_at(
            {**changes, "vllm_ssm_dtype": value})):
        changes["vllm_ssm_dtype"] = ssm
    then = settings_at(changes)
    if run.blocks is not None and MIN_VLLM_BLOCKS <= run.blocks <= MAX_VLLM_BLOCKS:
        if run.blocks not in then.vllm_blocks:
            changes["vllm_blocks"] = run.blocks
    elif (run.memory is not None and not _printed_among(run.memory, then.available)
          and _budget_takes(run.memory)):
        changes["kv_memory"] = run.memory
    after: dict[str, object] = {}
    if run.context is not None and 0 < run.context <= MAX_TOKENS and run.context != then.context:
        after["context"] = run.context
    if run.chunk is not None:
        chunk = run.chunk * then.attn_dp if run.chunk != CHUNKED_PREFILL_OFF else run.chunk
        if chunk <= MAX_TOKENS and chunk != then.chunk:
            after["sglang_chunked_prefill_size"] = chunk
    # a TP the pages cannot take (past MAX_TP) leaves the pools at another TP: no budget there
    tp_left = run.tp is not None and now.tp is not None and run.tp != now.tp and (
        "tp" not in changes)
    if (run.sglang_tokens is not None and 0 < run.sglang_tokens <= MAX_TOKENS and not tp_left
            and not {"vllm_blocks", "kv_memory"} & changes.keys()):
        # SGLang's pools at the context and chunk taken (its request cap, and so its state
        # slots, can follow the context)
        last = settings_at({**changes, **after})
        # a model of state layers alone logs its context as its tokens at any budget: its
        # slots tell the budget
        other_slots = run.sglang_state_slots not in (None, last.sglang_state_slots)
        if ((run.sglang_tokens != last.sglang_tokens or other_slots)
                and last.sglang_budget is not None and _kv_size_can_agree(run, last) and (
                budget := last.sglang_budget(run.sglang_tokens, run.sglang_state_slots))):
            changes["sglang_budget"] = budget
    return _off_the_preset(now, changes, after)


def _off_the_preset(now: RunSettings, changes: Mapping[str, object],
                    after: Mapping[str, object]) -> dict[str, object]:
    """``logged_changes``' ``changes`` then ``after``, with what a GPU preset of the settings
    ``now`` set: where a budget of the log's own leaves the preset, its Blackwell and its chunk
    kept as told (``RunSettings.gpu_chunk``: the B200's 16,384); where none does, a Blackwell
    offered beside it dropped, as the preset fixes it (a Hopper's: not told there), and with
    it the --kv-cache-dtype auto offered beside it (``_blackwell_logged``), idle off one."""
    changes, after = dict(changes), dict(after)
    if not {"vllm_blocks", "kv_memory", "sglang_budget"} & changes.keys():
        # the KV cache dtype offered beside a Blackwell acts on a Blackwell alone: it goes too
        if now.blackwell_preset and changes.pop("sglang_blackwell", None):
            changes.pop("sglang_kv_cache_dtype", None)
        return {**changes, **after}
    if now.blackwell_preset and now.sglang_blackwell:
        changes["sglang_blackwell"] = True
    if now.gpu_chunk is not None and "sglang_chunked_prefill_size" not in after:
        after["sglang_chunked_prefill_size"] = now.gpu_chunk
    return {**changes, **after}
