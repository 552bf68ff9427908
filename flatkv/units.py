"""Byte sizes in and out: exact parsing of ``10GiB`` / ``80GB`` / ``12e9`` and readable display.

Parsing is exact (``fractions.Fraction``, never floats), so ``44.59GiB`` is
``floor(44.59 * 2**30)`` bytes, as an engine that logs a rounded GiB figure had at least that.
"""

from __future__ import annotations

import math
import numbers
import re
import unicodedata
from collections.abc import Callable, Sequence
from fractions import Fraction
from itertools import islice

_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}
# digits may be grouped in threes by commas, as the app prints bytes (76,968,728,985B); a comma
# anywhere else (1,5GB: a decimal comma? 128,00: a lost digit?) is refused, not guessed
_THOUSANDS = r"[0-9]{1,3}(?:,[0-9]{3})+"
_SIZE = re.compile(rf"^\s*((?:{_THOUSANDS}|[0-9]+(?:_[0-9]+)*)(?:\.[0-9]*)?|\.[0-9]+)"
                   r"(?:[eE]([+-]?[0-9]+))?\s*([A-Za-z]*)\s*$")
# Anything above this is not a memory budget but a typo (about 1 EiB).
MAX_BYTES = 2**60
# Far past any model's context and any page: a larger token count is a typo (and past float
# range once multiplied out, where the formulas print ratios).
MAX_TOKENS = 2**40
# The most tokens a block or page the pages, their links and a log's offered settings take
MAX_BLOCK_SIZE = 1 << 20


# A whole number as typed: ASCII digits, which underscores may group (1_000), as Python's int()
# and so the engines' own flags read them; a '-' read so that the field's bound refuses it
_WHOLE = re.compile(r"-?[0-9]+(?:_[0-9]+)*")


def ascii_digits(text: str) -> str:
    """``text`` with each digit of another script (Arabic-Indic ``١٢``, fullwidth ``１２``) as
    its ASCII digit: the value a refusal of those digits suggests instead."""
    return "".join(str(unicodedata.decimal(c)) if c.isdecimal() else c for c in text)


def number_problem(text: str, subject: str, example: str,
                   reads: Callable[[str], object], *, key: str = "",
                   fix_for: Callable[[str], str] = str) -> str | None:
    """Why ``text``, a number that Python's int() (or an engine's flag) would read, is refused
    here, as an error naming ``subject``; None where neither applies (the caller says whether
    it reads ``text`` at all). Only ASCII digits are read: ``١٢`` and ``１２`` are digits to
    int(), but a number shown back in ASCII beside what was typed in another script could be
    taken for another figure, and a link or command line carries it as typed. A plus sign is
    refused rather than read (``+3`` as 3): no figure here is signed, and a count written
    with one may mean "3 more" than a default; it is named only where the rest reads (``+x``
    is no number, said by the caller). The fix is the value as it should be written where the
    caller ``reads`` that (neither None nor a ValueError), else ``example``: a number of other
    digits with a minus sign (``-٢``) that the caller refuses as negative, as no figure here
    is, is given back without it, saying so (``-2`` was the fix, and then refused as not
    positive). ``key``: a link's key, which the fix then names as a link's notices write every
    value they suggest (``e.g. tp=2``, not a bare 2 beside ``tp='٢'``). ``fix_for``: the fix
    to suggest for a value as it should be written, where the field reads it but would take
    another better (a TP the model does not split over: the nearest that it does)."""
    raw = text.strip()

    def read(instead: str) -> bool:
        try:
            return instead.isascii() and reads(instead) is not None
        except ValueError:
            return False

    def unsigned(instead: str) -> bool:
        """``instead`` (a plus sign and the rest) without the plus sign is a number as typed:
        not '+-1', which int() refuses and whose '-1' is no fix, nor '+ 1'."""
        return (instead.startswith("+") and not instead[1:2].isspace()
                and instead[1:2] not in ("+", "-") and read(instead[1:]))

    if any(c.isdecimal() and not c.isascii() for c in raw):
        instead, unsign = ascii_digits(raw), ""
        if not read(instead) and unsigned(instead):
            instead = instead[1:]  # '+٢': 2, not the field's example, as '+2' is refused too
        elif (not read(instead) and instead.startswith("-")
              and not instead[1:2].isspace() and read(instead[1:])):
            instead, unsign = instead[1:], ", without the minus sign (it takes no negative number)"
        return (f"{subject} is not written in ASCII digits: write it in ASCII digits{unsign}, "
                f"e.g. {keyed(key, fix_for(instead) if read(instead) else example)}")
    if unsigned(raw):
        return (f"{subject} has a plus sign: write it without the sign, "
                f"e.g. {keyed(key, fix_for(raw[1:]))}")
    return None


def whole_number(text: str, subject: str, *, least: int = 0, most: int | None = None,
                 example: int | str | None = None, key: str = "",
                 fits: Callable[[int], bool] | None = None,
                 fix_as: Callable[[str], str] = str) -> int | None:
    """The whole number ``text`` writes (``12``, `` 12 ``, ``1_000``; ``-1``, which the field's
    bound then refuses in its own words, "must be positive"), None where it writes none, which
    the caller words with what it takes. Digits of another script and a plus sign, which
    int() reads, are refused here with the fix (``number_problem``), in one line naming
    ``subject``: a fix the field takes, from ``least`` to ``most`` (its bound, which the
    caller checks; no figure here is negative), else ``example``, by default the one of them
    nearest 12 (``whole_example``). Underscores are read, as int() reads them and
    ``parse_tokens`` does for a context copied from a vLLM command line: they only group
    digits and cannot mean another figure. More than 4,300 digits is no number (int() refuses
    it). ``fits``: what else the fix must pass (a TP the model splits over), else ``example``;
    ``key``: as ``number_problem``'s. ``fix_as``: the fix as the field is written, from the
    number it takes (a layer pattern's count: the whole pattern with it, ``full*12``, as a
    bare 12 is no pattern); not applied to ``example``."""
    def takes(instead: str) -> bool:
        value = int(instead) if _WHOLE.fullmatch(instead) else least - 1
        return least <= value and (most is None or value <= most)

    example = whole_example(least, most) if example is None else example
    def fix_for(instead: str) -> str:
        return fix_as(instead) if fits is None or fits(int(instead)) else str(example)

    if (problem := number_problem(text, subject, str(example), lambda t: takes(t) or None,
                                  key=key, fix_for=fix_for)) is not None:
        raise ValueError(problem)
    raw = text.strip()
    if not _WHOLE.fullmatch(raw):
        return None
    try:
        return int(raw)
    except ValueError:  # past int()'s 4,300 digits
        return None


