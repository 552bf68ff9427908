"""Property tests: over random profiles, budgets, contexts and options, every strategy either
says why it does not apply or returns a breakdown that adds up to the budget exactly."""

from __future__ import annotations

import bisect
import itertools

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from flatkv.profile import CacheProfile, pool_group_name
from flatkv.strategies import CATEGORIES, STRATEGIES, StrategyOptions, compare, run_strategy
from flatkv.strategies.base import (
    CHUNKED_PREFILL_OFF,
    MAX_MAMBA_CACHE_SIZE,
    MAX_RUNNING_REQUESTS,
    SGLANG_KV_CACHE_DTYPES,
    SGLANG_RADIX_CACHE_STRATEGIES,
)
from flatkv.units import MAX_TOKENS
from flatkv.workload import Workload, covers

LABELS = ("full_attention", "sliding_attention", "linear_attention")
# architectures the strategies read from a profile: SGLang's Mamba1 models (their ssm dtype and
# drafting refusal), KDA ones (vLLM's ssm dtype refusal, SGLang's dense conv windows), an
# extra_buffer one (5 slots a request), and none (raw bytes)
ARCHITECTURES = ((), ("MambaForCausalLM",), ("FalconMambaForCausalLM",),
                 ("KimiLinearForCausalLM",), ("Qwen3NextForCausalLM",))


