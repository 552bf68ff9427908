"""The compact layer-pattern syntax of ``--layers``, presets and the app's pattern editor.

Grammar (whitespace is ignored)::

    sequence := item ("," item)*
    item     := [COUNT "*"] atom ["*" COUNT]
    atom     := NAME | "(" sequence ")"

``(3*linear_attention,full_attention)*12`` is Qwen3.5's 48 cache layers; ``full*32`` is a Llama.
``parse_pattern`` expands any names (a model spec names its own kinds: ``(3*gdn,full)*12``);
``parse_layer_pattern`` takes planner labels or their short aliases (``full``, ``sliding``/``swa``,
``chunked``, ``linear``/``gdn``/``mamba``). Lengths are checked before anything is expanded, so
``full*10**12`` is an error, not a hang.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from flatkv.plan import (
    CHUNKED_ATTENTION,
    FULL_ATTENTION,
    LINEAR_ATTENTION,
    SLIDING_ATTENTION,
    bound_fix,
    bound_refusal,
)
from flatkv.units import ascii_digits, names_text, quoted, quoted_value, whole_number

# More cache layers than any real model has (the deepest have about 130, Falcon-H1 counts two a
# layer): a pattern past this is a typo. It also bounds the app's slowest page: Budget plans
# 54 points, so at 10,000 layers it took 20 s.
MAX_CACHE_LAYERS = 2_048
# Deeper nesting than any pattern a person writes.
MAX_NESTING = 32

ALIASES = {
    FULL_ATTENTION: FULL_ATTENTION,
    "full": FULL_ATTENTION,
    "attention": FULL_ATTENTION,
    "attn": FULL_ATTENTION,
    SLIDING_ATTENTION: SLIDING_ATTENTION,
    "sliding": SLIDING_ATTENTION,
    "swa": SLIDING_ATTENTION,
    CHUNKED_ATTENTION: CHUNKED_ATTENTION,
    "chunked": CHUNKED_ATTENTION,
    LINEAR_ATTENTION: LINEAR_ATTENTION,
    "linear": LINEAR_ATTENTION,
    "gdn": LINEAR_ATTENTION,
    "mamba": LINEAR_ATTENTION,
    "state": LINEAR_ATTENTION,
}

# A name a layer pattern can hold: a kind name of a model spec.
NAME = r"[A-Za-z_][A-Za-z0-9_.\-]*"
# A repeat count is read whole, as far as it runs on (a sign, digits, letters, '.'), so that
# 'full*0x10' names '0x10' as its count, where it read 0 and then x10 without saying so.
_TOKEN = re.compile(rf"\s*(?:([-+]?\d[\w.]*)|({NAME})|(.))")



def check_kind_name(name: object) -> str:
    """``name`` when a layer pattern can hold it; else ValueError saying what a name may hold."""
    if not isinstance(name, str) or not re.fullmatch(NAME, name):
        raise ValueError(f"kind name {name!r} must start with a letter or '_' and hold only "
                         "letters, digits, '_', '.', '-' (the layer pattern names it)")
    return name


def _tokenize(text: str) -> list[tuple[str, str, int]]:
    """(kind, text, the character it starts at, counting from 1) of each token: errors say
    where, as a pattern of 100 layers' names is long to search by eye."""
    tokens: list[tuple[str, str, int]] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:  # pragma: no cover - the pattern always matches one character
            break
        pos = m.end()
        kind = next(i for i in (1, 2, 3) if m.group(i))
        at = m.start(kind) + 1
        if kind == 1:
            tokens.append(("num", m.group(1), at))
        elif kind == 2:
            tokens.append(("name", m.group(2), at))
        elif m.group(3) in "(),*":
            tokens.append((m.group(3), m.group(3), at))
        else:
            raise ValueError(
                f"layer pattern {quoted(text)} has unexpected {m.group(3)!r} at character {at}: "
                "write names, counts, '*', ',' and parentheses, e.g. (3*gdn,full)*12"
            )
    return tokens


# A pattern an error suggests where it cannot fix the one typed (whole_number's example, said
# as it is)
PATTERN_EXAMPLE = "(3*linear,full)*12"

# What the parser wanted, in words, for a pattern it cannot read.
_EXPECTED = {"num": "a repeat count", "name": "a layer name"}


# A parsed node: (repeat, name) or (repeat, [nodes]), a parenthesised pattern repeated.
_Node = tuple[int, Any]