def whole_example(least: int, most: int | None) -> int:
    """A whole number a field of ``least`` to ``most`` (None: no upper bound) takes, for its
    errors' "e.g.": the one nearest 12."""
    return max(least, 12 if most is None else min(12, most))


def decimal_number(text: str, subject: str, *,
                   takes: Callable[[float], bool] = lambda value: value >= 0,
                   key: str = "") -> float | None:
    """The number ``text`` writes as float() reads it (``0.9``, `` 0.9 ``, ``9e-1``; ``nan``,
    which the caller's range refuses in its own words), None where it writes none. Digits of
    another script and a plus sign, which float() reads as it reads them in a whole number,
    are refused here with the fix (``number_problem``), as ``whole_number`` refuses them: a
    fix the field ``takes`` (its range, which the caller checks), else 0.9, which both its
    fields take (a link's frac, --memory-fraction)."""
    def reads(instead: str) -> float | None:
        value = _unsigned_float(instead)
        return value if value is not None and takes(value) else None

    if (problem := number_problem(text, subject, "0.9", reads, key=key)) is not None:
        raise ValueError(problem)
    try:
        return float(text)
    except ValueError:
        return None


def _unsigned_float(text: str) -> float | None:
    """float(``text``), None where it starts with a plus sign (``number_problem``'s fix is the
    value without it)."""
    return None if text.lstrip().startswith("+") else float(text)


# Suffixes as vLLM's --max-model-len reads them (vllm human_readable_int): lowercase decimal,
# uppercase binary, so "128k" is 128,000 tokens and "128K" is 131,072, and a context copied from
# a vLLM command line gives the same L and concurrency here. Ki / Mi / Gi / Ti (binary) are our
# addition.
_DECIMAL_TOKENS = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BINARY_TOKENS = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40,
                  "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
# commas group thousands; underscores sit between digits, as Python's int() reads them (and so
# vLLM, in a number without a suffix)
_TOKENS = re.compile(rf"((?:{_THOUSANDS}|[0-9]+(?:_[0-9]+)*)(?:\.[0-9]+)?)"
                     r"(Ki|Mi|Gi|Ti|k|m|g|t|K|M|G|T)?")


def parse_tokens(text: str | int, field: str = "--context", *, maximum: int = MAX_TOKENS,
                 key_value: bool = False) -> int:
    """Tokens from ``"262144"``, ``"262,144"``, ``"256K"`` (262,144) or ``"128k"`` (128,000):
    suffixes as vLLM's ``--max-model-len`` reads them, lowercase k / m / g / t decimal (25.6k
    is 25,600), uppercase K / M / G / T and Ki / Mi / Gi / Ti binary (whole numbers only). The
    CLI and the app's token fields read them alike, so a context copied from a vLLM command line
    means the same; a decimal that vLLM's float product truncates to another count (1.001k:
    1,000 there) is refused with both, rather than counted a token off its log. A refusal says
    the field, the value as typed, what is wrong and the fix, an entry that is no count as a
    bound's (``--context 0 must be positive: give 1 or more tokens``): ``--context '1e3' is not
    a whole number of tokens: give e.g. ...``, or with ``key_value`` as a link's notices name a
    value, ``ctx='1e3' ...`` (``value_named``)."""
    if not str(text).strip():
        shown = "empty"
    else:
        shown = repr(text) if len(str(text)) <= 30 else repr(str(text)[:24] + "...")
    named = value_named(field, shown, key_value)  # "is empty" said, where empty
    key = link_key(field, key_value)
    # the fix for an entry that is no count of tokens: vLLM's suffixes, binary and decimal
    examples = f"{keyed(key, '262144')}, 256K (262,144) or 128k (128,000)"
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
        # a number given as such, grouped as the figures are
        counted = named if key_value else value_named(field, f"{text:,}", key_value)
    else:
        raw = str(text).strip()
        # a context of 2**40 tokens is 13 digits (17 grouped): a longer entry is no context
        match = _TOKENS.fullmatch(raw) if raw.isascii() and len(raw) <= 32 else None
        if match is None and (problem := number_problem(
                raw, named, "256K", lambda t: parse_tokens(t, field, maximum=maximum),
                key=key)):
            raise ValueError(problem)
        if match is None and raw.startswith("-") and (
                negative := _TOKENS.fullmatch(raw[1:].strip())):
            # a runaway entry by its start, as given (no 5,000 digits to group)
            count = (_count_named(field, raw, negative, key_value, sign="-") if len(raw) <= 32
                     else named)
            raise ValueError(f"{count} {_TOKENS_LEAST}")
        if match is None:
            if shown == "empty":
                raise ValueError(f"{named}: give e.g. {examples}")
            if len(raw) > 32:
                wrong = f"is too long for a token count ({len(raw):,} characters)"
            else:
                wrong = "is not a whole number of tokens" + (
                    " (commas only group thousands)" if "," in raw and "_" not in raw else "")
            raise ValueError(f"{named} {wrong}: give e.g. {examples}")
        number, suffix = match.groups()
        number = number.replace(",", "").replace("_", "")
        if "." in number and suffix and suffix not in _DECIMAL_TOKENS:
            raise ValueError(f"{named} is not a whole number of binary {suffix}: give e.g. "
                             f"{keyed(key, number + suffix[0].lower())} for the decimal "
                             "multiple")
        exact = _exact_tokens(number, suffix)
        # a count out of range named as the other fields name theirs, grouped (is 0, is
        # 99,999,999,999,999, is 2T (2,199,023,255,552 tokens)); a link's value as it gives it
        counted = _count_named(field, raw, match, key_value)
        if exact > maximum:
            value = maximum + 1  # refused below, with the cap
        elif exact.denominator != 1:
            low = int(exact)
            raise ValueError(f"{named} is not a whole number of tokens (between {low:,} and "
                             f"{low + 1:,}): give e.g. {examples}")
        elif suffix in _DECIMAL_TOKENS and (
                engine := int(float(number) * _DECIMAL_TOKENS[suffix])) != exact:
            # vLLM multiplies a float and truncates: 1.001k is 1000.9999999999999, so 1,000
            raise ValueError(f"{named} is read by vLLM as {engine:,} tokens (its float "
                             f"arithmetic), exactly {int(exact):,}: give {engine} or "
                             f"{int(exact)} in digits")
        else:
            value = int(exact)
    if value < 1:  # the form of every bound's refusal (plan.bound_refusal), in tokens
        raise ValueError(f"{counted} {_TOKENS_LEAST}")
    if value > maximum:
        raise ValueError(f"{counted} is more than {maximum:,} tokens: give {maximum:,} or fewer"
                         f"{_bound_note(maximum)}")
    return value