@st.composite
def profiles(draw, labels=LABELS):
    if "linear_attention" in labels and draw(st.integers(0, 4)) == 0:  # state layers alone
        layers = ["linear_attention"] * draw(st.integers(1, 64))
    elif draw(st.booleans()):
        layers = draw(st.lists(st.sampled_from(labels), min_size=1, max_size=40))
    else:  # a repeated pattern, so equal groups (aliasing) and n:1 hybrids come up often
        pattern = draw(st.lists(st.sampled_from(labels), min_size=1, max_size=6, unique=True))
        layers = pattern * draw(st.integers(1, 12))
    has_attention = any(x != "linear_attention" for x in layers)
    has_state = "linear_attention" in layers
    kv = draw(st.integers(1, 1 << 16)) if has_attention else 0
    state = {}
    model = {}  # what a profile from a model's config carries beside its bytes
    if has_state:
        state["conv"] = draw(st.integers(1, 1 << 17))
        if draw(st.booleans()):
            state["ssm"] = draw(st.integers(1, 1 << 22))
            if draw(st.booleans()):  # elements of a named dtype, the ssm bytes a multiple
                dtype = draw(st.sampled_from(["float32", "bfloat16", "float16"]))
                size = 4 if dtype == "float32" else 2
                state["ssm"] = -(-state["ssm"] // size) * size
                model.update(ssm_element_bytes=size, ssm_dtype=dtype)
        model["architectures"] = draw(st.sampled_from(ARCHITECTURES))
        model["config_mamba_ssm_dtype"] = draw(st.sampled_from([None, "bfloat16", "float32"]))
        if draw(st.booleans()):  # a conv state of K - 1 rows, the bytes a multiple of them
            rows = draw(st.integers(1, 4))
            state["conv"] = -(-state["conv"] // rows) * rows
            model["conv_rows"] = rows
    window = draw(st.integers(1, 1 << 17)) if "sliding_attention" in layers else None
    # sliding layers of their own bytes a token beside other attention layers (Gemma 4), in a
    # ratio that scales a page, pads it, or either way round
    sliding = None
    if window is not None and set(layers) - {"sliding_attention", "linear_attention"} and (
            draw(st.booleans())):
        sliding = kv * draw(st.sampled_from([2, 4])) if draw(st.booleans()) else draw(
            st.integers(1, 1 << 16))
    # layers past these that read an earlier one's KV (Gemma 3n, Gemma 4): SGLang pools them
    attention = sorted(set(layers) - {"linear_attention"})
    shared = draw(st.lists(st.sampled_from(attention), max_size=8)) if attention and (
        draw(st.booleans())) else []
    return CacheProfile(tuple(layers), kv, state, window, "random",
                        sliding_kv_bytes_per_slot=sliding, kv_shared_layer_types=tuple(shared),
                        **model)


def _options(gpu: tuple[int, int] | None, **fields) -> StrategyOptions:
    """StrategyOptions of ``fields`` on ``gpu``: its compute capability (a Blackwell's
    derived from it), or None."""
    return StrategyOptions(gpu_compute_capability=gpu, **fields)


options = st.builds(
    _options,
    block_size=st.sampled_from([1, 16, 32, 64, 256]),
    kernel_block_size=st.sampled_from([16, 32, 64]),
    mamba_cache_mode=st.sampled_from(["none", "align", "all"]),
    mamba_chunk_size=st.sampled_from([None, 64, 128, 256]),
    mamba_full_memory_ratio=st.sampled_from([0.1, 0.9, 3]),
    sglang_slots_per_request=st.one_of(st.none(), st.integers(1, 5)),
    # SGLang's told counts: small, around its pools' caps, and up to their bounds
    sglang_max_running_requests=st.one_of(st.none(), st.integers(1, 64),
                                          st.integers(1, MAX_RUNNING_REQUESTS)),
    sglang_max_mamba_cache_size=st.one_of(st.none(), st.integers(1, 64),
                                          st.integers(1, MAX_MAMBA_CACHE_SIZE)),
    speculative_tokens=st.sampled_from([0, 0, 1, 3]),
    sglang_disable_radix_cache=st.booleans(),
    sglang_mamba_radix_cache_strategy=st.sampled_from(list(SGLANG_RADIX_CACHE_STRATEGIES)),
    # the GPU: none said, or each GPU preset's (or architecture's) compute capability
    # (vLLM's refusals on SM 8.x; SGLang's DSA layout on the Blackwell's 10.0, and bfloat16
    # told beside it)
    gpu=st.sampled_from([None, (8, 0), (8, 9), (9, 0), (10, 0)]),
    sglang_kv_cache_dtype=st.sampled_from(list(SGLANG_KV_CACHE_DTYPES)),
    # SGLang's own chunk (None: the 8,192 assumed), a smaller one, and chunked prefill off
    sglang_chunked_prefill_size=st.sampled_from([None, 2048, CHUNKED_PREFILL_OFF]),
    lcm_padding_bound=st.sampled_from([0, 0.25, 1]),
    margin=st.integers(0, 3),
)


@settings(max_examples=80, deadline=None)
@given(
    profile=profiles(),
    budget=st.one_of(st.integers(1, 1 << 50), st.integers(1 << 30, 1 << 44)),
    context=st.one_of(st.none(), st.integers(1, 1 << 20)),
    opts=options,
)
def test_breakdown_adds_up_or_strategy_says_why(profile, budget, context, opts):
    results = compare(profile, budget_bytes=budget, context_tokens=context, options=opts)
    assert [r.strategy for r in results] == list(STRATEGIES)
    for r in results:
        if not r.applies:
            assert r.reason and r.breakdown == () and r.num_blocks is None
            continue
        assert [c for c, _ in r.breakdown] == list(CATEGORIES)
        assert all(b >= 0 for _, b in r.breakdown)
        assert sum(b for _, b in r.breakdown) == budget
        assert r.num_blocks >= 1
        if r.pool is not None:
            assert r.num_blocks * r.block_bytes <= budget
        if context is not None:
            assert r.max_concurrency is not None and r.max_concurrency >= 0
            fits = r.extras.get("workload_max_requests")
            if fits:
                assert covers(r.pool, Workload(fits, context, opts.max_batched_tokens,
                                               opts.margin))
        else:
            assert r.max_concurrency is None
        if profile.has_attention:
            assert r.capacity_tokens is not None and r.capacity_tokens >= 0


@settings(max_examples=40, deadline=None)
@given(profile=profiles(labels=("full_attention", "linear_attention")),
       budget=st.integers(1 << 20, 1 << 40), opts=options)
def test_capacity_agrees_with_concurrency_without_sliding_layers(profile, budget, opts):
    """Capacity convention (strategies.base): with no sliding layers, capacity_tokens is the
    longest context, in whole pages, at which max_concurrency is still at least 1."""
    assume(profile.has_attention)
    for name in ("flat", "per-component", "lcm"):
        r = run_strategy(name, profile, budget_bytes=budget, options=opts)
        if not r.applies or r.capacity_tokens == 0:
            continue
        at = run_strategy(name, profile, budget_bytes=budget, options=opts,
                          context_tokens=r.capacity_tokens)
        assert at.concurrency >= 1, name
        if r.capacity_tokens + r.block_size > MAX_TOKENS:  # no longer context to ask for (1 B
            continue  # a token in 1 TiB holds MAX_TOKENS)
        beyond = run_strategy(name, profile, budget_bytes=budget, options=opts,
                              context_tokens=r.capacity_tokens + r.block_size)
        assert beyond.concurrency < 1, name


@settings(max_examples=60, deadline=None)
@given(profile=profiles(), budget=st.integers(1 << 20, 1 << 40),
       block_size=st.sampled_from([1, 16, 64, 256]), alignment=st.sampled_from([None, 8, 64]))
def test_layout_and_compare_plan_our_layouts_alike(profile, budget, block_size, alignment):
    """The Layout page (analysis) and the Compare page (strategies) plan the same P, block
    bytes and blocks for packed slabs and for one tensor per component, or both refuse."""
    from flatkv.analysis import analyze

    opts = StrategyOptions(block_size=block_size, alignment=alignment)
    for planner, strategy in (("packed", "flat"), ("per-component", "per-component")):
        result = run_strategy(strategy, profile, budget_bytes=budget, options=opts)
        try:
            geo = analyze(profile.components(), block_size=block_size, alignment=alignment,
                          budget_bytes=budget, planner=planner).plan.geometry
        except ValueError:
            assert not result.applies, strategy
            continue
        assert result.applies, (strategy, result.reason)
        assert (result.block_size, result.block_bytes, result.num_blocks) == (
            geo.block_size, geo.block_bytes, geo.num_blocks), strategy


@settings(max_examples=80, deadline=None)
@given(profile=profiles(), budget=st.integers(1 << 30, 1 << 44), opts=options,
       hybrid_manager=st.booleans(), speculative=st.integers(0, 3))
def test_vllms_drawn_blocks_add_up_to_its_block(profile, budget, opts, hybrid_manager,
                                                speculative):
    """Layout draws vLLM's blocks from its result alone: every group's row is its pages end to
    end, each page its layer's parts and padding, and adds up to the block's bytes."""
    from dataclasses import replace

    from flatkv.app_data import vllm_block_segments
    opts = replace(opts, vllm_hybrid_manager=hybrid_manager, speculative_tokens=speculative)
    result = run_strategy("vllm", profile, budget_bytes=budget, context_tokens=None,
                          options=opts)
    assume(result.applies)
    rows: dict[str, list] = {}
    for segment in vllm_block_segments(result, profile):
        rows.setdefault(segment.slot_name, []).append(segment)
    # a row a group, in the result's order, each named as Layout names it (its kind, and its
    # index where vLLM cuts the kind into several groups), no two alike (rows' keys are
    # unique, so two groups named alike could not equal them)
    groups = result.extras["groups"]
    assert list(rows) == [pool_group_name(g["name"], g["kind"], mla=profile.mla)
                          for g in groups]
    # where each tensor's page ends in a block: pages of one size, or of each layer's own
    # (vLLM's one group of pages of two sizes, its hybrid manager off)
    size = result.extras["group_size"]
    pages = result.extras.get("layer_page_bytes", [result.extras["page_bytes"]] * size)
    ends = list(itertools.accumulate(pages))
    for segments in rows.values():
        assert segments[0].offset == 0 and segments[-1].end == result.block_bytes
        assert all(a.end == b.offset and a.nbytes > 0 for a, b in zip(segments, segments[1:]))
        # a page per tensor: no piece crosses from one tensor's page into the next
        assert all(bisect.bisect_right(ends, s.offset) == bisect.bisect_left(ends, s.end)
                   for s in segments)
    # every cache layer of the profile is drawn, in the groups of its kind
    drawn = {s.cache_layer for segs in rows.values() for s in segs if s.cache_layer is not None}
    assert drawn == set(range(len(profile.layer_types)))
    # the block a budget given in vLLM's blocks is counted in (the sidebar, --vllm-blocks)
    from flatkv.strategies.vllm import block_bytes
    assert block_bytes(profile, opts) == result.block_bytes


@settings(max_examples=80, deadline=None)
@given(profile=profiles(), budget=st.integers(1 << 30, 1 << 44), opts=options,
       page=st.sampled_from([1, 16, 64]), swa_pool=st.sampled_from([None, True, False]),
       context=st.integers(1, 1 << 20), dtype=st.sampled_from(["bfloat16", "float8_e4m3fn"]))
def test_sglangs_start_up_log_tells_its_own_pools(profile, budget, opts, page, swa_pool,
                                                   context, dtype):
    """SGLang's log lines read back as its figures: #tokens are its pools, max_mamba_cache_size
    its slots for requests, and its sizes the pools' bytes with a page a layer more (or the
    padding slot), each to the 0.005 GiB its two decimals round to."""
    import re
    from dataclasses import replace

    from flatkv.strategies.sglang import SPECULATIVE_RUNNING_REQUESTS, pool_layers, split_idle

    kv = profile.kv_bytes_per_slot
    if kv % 2 == 0 and kv:  # a model's K and V halves, as a spec reduces to
        profile = replace(profile, kv_dtype=dtype, kv_tensor_bytes=(kv // 2, kv // 2))
    opts = replace(opts, sglang_page_size=page, sglang_swa_pool=swa_pool)
    r = run_strategy("sglang", profile, budget_bytes=budget, context_tokens=context,
                     options=opts)
    assume(r.applies)
    if profile.has_attention:  # _resolve_max_num_reqs over its token pool, and state's cap
        tokens = r.capacity_tokens
        # from --max-running-requests where told, else 48 where its speculative hook resets
        # it, else from the context
        caps = [opts.sglang_max_running_requests if opts.sglang_max_running_requests else
                SPECULATIVE_RUNNING_REQUESTS if opts.speculative_tokens and not r.extras.get(
                    "speculative_not_modelled") else
                max(min(int(tokens / context * 512), 4096), 2048), tokens // 2]
        if "running_request_cap" in r.extras:
            caps.append(r.extras["running_request_cap"])
        assert r.extras["max_running_requests"] == min(caps)
    x, log = r.extras, r.extras.get("log_lines", [])
    gib = {}  # "name" -> GiB figures
    for line in log:
        gib[line.split(".")[0]] = [float(v) for v in re.findall(r"size: ([0-9.]+) ?GB", line)]
    # the Mamba line, but while drafting where the profile cannot tell the buffers' sizes
    state_logged = "state_slots" in x and (
        not x.get("sglang_draft_tokens") or "draft_buffers_allocated" in x)
    if state_logged:
        (mamba,) = [line for line in log if line.startswith("Mamba Cache")]
        assert mamba.startswith(
            f"Mamba Cache is allocated. max_mamba_cache_size: {x['request_state_slots']}, ")
        conv, ssm, *buffers = gib["Mamba Cache is allocated"]  # and the draft buffers'
        assert len(buffers) == 2 * ("draft_buffers_allocated" in x)
        assert abs(sum(buffers) - x.get("draft_buffers_allocated", 0) / 2**30) <= 0.01
        n_state = profile.count("linear_attention")
        conv_bytes = x["state_slots"] * n_state * profile.state_const_bytes["conv"]
        assert abs(conv - conv_bytes / 2**30) <= 0.005
        assert abs(conv + ssm - x["state_slots"] * x["state_slot_bytes"] / 2**30) <= 0.01
    kv_lines = [line for line in log if "KV Cache is allocated" in line]
    if not profile.kv_tensor_bytes or not x.get("kv_tokens"):
        assert not kv_lines
        return
    # one pool of every attention layer, or a hybrid SWA pool's full and sliding sub-pools
    n_full, n_swa = pool_layers(profile, opts)  # the kv-shared layers' too
    assert x["logged_pools"] == ["state"] * state_logged + ["kv"] + [
        "hybrid swa"] * bool(n_swa)
    # (name, tokens, layers, bytes a token a layer); a pool of one size (the hybrid manager
    # off or no SWA pool) keeps every attention layer's own bytes
    sliding = profile.kv_bytes_of("sliding_attention")
    pools = [("KV Cache", r.capacity_tokens, n_full, kv)] \
        if not n_swa else [
            ("Full KV Cache", r.capacity_tokens, n_full, kv),
            ("SWA KV Cache", x["swa_tokens"], n_swa,
             sliding if "sliding_attention" in profile.layer_types else kv)]
    # where the sliding layers' bytes differ, their K / V split is not known: no SWA line
    logged = [p for p in pools if p[3] == kv]
    assert len(kv_lines) == len(logged)
    for line, (name, tokens, layers, each) in zip(kv_lines, logged):
        assert line.startswith(f"{name} is allocated. dtype: torch.{dtype}, #tokens: {tokens}, ")
        k, v = gib[f"{name} is allocated"]
        assert abs(k + v - layers * (tokens + page) * each / 2**30) <= 0.01  # a page a layer
    # the pools' bytes: kv history, but for what the static split leaves idle at the requests
    # that run (a sub-pool that does not bind; nothing where none runs) and kv-shared layers'
    idle_kv = sum(nbytes for pool, nbytes in split_idle(r) if pool != "state pool")
    if r.concurrency < 1:
        assert idle_kv == 0
    idle_kv += x.get("kv_shared_pool_bytes", 0)
    assert r.bytes_of("kv_history") + idle_kv == sum(
        t * layers * each for _, t, layers, each in pools)
    if n_swa:  # its summary: K and V of both sub-pools, each a page a layer more
        usage = next(line for line in log if line.startswith("SWAKVPool mem usage: "))
        both = sum(layers * (tokens + page) * each for _, tokens, layers, each in pools)
        assert abs(float(usage.split()[3]) - both / 2**30) <= 0.005
        assert usage.endswith(f" GB, swa size: {x['swa_tokens']}, full size: "
                              f"{r.capacity_tokens}")


@given(need=st.integers(1, 1 << 44), numerator=st.integers(1, 999),
       denominator=st.integers(1, 1000))
def test_sglang_budget_for_a_state_pool_is_the_least_that_holds_it(need, numerator, denominator):
    # SGLang's state pool is budget x r / (1 + r) in floats (state_pool_bytes), monotone in
    # the budget; budget_for_state_pool is the least budget whose pool holds `need` bytes
    from fractions import Fraction

    from flatkv.strategies.sglang import budget_for_state_pool, state_pool_bytes

    r = Fraction(numerator, denominator)
    budget = budget_for_state_pool(need, r)
    assert state_pool_bytes(budget, r) >= need > state_pool_bytes(budget - 1, r)
    # within a few bytes of the exact ceil(need x (1 + r) / r), either way
    exact = -(-need * (r.numerator + r.denominator) // r.numerator)
    assert abs(budget - exact) <= 4


def test_sglang_budget_for_a_state_pool_steps_down_where_the_float_rounds_up():
    # 16,299,357,514,273 B at r = 3/1000: the exact least budget is
    # ceil(need x 1,003 / 3) = 5,449,418,528,938,607, but one byte less already gives a float
    # pool that rounds up to `need` (its ulp there is 2^-9 B; the exact pool falls 1/1,003 B
    # short), so SGLang's own arithmetic holds it a byte earlier
    from fractions import Fraction

    from flatkv.strategies.sglang import budget_for_state_pool, state_pool_bytes

    need, r = 16_299_357_514_273, Fraction(3, 1000)
    exact = 5_449_418_528_938_607
    assert exact == -(-need * 1_003 // 3) and (exact - 1) * 3 < need * 1_003
    assert state_pool_bytes(exact - 1, r) == need
    assert budget_for_state_pool(need, r) < exact


def _run_or_its_value_error(name, profile, budget, context, opts):
    """A strategy's result, or None where it raised a ValueError that names what to give: any
    other exception (KeyError, ZeroDivisionError, AssertionError, TypeError) fails the test."""
    try:
        return run_strategy(name, profile, budget_bytes=budget, context_tokens=context,
                            options=opts)
    except ValueError as error:
        message = str(error)
        assert len(message) > 20 and "\n" not in message and "give" in message, message
        return None


@settings(max_examples=80, deadline=None)
@given(profile=profiles(), budget=st.one_of(st.integers(1, 1 << 50), st.integers(1 << 30, 1 << 44)),
       context=st.one_of(st.none(), st.integers(1, 1 << 20)), opts=options)
def test_each_strategy_applies_says_why_or_raises_a_clear_value_error(profile, budget, context,
                                                                      opts):
    """With SGLang's told counts, drafted tokens and state layers alone drawn too, each
    strategy adds its breakdown up to the budget or says why it does not apply."""
    for name in STRATEGIES:
        r = _run_or_its_value_error(name, profile, budget, context, opts)
        if r is None:
            continue
        if not r.applies:
            assert r.reason and r.breakdown == (), name
            continue
        assert [c for c, _ in r.breakdown] == list(CATEGORIES), name
        assert all(b >= 0 for _, b in r.breakdown), name
        assert sum(b for _, b in r.breakdown) == budget, name


@settings(max_examples=100, deadline=None)
@given(profile=profiles(), budget=st.integers(1 << 20, 1 << 44),
       context=st.one_of(st.none(), st.integers(1, 1 << 20)), opts=options)
def test_sglangs_running_requests_and_told_state_slots(profile, budget, context, opts):
    """SGLang's logged max_running_requests is at most --max-running-requests where told,
    half its token pool, and with state its request slots // S; told --max-mamba-cache-size M,
    its state slots are M + 1 (MambaPool's padding slot), and with --disable-radix-cache and
    no M, told N + 1."""
    r = run_strategy("sglang", profile, budget_bytes=budget, context_tokens=context,
                     options=opts)
    assume(r.applies)
    x = r.extras
    if profile.has_state:
        if opts.sglang_max_mamba_cache_size is not None:
            assert x["state_slots"] == opts.sglang_max_mamba_cache_size + 1
        elif opts.sglang_disable_radix_cache and opts.sglang_max_running_requests is not None:
            # --disable-radix-cache: the told N's slots and the padding slot, whatever the budget
            assert x["state_slots"] == opts.sglang_max_running_requests + 1
        assert x["request_state_slots"] == x["state_slots"] - 1
        assert x["running_request_cap"] == (x["state_slots"] - 1) // x["slots_per_request"]
        assert x["running_request_cap"] >= 1
    running = x.get("max_running_requests")
    if running is None:  # derived from a context, or a token pool of context_len tokens
        assert context is None and (opts.sglang_max_running_requests is None
                                    or not profile.has_attention)
        return
    assert running >= 0
    told = opts.sglang_max_running_requests
    if told is not None:
        assert running <= told
    assert running <= r.capacity_tokens // 2 if profile.has_attention else (
        running <= x["kv_tokens"] // 2)
    if profile.has_state:
        assert running <= (x["state_slots"] - 1) // x["slots_per_request"]


@settings(max_examples=60, deadline=None)
@given(profile=profiles(), budget=st.integers(1 << 20, 1 << 36), opts=options,
       page=st.sampled_from([1, 16, 64]), below=st.integers(1, 1 << 20),
       probe=st.integers(1, 1 << 20))
def test_sglangs_longest_context_held_is_the_last_that_holds(profile, budget, opts, page, below,
                                                             probe):
    """SGLang's longest context under ``below`` holding one request (the Budget page's, by
    bisection where it has attention layers) holds one, no longer one under ``below`` does,
    and with attention layers every shorter one does (sizing.longest_context_held's argument);
    probed at the ends, about the answer, at pages' edges and at random."""
    from dataclasses import replace

    from flatkv.sizing import holds_requests, longest_context_held

    opts = replace(opts, sglang_page_size=page)

    def held(tokens: int) -> bool:
        return holds_requests(run_strategy("sglang", profile, budget_bytes=budget,
                                           context_tokens=tokens, options=opts), 1)

    longest = longest_context_held("sglang", profile, budget_bytes=budget, below=below,
                                   options=opts)
    assert 0 <= longest < below
    assert longest == 0 or held(longest)
    probes = {1, 2, page - 1, page, page + 1, longest - 1, longest + 1, below - 1,
              (below - 1) // page * page, probe % below}
    for tokens in sorted(t for t in probes if 1 <= t < below):
        if held(tokens):
            assert tokens <= longest, (tokens, longest)
        elif profile.has_attention:
            assert tokens > longest, (tokens, longest)
