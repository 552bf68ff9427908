"""The compact layer-pattern syntax of ``--layers`` and the app's pattern editor.

Grammar (whitespace is ignored)::

    sequence := item ("," item)*
    item     := [COUNT "*"] atom ["*" COUNT]
    atom     := NAME | "(" sequence ")"

``(3*linear_attention,full_attention)*12`` is Qwen3.5's 48 cache layers; ``full*32`` is a
Llama. NAME is a planner label or one of its short aliases (``full``, ``sliding``/``swa``,
``linear``/``gdn``/``mamba``). Counts are checked before anything is expanded, so ``full*10**12``
is an error, not a hang.
"""

from __future__ import annotations

import re

from flatkv.plan import FULL_ATTENTION, LINEAR_ATTENTION, SLIDING_ATTENTION

ALIASES = {
    FULL_ATTENTION: FULL_ATTENTION,
    "full": FULL_ATTENTION,
    "attention": FULL_ATTENTION,
    "attn": FULL_ATTENTION,
    SLIDING_ATTENTION: SLIDING_ATTENTION,
    "sliding": SLIDING_ATTENTION,
    "swa": SLIDING_ATTENTION,
    LINEAR_ATTENTION: LINEAR_ATTENTION,
    "linear": LINEAR_ATTENTION,
    "gdn": LINEAR_ATTENTION,
    "mamba": LINEAR_ATTENTION,
    "state": LINEAR_ATTENTION,
}
MAX_LAYERS = 100_000
_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z0-9_]*)|(.))")


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for number, name, other in _TOKEN.findall(text):
        if number:
            out.append(("num", number))
        elif name:
            out.append(("name", name))
        elif other.strip():
            out.append(("op", other))
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.pos = 0

    def error(self, what: str) -> ValueError:
        return ValueError(
            f"layers pattern {self.text!r}: {what}; write e.g. "
            "'(3*linear_attention,full_attention)*12' or 'full*32'"
        )

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.pos] if self.pos < len(self.toks) else None

    def take(self, kind: str, value: str | None = None) -> str:
        tok = self.peek()
        if tok is None or tok[0] != kind or (value is not None and tok[1] != value):
            found = "the end" if tok is None else repr(tok[1])
            raise self.error(f"expected {value or kind} but found {found}")
        self.pos += 1
        return tok[1]

    def count(self) -> int:
        n = int(self.take("num"))
        if n < 1:
            raise self.error("repeat counts must be at least 1")
        return n

    def sequence(self) -> list[tuple[int, object]]:
        items = [self.item()]
        while self.peek() == ("op", ","):
            self.pos += 1
            items.append(self.item())
        return items

    def item(self) -> tuple[int, object]:
        times = 1
        if self.peek() and self.peek()[0] == "num":
            times = self.count()
            self.take("op", "*")
        atom = self.atom()
        while self.peek() == ("op", "*"):
            self.pos += 1
            times *= self.count()
        return times, atom

    def atom(self) -> object:
        tok = self.peek()
        if tok == ("op", "("):
            self.pos += 1
            inner = self.sequence()
            self.take("op", ")")
            return inner
        name = self.take("name").lower()
        if name not in ALIASES:
            raise self.error(f"unknown layer kind {name!r} (known: {', '.join(sorted(ALIASES))})")
        return ALIASES[name]


def _length(items: list[tuple[int, object]]) -> int:
    return sum(times * (1 if isinstance(atom, str) else _length(atom)) for times, atom in items)


def _expand(items: list[tuple[int, object]]) -> list[str]:
    out: list[str] = []
    for times, atom in items:
        block = [atom] if isinstance(atom, str) else _expand(atom)
        out.extend(block * times)
    return out


def parse_layer_pattern(text: str) -> list[str]:
    """Expand a layer pattern into one planner label per cache layer."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(
            "layers pattern is empty: write e.g. '(3*linear_attention,full_attention)*12'"
        )
    parser = _Parser(text)
    items = parser.sequence()
    if parser.peek() is not None:
        raise parser.error(f"unexpected {parser.peek()[1]!r}")
    total = _length(items)
    if total > MAX_LAYERS:
        raise parser.error(f"it expands to {total:,} layers, more than {MAX_LAYERS:,}")
    return _expand(items)


def format_layer_pattern(labels: list[str] | tuple[str, ...]) -> str:
    """The shortest obvious pattern for a label list: the smallest repeating period, with runs.

    ``format_layer_pattern(parse_layer_pattern(p))`` expands back to the same labels.
    """
    labels = list(labels)
    n = len(labels)
    if n == 0:
        return ""
    period = next(k for k in range(1, n + 1) if n % k == 0 and labels[:k] * (n // k) == labels)
    runs: list[str] = []
    i = 0
    unit = labels[:period]
    while i < period:
        j = i
        while j < period and unit[j] == unit[i]:
            j += 1
        runs.append(unit[i] if j - i == 1 else f"{j - i}*{unit[i]}")
        i = j
    body = ",".join(runs)
    repeats = n // period
    if repeats == 1:
        return body
    if len(runs) == 1 and "*" not in body:
        return f"{body}*{repeats}"
    return f"({body})*{repeats}"