def _count_named(field: str, raw: str, match: re.Match, key_value: bool, sign: str = "") -> str:
    """A token count in an error, after its field, as the other fields name a number: grouped
    (``--context 99,999,999,999,999``), with its count beside a suffix (``--context 2T
    (2,199,023,255,552 tokens)``); in a link's notice, its value as the link gives it
    (``ctx='0'``, as every link key's is)."""
    if key_value:
        return value_named(field, quoted(raw), key_value)
    number, suffix = match.groups()
    exact = _exact_tokens(number.replace(",", "").replace("_", ""), suffix)
    if exact.denominator != 1:  # no whole count to group (-1.5): as typed
        return value_named(field, quoted(raw), key_value)
    count = int(exact)
    shown = f"{sign}{count:,}" if not suffix else f"{sign}{number}{suffix} ({sign}{count:,} tokens)"
    return value_named(field, shown, key_value)


def _exact_tokens(digits: str, suffix: str | None) -> Fraction:
    """The tokens ``digits`` (no commas or underscores) times ``suffix`` count, exactly: a
    fraction where they are none whole (1.5, 1.0005k), which the caller refuses."""
    return Fraction(digits) * (_DECIMAL_TOKENS.get(suffix or "")
                               or _BINARY_TOKENS.get(suffix or "", 1))


# A token count under 1, after the count as named (``--context 0``, ``ctx='0'``)
_TOKENS_LEAST = "must be positive: give 1 or more tokens"


def _bound_note(maximum: int) -> str:
    """Why the token cap is where it is, where it is FlatKV's own (MAX_TOKENS): no engine's
    limit, a guard against a typo (1,099,511,627,776 read as a bound of its own meaning)."""
    # not "context": --max-batched-tokens and the sweep's token fields share the cap
    return (" (2^40: more is taken for a typo)"
            if maximum == MAX_TOKENS else "")


MAX_SIZE_DIGITS = 40  # digits of a size's number (1 EiB has 19)


def parse_size(text: str | int, *, field: str = "size", whole: bool = False,
               key_value: bool = False) -> int:
    """Bytes in ``text``: a plain integer, a decimal with exponent, or a number with a unit
    (B, KB, MB, GB, TB decimal; KiB, MiB, GiB, TiB binary; case-insensitive).

    A budget's fractional byte rounds down (``44.59GiB`` as an engine logs it is not a whole
    number of bytes). A row size must be exact: with ``whole=True`` a fraction of a byte is
    refused rather than rounded (``1.5`` bytes per slot is a typo, not 1 byte). An error
    names the value ``gpu_mem '80'``, or with ``key_value`` as a link's notices do,
    ``gpu_mem='80'`` (``value_named``)."""
    # as typed, a pasted page of digits by its start; a number given as such as it is
    shown = quoted(text) if isinstance(text, str) else repr(text)
    named, key = value_named(field, shown, key_value), link_key(field, key_value)
    if isinstance(text, bool):
        raise ValueError(f"{named} is not a size: give one such as 80GB or 10GiB")
    if isinstance(text, int):
        value = Fraction(text)
        unit = ""
    elif not str(text).strip():  # as the token fields say of an empty one; a row's bytes by a
        # row's size (--kv-bytes-per-slot '' was told "e.g. 80GB", a token's bytes no budget holds)
        raise ValueError(f"{field} is empty: give a size such as "
                         f"{'4096 or 4KiB' if whole else '80GB or 10GiB'}")
    else:
        match = _SIZE.match(str(text))
        if not match and (problem := number_problem(
                str(text), named, "80GB",
                lambda t: parse_size(t, field=field, whole=whole), key=key)):
            raise ValueError(problem)
        if not match and _SIZE.match(str(text).strip().removeprefix("-")):
            raise ValueError(f"{named} is negative: give a size of 0 or more")
        if not match:
            comma = " (a decimal point, not a comma; commas only group thousands)" \
                if "," in str(text) else ""
            # a row's bytes (whole) by a row's size: kv=80GB was no example of one
            examples = (f"{keyed(key, '4096')} or 4KiB" if whole else
                        f"{keyed(key, '80GB')}, 10GiB, 1.5TiB, 12e9 or 4096")
            raise ValueError(f"{named} is not a size: write a number with an optional unit, "
                             f"e.g. {examples}{comma}")
        number, exponent, unit = match.groups()
        number = number.replace(",", "").replace("_", "")
        if len(number) > MAX_SIZE_DIGITS:  # past any real size, and past what int() parses
            raise ValueError(f"{named} has too many digits: a size is at most "
                             f"1 EiB; write e.g. {keyed(key, '80GB')} or 12e9")
        if exponent and (len(exponent) > 4 or abs(int(exponent)) > 30):
            said = exponent if len(exponent) <= 12 else f"of {len(exponent):,} digits"
            raise ValueError(f"{named}: exponent {said} is out of range; write e.g. "
                             f"{keyed(key, '80GB')} or 12e9")
        value = Fraction(number) * Fraction(10) ** int(exponent or 0)
        if unit.lower() not in _UNITS:  # said as typed: 'G', not 'g'
            raise ValueError(
                f"{named} has unknown unit {quoted(unit, 20)}: use B, KB, MB, GB, TB, KiB, "
                "MiB, GiB or TiB"
            )
        unit = unit.lower()
    exact = value * _UNITS[unit]
    if whole and exact.denominator != 1:
        low = int(exact)
        raise ValueError(f"{named} is not a whole number of bytes (between {low:,} "
                         f"and {low + 1:,}): give whole bytes, e.g. "
                         f"{keyed(key, '4096')} or 4KiB")
    nbytes = int(exact)  # floor: a text's number has no sign; an int is exact (and may be < 0)
    if nbytes < 0:
        raise ValueError(f"{named} is negative: give a size of 0 or more")
    if nbytes > MAX_BYTES:
        raise ValueError(f"{named} is over 1 EiB: check the unit (GB, not B?)")
    return nbytes


