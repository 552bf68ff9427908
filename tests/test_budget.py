"""The cache budget of one rank: derived by hand from the GPU, the fraction and the weights."""

import re

import pytest

from flatkv.app_model import profile_for
from flatkv.app_state import AppState
from flatkv.budget import (
    blocks_budget,
    cache_budget,
    fraction_text,
    given_budget,
    least_tp_with_room,
    printed_range,
)
from flatkv.plan import cdiv
from flatkv.presets import load_preset
from flatkv.strategies import StrategyOptions, run_strategy
from flatkv.strategies.vllm import block_bytes as vllm_block_bytes
from flatkv.strategy_notes import hold_rows


def test_cache_budget_by_hand():
    # 80 GB, all of it, no weights: the SPEC worked example's budget.
    assert cache_budget(80 * 10**9, 1.0, 0, 1).cache_bytes == 80_000_000_000
    # H100: 81,559 MiB = 85,520,809,984 B; x 0.9 = 76,968,728,985.6 -> floor; 16 GB over TP 2.
    b = cache_budget(81_559 * 2**20, 0.9, 16 * 10**9, 2)
    assert b.gpu_bytes == 85_520_809_984
    assert b.usable_bytes == 76_968_728_985
    assert b.weights_per_rank == 8_000_000_000
    assert b.cache_bytes == 68_968_728_985
    assert AppState(gpu="H100 80GB", weights=16 * 10**9, tp=2).budget() == b
    # an odd weight count rounds up per rank
    assert cache_budget(1000, 1.0, 7, 2).weights_per_rank == 4
    # the fraction as typed, 57/100 exactly: 80e9 x 0.57 = 45,600,000,000 (the float product
    # is 45,599,999,999.99, which would floor a byte short)
    assert cache_budget(80 * 10**9, 0.57, 0, 1).cache_bytes == 45_600_000_000
    # every decimal typed counts: 80e9 x 0.912345 is 72,987,600,000, not 80e9 x 0.9123
    assert cache_budget(80 * 10**9, 0.912345, 0, 1).cache_bytes == 72_987_600_000