class _PatternParser:
    """The recursive descent over a pattern's tokens, one method a grammar rule; ``pos`` is the
    next token. Errors name the pattern as typed and the character where reading stopped."""

    def __init__(self, text: str, max_layers: int) -> None:
        self.text, self.max_layers = text, max_layers
        self.tokens = _tokenize(text)
        self.pos = 0
        self.depth = 0  # open parentheses: hostile nesting is an error, not a RecursionError

    def peek(self) -> str | None:
        return self.tokens[self.pos][0] if self.pos < len(self.tokens) else None

    def take(self, kind: str) -> str:
        """The next token's text, which must be of ``kind``."""
        if self.peek() != kind:
            got, at = ((repr(self.tokens[self.pos][1]), self.tokens[self.pos][2])
                       if self.pos < len(self.tokens)
                       else ("the end of the pattern", len(self.text.rstrip()) + 1))
            raise ValueError(
                f"layer pattern {quoted(self.text)}: expected {_EXPECTED.get(kind, repr(kind))} "
                f"at character {at}, got {got} (write it like (3*linear,full)*12)"
            )
        self.pos += 1
        return self.tokens[self.pos - 1][1]

    def count(self) -> int:
        """A repeat count: a whole number of 1 or more in ASCII digits (``units.whole_number``:
        ``1_000`` read, ``١٢`` and ``+3`` refused with their fix)."""
        typed = self.take("num")
        at = self.tokens[self.pos - 1][2]
        where = (f"layer pattern {quoted(self.text)}: repeat count {quoted(typed, 20)} at "
                 f"character {at}")
        digits = typed.replace("_", "").lstrip("0")
        # past any layer count, and int() refuses 4,300 digits
        if typed.isascii() and digits.isdigit() and len(digits) > 18:
            raise _too_many_layers(self.text, self.max_layers)
        count = whole_number(typed, where, least=1, example=PATTERN_EXAMPLE,
                             fix_as=self.with_count)
        if count is None or count < 0:  # 0x10, -1, 1.5, 1e3, 1²
            raise ValueError(f"{where} is not a whole number >= 1: write the count in digits, "
                             "e.g. (3*linear,full)*12")
        if count == 0:  # in digits already: "write it in digits" would not say what is wrong
            raise ValueError(f"{where} {bound_refusal(count, 1)}: {bound_fix(count, 1)}, or "
                             "leave the item out, e.g. (3*linear,full)*12")
        return count

    def with_count(self, instead: str) -> str:
        """The whole pattern with the count just taken written as ``instead`` (``units``' fix
        of digits of another script or a plus sign) and every other count in ASCII digits
        without a plus sign: the field's fix is a pattern, not a bare count (``full*١٢`` ->
        ``full*12``, where "e.g. 12" was no pattern). Where that pattern still does not parse
        (another part is wrong), ``PATTERN_EXAMPLE``."""
        text, taken = self.text, self.pos - 1
        for i in reversed(range(len(self.tokens))):
            kind, typed, at = self.tokens[i]
            if kind == "num":
                fixed = instead if i == taken else ascii_digits(typed).removeprefix("+")
                text = text[:at - 1] + fixed + text[at - 1 + len(typed):]
        try:
            parse_pattern(text, max_layers=self.max_layers)
        except ValueError:
            return PATTERN_EXAMPLE
        return text.strip()  # (a link's layers= then the pattern, not a space)

    def sequence(self) -> list[_Node]:
        nodes = [self.item()]
        while self.peek() == ",":
            self.take(",")
            nodes.append(self.item())
        return nodes

    def item(self) -> _Node:
        repeat = 1
        if self.peek() == "num":
            repeat = self.count()
            self.take("*")
        atom: Any = self.group() if self.peek() == "(" else self.take("name")
        while self.peek() == "*":
            self.take("*")
            repeat *= self.count()
        return repeat, atom

    def group(self) -> list[_Node]:
        """A parenthesised pattern, no deeper than ``MAX_NESTING``."""
        self.take("(")
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise ValueError(f"layer pattern nests parentheses more than {MAX_NESTING} deep "
                             f"(at character {self.tokens[self.pos - 1][2]}): write it flatter, "
                             "e.g. (3*gdn,full)*12")
        nodes = self.sequence()
        self.depth -= 1
        self.take(")")
        return nodes

    def pattern(self) -> list[_Node]:
        """The whole pattern: a sequence, and nothing after it."""
        tree = self.sequence()
        if self.pos != len(self.tokens):
            raise ValueError(f"layer pattern {quoted(self.text)}: unexpected "
                             f"{self.tokens[self.pos][1]!r} at character "
                             f"{self.tokens[self.pos][2]} (write it like (3*linear,full)*12)")
        return tree


def _check_length(nodes: list[_Node], text: str, max_layers: int) -> int:
    """The layers ``nodes`` expand to, counted without expanding them: past ``max_layers`` is
    an error as soon as the count passes it (``full*10**12`` is not built)."""
    total = 0
    for repeat, atom in nodes:
        total += repeat * (1 if isinstance(atom, str) else _check_length(atom, text, max_layers))
        if total > max_layers:
            raise _too_many_layers(text, max_layers)
    return total