BARE_BYTES_LIMIT = 1 << 20  # a unitless number under this is a size typed without its unit


def positive_size(text: str, field: str, fix: str,
                  parse: Callable[..., int] | None = None, *, key_value: bool = False,
                  example: str = "4096") -> int:
    """A size above 0 from ``text`` (read by ``parse``, else as whole bytes): ``fix`` says what
    to give instead of 0 or of a negative size, which ``parse_size`` alone would ask to be 0 or
    more. ``key_value``: the value named as a link's notices name it (``value_named``). Digits
    of another script or a plus sign get a fix above 0 (``number_problem``), else ``example``:
    ``gpu_mem='٠'`` was told "e.g. 0", which this then refused."""
    read = parse or (lambda text, field, **kw: parse_size(text, field=field, whole=True, **kw))
    named = value_named(field, quoted(text), key_value) if isinstance(text, str) else field

    def positive(instead: str) -> int | None:
        if (nbytes := read(instead, field)) == 0:
            raise ValueError(f"{named} is 0")
        return nbytes

    key = link_key(field, key_value)
    if isinstance(text, str) and (
            problem := number_problem(text, named, example, positive, key=key)
            or sign_before_refused(text, named, example, positive, key=key)):
        raise ValueError(problem)
    try:
        nbytes = read(text, field, key_value=key_value)
    except ValueError as exc:
        if "is negative" not in str(exc):
            raise
        raise ValueError(f"{named} is negative: give {fix}") from None
    if nbytes == 0:  # the form of every bound's refusal (plan.bound_refusal), as typed
        raise ValueError(f"{named} must be positive: give {fix}")
    return nbytes


def sign_before_refused(text: str, named: str, example: str,
                        takes: Callable[[str], object], *, key: str = "") -> str | None:
    """The plus sign of a size whose number the field refuses without it (``+0`` where 0 is
    refused, ``+80`` of memory, 80 B): ``number_problem`` leaves such a sign to the caller,
    and the size parser's own refusal would suggest the number (``e.g. 0``, ``e.g. 80``),
    which the field then refuses. Said with ``example`` instead; None where the rest is no
    size (``+x``, said by the parser) or the field ``takes`` it (``+80GB``: number_problem);
    ``key`` as number_problem's."""
    raw = text.strip()
    rest = raw[1:]
    if not raw.startswith("+") or rest[:1] in ("+", "-"):
        return None
    try:
        parse_size(rest)
    except ValueError:
        return None
    try:
        takes(rest)
    except ValueError as exc:
        return None if "is negative" in str(exc) else (
            f"{named} has a plus sign: write a size without it, e.g. {keyed(key, example)}")
    return None


def gpu_memory_size(text: str, field: str = "GPU memory", *, key_value: bool = False) -> int:
    """One GPU's memory from ``text`` (the sidebar's field, a link's gpu_mem: ``key_value``,
    named as a link's notices name a value, ``value_named``; the CLI's --gpu-memory)."""
    return positive_size(text, field, "the memory of one GPU, e.g. "
                         f"{keyed(link_key(field, key_value), '80GB')} or 141GB", memory_size,
                         key_value=key_value, example="80GB")


def kv_memory_size(text: str, field: str = "KV cache memory", *, key_value: bool = False) -> int:
    """The KV cache memory of one rank from ``text`` (the sidebar's field, a link's kv_mem:
    ``key_value`` as ``gpu_memory_size``)."""
    return positive_size(text, field, "the KV cache memory of one rank, e.g. "
                         f"{keyed(link_key(field, key_value), '44.59GiB')} as vLLM logs it",
                         memory_size, key_value=key_value, example="44.59GiB")


def _above_zero(number: str) -> bool:
    """Whether ``number`` (a size's digits, its unit cut off) is a number above 0."""
    try:
        return Fraction(number) > 0
    except (ValueError, ZeroDivisionError):
        return False


def memory_size(text: str, field: str, *, weights: bool = False, key_value: bool = False) -> int:
    """Bytes of memory from ``text``; a bare number under a MiB (``80``) is refused as a size
    typed without its unit: 80 B of weights or of GPU memory is never meant. So is a number of
    bytes under a MiB (``70B``, ``0.5B``): that is how a model's parameter count is written (70
    billion), not bytes of memory; ``weights`` says how many bytes such a model's weights take.
    ``key_value``: the value named as a link's notices name it (``value_named``). The fix for
    digits of another script or a plus sign is one this field takes (``number_problem``):
    ``٨٠`` is not "e.g. 80", which reads as 80 B here."""
    named = value_named(field, quoted(text), key_value) if isinstance(text, str) else field
    takes = lambda t: memory_size(t, field, weights=weights)  # noqa: E731
    key = link_key(field, key_value)
    if isinstance(text, str) and (problem := number_problem(text, named, "80GB", takes, key=key)
                                  or sign_before_refused(text, named, "80GB", takes, key=key)):
        raise ValueError(problem)
    nbytes = parse_size(text, field=field, key_value=key_value)
    bare = str(text).strip()
    named = value_named(field, quoted(bare), key_value)
    # thousands commas and underscores, as parse_size reads them: 1,000 and 1_000 are 1000
    plain = bare.replace(",", "").replace("_", "")
    # the number as typed: 0.5 (meant 0.5 GB) is 0 bytes once floored, but not 0
    if plain and not plain[-1].isalpha() and nbytes < BARE_BYTES_LIMIT and float(plain) != 0:
        # the unit a number of this size was meant in: 44.59 GiB, not 100000 GiB
        # (and not 1e-10 GB, which is under one byte in turn)
        first, second = (f"{plain}GB", f"{plain}GiB") if 1e-9 <= float(plain) < 10_000 else (
            "80GB", "44.59GiB")
        raise ValueError(f"{named} reads as {nbytes:,} B: give a unit, e.g. "
                         f"{keyed(key, first)} or {second}")
    number = plain[:-1].strip()
    if (bare[-1:] in ("b", "B") and nbytes < BARE_BYTES_LIMIT
            and number.replace(".", "", 1).isdigit() and float(number) != 0):
        bf16 = f"{float(2 * Fraction(number)):g}GB"  # 2 B a parameter: 70B 140GB, 0.5B 1GB
        raise ValueError(
            f"{named} reads as {nbytes:,} B (B is bytes, not billions): "
            + (f"a model of {number} billion parameters takes {bf16} in bf16: give "
               f"{keyed(key, bf16)}" if weights
               else f"give {keyed(key, f'{number}GB')} or {number}GiB"))
    if nbytes == 0 and _above_zero(plain.rstrip("BbKkMmGgTtIi ")):
        # 1e-10GB floored to 0 B: refused later as "--budget 0" or "a budget of 0 B", a value
        # not typed
        least = "0 for none, or a size of 1 B or more" if weights else "a size of 1 B or more"
        raise ValueError(f"{named} reads as 0 B, under one byte: give {least}, e.g. "
                         f"{keyed(key, '80GB')}")
    return nbytes


