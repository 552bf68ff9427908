"""Byte sizes and layer patterns: the two small languages of the command line and the app."""

from __future__ import annotations

import contextlib
import io
import re
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flatkv.patterns import format_layer_pattern, parse_layer_pattern
from flatkv.strategies.base import CHUNKED_PREFILL_OFF
from flatkv.strategies.sglang import parse_chunked_prefill
from flatkv.units import (
    MAX_BYTES,
    concurrency_text,
    concurrency_value,
    count_text,
    decimal_number,
    decimal_tokens_note,
    decimal_unit_note,
    folded,
    format_bytes,
    format_size,
    gpu_memory_size,
    kv_memory_size,
    logged_concurrency_note,
    markdown_literal,
    memory_size,
    parse_named_sizes,
    parse_size,
    parse_tokens,
    quoted_value,
    shares_text,
    tokens_text,
    whole_number,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("10GiB", 10 * 2**30), ("80GB", 80 * 10**9), ("1.5TiB", 3 * 2**39), ("12e9", 12 * 10**9),
     ("4096", 4096), (4096, 4096), ("512 MiB", 512 * 2**20), ("2kb", 2000), ("1.5e3B", 1500),
     # 44.59 GiB as vLLM logs it: 44.59 * 2**30 = 47,878,147,932.16 bytes, rounded down.
     ("44.59GiB", 47_878_147_932), (".5KiB", 512),
     # thousands grouped as the app prints bytes
     ("76,968,728,985B", 76_968_728_985), ("1,024.5KiB", 1_049_088), ("2,000", 2000)],
)
def test_parse_size(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize(
    ("text", "match"),
    [("ten", "is not a size"), ("10 parsecs", "unknown unit 'parsecs'"),
     ("80G", "^--budget '80G' has unknown unit 'G': use B, KB"),  # the unit as typed
     ("-5GB", r"^--budget '-5GB' is negative: give a size of 0 or more$"),
     ("", r"^--budget is empty: give a size such as 80GB or 10GiB$"), ("  ", "is empty"),
     ("1e30", "over 1 EiB"), (True, "True is not a size: give one such as 80GB"),
     # a decimal comma, or commas not in threes, is refused rather than guessed
     ("1,5GB", r"not a size: .* \(a decimal point, not a comma; commas only group thousands\)"),
     ("12,34,567", "not a comma"), (",5GB", "not a comma"), ("1,000.5,5", "not a comma")],
)
def test_parse_size_errors(text, match):
    with pytest.raises(ValueError, match=match):
        parse_size(text, field="--budget")


def test_a_row_size_must_be_whole_bytes():
    # a budget floors (above); bytes per slot or per state tensor are never a fraction
    assert parse_size("1.5KiB", field="kv", whole=True) == 1536
    with pytest.raises(ValueError, match=r"kv '1\.5' is not a whole number of bytes \(between "
                       r"1 and 2\): give whole bytes"):
        parse_size("1.5", field="kv", whole=True)
    with pytest.raises(ValueError, match=r"--state ssm '0\.3KiB' is not a whole number of bytes "
                       r"\(between 307 and 308\)"):
        parse_named_sizes("conv=1,ssm=0.3KiB", field="--state")
    with pytest.raises(ValueError, match=r"between 123,456,789 and 123,456,790"):  # exact, not 1e8
        parse_size("123456789.5", whole=True)
    # no size at all: a row's example (a KV row of 80GB was the budget's)
    with pytest.raises(ValueError) as caught:
        parse_size("x", field="--kv-bytes-per-slot", whole=True)
    assert str(caught.value) == ("--kv-bytes-per-slot 'x' is not a size: write a number with an "
                                 "optional unit, e.g. 4096 or 4KiB")


def test_parse_tokens_reads_suffixes_as_vllm_does():
    # vLLM's --max-model-len: lowercase decimal, uppercase binary (human_readable_int)
    parse = parse_tokens
    assert parse("262144") == parse("262,144") == parse("256K") == parse("256Ki") == 262_144
    assert parse("128k") == 128_000 and parse("25.6k") == 25_600 and parse("1m") == 1_000_000
    assert parse("1M") == parse("1Mi") == 1_048_576
    for text, words in (("long", r"is not a whole number of tokens: give e.g. 262144, 256K"),
                        ("1.5M", "is not a whole number of binary M: give e.g. 1.5m for the "
                                 "decimal multiple"),
                        ("1.5", r"is not a whole number of tokens \(between 1 and 2\)"),
                        ("0.0001k", r"is not a whole number of tokens \(between 0 and 1\)")):
        with pytest.raises(ValueError, match=f"^--context '{text}' {words}"):
            parse(text)
    # a count out of range is named as the other fields name a number, grouped, not quoted as
    # typed ("is '99999999999999'" beside Live requests' "is 99,999,999"), a suffix's with its
    # count; the cap, FlatKV's own 2^40, says why it is there (no engine's limit)
    for text, shown, words in (
            ("0", "0", "must be positive: give 1 or more tokens$"),
            ("-5", "-5", "must be positive: give 1 or more tokens$"),  # as 0 is told
            ("99999999999999", "99,999,999,999,999", "is more than 1,099,511,627,776 tokens: "
             r"give 1,099,511,627,776 or fewer \(2\^40: more is taken for a typo\)$"),
            ("2000000000000k", r"2000000000000k \(2,000,000,000,000,000 tokens\)",
             "is more than 1,099,511,627,776 tokens: give 1,099,511,627,776 or fewer")):
        with pytest.raises(ValueError, match=f"^--context {shown} {words}"):
            parse(text)
    assert 2**40 == 1_099_511_627_776
    # the cap's note names no context where another token field is over it (it said "a longer
    # context is taken for a typo" of --max-batched-tokens 2T)
    with pytest.raises(ValueError, match=r"^--max-batched-tokens 2T \(2,199,023,255,552 "
                       r"tokens\) is more than 1,099,511,627,776 tokens: give "
                       r"1,099,511,627,776 or fewer \(2\^40: more is taken for a typo\)$"):
        parse_tokens("2T", "--max-batched-tokens")
    # vLLM's g / G and t / T too: "--max-model-len 1G" starts vLLM at 1,073,741,824 tokens and
    # was refused here as no token count ("give whole tokens such as ..."); 1T = 2**40 is the cap
    assert parse("1G") == parse("1Gi") == 2**30 and parse("1.5g") == 1_500_000_000
    assert parse("1T") == parse("1Ti") == 2**40 == 1_099_511_627_776
    assert parse("0.5t") == 500_000_000_000
    for text, words in (("0.5T", "binary T: give e.g. 0.5t"),
                        ("1.2G", "binary G: give e.g. 1.2g")):
        with pytest.raises(ValueError, match=f"^--context '{text}' is not a whole number of "
                                             f"{words} for the decimal multiple$"):
            parse(text)
    with pytest.raises(ValueError, match=r"^--context 2T \(2,199,023,255,552 tokens\) is more "
                       "than 1,099,511,627,776 tokens: give 1,099,511,627,776 or fewer"):
        parse("2T")
    # vLLM multiplies a float and truncates (int(float("1.001") * 1000) = int(1000.99...) =
    # 1,000): where that is not the exact count, the figures would be a token off vLLM's, so
    # the entry is refused with both readings; the usual ones read alike
    with pytest.raises(ValueError, match=r"^--context '1\.001k' is read by vLLM as 1,000 "
                       r"tokens \(its float arithmetic\), exactly 1,001: give 1000 or 1001 in "
                       r"digits$"):
        parse("1.001k")
    assert int(float("1.001") * 1000) == 1_000
    assert [parse(t) for t in ("131.072k", "1.048576m", "2.3g", "0.128m")] == [
        131_072, 1_048_576, 2_300_000_000, 128_000]
    # a runaway entry is refused in one short line, not a traceback
    with pytest.raises(ValueError, match=r"^--context '9{24}\.\.\.' is too long for a token "
                       r"count \(406 characters\): give e\.g\. 262144, 256K"):
        parse("9" * 400 + ".0001k")


def test_parse_tokens_refuses_a_comma_that_does_not_group_thousands():
    # 128,00 is a lost digit, not 12,800 tokens; underscores sit between digits, as Python's
    # int() (so vLLM's --max-model-len) reads them
    assert parse_tokens("1,048,576") == parse_tokens("1_048_576") == 1_048_576
    assert parse_tokens("1_28_000") == 128_000 and parse_tokens("1_0K") == 10_240
    for text in ("128,00", "1,2,8,0,0,0", ",128", "128,000,"):
        with pytest.raises(ValueError, match=f"^--context '{text}' is not a whole number of "
                                             r"tokens \(commas only group thousands\): give "
                                             r"e\.g\. 262144, .*\(128,000\)$"):
            parse_tokens(text)
    for text in ("1__0K", "_128", "128_", "1,000_000"):  # no word on commas: the _ is wrong
        with pytest.raises(ValueError, match=f"^--context '{text}' is not a whole number of "
                                             r"tokens: give e\.g\. 262144, .*\(128,000\)$"):
            parse_tokens(text)


def test_decimal_tokens_note_names_the_binary_count_of_the_same_digits():
    assert decimal_tokens_note(128_000) == (
        "128,000 tokens is 128k (k: 10^3, as vLLM reads it); 128K is 131,072.")
    assert decimal_tokens_note(2_000_000) == (
        "2,000,000 tokens is 2m (m: 10^6, as vLLM reads it); 2M is 2,097,152.")
    # a binary count, or thousands that are no power of two, say nothing
    assert decimal_tokens_note(131_072) is decimal_tokens_note(100_000) is None
    assert decimal_tokens_note(3_000) is None


def test_parse_tokens_names_an_empty_entry_and_the_callers_cap():
    # the app's token fields read the CLI's suffixes, within their own cap, and say what is wrong
    with pytest.raises(ValueError, match=r"^Context length is empty: give e\.g\. 262144, 256K"):
        parse_tokens("  ", "Context length")
    assert parse_tokens("16M", "Context length", maximum=2**24) == 2**24
    with pytest.raises(ValueError, match=r"^Context length 17m \(17,000,000 tokens\) is more "
                       r"than 16,777,216 tokens: give 16,777,216 or fewer$"):
        parse_tokens("17m", "Context length", maximum=2**24)


def test_format_bytes():
    assert format_bytes(1023) == "1,023 B"
    assert format_bytes(1536) == "1.50 KiB"
    # from 1,000 of a unit up to 1,024, its figures grouped as every other count is
    assert format_bytes(1_071_738_306) == "1,022.09 MiB"
    assert format_bytes(-1023 * 2**40) == "-1,023.00 TiB"
    assert format_bytes(103_219_200) == "98.44 MiB"  # 103,219,200 / 2**20 = 98.4375
    assert format_bytes(80 * 10**9) == "74.51 GiB"
    # a figure that rounds to 1,024 of a unit reads as 1 of the next: 1,048,575 B is
    # 1,023.999 KiB, and 2**40 - 2**20 B 1,023.999 GiB
    assert format_bytes(2**20 - 1) == "1.00 MiB"
    assert format_bytes(2**40 - 2**20) == "1.00 TiB"
    assert format_bytes(1_048_570) == "1,023.99 KiB"  # 1,023.994: under 1,024 rounded
    assert format_bytes(-(2**20 - 1)) == "-1.00 MiB"
    # a tie rounds half up, exactly, as percent_text and Plotly's hovers round: 1,152 B (a
    # token of 9 x 128 B) is 9/8 = 1.125 KiB, 1.13; 2,228,224 B = 17/8 MiB, 2.13; a budget of
    # 10,871,635,968 B = 81/8 GiB, 10.13 GiB, as Budget's chart hover shows it (10.12 to even)
    assert [format_bytes(n) for n in (1_152, 2_228_224, 10_871_635_968, 81 * 2**47)] == [
        "1.13 KiB", "2.13 MiB", "10.13 GiB", "10.13 PiB"]
    # exact past 2**53 B, a float's 53 bits: 67 x 2**47 - 1 B is a byte under 8.375 PiB, so
    # 8.37 (its float is 8.375 PiB exactly, which read 8.38)
    assert format_bytes(67 * 2**47 - 1) == "8.37 PiB"
    # a pandas cell's numpy integer reads as Python's: 2**62 B = 4,096 PiB (its int64 overflowed
    # the rounding's 2 x value x 100 and read "0.00 KiB")
    import numpy as np
    assert format_bytes(np.int64(2**62)) == format_bytes(2**62) == "4,096.00 PiB"


def test_layer_patterns():
    assert parse_layer_pattern("(3*linear_attention,full_attention)*12") == (
        ["linear_attention"] * 3 + ["full_attention"]) * 12
    assert parse_layer_pattern("full*2, swa") == ["full_attention"] * 2 + ["sliding_attention"]
    assert parse_layer_pattern("2*(gdn, attn)") == ["linear_attention", "full_attention"] * 2


@pytest.mark.parametrize(
    ("text", "match"),
    # empty, or blank (a line break pasted into the raw editor's field): said as empty, not
    # as "must be a non-empty string, got '\\n'" (a fuzzer's finding)
    [("", "^layer pattern is empty: write one name per cache layer, e.g. "
      r"\(3\*linear,full\)\*12$"),
     ("\n", "^layer pattern is empty: write one name per cache layer"),
     (" \t", "^layer pattern is empty"),
     ("full*", "expected a repeat count at character 6, got the end of the pattern"),
     ("(full", r"expected '\)'"),
     ("mlp*3", "unknown layer kind 'mlp': use one of"),
     ("full*0", "'0' at character 6 must be positive: give 1 or more"),
     ("full)", "unexpected '\\)'"), ("full*1000000*1000000", "more than 2,048 cache layers"),
     # the 33rd '(' is the 33rd character
     ("(" * 500 + "full" + ")" * 500, r"nests parentheses more than 32 deep \(at character 33\)"),
     ("full, " + "(" * 40 + "swa" + ")" * 40, r"more than 32 deep \(at character 39\)"),
     # a long pattern is named by its start and length, not echoed whole
     ("full," * 20_000 + "x", r"^layer pattern 'full,full,.*,'\.\.\. \(100,001 characters\) "
      "expands to more than 2,048 cache layers")],
)
def test_layer_pattern_errors(text, match):
    with pytest.raises(ValueError, match=match):
        parse_layer_pattern(text)


# Malformed repeat counts, each named by what was read as the count and where: 'full*0x10' said
# "a repeat count must be positive, got 0", having read 0 and then x10 without saying so
BAD_COUNTS = {
    "full*0x10": "repeat count '0x10' at character 6",
    "full*-1": "repeat count '-1' at character 6",
    "full*1.5": "repeat count '1.5' at character 6",
    "full*1e3": "repeat count '1e3' at character 6",
    "(full, swa)*2.": "repeat count '2.' at character 13",
    "3full": "repeat count '3full' at character 1",
}


@pytest.mark.parametrize(("text", "what"), BAD_COUNTS.items())
def test_a_malformed_repeat_count_is_named_with_where_it_is_and_the_fix(text, what):
    with pytest.raises(ValueError) as error:
        parse_layer_pattern(text)
    assert str(error.value) == (
        f"layer pattern {text!r}: {what} is not a whole number >= 1: write the count in "
        "digits, e.g. (3*linear,full)*12")


def test_a_pattern_missing_its_count_or_holding_a_stray_character_says_where():
    with pytest.raises(ValueError) as error:
        parse_layer_pattern("full*")
    assert str(error.value) == ("layer pattern 'full*': expected a repeat count at character 6, "
                                "got the end of the pattern (write it like (3*linear,full)*12)")
    with pytest.raises(ValueError) as error:
        parse_layer_pattern("full*3;swa")
    assert str(error.value) == ("layer pattern 'full*3;swa' has unexpected ';' at character 7: "
                                "write names, counts, '*', ',' and parentheses, e.g. "
                                "(3*gdn,full)*12")
    # a count of 0 is in digits already: it is told to be 1 or more, not to be written in digits
    for text, at in (("full*0", 6), ("0*full", 1), ("(full,swa)*00", 12)):
        with pytest.raises(ValueError) as error:
            parse_layer_pattern(text)
        assert str(error.value) == (
            f"layer pattern {text!r}: repeat count {text[at - 1:].split('*')[0]!r} at character "
            f"{at} must be positive: give 1 or more, or leave the item out, e.g. "
            "(3*linear,full)*12")
    # whitespace is ignored, as the grammar says: a space after '*' is no error
    assert parse_layer_pattern("full* 3") == ["full_attention"] * 3


@given(st.lists(st.sampled_from(["full_attention", "sliding_attention", "linear_attention"]),
                min_size=1, max_size=60))
def test_format_layer_pattern_round_trips(labels):
    assert parse_layer_pattern(format_layer_pattern(labels)) == labels


def test_format_layer_pattern_is_compact():
    labels = parse_layer_pattern("(3*linear,full)*12")
    assert format_layer_pattern(labels) == "(3*linear_attention,full_attention)*12"
    assert format_layer_pattern(["full_attention"] * 32) == "32*full_attention"


def test_format_size_is_exact_and_parses_back():
    assert format_size(80 * 10**9) == "80GB"
    assert format_size(12 * 2**30) == "12GiB"
    # a log's rounded figure as typed: floor(44.59 x 2**30) = floor(47,878,147,932.16)
    assert format_size(47_878_147_932) == "44.59GiB"
    assert format_size(47_878_147_933) == "47878147933B"  # no short form reads back as it
    assert format_size(5) == "5B"  # the unit said: a bare 5 is a size typed without one
    assert format_size(int(79.5 * 2**30)) == "81408MiB"  # a whole unit first
    # a GPU's GB times a memory fraction, as typed: 141GB x 0.9, not 126900MB
    assert format_size(126_900_000_000) == "126.9GB" and format_size(1_010_000_000) == "1.01GB"
    assert format_size(12_345_000_000) == "12345MB"  # three decimals: whole MB
    assert format_size(0) == "0"
    # for a field a person reads, bytes grouped in threes; short forms as they are
    assert format_size(47_878_147_933, grouped=True) == "47,878,147,933B"
    assert format_size(80 * 10**9, grouped=True) == "80GB" and format_size(5, grouped=True) == "5B"
    for n in (1, 999, 2**20, 3 * 10**12, 2**40 + 1, 47_878_147_932, 47_878_147_933):
        assert parse_size(format_size(n)) == n


def test_a_size_in_decimal_units_names_its_binary_reading():
    # 44.59GB copied from SGLang's log (which divides by 2**30) is 44.59GiB, 7.4% more bytes
    assert decimal_unit_note(44_590_000_000) == (
        "44.59GB is 44,590,000,000 B (GB: 10^9 bytes). If it comes from an engine's log, write "
        "44.59GiB (47,878,147,932 B): logs count GiB, SGLang's too where it prints \"GB\".")
    assert decimal_unit_note(500 * 10**6).startswith("500MB is 500,000,000 B (MB: 10^6 bytes)")
    assert "write 500MiB (524,288,000 B)" in decimal_unit_note(500 * 10**6)
    assert "1TiB (1,099,511,627,776 B)" in decimal_unit_note(10**12)
    for binary_or_bytes in (47_878_147_932, 12 * 2**30, 12_345, 0):
        assert decimal_unit_note(binary_or_bytes) is None


@given(st.integers(min_value=0, max_value=MAX_BYTES))
def test_format_size_reads_back_exactly(n):
    assert parse_size(format_size(n)) == n
    assert parse_size(format_size(n, grouped=True)) == n


@given(st.integers(min_value=100, max_value=10**7))
def test_a_two_decimal_gib_figure_reads_back_as_typed(hundredths):
    # what a log prints, e.g. 44.59 GiB: the floor of that many bytes is written back short
    n = hundredths * 2**30 // 100
    text = format_size(n)
    assert parse_size(text) == n
    assert text.endswith(("GiB", "MiB", "GB", "MB"))  # never plain bytes
    assert len(text) <= len(f"{hundredths / 100:.2f}GiB")


def test_a_whole_unit_longer_than_the_log_figure_gives_way_to_it():
    # a whole number of MiB that is also a two-decimal GiB figure: the MiB unless it is longer
    assert format_size(9_916_825 * 2**30 // 100) == "99168.25GiB"  # not 101548288MiB
    assert format_size(1536 * 2**20) == "1536MiB"  # as long as 1.50GiB: the whole unit


def test_counts_are_singular_for_one():
    assert (count_text(1, "layer"), count_text(36, "layer")) == ("1 layer", "36 layers")
    assert (tokens_text(1), tokens_text(32_768)) == ("1 token", "32,768 tokens")


def test_parse_named_sizes():
    assert parse_named_sizes("conv=49152, ssm=2MiB", field="--state") == {
        "conv": 49152, "ssm": 2 * 2**20}
    assert parse_named_sizes("", field="--state") == {}
    with pytest.raises(ValueError, match="--state 'conv': write name=bytes pairs"):
        parse_named_sizes("conv", field="--state")
    with pytest.raises(ValueError, match="names 'conv' twice"):
        parse_named_sizes("conv=1,conv=2", field="--state")
    # empty pieces are skipped, but commas alone or a piece without a name are refused
    assert parse_named_sizes("conv=1, ssm=2,", field="--state") == {"conv": 1, "ssm": 2}
    for text in (",,,", "=5", "conv=1,=5"):
        with pytest.raises(ValueError, match=f"^--state '{text}': write name=bytes pairs, e.g. "
                                             "conv=49152,ssm=2097152$"):
            parse_named_sizes(text, field="--state")
    # any name a profile keeps reads back (a link writes state tensors so)
    assert parse_named_sizes("ssm-0=4096", field="--state") == {"ssm-0": 4096}
    # a state tensor holds a byte at least: 0 and negatives are refused alike
    for text, said in (("conv=0", "'0' must be positive"), ("conv=-5", "'-5' is negative")):
        with pytest.raises(ValueError, match=f"^--state conv {said}: give a size of 1 byte or "
                                             "more, or leave the tensor out$"):
            parse_named_sizes(text, field="--state")


def test_concurrency_rounds_as_engines_log_it_but_never_up_to_a_whole_request():
    assert concurrency_text(Fraction(7_162, 485)) == "14.77"  # 14.767: vLLM's anchor, rounded
    assert concurrency_value(Fraction(775, 33)) == 23.48  # 23.4848
    # 652 / 653 = 0.9985: one request does not fit, so not "1.00"
    assert concurrency_text(Fraction(652, 653)) == "0.99"
    assert concurrency_value(1.9999) == 1.99 and concurrency_value(2) == 2.0
    assert concurrency_text(391_483) == "391,483.00"
    # where that floor departs from a %.2f log, the log's figure is given beside it
    assert logged_concurrency_note(Fraction(7_167, 1_024)) == (
        " (an engine's %.2f log prints 7.00x: 6.9990 requests, the last one does not quite fit)")
    assert logged_concurrency_note(Fraction(7_162, 485)) == ""  # 14.77 either way
    assert "prints 2.00x: 1.9999 requests" in logged_concurrency_note(Fraction(1_999_999, 10**6))


def test_shares_of_a_whole_sum_to_100_percent():
    # Falcon-H1-7B under vLLM at 17 GiB: kv 99.08088%, state 0.76864%, state page padding
    # 0.00543%, unused 0.14505%. One by one they round to 99.08 + 0.77 + 0.01 + 0.15 = 100.01;
    # cut to hundredths they sum to 99.98, and the two hundredths go to the largest remainders
    # (state's .864 and the padding's .543, not unused's .505)
    parts = [18_085_838_848, 140_304_384, 991_232, 26_476_544]
    assert shares_text(parts, sum(parts)) == ["99.08", "0.77", "0.01", "0.14"]
    assert shares_text([1, 1, 1], 3) == ["33.34", "33.33", "33.33"]
    # parts of something else are each rounded on their own (half up)
    assert shares_text([1, 1], 8) == ["12.50", "12.50"] and shares_text([1], 3) == ["33.33"]
    # a sliver beside nearly all of it takes the decimals that tell both from 0 and 100:
    # 2,039,808 B unused of 80e9 is 0.00254976%, its KV rows 99.99745024%
    assert shares_text([79_997_960_192, 0, 2_039_808], 80 * 10**9) == [
        "99.997", "0.000", "0.003"]
    assert shares_text([1, 10**6 - 1], 10**6) == ["0.0001", "99.9999"]


@given(st.lists(st.integers(0, 10**12), min_size=1, max_size=9).filter(any))
def test_shares_sum_to_100_and_each_stays_within_a_hundredth(parts):
    total = sum(parts)
    shares = shares_text(parts, total)
    decimals = len(shares[0].partition(".")[2])  # 2, or more where a sliver needs them
    assert decimals >= 2 and {len(s.partition(".")[2]) for s in shares} == {decimals}
    units = [int(s.replace(".", "")) for s in shares]
    assert sum(units) == 100 * 10**decimals
    for part, u in zip(parts, units):
        assert abs(Fraction(u, 10**decimals) - Fraction(100 * part, total)) < Fraction(
            1, 10**decimals)
        # none reads as nothing or as all of it unless it is
        assert (u > 0) == (part > 0) and (u < 100 * 10**decimals) == (part < total)


def test_vllm_math_gives_the_logged_concurrency_where_ours_stays_under_a_request():
    # Llama-3.1-8B: a block is 32 layers x 16 tokens x 4,096 B = 2,097,152 B, so
    # 15,030,288,384 B hold 7,167 blocks; 16,384 tokens need 1,024: 7,167 / 1,024 = 6.999
    from flatkv.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["plan", "--preset", "llama-3.1-8b", "--budget", "15030288384",
                     "--context", "16384", "--strategy", "vllm"]) == 0
    text = out.getvalue()
    assert "concurrency     6.99x at 16,384 tokens (7,167 / 1,024)" in text
    assert "an engine's %.2f log prints 7.00x: 6.9990 requests" in text


def test_exact_bytes_gives_the_bytes_then_the_readable_size():
    from flatkv.units import exact_bytes

    assert exact_bytes(103_219_200) == "103,219,200 B (98.44 MiB)"
    assert (exact_bytes(1023), exact_bytes(1024)) == ("1,023 B", "1,024 B (1.00 KiB)")


def test_a_name_is_folded_alike_wherever_it_is_matched_in_any_case_and_spacing():
    # one folding for a GPU preset (budget.gpu_name) and a link's choice (app_state._likeliest)
    from flatkv.app_state import _likeliest
    from flatkv.budget import GPU_PRESETS, gpu_name

    assert folded(" B200\t 192gb\n") == "b200 192gb" == folded("B200 192GB")
    assert folded("Straße  X") == "strasse x"  # casefold's, past lower()'s
    assert gpu_name(" b200\t 192gb ") == "B200 192GB"
    assert gpu_name("b200 192") == "b200 192"  # not a preset: as typed
    assert _likeliest(" b200\t 192gb ", [*GPU_PRESETS]) == "B200 192GB"
    assert _likeliest("PACKED", ["per-component", "packed"]) == "packed"


def test_sentence_case_starts_a_sentence_but_keeps_a_names_case():
    from flatkv.units import sentence_case
    assert sentence_case("raise TP to 2") == "Raise TP to 2"
    assert sentence_case("vLLM keeps it") == "vLLM keeps it"  # not "VLLM"
    assert sentence_case("") == ""


def test_markdown_literal_escapes_what_streamlit_would_render():
    # emphasis, code, links, LaTeX, HTML, tables, headings, bare-URL links, colour directives,
    # entities: every ASCII punctuation mark gets its backslash, letters and spaces do not
    assert markdown_literal("a*b_c`d`[e](f) $x$ <b> |t| #h ~s~ \\ :red[w] www.x") == (
        "a\\*b\\_c\\`d\\`\\[e\\]\\(f\\) \\$x\\$ \\<b\\> \\|t\\| \\#h \\~s\\~ \\\\ "
        "\\:red\\[w\\] www\\.x")
    # a leading "- " would open a list, "&amp;" show as "&"; a line break ends the paragraph
    assert markdown_literal("- Tom &amp; Jerry\n2") == "\\- Tom \\&amp\\; Jerry 2"
    assert markdown_literal("Qwen3 Next") == "Qwen3 Next"


def test_times_text_tells_a_ratio_near_one_from_one():
    from fractions import Fraction

    from flatkv.units import times_text

    # two decimals, rounded half up exactly as percent_text rounds: 373/100; a whole ratio
    # reads whole; 1,378 / 700 = 1.968571... is 1.97; 21/8 = 2.625 is 2.63 (its float is
    # exactly 2.625, which f"{x:.2f}" rounds half to even, 2.62)
    assert [times_text(Fraction(a, b)) for a, b in (
        (373, 100), (1, 1), (7, 7), (2, 1), (0, 5), (1_378, 700), (21, 8), (1, 8),
        (12_345_678, 1_000))] == [
        "3.73", "1.00", "1.00", "2.00", "0.00", "1.97", "2.63", "0.13", "12,345.68"]
    # a ratio that would read as a whole number it is not gets the decimals down to its first
    # digit of its own, then rounds half up: 38,196 / 38,199 = 0.99992..., 0.9999; 611,191 /
    # 611,184 = 1.0000114..., 1.00001; 1,999 / 2,000 = 0.9995 and 199 / 200 = 0.995 exactly;
    # 2,001 / 2,000 = 1.0005; 1,996 / 1,000 = 1.996 (two decimals: 2.00, twice as many); one
    # in 10**9 is 0.000000001, not 0.00 (none)
    assert [times_text(Fraction(a, b)) for a, b in (
        (38_196, 38_199), (611_191, 611_184), (1_999, 2_000), (199, 200), (2_001, 2_000),
        (10**12 + 1, 10**12), (1_996, 1_000), (14_999, 1_000), (1, 10**9),
        (1_000_001, 1_000))] == [
        "0.9999", "1.00001", "0.9995", "0.995", "1.0005", "1.000000000001", "1.996",
        "14.999", "0.000000001", "1,000.001"]
    # a measured float reads as the decimal it prints as, to 12 significant digits: a float's
    # binary error is no digit of its own (0.3 ms over 0.1 ms is the float 2.9999999999999996,
    # 0.1 x 3 / 0.1 is 3.0000000000000004: "3.00", where they read as 17-digit ratios), a
    # measured one is (2.00001 stays 2.00001, 9.96 over 10.0 GB/s 0.996)
    assert [times_text(v) for v in (0.3 / 0.1, 0.1 * 3 / 0.1, 2.00001, 9.96 / 10.0)] == [
        "3.00", "3.00", "2.00001", "0.996"]
    assert (0.3 / 0.1, 0.1 * 3 / 0.1) == (2.9999999999999996, 3.0000000000000004)
    # thousands grouped as the app's other figures, in ratios and percents alike
    from flatkv.units import percent_text
    assert percent_text(0.1 * 3, 0.3) == "100.00%"  # 0.30000000000000004 of 0.3
    assert (times_text(Fraction(123_456_789, 100)), percent_text(12_345, 10)) == (
        "1,234,567.89", "123,450.00%")


def test_times_words_says_just_over_or_under_where_two_decimals_read_whole():
    from fractions import Fraction

    from flatkv.units import times_words

    # times_text's decimals beyond two (a ratio that reads whole and is not) read as two
    # decimals "just over"/"just under"; a whole ratio and any other keep two decimals
    assert [times_words(Fraction(a, b)) for a, b in (
        (195_741, 97_870), (38_196, 38_199), (611_191, 611_184), (1_996, 1_000), (2, 1),
        (373, 100), (1, 10**9), (1_000_001, 1_000), (1_006, 1_000), (20_071, 10_000))] == [
        "just over 2.00x", "just under 1.00x", "just over 1.00x", "just under 2.00x", "2.00x",
        "3.73x", "just over 0.00x", "just over 1,000.00x",
        # rounded up to a figure that does not read whole: plain two decimals (these read
        # "just under 1.01x" and "just under 2.01x" when times_text's cut asked for digits)
        "1.01x", "2.01x"]


def test_percent_text_tells_a_sliver_from_none_and_nearly_all_from_all():
    from flatkv.units import percent_text

    # two decimals where they tell the share: SPEC 3.1's state padding, 8,192 B on a state
    # page of 548,864 B (1.4925%), and thirds, rounded half up as f"{x:.2%}" rounds them
    assert [percent_text(a, b) for a, b in ((8_192, 548_864), (1, 3), (2, 3), (1, 8))] == [
        "1.49%", "33.33%", "66.67%", "12.50%"]
    # nothing is 0.00% and all of it 100.00%, exactly; so is an empty whole
    assert [percent_text(0, 5), percent_text(5, 5), percent_text(0, 0)] == [
        "0.00%", "100.00%", "0.00%"]
    # a share that would read 0.00% or 100.00% and is neither gets the decimals down to its
    # first digit of its own, then rounds half up: 36 B of a 100,663,296 B block is
    # 0.0000357...%; 1 B on a row of 2,097,151 B 0.0000476...%; 262,144 B of 40 GiB 0.00061...%
    # (0.0006%, where rounding at its first nonzero rounding, 0.001%, would be 64% high);
    # Llama-3.1-8B's 38,146 blocks of 2,097,152 B in 80 GB are 79,997,960,192 B, 99.99745%,
    # beside 2,039,808 B, 0.00254...% (99.997% and 0.003%, as the plan breakdown reads them)
    assert [percent_text(a, b) for a, b in (
        (36, 100_663_296), (1, 2_097_151), (262_144, 40 * 2**30),
        (79_997_960_192, 80 * 10**9), (2_039_808, 80 * 10**9),
        (10**12 - 1, 10**12), (10**12 + 1, 10**12))] == [
        "0.00004%", "0.00005%", "0.0006%", "99.997%", "0.003%", "99.9999999999%",
        "100.0000000001%"]
    # half up, exactly: 1/800 is 0.125%, 0.13% (f"{100 * 0.00125:.2f}" reads 0.12%, half to
    # even); the float 0.00145 is 0.145%, as written, not its binary neighbour below (0.14%)
    assert [percent_text(1, 800), percent_text(0.00125), percent_text(0.00145)] == [
        "0.13%", "0.13%", "0.15%"]
    # an exact share as a Fraction, the whole left out
    assert percent_text(Fraction(16_384, 2_146_304)) == "0.76%"


def test_percent_text_reads_a_float_as_written_and_keeps_a_negative_sign():
    from flatkv.units import percent_text

    # a measured float share is the decimal it prints as, not its binary neighbour below:
    # 0.0003 of a baseline is 0.03% (its float, 0.000299999...%, cut to 0.02%), 1e-12 of the
    # whole 0.0000000001% (read 0.00000000009%)
    assert [percent_text(0.0003, digits=1), percent_text(1e-12), percent_text(3e-7)] == [
        "0.03%", "0.0000000001%", "0.00003%"]
    # a negative share that would read -0.00% takes its decimals too, rounded as a positive
    # one is (math.floor alone would round it away from 0)
    assert [percent_text(-36, 100_663_296), percent_text(-1, 3), percent_text(-0.5)] == [
        "-0.00004%", "-33.33%", "-50.00%"]


def test_a_whole_number_is_read_in_ascii_digits_only_and_other_forms_int_reads_are_refused():
    # int() reads all of these; ASCII digits grouped by underscores are read, a plus sign and
    # digits of another script are refused with the value to write instead
    assert [whole_number(t, "tp") for t in ("12", " 12 ", "1_000", "-1", "x", "1__0")] == [
        12, 12, 1000, -1, None, None]
    for text, message in (
            ("١٢", "tp='١٢' is not written in ASCII digits: write it in ASCII digits, e.g. 12"),
            ("２", "tp='２' is not written in ASCII digits: write it in ASCII digits, e.g. 2"),
            ("２GB", "tp='２GB' is not written in ASCII digits: write it in ASCII digits, e.g. 12"),
            ("+3", "tp='+3' has a plus sign: write it without the sign, e.g. 3")):
        with pytest.raises(ValueError) as error:
            whole_number(text, f"tp={text!r}")
        assert str(error.value) == message
    assert whole_number("+x", "tp") is None  # no number after the sign: the caller says
    # a plus sign before a minus sign is no number int() reads, and '-1' no fix to give: the
    # caller says it is no number (the fix was "write it without the sign, e.g. -1")
    assert [whole_number(t, "tp") for t in ("+-1", "++1")] == [None, None]
    assert decimal_number("+-0.9", "frac") is None
    with pytest.raises(ValueError) as error:
        whole_number("+-١", "tp='+-١'")
    assert str(error.value) == ("tp='+-١' is not written in ASCII digits: write it in ASCII "
                                "digits, e.g. 12")


def test_a_decimal_is_read_in_ascii_digits_only_as_a_whole_number_is():
    # float() reads '٠.٨', '０.８' and '+0.8' as 0.8
    assert [decimal_number(t, "frac") for t in ("0.8", " 0.8 ", "8e-1", "x", "+x")] == [
        0.8, 0.8, 0.8, None, None]
    other = "is not written in ASCII digits: write it in ASCII digits, e.g. 0.8"
    for text, fix in (("٠.٨", other), ("０.８", other), ("+٠.٨", other),
                      ("+0.8", "has a plus sign: write it without the sign, e.g. 0.8")):
        with pytest.raises(ValueError) as error:
            decimal_number(text, f"frac={text!r}")
        assert str(error.value) == f"frac={text!r} {fix}"


def test_digits_of_another_script_after_a_plus_sign_are_given_back_without_it():
    # '+٢' written in ASCII is '+2', refused too: the fix suggested was the field's example
    # (12, 256K), not the number typed
    for parse, text, fix in ((lambda t: whole_number(t, "tp"), "+٢", "2"),
                             (lambda t: parse_tokens(t, "ctx"), "+٣٢K", "32K"),
                             # a pattern's fix is the whole pattern
                             (lambda t: parse_layer_pattern(f"full*{t}"), "+٣", "full*3")):
        with pytest.raises(ValueError) as error:
            parse(text)
        assert str(error.value).endswith(f"is not written in ASCII digits: write it in ASCII "
                                         f"digits, e.g. {fix}")


def test_digits_of_another_script_after_a_minus_sign_are_given_back_as_a_number_the_field_takes():
    # '-٢' in a positive field suggested "e.g. -2", which the field then refused as not
    # positive: the fix is the number without its sign, said so, or the field's example where
    # that is refused too (a pattern's count, whose fix is the whole pattern:
    # test_a_repeat_count_in_other_digits_suggests_the_whole_pattern_which_is_taken)
    without = "without the minus sign (it takes no negative number), e.g. "
    for parse, text, fix in (
            (lambda t: whole_number(t, "tp", least=1), "-٢", without + "2"),
            (lambda t: whole_number(t, "tp"), "-٢", without + "2"),  # no figure is negative
            (lambda t: whole_number(t, "ssm_el", least=1, most=8), "-٢", without + "2"),
            # nor is the minus sign of a number out of range dropped: the example, in range
            (lambda t: whole_number(t, "ssm_el", least=1, most=8), "-٩", "e.g. 8"),
            (lambda t: whole_number(t, "tp", least=1), "-٠", "e.g. 12"),
            (lambda t: decimal_number(t, "frac", takes=lambda v: 0 < v <= 1), "-٠.٨",
             without + "0.8"),
            (lambda t: parse_tokens(t, "ctx"), "-٣٢K", without + "32K"),
            (lambda t: parse_size(t, field="--budget"), "-٨٠GB", without + "80GB")):
        with pytest.raises(ValueError) as error:
            parse(text)
        message = str(error.value)
        assert message.endswith(f"is not written in ASCII digits: write it in ASCII digits, "
                                f"{fix}"), message
        # ... and the fix is read
        parse(message.rpartition("e.g. ")[2])
    # a field that takes a negative number keeps its sign: SGLang's chunk, off at -2
    with pytest.raises(ValueError) as error:
        parse_chunked_prefill("-٢", "sg_chunk")
    assert str(error.value) == ("sg_chunk '-٢' is not written in ASCII digits: write it in "
                                "ASCII digits, e.g. -2")
    assert parse_chunked_prefill("-2", "sg_chunk") == CHUNKED_PREFILL_OFF
    # a number of other digits out of a field's range: the example it takes, not the number
    with pytest.raises(ValueError, match=r"e\.g\. 8$"):
        whole_number("١٢", "ssm_el", least=1, most=8)
    # a memory field refuses a bare 80 (80 B, a unit left out): '٨٠' gave "e.g. 80"
    for text, fix in (("٨٠", "80GB"), ("٨٠GiB", "80GiB")):
        with pytest.raises(ValueError) as error:
            memory_size(text, "GPU memory")
        assert str(error.value) == (f"GPU memory {text!r} is not written in ASCII digits: "
                                    f"write it in ASCII digits, e.g. {fix}")
        assert memory_size(fix, "GPU memory") > 0


@pytest.mark.parametrize(("read", "least"), [
    (gpu_memory_size, 1), (kv_memory_size, 1),
    (lambda text: gpu_memory_size(text, "gpu_mem", key_value=True), 1),
    (lambda text: memory_size(text, "weights", weights=True), 0)])  # weights may be 0 B
@pytest.mark.parametrize("text", ["٠", "٠GB", "+0", "+0GB", "+0.0", "+80", "٨٠", "+٨٠"])
def test_a_memory_fields_suggested_fix_is_one_it_takes(read, least, text):
    # '٠' was told "e.g. 0" and '+80' "e.g. 80", which these fields then refused (a GPU or
    # cache of 0 B; 80 B, a unit left out): the fix, fed back, must read as the field takes it
    with pytest.raises(ValueError) as error:
        read(text)
    fix = str(error.value).rsplit("e.g. ", 1)[1]
    # a link's gpu_mem names its fix as its notices name every value, gpu_mem=80GB
    keyed = "gpu_mem='" in str(error.value)
    assert fix.startswith("gpu_mem=") == keyed
    assert read(fix.removeprefix("gpu_mem=")) >= least


def test_sizes_and_tokens_refuse_digits_of_another_script_and_a_plus_sign_alike():
    assert parse_size("1_000GB") == 10**12 and parse_tokens("1_000") == 1000
    for parse, text, message in (
            (parse_size, "１GB", "--budget '１GB' is not written in ASCII digits: write it in "
             "ASCII digits, e.g. 1GB"),
            # a fix that would not read either gives the field's own example
            (parse_size, "١٢٨K", "--budget '١٢٨K' is not written in ASCII digits: write it in "
             "ASCII digits, e.g. 80GB"),
            (parse_size, "+5GB", "--budget '+5GB' has a plus sign: write it without the sign, "
             "e.g. 5GB"),
            (parse_tokens, "١٢٨K", "--context '١٢٨K' is not written in ASCII digits: write it "
             "in ASCII digits, e.g. 128K"),
            (parse_tokens, "+8k", "--context '+8k' has a plus sign: write it without the sign, "
             "e.g. 8k")):
        with pytest.raises(ValueError) as error:
            parse(text, **({"field": "--budget"} if parse is parse_size else {}))
        assert str(error.value) == message


def test_a_repeat_count_is_read_in_ascii_digits_as_every_whole_number():
    assert len(parse_layer_pattern("full*1_0")) == 10


# A count in digits of another script or with a plus sign: the fix is the whole pattern in
# ASCII digits, every count of it fixed at once (it said "e.g. 12", no pattern), and the layers
# it expands to; a pattern that is wrong elsewhere too gets the parser's example
@pytest.mark.parametrize(("typed", "count", "at", "why", "fix", "layers"), [
    ("full*١٢", "١٢", 6, "is not written in ASCII digits: write it in ASCII digits", "full*12",
     12),
    ("(3*linear,full)*١٢", "١٢", 17, "is not written in ASCII digits: write it in ASCII digits",
     "(3*linear,full)*12", 4 * 12),
    ("(3*linear,full)*１２", "１２", 17, "is not written in ASCII digits: write it in ASCII "
     "digits", "(3*linear,full)*12", 48),
    ("١٢*full", "١٢", 1, "is not written in ASCII digits: write it in ASCII digits", "12*full",
     12),
    # the first count refused, the fix writing the others in ASCII digits too
    ("(٣*linear,full)*+١٢", "٣", 2, "is not written in ASCII digits: write it in ASCII digits",
     "(3*linear,full)*12", 48),
    ("full*-١٢", "-١٢", 6, "is not written in ASCII digits: write it in ASCII digits, without "
     "the minus sign (it takes no negative number)", "full*12", 12),
    ("full*+3", "+3", 6, "has a plus sign: write it without the sign", "full*3", 3),
    (" full * ١٢ ", "١٢", 9, "is not written in ASCII digits: write it in ASCII digits",
     "full * 12", 12),
    ("full*١٢,)", "١٢", 6, "is not written in ASCII digits: write it in ASCII digits",
     "(3*linear,full)*12", 48),
])
def test_a_repeat_count_in_other_digits_suggests_the_whole_pattern_which_is_taken(
        typed, count, at, why, fix, layers):
    with pytest.raises(ValueError) as error:
        parse_layer_pattern(typed)
    assert str(error.value) == (f"layer pattern {typed!r}: repeat count {count!r} at character "
                                f"{at} {why}, e.g. {fix}")
    assert len(parse_layer_pattern(fix)) == layers


def test_a_long_list_or_object_is_quoted_cut_with_its_brackets_closed_and_its_items_counted():
    # the repr cut at 80 characters and its characters counted: "[0, 1, ..., 21, 2... (4,890
    # characters)" left the list open, cut 22 to 2, and counted what no one typed
    assert quoted_value(list(range(1000))) == (
        "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, ... (1,000 items)]")
    assert quoted_value(["x" * 1000]) == "['" + "x" * 40 + "'... (1,000 characters)]"
    assert quoted_value(("x" * 1000,)) == "('" + "x" * 40 + "'... (1,000 characters),)"
    assert quoted_value({"k" * 100: list(range(500))}) == (
        "{'" + "k" * 40 + "'... (100 characters): [0, 1, 2, 3, 4, 5, 6, ... (500 items)]}")
    assert quoted_value(["a" * 30, "b" * 30, "c" * 30]) == "['" + "a" * 30 + "', ... (3 items)]"
    # short: the repr, whole
    assert [quoted_value(v) for v in ([1, 2], (1,), {"a": 1}, 1.5, None)] == [
        "[1, 2]", "(1,)", "{'a': 1}", "1.5", "None"]
    assert quoted_value(2**300) == str(2**300)[:80] + "... (91 characters)"


def test_a_model_files_pattern_that_is_no_string_is_refused_with_the_fix():
    # (fuzz) a model file's "pattern": null or 5 said "layer pattern must be a string, got
    # NoneType", Python's type name and no fix
    from flatkv.models import ModelSpec
    from flatkv.presets import load_preset

    exported = load_preset("Llama-3.1-8B").to_dict()
    for value, shown in ((None, "None"), (5, "5"), (["full"], "['full']")):
        with pytest.raises(ValueError, match=rf"^layer pattern must be a string such as "
                           rf"\"\(3\*linear,full\)\*12\", got {re.escape(shown)}: write one "
                           r"name per cache layer$"):
            ModelSpec.from_dict({**exported, "pattern": value})


def test_a_layer_patterns_leftover_and_its_size_say_what_to_write():
    # (link fuzz) "unexpected 'cpu' at character 8" and "too large to be real" said no fix
    with pytest.raises(ValueError) as caught:
        parse_layer_pattern("full cpu")
    assert str(caught.value) == ("layer pattern 'full cpu': unexpected 'cpu' at character 6 "
                                 "(write it like (3*linear,full)*12)")
    with pytest.raises(ValueError) as caught:
        parse_layer_pattern("full*2049")  # 2,048 at most
    assert str(caught.value) == ("layer pattern 'full*2049' expands to more than 2,048 cache "
                                 "layers, which is too large to be real: give 2,048 or less")
    with pytest.raises(ValueError) as caught:  # a count of 19 digits, not read as a number
        parse_layer_pattern("full*" + "9" * 19)
    assert str(caught.value) == (f"layer pattern 'full*{'9' * 19}' expands to more than 2,048 "
                                 "cache layers, which is too large to be real: give 2,048 or "
                                 "less")


@pytest.mark.parametrize(("text", "key_value", "message"), [
    ("1e3", False, "--context '1e3' is not a whole number of tokens: give e.g. 262144, 256K "
     "(262,144) or 128k (128,000)"),
    ("1e3", True, "ctx='1e3' is not a whole number of tokens: give e.g. ctx=262144, 256K "
     "(262,144) or 128k (128,000)"),
    ("8,19", False, "--context '8,19' is not a whole number of tokens (commas only group "
     "thousands): give e.g. 262144, 256K (262,144) or 128k (128,000)"),
    ("1.5", False, "--context '1.5' is not a whole number of tokens (between 1 and 2): give e.g. "
     "262144, 256K (262,144) or 128k (128,000)"),
    ("1.0005k", False, "--context '1.0005k' is not a whole number of tokens (between 1,000 and "
     "1,001): give e.g. 262144, 256K (262,144) or 128k (128,000)"),
    ("1.5K", True, "ctx='1.5K' is not a whole number of binary K: give e.g. ctx=1.5k for the "
     "decimal multiple"),
    ("1.001k", False, "--context '1.001k' is read by vLLM as 1,000 tokens (its float "
     "arithmetic), exactly 1,001: give 1000 or 1001 in digits"),
    ("9" * 40, False, f"--context '{'9' * 24}...' is too long for a token count (40 "
     "characters): give e.g. 262144, 256K (262,144) or 128k (128,000)"),
    ("-" + "9" * 40, False, f"--context '-{'9' * 23}...' must be positive: give 1 or more "
     "tokens"),
    ("", False, "--context is empty: give e.g. 262144, 256K (262,144) or 128k (128,000)"),
])
def test_a_token_entry_that_is_no_count_is_refused_as_a_bound_is(text, key_value, message):
    # the form of a bound's refusal ("--context 0 must be positive: give 1 or more tokens"):
    # the field, the value as typed, what is wrong, the fix; it was "--context is '1e3': give
    # whole tokens such as ...", and a runaway negative "--context is '-99...' must be positive"
    with pytest.raises(ValueError) as caught:
        parse_tokens(text, "ctx" if key_value else "--context", key_value=key_value)
    assert str(caught.value) == message


def test_and_text_lists_parts_as_a_sentence_does():
    # the one helper behind "block size 64, mamba cache mode align and 1 prefill checkpoint
    # block" and Budget's "No figure at block sizes 1 to 8, 16 to 2,048 and 4,096"
    from flatkv.units import and_text

    assert and_text(["64"]) == "64"
    assert and_text(["1 to 8", "4,096"]) == "1 to 8 and 4,096"
    assert and_text(["1 to 8", "16 to 2,048", "4,096"]) == "1 to 8, 16 to 2,048 and 4,096"
    assert and_text(["ampere", "ada", "hopper"], "or") == "ampere, ada or hopper"