def _too_many_layers(text: str, max_layers: int) -> ValueError:
    """The refusal of a pattern past ``max_layers`` cache layers, in the words of every bound's
    (``plan.bound_refusal``): its count is known only to pass the bound (counting stops there,
    and a count of 19 digits is not read), so it says "more than"."""
    past = max_layers + 1
    return ValueError(f"layer pattern {quoted(text)} expands to more than {max_layers:,} cache "
                      f"layers, which {bound_refusal(past, 1, max_layers)}: "
                      f"{bound_fix(past, 1, max_layers)}")


def _expand(nodes: list[_Node]) -> list[str]:
    out: list[str] = []
    for repeat, atom in nodes:
        out.extend(([atom] if isinstance(atom, str) else _expand(atom)) * repeat)
    return out


def parse_pattern(text: str, *, max_layers: int = MAX_CACHE_LAYERS) -> list[str]:
    """Expand a layer pattern into one name per cache layer.

    Syntax: items separated by commas; an item is a name or a parenthesised pattern, with an
    optional repeat count before (``3*gdn``) or after (``(gdn,full)*12``). The length is checked
    against ``max_layers`` before anything is expanded.
    """
    if not isinstance(text, str):
        raise ValueError(f"layer pattern must be a string such as \"(3*linear,full)*12\", got "
                         f"{quoted_value(text)}: write one name per cache layer")
    if not text.strip():  # an emptied field or flag, or a line break alone: said as such
        raise ValueError("layer pattern is empty: write one name per cache layer, e.g. "
                         "(3*linear,full)*12")
    tree = _PatternParser(text, max_layers).pattern()
    _check_length(tree, text, max_layers)
    return _expand(tree)


def layer_runs(names: Sequence[str]) -> list[tuple[str, int]]:
    """Consecutive equal names as ``(name, count)`` runs: the editable list view of a pattern."""
    runs: list[tuple[str, int]] = []
    for name in names:
        if runs and runs[-1][0] == name:
            runs[-1] = (name, runs[-1][1] + 1)
        else:
            runs.append((name, 1))
    return runs


def _runs_text(runs: Sequence[tuple[str, int]]) -> str:
    return ",".join(name if n == 1 else f"{n}*{name}" for name, n in runs)


def format_pattern(names: Sequence[str]) -> str:
    """A compact pattern for a list of names; ``parse_pattern(format_pattern(x)) == x``.

    Runs become ``n*name``. Scanning left to right, wherever a block of up to 16 runs repeats,
    the longest such stretch becomes ``(block)*k``: ``(3*gdn,full)*12``, ``4*M,(A,5*M)*4``.
    Linear in the number of runs.
    """
    runs = layer_runs(names)
    parts: list[str] = []
    i = 0
    while i < len(runs):
        best_cover, best_period, best_repeats = 1, 1, 1
        for period in range(1, min(16, (len(runs) - i) // 2) + 1):
            block = runs[i:i + period]
            repeats = 1
            while runs[i + repeats * period:i + (repeats + 1) * period] == block:
                repeats += 1
            if repeats >= 2 and repeats * period > best_cover:
                best_cover, best_period, best_repeats = repeats * period, period, repeats
        if best_repeats == 1:
            parts.append(_runs_text(runs[i:i + 1]))
        else:
            block_text = _runs_text(runs[i:i + best_period])
            # a single run repeated cannot happen (equal neighbours merge into one run)
            parts.append(f"({block_text})*{best_repeats}")
        i += best_cover
    return ",".join(parts)


def parse_layer_pattern(text: str) -> list[str]:
    """Expand a pattern of planner labels (or their aliases) into one label per cache layer."""
    names = parse_pattern(text)
    unknown = sorted({name for name in names if name.lower() not in ALIASES})
    if unknown:
        raise ValueError(
            f"layer pattern {quoted(text)} has unknown layer {names_text('kind', unknown)}: use "
            "one of "
            f"{', '.join(sorted(ALIASES))}"
        )
    return [ALIASES[name.lower()] for name in names]


# Each label's short alias, as the editors write a pattern (``(3*linear,full)*12``)
SHORT_NAMES = {FULL_ATTENTION: "full", SLIDING_ATTENTION: "sliding",
               CHUNKED_ATTENTION: "chunked", LINEAR_ATTENTION: "linear"}


def format_layer_pattern(labels: Sequence[str], *, short: bool = False) -> str:
    """The compact pattern of a label list; ``parse_layer_pattern`` expands it back. ``short``:
    in the labels' short aliases, as a person writes it (a field 1,000 px wide shows
    ``(linear,full)*24``, where ``(linear_attention,full_attention)*24`` ran out of it)."""
    return format_pattern([SHORT_NAMES[x] for x in labels] if short else labels)