def format_bytes(nbytes: int, *, digits: int = 2) -> str:
    """``1536`` -> ``1.50 KiB``: binary units for display only (figures stay exact ints),
    rounded half up exactly as ``percent_text`` rounds: a budget of 10.125 GiB reads 10.13 GiB
    in Budget's metric as in its chart's hover (Plotly's ``,.2f``, JavaScript's toFixed, rounds
    the tie up), where Python's float format, half to even, read 10.12. The unit is the one
    whose rounded figure stays under 1,024 (1,048,575 B is 1.00 MiB, not 1,024.00 KiB)."""
    sign = "-" if nbytes < 0 else ""
    # a numpy integer (a pandas cell) as Python's: its int64 would overflow the arithmetic below
    value = abs(int(nbytes) if isinstance(nbytes, numbers.Integral) else nbytes)
    if value < 1024:
        return f"{sign}{value:,} B"
    scale = 1
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        scale *= 1024
        units = (2 * value * 10**digits + scale) // (2 * scale)  # value / scale, half up
        if units < 1024 * 10**digits or unit == "PiB":
            return f"{sign}{_decimals(units, digits)} {unit}"
    raise AssertionError("unreachable")


def exact_bytes(nbytes: int) -> str:
    """``103,219,200 B (98.44 MiB)``: exact bytes first, the readable size after (under 1 KiB
    the bytes alone)."""
    return f"{nbytes:,} B ({format_bytes(nbytes)})" if abs(nbytes) >= 1024 else f"{nbytes:,} B"


def format_size(nbytes: int, *, grouped: bool = False) -> str:
    """A byte count as a person would type it, exactly: ``80GB``, ``12GiB``, ``44.59GiB`` (the
    floor of 44.59 x 2**30, as a log's rounded figure reads), or bytes (``5B``: a bare ``5``
    reads as a size typed without its unit). ``grouped``: bytes with thousands separators
    (``76,968,728,985B``), for a field a person reads; a link keeps the digits plain.

    ``parse_size(format_size(n)) == n`` for every n >= 0 (the input fields and links use it).
    """
    units = ((10**12, "TB"), (2**40, "TiB"), (10**9, "GB"), (2**30, "GiB"))
    for scale, unit in units:
        if nbytes and nbytes % scale == 0:
            return f"{nbytes // scale}{unit}"
    # a GPU's GB times a memory fraction: 141GB x 0.9 reads 126.9GB, not 126900MB
    if nbytes >= 10**9 and nbytes * 100 % 10**9 == 0:
        return f"{nbytes / 10**9:.2f}".rstrip("0") + "GB"
    whole = next((f"{nbytes // scale}{unit}" for scale, unit in ((10**6, "MB"), (2**20, "MiB"))
                  if nbytes and nbytes % scale == 0), None)
    # what an engine's log wrote: 44.59GiB reads as floor(44.59 x 2**30) = 47,878,147,932 B
    # (a GB or MB figure of two decimals is a whole number of MB, written above). A whole unit
    # comes first (81408MiB, not 79.5GiB), unless it is longer than the log's own two decimals
    # (99168.25GiB, not 101548288MiB)
    if 2**30 <= nbytes <= MAX_BYTES // 2 and (
            whole is None or len(whole) > len(f"{nbytes / 2**30:.2f}GiB")):
        for digits in (1, 2):
            text = f"{nbytes / 2**30:.{digits}f}GiB"
            if parse_size(text) == nbytes:
                return text
    if whole is not None:
        return whole
    return (f"{nbytes:,}B" if grouped else f"{nbytes}B") if nbytes else "0"


def decimal_unit_note(nbytes: int) -> str | None:
    """What a size written in decimal units (``44.59GB``) means here, beside what the same
    digits mean in binary units, or None where the size is not written in decimal units.
    Engines log their memory in GiB, SGLang as "GB" (it divides by 2**30): a figure copied
    from its log with its "GB" is 7% short of what the engine had, with no error to say so."""
    text = format_size(nbytes)
    match = re.fullmatch(r"([0-9.]+)([KMGT])B", text)
    if match is None:
        return None
    number, prefix = match.groups()
    binary = f"{number}{prefix}iB"
    return (f"{text} is {nbytes:,} B ({prefix}B: 10^{3 * ' KMGT'.index(prefix)} bytes). If it "
            f"comes from an engine's log, write {binary} ({parse_size(binary):,} B): logs "
            f"count {prefix}iB, SGLang's too where it prints \"{prefix}B\".")


def decimal_tokens_note(tokens: int) -> str | None:
    """A token count that reads as vLLM's lowercase k or m of a power of two (128k: 128,000)
    beside what the uppercase suffix gives (128K: 131,072), the lengths models are trained at;
    None for other counts. The two differ by 2.4% (4.9% for m), about as many requests."""
    for suffix, exponent in (("m", 6), ("k", 3)):
        number, rest = divmod(tokens, 10**exponent)
        if not rest and number and not number & (number - 1):
            binary = number * _BINARY_TOKENS[suffix.upper()]
            return (f"{tokens:,} tokens is {number}{suffix} ({suffix}: 10^{exponent}, as vLLM "
                    f"reads it); {number}{suffix.upper()} is {binary:,}.")
    return None