def test_cache_budget_rejects_weights_that_fill_the_gpu():
    # 160 GB of weights in 72 GB usable: TP 2 leaves 80 GB a rank, still too much; TP 3 fits.
    # 160 GB is more than the whole 80 GB GPU, so a higher memory fraction is not offered
    with pytest.raises(ValueError, match=r"fill the usable memory \(67.06 GiB\): raise TP \(3 "
                       r"is the least that splits the model and leaves room\) or pick a larger "
                       "GPU$"):
        cache_budget(80 * 10**9, 0.9, 160 * 10**9, 1)
    # 75 GB fill 72 GB usable, not the whole 80 GB: fraction 1 leaves 5 GB, so it is offered
    with pytest.raises(ValueError, match=r"raise TP \(2 is the least that splits the model and "
                       r"leaves room\), the memory fraction, or pick a larger GPU$"):
        cache_budget(80 * 10**9, 0.9, 75 * 10**9, 1)
    # at fraction 1 already there is no higher one; 80 GB on 80 GB leave no byte at 1 either
    for fraction, weights in ((1.0, 81 * 10**9), (0.9, 80 * 10**9)):
        with pytest.raises(ValueError) as raised:
            cache_budget(80 * 10**9, fraction, weights, 1)
        assert str(raised.value).endswith("raise TP (2 is the least that splits the model and "
                                          "leaves room) or pick a larger GPU")
    assert cache_budget(80 * 10**9, 0.9, 160 * 10**9, 3).cache_bytes == (
        72 * 10**9 - -(-160 * 10**9 // 3))
    with pytest.raises(ValueError, match=r"raise TP \(3 is"):  # exactly full at TP 2: no room
        cache_budget(80 * 10**9, 0.9, 144 * 10**9, 1)
    # 19 B of weights on 5 usable: TP 4 leaves ceil(19 / 4) = 5 B a rank, no room; TP 5 does
    assert least_tp_with_room(19, 5, lambda tp: True) == 5
    assert cache_budget(5, 1.0, 19, 5).cache_bytes == 1
    assert least_tp_with_room(19, 5, lambda tp: tp % 8 == 0) == 8  # the least that splits
    assert least_tp_with_room(19, 1, lambda tp: True) is None  # 1 B usable: no TP leaves room
    with pytest.raises(ValueError, match=r": pick a larger GPU \(no TP up to 1,024 that splits "
                       r"the model leaves room\)$"):  # 10^13 B of weights: past the whole GPU
        cache_budget(10**9, 0.001, 10**13, 1)
    # 1,000 B x 0.001 = 1 B usable, no room at any TP; the whole GPU holds 5 B of weights
    with pytest.raises(ValueError, match=r": raise the memory fraction or pick a larger GPU "
                       r"\(no TP up to 1,024 that splits the model leaves room\)$"):
        cache_budget(1_000, 0.001, 5, 1)
    with pytest.raises(ValueError, match="memory fraction"):
        cache_budget(80 * 10**9, 0.0, 0, 1)
    # a fraction of the wrong type is named, not a TypeError of a bare comparison (nor True: 1)
    for fraction in ("0.9", None, True, float("nan"), 1.5):
        with pytest.raises(ValueError, match=rf"memory fraction is {re.escape(repr(fraction))}: "
                           r"give a number in \(0, 1\], e.g. 0.9"):
            cache_budget(80 * 10**9, fraction, 0, 1)
    for tp in (0, -3, "x"):  # a budget given as a log gives it checks its TP too
        with pytest.raises(ValueError, match="TP"):
            given_budget(10**9, tp)
        with pytest.raises(ValueError, match="TP"):
            blocks_budget(10, 100, tp)


def test_no_usable_memory_names_the_gpu_not_the_weights():
    with pytest.raises(ValueError, match="GPU memory 1 B x memory fraction 0.9 leaves no usable"):
        cache_budget(1, 0.9, 0, 1)
    # a whole H100 at a fraction of 1e-300 (the CLI's --memory-fraction takes any in (0, 1]):
    # 85,520,809,984 B x 1e-300 floors to 0 B, and the fix is the fraction, not the GPU's memory
    with pytest.raises(ValueError, match=r"GPU memory 85,520,809,984 B x memory fraction 1e-300 "
                       r"leaves no usable memory: give the GPU's memory \(e.g. 80GB\) and the "
                       r"share of it an engine may use \(e.g. 0.9\)"):
        cache_budget(81_559 * 2**20, 1e-300, 0, 1)


def test_a_gpu_memory_past_the_gpu_that_prints_the_same_says_by_how_much():
    # Budget page, Qwen3-Next-80B-A3B at TP 2 on an H100 80GB x 0.95 with 80 GB of weights,
    # vLLM v1 at 64,000 tokens: 51 requests need 6,171 blocks x 12 x 557,056 B =
    # 41,251,110,912 B, so ceil((41,251,110,912 + 4e10) / 0.95) = 85,527,485,171 B of GPU,
    # 6,675,187 B past the H100's 85,520,809,984 B: both print as 79.65 GiB, and "more than
    # this GPU's 79.65 GiB" beside "79.65 GiB" read as a contradiction
    b = cache_budget(81_559 * 2**20, 0.95, 80 * 10**9, 2)
    gpu = b.gpu_bytes_for(6_171 * 12 * 557_056)
    assert gpu == 85_527_485_171
    assert b.beyond_gpu_text(gpu) == "more than this GPU's 79.65 GiB, by 6,675,187 B"
    # a figure that prints apart needs no bytes
    assert b.beyond_gpu_text(2**37) == "more than this GPU's 79.65 GiB"
    assert b.beyond_gpu_text(b.gpu_bytes) == ""
    # Compare's "Budget to hold them" table puts it, short, in parentheses after the figure
    qwen = profile_for("Qwen3-Next-80B-A3B", None, 2)
    vllm = run_strategy("vllm", qwen, budget_bytes=b.cache_bytes, context_tokens=64_000)
    assert hold_rows([vllm], [6_171 * 12 * 557_056], b, qwen)[0]["GPU memory"] == (
        "79.65 GiB (over 79.65 GiB by 6,675,187 B)")
    assert b.beyond_gpu_text(gpu, short=True) == "over 79.65 GiB by 6,675,187 B"
    assert b.beyond_gpu_text(2**37, short=True) == "over 79.65 GiB"


def test_captions_describe_the_budget_they_come_with():
    b = cache_budget(81_559 * 2**20, 0.9, 16 * 10**9, 2)
    assert (b.fraction, b.tp) == (0.9, 2)
    # 16e9 / 2 = 8e9 B = 7.45 GiB a rank, said so (the sidebar's weights are all ranks')
    assert b.derivation == "79.65 GiB x 0.9 - 7.45 GiB of weights per rank"
    assert cache_budget(81_559 * 2**20, 0.9, 16 * 10**9, 1).derivation == (
        "79.65 GiB x 0.9 - 14.90 GiB of weights")
    # none entered (the default): said so, not "- 0 B of weights", which reads as a model without
    assert cache_budget(81_559 * 2**20, 0.9, 0, 2).derivation == (
        "79.65 GiB x 0.9, no weights entered: enter them in the sidebar")
    # every step in exact bytes: in GiB alone the steps do not check by hand (79.65 x 0.9 is
    # 71.685, shown 71.68), where 85,520,809,984 x 0.9 = 76,968,728,985.6, floored, does
    assert 81_559 * 2**20 == 85_520_809_984 and 85_520_809_984 * 9 // 10 == 76_968_728_985
    assert b.explanation == (
        "85,520,809,984 B (79.65 GiB) x 0.9 = 76,968,728,985 B (71.68 GiB) usable - weights "
        "8,000,000,000 B (7.45 GiB) per rank (TP 2) = 68,968,728,985 B (64.23 GiB) for the "
        "cache per rank")
    given = given_budget(47_878_147_932, 2)
    assert given.cache_bytes == given.usable_bytes == 47_878_147_932 and given.given
    assert given.derivation == "KV cache memory as given"
    with pytest.raises(ValueError, match="KV cache memory"):
        given_budget(0, 1)


def test_the_derivation_says_the_fraction_it_used_to_the_last_digit():
    # the CLI takes any decimal: 0.9000001 of 80 GB is 80e9 x 9,000,001 / 10**7 =
    # 72,000,008,000 B, which ":g" (six digits) printed as "x 0.9", 8,000 B off the figure
    b = cache_budget(80 * 10**9, 0.9000001, 0, 1)
    assert b.cache_bytes == 80 * 10**9 * 9_000_001 // 10**7 == 72_000_008_000
    assert b.explanation == (
        "80,000,000,000 B (74.51 GiB) x 0.9000001 = 72,000,008,000 B (67.06 GiB) usable - "
        "weights 0 B per rank (TP 1) = 72,000,008,000 B (67.06 GiB) for the cache per rank")
    assert b.derivation == "74.51 GiB x 0.9000001, no weights entered: enter them in the sidebar"
    # a fraction of 1 and one of 4 digits read as typed, a tiny one without an exponent
    assert [fraction_text(f) for f in (1.0, 0.9, 0.9125, 1e-09)] == ["1", "0.9", "0.9125",
                                                                       "0.000000001"]
    with pytest.raises(ValueError, match=r"memory fraction 0\.00000015 leaves no usable"):
        cache_budget(10**6, 0.00000015, 0, 1)  # 0.15 B, floored: none


def test_a_printed_budget_stands_for_every_budget_that_prints_the_same():
    # "44.59 GiB" is any budget from 44.585 GiB (47,872,779,223.04 B, so 47,872,779,224) up to
    # below 44.595 GiB (47,883,516,641.28 B, so 47,883,516,641); read back as floor(44.59 x
    # 2**30) = 47,878,147,932
    assert printed_range(47_878_147_932) == (47_872_779_224, 47_883_516_641)
    assert printed_range(47_878_147_933) is None  # not a printed figure read back
    # 40.00 GiB: 39.995 GiB rounds up to a whole byte; 40.005 GiB is 42,955,041,669.12 B, so
    # the last byte that prints 40.00 is its floor
    assert printed_range(40 * 2**30) == (cdiv(39_995 * 2**30, 1000), 42_955_041_669)
    # an exact tie prints as the even digit: 44.625 GiB = 47,915,728,896 B prints "44.62",
    # so it is 44.62's last byte, and 44.63's first is the byte after
    assert f"{47_915_728_896 / 2**30:.2f}" == "44.62"
    assert printed_range(floor_gib("44.62"))[1] == 47_915_728_896
    assert printed_range(floor_gib("44.63"))[0] == 47_915_728_897
    # past 2**53 B a log's float print parts from exact rounding (8,388,608.37 GiB's range
    # would end on a byte that prints .38): no range there
    assert printed_range(floor_gib("8388608.37")) is None
    # just under 2**53 B (9,007,199,254,740,992): 8,388,607.985 GiB is
    # 9,007,199,238,634,864.64 B, so its first whole byte is ...865; 8,388,607.995 GiB is
    # 9,007,199,249,372,282.88 B, its floor the last byte that prints .99
    assert printed_range(floor_gib("8388607.99")) == (9_007_199_238_634_865,
                                                      9_007_199_249_372_282)
    for bad in (0, -5, 2**60 + 1, 10.0, "44.59GiB"):
        with pytest.raises(ValueError, match="cache_bytes .* (must be|is too large to be "
                                             "real: give)"):
            printed_range(bad)


def floor_gib(text: str) -> int:
    """A log's GiB figure as the sidebar reads it: floor(x * 2**30)."""
    from fractions import Fraction

    return int(Fraction(text) * 2**30)


def test_a_budget_of_vllm_blocks_is_that_many_blocks_exactly():
    # vLLM 0.34 logs "Memory after warmup: ... 6701 KV cache blocks (44.17 GiB) fit": Qwen3-Next
    # at TP 2, block 64, align: P = 64 x cdiv(548,864, 64 x 1,024) = 576, a block 12 pages of
    # 576 x 1,024 B = 7,077,888 B. Read as 44.17 GiB instead, the budget is 6,700 blocks
    profile = load_preset("Qwen3-Next-80B-A3B").with_options(tp=2).profile()
    options = StrategyOptions(block_size=64, mamba_cache_mode="align")
    each = vllm_block_bytes(profile, options)
    assert each == 576 * 1_024 * 12 == 7_077_888
    assert vllm_block_bytes(profile, StrategyOptions()) == 544 * 1_024 * 12  # P 544 at 16
    b = blocks_budget(6_701, each, 2)
    assert (b.cache_bytes, b.given, b.vllm_blocks) == (6_701 * 7_077_888, True, 6_701)
    assert not b.rounded_in_log and given_budget(b.cache_bytes, 2).rounded_in_log
    vllm = run_strategy("vllm", profile, budget_bytes=b.cache_bytes, context_tokens=262_144,
                        options=options)
    # a request: cdiv(262,144, 576) = 456 full pages + 3 GDN groups x 2 state pages = 462
    assert (vllm.num_blocks, vllm.logged_tokens) == (6_701, 6_701 * 262_144 // 462)
    assert vllm.logged_tokens == 3_802_222
    assert "Memory after warmup: ... 6701 KV cache blocks (44.17 GiB) fit within the " \
           "requested ... GiB. ..." in vllm.extras["log_lines"]
    assert run_strategy("vllm", profile, budget_bytes=floor_gib("44.17"),
                        options=options).num_blocks == 6_700
    assert b.derivation == "6,701 vLLM blocks of 6.75 MiB as given"
    assert b.explanation.startswith(
        "6,701 vLLM blocks x 7,077,888 B = 47,428,927,488 B (44.17 GiB) of KV cache memory per "
        "rank, as vLLM 0.34 logs it (\"Memory after warmup: ... 6701 KV cache blocks (X GiB) "
        "fit\")")
    assert b.how_to_raise == "raise the vLLM KV cache blocks in the sidebar"
    with pytest.raises(ValueError, match="vLLM KV cache blocks 1 must be at least 2: "
                                         "give 2 or more"):
        blocks_budget(1, each, 2)
    # a layout vLLM does not start has no block to count in
    with pytest.raises(ValueError, match="^vLLM's blocks have no size here: vLLM refuses"):
        vllm_block_bytes(load_preset("DeepSeek-V3.2").profile(), StrategyOptions(block_size=96))


def test_every_gpu_preset_has_its_compute_capability_and_a_size_none():
    # NVIDIA's CUDA GPU table: Hopper's H100 and H200 9.0, Blackwell's B200 10.0, Ampere's A100
    # 8.0, Ada's L40S and RTX 4090 8.9; a GPU of no preset (a size, KV cache memory, vLLM's
    # blocks) is not known
    from flatkv.budget import (
        GPU_COMPUTE_CAPABILITIES,
        GPU_PRESETS,
        capability_text,
        compute_capability,
        gpu_models,
    )

    assert GPU_COMPUTE_CAPABILITIES == {
        "H100 80GB": (9, 0), "H200 141GB": (9, 0), "B200 192GB": (10, 0), "A100 80GB": (8, 0),
        "A100 40GB": (8, 0), "L40S 48GB": (8, 9), "RTX 4090 24GB": (8, 9)}
    assert list(GPU_COMPUTE_CAPABILITIES) == list(GPU_PRESETS)
    assert [compute_capability(g) for g in ("A100 40GB", "80GB", "KV cache memory", None)] == [
        (8, 0), None, None, None]
    assert (capability_text((8, 9)), capability_text((10, 0))) == ("8.9", "10.0")
    # the models of a capability, each once, in the presets' order
    assert gpu_models(lambda c: c == (8, 0)) == "A100"
    assert gpu_models(lambda c: c[0] == 8) == "A100, L40S, RTX 4090"
    assert gpu_models(lambda c: c >= (9, 0)) == "H100, H200, B200"