def parse_named_sizes(text: str, *, field: str) -> dict[str, int]:
    """``conv=49152,ssm=2MiB`` -> ``{"conv": 49152, "ssm": 2097152}``, in order; "" -> {}.

    How state tensors are written on the command line and in the app.
    """
    out: dict[str, int] = {}
    parts = [p for p in (p.strip() for p in str(text).split(",")) if p]
    if not parts and str(text).strip():  # ",,,": commas and no pair
        parts = [str(text).strip()]
    for part in parts:
        name, sep, value = part.partition("=")
        name = name.strip()
        if not sep or not name:
            raise ValueError(
                f"{field} {quoted(str(text))}: write name=bytes pairs, e.g. conv=49152,ssm=2097152"
            )
        if name in out:
            raise ValueError(f"{field} {quoted(str(text))} names {quoted(name)} twice: give "
                             "each once")
        out[name] = positive_size(value, f"{field} {name}",
                                  "a size of 1 byte or more, or leave the tensor out")
    return out


def concurrency_value(requests: float | Fraction) -> float:
    """Max concurrency to two decimals, rounded as engines log it (vLLM's ``f"{x:.2f}x"``:
    14.767 -> 14.77), except that a value just under a whole number stays under it (0.998 ->
    0.99, never 1.00): a request that does not fit must not look as if it did."""
    value = float(requests)
    rounded = round(value, 2)
    if math.floor(rounded) > math.floor(value):
        return math.floor(value * 100) / 100
    return rounded


def logged_concurrency_note(requests: float | Fraction) -> str:
    """Where ``concurrency_value`` stays under a whole number that an engine's ``%.2f`` log
    rounds up to (6.9990 -> we show 6.99, vLLM logs 7.00), the log's figure, so a reviewer
    holding the engine's log finds it; else ``""``."""
    logged = f"{float(requests):.2f}"
    if logged == f"{concurrency_value(requests):.2f}":
        return ""
    under = math.floor(float(requests) * 10_000) / 10_000  # 1.99999 is 1.9999, never 2.0000
    return (f" (an engine's %.2f log prints {logged}x: {under:.4f} requests, the last one does "
            "not quite fit)")


def times_text(ratio: float | Fraction) -> str:
    """A ratio of two exact figures (``3.73``, ``12,345.68``) to two decimals, rounded half up
    exactly, as ``percent_text`` rounds a share; where that would read as a whole number the
    ratio is not (1.00 for 1.004, 2.00 for 1.996, 0.00 for a sliver), with the decimals down
    to its first digit of its own, then rounded: 38,196 / 38,199 is 0.9999 and 611,191 /
    611,184 1.00001. "1.00x ours" says the two hold the same and "2.00x as many" twice as
    many, as ``concurrency_value`` never shows a whole request that is not there; a ratio that
    is whole reads so (2.00, 1.00). A measured float (the GPU lab's GB/s over GB/s) reads as
    the decimal it prints as."""
    return _rounded_apart(_as_written(ratio), 2, lambda units, one: units % one == 0)


def times_words(ratio: float | Fraction) -> str:
    """A multiple in prose (Layout's "x ours", Compare's "x as many"): ``times_text``'s two
    decimals and an ``x``, where its rule would give more decimals (a ratio that reads whole
    and is not) the two decimals after "just over" or "just under": "just over 2.00x", not
    "2.00001x" (gpt-oss-20b's vLLM on Layout), nor "2.00x" alone, which says twice as many;
    "just under 1.00x" (DeepSeek-V3.2's 0.99998). A whole ratio reads "2.00x". Tables of
    measured ratios (the GPU lab's) keep ``times_text``'s digits."""
    value = _as_written(ratio)
    two = _rounded_apart(value, 2, lambda units, one: False)  # plain two decimals
    shown = Fraction(two.replace(",", ""))
    if shown == value or not two.endswith(".00"):  # exact, or not a whole-looking figure:
        return f"{two}x"  # 1.006 reads 1.01x (times_text's cut 1.00 asked for digits)
    return f"just {'over' if value > shown else 'under'} {two}x"


def percent_text(part: float | Fraction, total: float | Fraction = 1, *, digits: int = 2) -> str:
    """``part`` as a percent of ``total`` (``1.49%``) to ``digits`` decimals, rounded half up
    exactly, with as many more decimals as tell a share that is neither nothing nor all of it
    from 0.00% and 100.00%: 36 B of padding in a 100,663,296 B block is 0.00004%, not "0.00%"
    (no padding); Llama-3.1-8B's KV rows in 80 GB, with 2,039,808 B unused beside them,
    99.997%, not "100.00%" (the whole budget). Rounded, not cut, so that a share reads as
    ``shares_text`` gives it in a breakdown (0.003% unused there and in Layout's hover).

    A float is read as the decimal it prints as (``_as_written``), a negative share as its
    size after its sign, so that neither is rounded a digit off."""
    share = 100 * _as_written(part) / _as_written(total) if total else Fraction(0)
    return _rounded_apart(share, digits, lambda units, one: units in (0, 100 * one)) + "%"


def _rounded_apart(value: Fraction, digits: int, looks_round: Callable[[int, int], bool]) -> str:
    """``value`` to ``digits`` decimals, rounded half up exactly, with thousands separators;
    where its figure cut or rounded there ``looks_round`` (say 0.00 or 100.00, given in units
    of the last decimal and what one is in them) and the value is not that figure, more
    decimals, down to a first digit of its own, then rounded: 0.00061 is 0.0006, not 0.001 (64%
    high). A negative value reads as its size after its sign, rounded alike."""
    sign, value = "-" if value < 0 else "", abs(value)
    while True:
        one = 10**digits
        scaled = value * one
        units = math.floor(scaled + Fraction(1, 2))
        if ((scaled.denominator == 1 and looks_round(int(scaled), one))  # it is that figure
                or not (looks_round(math.floor(scaled), one) or looks_round(units, one))):
            return sign + _decimals(units, digits)
        digits += 1


def _decimals(units: int, digits: int) -> str:
    """``units`` of the last of ``digits`` decimals as the figure they make, with thousands
    separators: (123456, 2) is ``1,234.56``."""
    whole, rest = divmod(units, 10**digits)
    return f"{whole:,}.{rest:0{digits}d}" if digits else f"{whole:,}"


# Significant digits a float is read to: more than any figure here measures (a timer's ns over
# ms, GB/s to 0.01), fewer than the 17 where a float's binary error shows: 0.3 ms over 0.1 ms is
# the float 2.9999999999999996, which times_text, giving a ratio that reads whole and is not
# the decimals to tell it, showed as "2.9999999999999996x" (a GPU lab ratio or spread)
FLOAT_DIGITS = 12


def _as_written(value: float | Fraction) -> Fraction:
    """``value`` exactly, a float as the decimal it prints as to ``FLOAT_DIGITS``
    significant digits: 0.0003 is 3/10,000, where ``Fraction(0.0003)`` is its binary
    neighbour 0.000299999..., and ``Fraction(0.00145)`` one just below 0.145%, which would
    round to 0.14%, not 0.15%; 3 x 0.1 / 0.1 (3.0000000000000004) is 3."""
    return (Fraction(f"{value:.{FLOAT_DIGITS}g}") if isinstance(value, float)
            else Fraction(value))


def shares_text(parts: Sequence[int], total: int, *, digits: int = 2) -> list[str]:
    """Each part's percent of ``total`` to ``digits`` decimals, rounded so that, where the parts
    sum to the total, the shares sum to exactly 100 (largest remainder: each share is its exact
    value cut down, and the units the cuts lost go to the largest remainders). Each share stays
    within one last digit of its exact value; rounded one by one, Falcon-H1-7B's vLLM budget of
    17 GiB read 99.08 + 0.77 + 0.01 + 0.15 = 100.01%.

    A part that is neither none nor the whole never reads 0.00 or 100.00: the shares take
    more decimals, all of them alike, until none does (Llama-3.1-8B's vLLM budget of 80 GB:
    its KV rows 99.997 beside 0.003 unused, which two decimals read 100.00 and 0.00)."""
    while True:
        units = _share_units(parts, total, digits)
        scale = 100 * 10**digits
        if all((part == 0 or u > 0) and (part >= total or u < scale)
               for part, u in zip(parts, units)):
            return [f"{u // 10**digits}.{u % 10**digits:0{digits}d}" for u in units]
        digits += 1


def _share_units(parts: Sequence[int], total: int, digits: int) -> list[int]:
    """``shares_text``'s shares in units of the last of ``digits`` decimals."""
    scale = 100 * 10**digits
    floors = [part * scale // total for part in parts]
    if sum(parts) == total:
        left = scale - sum(floors)
        by_remainder = sorted(range(len(parts)), key=lambda i: -(parts[i] * scale % total))
        for i in by_remainder[:left]:
            floors[i] += 1
    else:  # parts of something else: each rounded half up on its own
        floors = [(2 * part * scale + total) // (2 * total) for part in parts]
    return floors


def concurrency_text(requests: float | Fraction) -> str:
    """``14.77``, ``0.99``, ``391,483.00``: ``concurrency_value`` with thousands separators."""
    return f"{concurrency_value(requests):,.2f}"


def plain_number(value: float | Fraction) -> str:
    """A bound as a person reads it and can type it back, without exponents or separators:
    0.000001, 1000000, 0.9 (at most six decimals)."""
    return f"{float(value):.6f}".rstrip("0").rstrip(".")


def and_text(parts: Sequence[str], last: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c``: parts as a sentence lists them (``last``: the word
    before the last part, e.g. "or")."""
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} {last} {parts[-1]}"


def count_text(count: int, noun: str) -> str:
    """``1 layer``, ``36 layers``: a count and its noun, singular for one."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def tokens_text(tokens: int) -> str:
    """``1 token``, ``32,768 tokens``: a context length as the pages say it."""
    return count_text(tokens, "token")


def sentence_case(text: str) -> str:
    """``raise TP`` -> ``Raise TP``: a phrase made to follow a colon, starting a sentence (the
    rest as written, so names and units keep their case; a name that starts in lower case,
    ``vLLM``, as written too)."""
    first = text.split(" ", 1)[0]
    if first[1:] != first[1:].lower():  # vLLM, mHC: a name, not a word
        return text
    return text[:1].upper() + text[1:]


# A message that opens with two words of prose ("weights per rank ...", "the budget ..."), not
# a name the library errors open with: a flag ("--budget"), a key ("kv_mem=", "layer_types",
# "config.json"), a quote, a model_type before its file ("llama config.json ..."), or a field
# followed by its value ("kind 'x' ...", "strategy is 'x'", "count must be ...")
_PROSE_OPENING = re.compile(r"[a-z]+ (?!(?:is|must|has|are) )[A-Za-z]+(?![\w.=-])")


def error_sentence(message: str) -> str:
    """A library error as a page shows it, as a sentence: its first letter capitalised where it
    opens with a word of prose (``_PROSE_OPENING``), as written where it opens with a name (a
    flag, a key, a field and its value), whose case is its spelling."""
    return sentence_case(message) if _PROSE_OPENING.match(message) else message


def quoted(text: str, limit: int = 80) -> str:
    """``text`` as an error names it: whole when short, else its start and its length (a pasted
    pattern or path of 100,000 characters made a 100 KB error line)."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text):,} characters)"


def link_key(field: str, key_value: bool) -> str:
    """The link's key a fix names (``key`` of ``number_problem``, ``sign_before_refused``,
    ``keyed``): ``field`` where the value came from a link (``key_value``), whose notices write
    every value they suggest as ``gpu_mem=80GB``; "" for a sidebar field or a CLI flag, whose
    fix is the bare value. One rule, so no parser names a fix one way and refuses it another."""
    return field if key_value else ""


def keyed(key: str, example: str) -> str:
    """An error's "e.g." as it names ``example``: ``key=example`` where ``key`` is a link's key
    (``link_key``), the form of the value the link's notices refuse (its first example alone
    where it lists more: ``e.g. gpu_mem=80GB or 80GiB``); bare where ``key`` is ""."""
    return f"{key}={example}" if key else example


def value_named(field: str, shown: str, key_value: bool, *, verb: str = "") -> str:
    """A value in an error, after its field: ``ctx is '0'`` (``verb`` " is") or ``gpu_mem
    '80'``, or with ``key_value`` as a link's notices name every value, ``ctx='0'``: one form
    in a link's notices (a ratio's read ``sg_ratio '+0.8'`` beside ``frac='٠.٨'``). A field
    said empty stays so (``ctx is empty``)."""
    if shown == "empty":
        return f"{field} is empty"
    return f"{field}={shown}" if key_value else f"{field}{verb} {shown}"


# The verbs a field's own refusal follows its name with ("layer pattern is empty: ..."), said
# after the value as they are where another names it; any other refusal follows a colon
_SAID_OF_VALUE = ("is", "has", "nests", "expands", "must")


def renamed(message: str, field: str, text: str, shown: str, *, example: str = "") -> str:
    """A parser's refusal of ``text`` said of ``shown``, the value as the user gave it (a
    flag's ``--layers 'zz'``, a link's ``layers='zz'``), where the parser names it by its
    field (``layer pattern 'zz' has unknown ...``, ``state tensors 'x': write ...``): said
    once, as ``--layers 'zz' has unknown ...``, the flag or key named, not the parser's
    word. ``example``: what its first "e.g." takes before the value (a link's ``layers=``)."""
    rest = message.removeprefix(f"{field} ")
    if message.startswith(lead := f"{field} {quoted(text)}"):
        said = f"{shown}{message[len(lead):]}"
    elif rest != message and rest.split(" ", 1)[0] in _SAID_OF_VALUE:
        said = f"{shown} {rest}"
    else:  # (of a part: "state tensors conv 'x' is not a size", whose example is the part's)
        return f"{shown}: {rest}"
    return said.replace("e.g. ", f"e.g. {example}", 1) if example else said


# The collections quoted_value shows item by item (exact types: a namedtuple keeps its repr)
_BRACKETS = {list: "[]", tuple: "()", dict: "{}"}


def quoted_value(value: object, limit: int = 80) -> str:
    """A value of any type (a file's field: a string, a list, an object) as an error names it:
    a string as ``quoted`` writes it, another as its repr, whole when short. A long list,
    tuple or dict reads as one cut, its brackets closed: the items that fit (each shown so,
    a long one by its start) and how many it holds, ``[1, 2, 3, ... (1,000 items)]``; a cut
    repr's characters said nothing of a list (a list holding one 1,000-character string read
    as ``['xxx... (1,004 characters)``, its bracket never closed). Another long value: its
    repr's start and length."""
    if isinstance(value, str):
        return quoted(value, limit)
    brackets = _BRACKETS.get(type(value))
    if brackets is not None and len(value) > limit:  # repr past the limit, not built
        return _cut_items(value, brackets, limit)
    text = repr(value)
    if len(text) <= limit:
        return text
    if brackets is not None:
        return _cut_items(value, brackets, limit)
    return f"{text[:limit]}... ({len(text):,} characters)"


def _cut_items(value: list | tuple | dict, brackets: str, limit: int) -> str:
    """``quoted_value``'s long collection: within ``limit`` characters, each item at most half
    of them, its brackets around; the count of items where some are left out."""
    items = islice(value.items(), limit) if isinstance(value, dict) else value[:limit]
    parts: list[str] = []
    used = len(brackets) + len(f", ... ({len(value):,} items)")
    for item in items if limit >= 8 else ():  # too little room for an item: the count alone
        part = (f"{quoted_value(item[0], limit // 2)}: {quoted_value(item[1], limit // 2)}"
                if isinstance(value, dict) else quoted_value(item, limit // 2))
        if parts and used + len(part) > limit:
            break
        parts.append(part)
        used += len(part) + 2
    if len(parts) < len(value):
        parts.append(f"... ({count_text(len(value), 'item')})")
    elif isinstance(value, tuple) and len(value) == 1:
        parts[0] += ","
    return brackets[0] + ", ".join(parts) + brackets[1]


def listed(texts: Sequence[str], show: Callable[[str], str], limit: int = 5) -> str:
    """``a, b, c, and 4,995 more``: the first ``limit`` of ``texts`` as ``show`` writes each,
    then how many more (an error or notice of thousands of names was tens of KB)."""
    more = f", and {len(texts) - limit:,} more" if len(texts) > limit else ""
    return ", ".join(show(t) for t in texts[:limit]) + more


def quoted_names(names: Sequence[str], limit: int = 5) -> str:
    """``'a', 'b'``: a few names for an error, each short, with how many more."""
    return listed(names, lambda n: quoted(n, 40), limit)


def names_text(noun: str, names: Sequence[str]) -> str:
    """``kind 'foo'``, ``kinds 'a', 'b'``: the noun, plural for more than one, then the names."""
    return f"{noun}{'' if len(names) == 1 else 's'} {quoted_names(names)}"


def folded(name: str) -> str:
    """``name`` with its case and spacing set aside (``" h100  80GB"`` -> ``"h100 80gb"``):
    what a name typed in any case and spacing is matched by against a list's own names, each
    folded alike (a GPU preset, ``budget.gpu_name``; a link's choice, ``app_state``)."""
    return " ".join(name.split()).casefold()


# Bidirectional controls: printable to Python, but they reorder the text around them on a
# terminal (a name could show figures other than those printed).
_BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                           "\u2066\u2067\u2068\u2069")


def control_character(text: str, *, allow: str = "") -> str | None:
    """The first character of ``text`` that would act on a terminal rather than show: a control
    character (an escape sequence's ESC, a line break or carriage return that fakes a line of
    figures), a line or paragraph separator, or a bidirectional control; None where there is
    none (letters of any script, marks and spaces show as themselves). ``allow``: control
    characters the text may hold (a note's line breaks)."""
    return next((c for c in text if c not in allow and (
        unicodedata.category(c) in ("Cc", "Zl", "Zp") or c in _BIDI_CONTROLS)), None)


def check_name(field: str, name: object, *, fix: str) -> str:
    """``name`` where it is a model's name to print: text, not blank, with no character that
    acts on a terminal (``control_character``); else ValueError naming ``field``, the value
    (escaped, as repr writes it) and ``fix``."""
    if not isinstance(name, str):
        raise ValueError(f"{field} is {quoted_value(name)}, not text: {fix}")
    if not name.strip():
        raise ValueError(f"{field} is {quoted(name)}, which is blank: {fix}")
    if (bad := control_character(name)) is not None:
        raise ValueError(f"{field} is {quoted(name)}: it holds the control character "
                         f"{bad!r}, which a terminal would act on rather than show: {fix}")
    return name


# Streamlit renders text as Markdown (emphasis, links, code), LaTeX ($...$) and its own
# directives (:red[...]). What a user typed (a model name, a layer pattern quoted back in an
# error) must read as typed: a name like "a*b*c" would lose its stars, "[x](http://...)" would
# become a link that a shared URL carries, and so would a bare "http://..." or "www."; a
# leading "- " would start a list, "&amp;" would show as "&". A backslash makes any ASCII
# punctuation literal, so every one gets one; a line break would end the caption's paragraph.
_MARKDOWN_SPECIAL = re.compile(r"([!-/:-@\[-`{-~])")


def markdown_literal(text: str) -> str:
    """``text`` escaped so that streamlit's Markdown shows it character for character, on one
    line."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(text.splitlines()))
