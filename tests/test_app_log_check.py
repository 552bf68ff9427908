"""Compare's pasted engine log through streamlit's AppTest: the check of a vLLM or SGLang log
against the figures, and the settings it offers to take from the log. Expected figures are
derived by hand (SPEC.md section 1); helpers in tests/app_helpers.py."""

from __future__ import annotations

from app_helpers import assert_clean, open_app, open_falcon_mamba_config, shown, unescaped
from streamlit.testing.v1 import AppTest

from flatkv.presets import load_preset


def test_compare_checks_the_real_anchor_log_in_its_older_form():
    # vLLM 0.10.2's log of SPEC 3.1's anchor (tests/test_log_check.py's ANCHOR_LOG) at its
    # settings: its two-line KV cache size of 973,760 tokens (7,162 // 4 x 544) reads as
    # FlatKV's one line of 3,871,083 in that release's form, and agrees
    from test_log_check import ANCHOR_LOG

    at = open_app("app_pages/compare.py", {"model": "Qwen3-Next-80B-A3B", "tp": "2",
                                           "ctx": "262144", "gpu": "KV cache memory",
                                           "kv_mem": "44.59GiB"})
    at.text_area(key="compare.check_log").set_value(ANCHOR_LOG).run()
    assert_clean(at)
    assert [shown(s) for s in at.success] == [
        "vLLM: 4 of 5 lines are in the log and agree with it; 1 not in it."]
    rows = at.table[0].value
    assert list(rows["outcome"]) == [":green[same]"] * 3 + [":orange[not in the log]",
                                                             ":green[same]"]
    assert unescaped(rows["in the log"].iloc[-1]) == (
        "lines 6-7 (EngineCore_DP0 pid=1805889), 8-9 (EngineCore_DP0 pid=1805889), on two "
        "lines, its tokens as vLLM 0.19 and earlier count them, agree")
    # the row quotes the form the log has (973,760 tokens), not FlatKV's 3,871,083 on one line
    assert rows["FlatKV's line"].iloc[-1] == (
        "` GPU KV cache size: 973,760 tokens / Maximum concurrency for 262,144 tokens per "
        "request: 14.77x `")
    assert any("Other forms of a line are read too (vLLM's KV cache size on two lines, as "
               "older releases log it" in c.value for c in at.caption)


def test_a_pasted_log_is_kept_through_a_trip_to_another_page():
    # streamlit drops a widget's value on a run that does not draw it: Compare's log went
    # empty, its check with it, after a look at Layout; the session keeps the paste apart
    from test_log_check import ANCHOR_LOG

    at = open_app("app_pages/compare.py", {"model": "Qwen3-Next-80B-A3B", "tp": "2",
                                           "ctx": "262144", "gpu": "KV cache memory",
                                           "kv_mem": "44.59GiB"})
    at.text_area(key="compare.check_log").set_value(ANCHOR_LOG).run()
    verdict = ["vLLM: 4 of 5 lines are in the log and agree with it; 1 not in it."]
    assert [shown(s) for s in at.success] == verdict
    at.switch_page("app_pages/layout.py").run()
    assert_clean(at)
    at.switch_page("app_pages/compare.py").run()
    assert_clean(at)
    assert at.text_area(key="compare.check_log").value == ANCHOR_LOG
    assert [shown(s) for s in at.success] == verdict
    # emptied by hand, it stays empty
    at.text_area(key="compare.check_log").set_value("").run()
    at.switch_page("app_pages/layout.py").run()
    at.switch_page("app_pages/compare.py").run()
    assert at.text_area(key="compare.check_log").value == ""
    assert not at.success


def offers_after_pasting(at: AppTest, log: str) -> list[str]:
    """Compare's offers of a log's settings ("This log's run had ...") after ``log`` is pasted
    into its log check (no exception raised)."""
    at.text_area(key="compare.check_log").set_value(log).run()
    assert not at.exception
    return [shown(i) for i in at.info if "This log's run had" in shown(i)]


def as_sglang_log(lines: list[str]) -> str:
    """SGLang's start-up ``lines`` (FlatKV's, its elided figures given: max_prefill_tokens
    16384) as its TP0 logs them, a second apart."""
    return "\n".join(f"[2026-12-06 07:01:0{i} TP0] {line.replace('=...', '=16384')}"
                     for i, line in enumerate(lines))


def take_offer(at: AppTest) -> list[str]:
    """Compare after its "Use the log's settings" is clicked (no exception raised): the
    verdicts of the engines whose lines all agree."""
    at.button(key="compare.log_settings").click().run()
    assert not at.exception
    return [shown(s) for s in at.success]


def offer_taken(link: dict, log: str) -> tuple[str, list[str], dict]:
    """Compare at ``link`` with ``log`` pasted: its one offer of the log's settings, and once
    taken (no error shown) the verdicts that agree and the link it is at."""
    at = open_app("app_pages/compare.py", link)
    (offer,) = offers_after_pasting(at, log)
    agreed = take_offer(at)
    assert_clean(at)
    return offer, agreed, dict(at.query_params)


def test_compare_takes_an_sglang_logs_context_and_chunk_from_its_scheduler_line():
    # Llama-3.1-8B in 40 GiB of KV cache: SGLang's KV line is the budget's alone (327,680
    # tokens of 32 x 4,096 B); its scheduler line gives the run's context and chunk. A log of
    # a run at 8,192 tokens and a 2,048 chunk, checked at 4,096 tokens: the scheduler line
    # differs (context_len, the chunk, and max_running_requests: min(max(min(int(327,680 /
    # 4,096 x 512), 4,096), 2,048), 163,840) = 4,096 here, 20,480 -> 4,096 there too), so the
    # log's settings are offered, and taken, all agree
    from flatkv.strategies.sglang_log import scheduler_line

    kv = ("KV Cache is allocated. dtype: torch.bfloat16, #tokens: 327680, K size: 20.00 GB, "
          "V size: 20.00 GB")
    log = as_sglang_log([kv, scheduler_line(327_680, 2_048, 4_096, 8_192)
                         + ", available_gpu_mem=3.10 GB"])
    at = open_app("app_pages/compare.py", {"model": "Llama-3.1-8B", "ctx": "4096",
                                           "gpu": "KV cache memory", "kv_mem": "40GiB"})
    at.text_area(key="compare.check_log").set_value(log).run()
    assert not at.exception
    assert [shown(e) for e in at.error] == ["SGLang: 1 of 2 lines differs from the log, 1 agrees."]
    (offer,) = [shown(i) for i in at.info if "This log's run had" in shown(i)]
    assert offer.startswith("This log's run had 8,192 tokens a request and SGLang's prefill "
                            "chunk of 2,048 tokens: the figures here are at other settings")
    agreed = take_offer(at)
    assert_clean(at)
    assert (at.query_params["ctx"], at.query_params["sg_chunk"]) == ("8192", "2048")
    assert agreed == [
        "SGLang: both lines are in the log and agree with it."]
    # chunked prefill off in the log (-1): offered as off, and taken
    at.text_area(key="compare.check_log").set_value(
        log.replace("chunked_prefill_size=2048", "chunked_prefill_size=-1")).run()
    (offer,) = [shown(i) for i in at.info if "This log's run had" in shown(i)]
    assert offer.startswith("This log's run had SGLang's chunked prefill off: ")
    agreed = take_offer(at)
    assert at.query_params["sg_chunk"] == "off"
    assert agreed == [
        "SGLang: both lines are in the log and agree with it."]


def test_compare_takes_an_sglang_logs_page_size_from_its_server_args():
    # Llama-3.1-8B in 40 GB (40,000,000,000 B) of KV cache, 32 layers x 4,096 B a token =
    # 131,072 B: 40,000,000,000 // 131,072 = 305,175 tokens at page 1; a run at --page-size 64
    # keeps whole pages, 305,175 // 64 = 4,768 pages = 305,152 tokens (K size 32 x (305,152 +
    # 64) x 2,048 B = 18.63 GiB, as at page 1). Its server_args gives page_size 64: offered and
    # taken, both lines agree. Its mamba_track_interval (512) is not: no state layer tracks it
    from flatkv.strategies import StrategyOptions, run_strategy

    assert (40 * 10**9 // 131_072, 40 * 10**9 // 131_072 // 64 * 64) == (305_175, 305_152)
    r = run_strategy("sglang", load_preset("Llama-3.1-8B").profile(), budget_bytes=40 * 10**9,
                     context_tokens=4_096, options=StrategyOptions(sglang_page_size=64))
    assert "#tokens: 305152, K size: 18.63 GB" in r.extras["log_lines"][0]
    log = as_sglang_log(["server_args={'model_path': 'meta-llama/Llama-3.1-8B-Instruct', "
                         "'tp_size': 1, 'page_size': 64, 'mamba_track_interval': 512}",
                         *r.extras["log_lines"]])
    offer, agreed, taken = offer_taken({"model": "Llama-3.1-8B", "ctx": "4096",
                                        "gpu": "KV cache memory", "kv_mem": "40GB"}, log)
    assert offer == ("This log's run had SGLang's page size 64: the figures here are at other "
                     "settings, so its lines differ for that alone. Take its settings, then "
                     "read the check again.")
    assert taken["sg_page"] == "64" and "sg_track" not in taken
    assert agreed == ["SGLang: both lines are in the log and agree with it."]
    # Qwen3-Next-80B-A3B's, whose extra_buffer radix cache tracks state (920,704 tokens at
    # page 64, 920,754 at 1): the interval, which sizes nothing, is offered beside the page it
    # is checked against
    from test_log_check import PAGE_64_SERVER_ARGS, qwen3_next_sglang_lines_at_page_64

    log = as_sglang_log([PAGE_64_SERVER_ARGS, *qwen3_next_sglang_lines_at_page_64()])
    offer, agreed, taken = offer_taken({"model": "Qwen3-Next-80B-A3B", "ctx": "262144",
                                        "gpu": "KV cache memory", "kv_mem": "40GiB"}, log)
    assert offer.startswith("This log's run had SGLang's page size 64 and SGLang's mamba track "
                            "interval of 512 tokens: the figures here are at other settings")
    assert (taken["sg_page"], taken["sg_track"]) == ("64", "512")
    assert agreed == ["SGLang: all 4 lines are in the log and agree with it."]


def qwen3_next_offer_taken(lines: list[str], **link: str) -> tuple[str, dict]:
    """Compare at Qwen3-Next-80B-A3B, 40 GiB of KV cache and 32,768 tokens (and ``link``'s
    parameters) with SGLang's ``lines`` pasted as its log: its one offer of the log's
    settings, and the link once taken, where all 4 lines agree."""
    offer, agreed, taken = offer_taken({"model": "Qwen3-Next-80B-A3B", "ctx": "32768",
                                        "gpu": "KV cache memory", "kv_mem": "40GiB", **link},
                                       as_sglang_log(lines))
    assert agreed == ["SGLang: all 4 lines are in the log and agree with it."]
    return offer, taken


def test_compare_takes_an_sglang_logs_mamba_radix_cache_strategy_from_its_server_args():
    # Qwen3-Next-80B-A3B at 40 GiB and 32,768 tokens run with extra_buffer_lazy: the same 262
    # state slots and 920,754 tokens as auto, but 3 + 1 slots a running request, so
    # max_running_requests 262 // 4 = 65, not auto's 262 // 5 = 52 (test_log_check). Its
    # server_args gives the strategy: offered, taken (sg_strategy), and all 4 lines agree
    from test_log_check import LAZY_SERVER_ARGS, qwen3_next_sglang_lazy_lines

    offer, taken = qwen3_next_offer_taken([LAZY_SERVER_ARGS, *qwen3_next_sglang_lazy_lines()])
    assert offer == ("This log's run had SGLang's mamba radix cache strategy extra_buffer_lazy: "
                     "the figures here are at other settings, so its lines differ for that "
                     "alone. Take its settings, then read the check again.")
    assert taken["sg_strategy"] == "extra_buffer_lazy"


def test_compare_takes_an_sglang_logs_extra_buffer_told_from_its_server_args():
    # Qwen3-Next-80B-A3B at 40 GiB and 32,768 tokens run without overlap scheduling, with
    # --mamba-radix-cache-strategy extra_buffer: 3 + 1 slots a running request, 262 // 4 = 65,
    # where the page's auto runs no_buffer's 3, 262 // 3 = 87 (test_log_check). Its
    # server_args gives the strategy: offered, taken (sg_strategy), and all 4 lines agree
    from test_log_check import EXTRA_BUFFER_SERVER_ARGS, qwen3_next_sglang_extra_buffer_lines

    offer, taken = qwen3_next_offer_taken(
        [EXTRA_BUFFER_SERVER_ARGS, *qwen3_next_sglang_extra_buffer_lines()], sg_overlap="0")
    assert offer == ("This log's run had SGLang's mamba radix cache strategy extra_buffer: "
                     "the figures here are at other settings, so its lines differ for that "
                     "alone. Take its settings, then read the check again.")
    assert (taken["sg_strategy"], taken["sg_overlap"]) == ("extra_buffer", "0")


def test_compare_takes_an_sglang_logs_overlap_scheduling_off_from_its_server_args():
    # Qwen3-Next-80B-A3B at 40 GiB and 32,768 tokens run with --disable-overlap-schedule: its
    # auto radix cache picks no_buffer, 3 slots a running request, 262 // 3 = 87, where the
    # page's overlap gives extra_buffer's 3 + 2, 262 // 5 = 52 (test_log_check). Its
    # server_args logs overlap off and no_buffer: overlap off alone is offered (auto then
    # logs no_buffer, as the log), taken (sg_overlap 0, the strategy left auto), and all 4
    # lines agree
    from test_log_check import OVERLAP_OFF_SERVER_ARGS, qwen3_next_sglang_overlap_off_lines

    offer, taken = qwen3_next_offer_taken(
        [OVERLAP_OFF_SERVER_ARGS, *qwen3_next_sglang_overlap_off_lines()])
    assert offer == ("This log's run had SGLang's overlap scheduling off "
                     "(--disable-overlap-schedule): the figures here are at other settings, so "
                     "its lines differ for that alone. Take its settings, then read the check "
                     "again.")
    assert taken["sg_overlap"] == "0" and "sg_strategy" not in taken
    # a log of the defaults (52 running) checked with overlap off: overlap on is offered, and
    # taken (sg_overlap left out of the link: the default) all agree
    from test_log_check import EXTRA_BUFFER_SERVER_ARGS

    from flatkv.strategies import run_strategy

    default_lines = run_strategy("sglang", load_preset("Qwen3-Next-80B-A3B").profile(),
                                 budget_bytes=40 << 30, context_tokens=32_768
                                 ).extras["log_lines"]
    assert "max_running_requests=52," in default_lines[3]
    offer, taken = qwen3_next_offer_taken([EXTRA_BUFFER_SERVER_ARGS.replace(
        "'disable_overlap_schedule': True", "'disable_overlap_schedule': False"),
        *default_lines], sg_overlap="0")
    assert offer.startswith("This log's run had SGLang's overlap scheduling on: the figures")
    assert "sg_overlap" not in taken


def test_compare_offers_the_budget_that_sizes_an_sglang_logs_pools_at_its_state_slots():
    # Nemotron-H-8B's SGLang lines at 17,000,000,999 B and 32,768 tokens: 551,345 tokens
    # beside 77 request state slots (78 with the padding slot, of 102,137,856 B each); 4
    # attention layers x 8 KV heads x 128 x 2 x 2 B = 16,384 B a token. The log gives no
    # budget: the least with those slots and that pool is 78 x 102,137,856 + 551,345 x 16,384
    # = 16,999,989,248 B (a first budget of 551,345 tokens with 78 request slots lies past
    # it, tests/test_sizing.py), offered on pages at 40 GiB, and taken, all lines agree
    from flatkv.strategies import run_strategy

    own = run_strategy("sglang", load_preset("Nemotron-H-8B").profile(),
                       budget_bytes=17_000_000_999, context_tokens=32_768).extras["log_lines"]
    assert own[1].startswith("Mamba Cache is allocated. max_mamba_cache_size: 77,")
    assert own[3].startswith("max_total_num_tokens=551345, ")
    log = as_sglang_log(own)
    assert 78 * 102_137_856 + 551_345 * 16_384 == 16_999_989_248
    offer, agreed, taken = offer_taken({"model": "Nemotron-H-8B", "ctx": "32768",
                                        "gpu": "KV cache memory", "kv_mem": "40GiB"}, log)
    assert offer == ("This log's run had SGLang's token pool of 551,345 tokens beside 77 "
                     "request state slots (a rank with 16,999,989,248 B of KV cache memory "
                     "sizes its pools so): the figures here "
                     "are at other settings, so its lines differ for that alone. Take its "
                     "settings, then read the check again.")
    assert taken["kv_mem"] == "16999989248B"
    assert agreed == ["SGLang: all 4 lines are in the log and agree with it."]


def test_compare_offers_the_budget_of_an_sglang_log_of_state_layers_alone_by_its_slots():
    # Nemotron-H-8B's 24 Mamba2 layers alone: SGLang logs the context as its tokens at any
    # budget, so its 98 request slots (state slots of 24 x (61,440 + 4,194,304) B, its float32
    # ssm) name the budget: the least that gives them, 98 where a byte less gives 97
    from dataclasses import replace

    from flatkv.app_model import pack_spec, spec_to_json
    from flatkv.strategies import run_strategy

    nemotron = load_preset("Nemotron-H-8B")
    mamba = replace(nemotron, name="Mamba2 alone",
                    layers=tuple(layer for layer in nemotron.layers if layer.kind == "mamba2"))
    own = run_strategy("sglang", mamba.profile(), budget_bytes=20 << 30,
                       context_tokens=8_192).extras["log_lines"]
    assert own[1].startswith("Mamba Cache is allocated. max_mamba_cache_size: 98,")
    link = {"model": "spec", "spec": pack_spec(spec_to_json(mamba)), "ctx": "8192",
            "gpu": "KV cache memory", "kv_mem": "40GiB"}
    offer, agreed, taken = offer_taken(link, as_sglang_log(own))
    budget = int(taken["kv_mem"].removesuffix("B"))
    slots = [run_strategy("sglang", mamba.profile(), budget_bytes=b, context_tokens=8_192
                          ).extras["request_state_slots"] for b in (budget - 1, budget)]
    assert slots == [97, 98] and budget <= 20 << 30
    assert offer == ("This log's run had SGLang's 98 request state slots (a rank with "
                     f"{budget:,} B of KV cache memory sizes its pools so): the figures here "
                     "are at other settings, so its lines differ for that alone. Take its "
                     "settings, then read the check again.")
    assert agreed == ["SGLang: all 3 lines are in the log and agree with it."]


def test_an_sglang_budget_taken_on_gpu_pages_keeps_the_gpus_chunk():
    # Qwen3-Next-80B-A3B at TP 2 on B200 pages, whose chunk SGLang picks by its memory
    # (16,384): a log of its lines at 170e9 B, 7,282,539 tokens beside 2,083 request slots,
    # 2,084 x 38,633,472 + 7,282,539 x 12,288 = 169,999,994,880 B. Its budget takes the pages
    # off the B200 (to KV cache memory, whose chunk is the 8,192 assumed), so the B200's chunk
    # is kept as told, and taken all 4 lines agree (its scheduler line differed in the chunk)
    from flatkv.app_model import profile_for
    from flatkv.strategies import StrategyOptions, run_strategy

    lines = run_strategy("sglang", profile_for("Qwen3-Next-80B-A3B", None, 2),
                         budget_bytes=170 * 10**9, context_tokens=262_144,
                         options=StrategyOptions(sglang_chunked_prefill_size=16_384)
                         ).extras["log_lines"]
    log = as_sglang_log(lines)
    assert 2_084 * 38_633_472 + 7_282_539 * 12_288 == 169_999_994_880
    offer, agreed, taken = offer_taken({"model": "Qwen3-Next-80B-A3B", "tp": "2",
                                        "gpu": "B200 192GB"}, log)
    assert offer == ("This log's run had SGLang's token pool of 7,282,539 tokens beside 2,083 "
                     "request state slots (a rank with 169,999,994,880 B of KV cache memory "
                     "sizes its pools so) and "
                     "SGLang's prefill chunk of 16,384 tokens (the B200 192GB's, kept): the "
                     "figures here are at other settings, so its lines differ for that alone. "
                     "Take its settings, then read the check again.")
    assert (taken["kv_mem"], taken["sg_chunk"]) == ("169999994880B", "16384")
    assert agreed == ["SGLang: all 4 lines are in the log and agree with it."]


def test_compare_offers_only_the_log_settings_the_pages_lack_and_says_when_they_are_not_all():
    # falcon-mamba-7b's vLLM log (2,155 blocks at 40 GiB, 2,048 tokens: tests/test_cli.py) on
    # pages at 40 GiB of KV cache memory but 4,096 tokens: the blocks vLLM fits are the same
    # (40 GiB // 311,296 // 64 = 2,155), so only the context is offered, and taken it is
    # all that differed
    from test_cli import FALCON_VLLM_LOG

    from flatkv.strategies import StrategyOptions, run_strategy

    link = {**open_falcon_mamba_config().query_params, "gpu": "KV cache memory",
            "kv_mem": "40GiB", "ctx": "4096"}
    at = open_app("app_pages/compare.py", link)
    (offer,) = offers_after_pasting(at, FALCON_VLLM_LOG)
    assert offer == ("This log's run had 2,048 tokens a request: the figures here are at other "
                     "settings, so its lines differ for that alone. Take its settings, then "
                     "read the check again.")
    # SGLang's lines of Llama-3.1-8B at 8,192 tokens, whose token pool is 300,000 tokens (a
    # budget these pages do not have, which its log does not give): the budget that sizes the
    # pool so is offered beside the context, 300,000 tokens x 32 layers x 2 x 8 heads x 128 x
    # 2 B = 39,321,600,000 B (K and V 300,000 x 65,536 B = 18.31 GiB each), and taken, both
    # lines agree
    from flatkv.strategies.sglang_log import scheduler_line

    assert (300_000 * 32 * 2 * 8 * 128 * 2, f"{300_000 * 65_536 / 2**30:.2f}") == (
        39_321_600_000, "18.31")
    kv = ("KV Cache is allocated. dtype: torch.bfloat16, #tokens: 300000, K size: 18.31 GB, "
          "V size: 18.31 GB")
    log = as_sglang_log([kv, scheduler_line(300_000, 8_192, 4_096, 8_192)])
    offer, agreed, taken = offer_taken({"model": "Llama-3.1-8B", "ctx": "4096",
                                        "gpu": "KV cache memory", "kv_mem": "40GiB"}, log)
    assert offer == ("This log's run had SGLang's token pool of 300,000 tokens (a rank with "
                     "39,321,600,000 B of KV cache memory sizes its pools so) and 8,192 tokens a "
                     "request: the figures here are at other settings, so its lines differ for "
                     "that alone. Take its settings, then read the check again.")
    assert (taken["kv_mem"], taken["ctx"]) == ("37500MiB", "8192")  # exact
    assert agreed == ["SGLang: both lines are in the log and agree with it."]
    # the same log of a model of half the KV heads (K and V 9.16 GB): taken, its KV line
    # would still differ, and the offer says so
    half = log.replace("18.31 GB", "9.16 GB")
    at = open_app("app_pages/compare.py", {"model": "Llama-3.1-8B", "ctx": "4096",
                                           "gpu": "KV cache memory", "kv_mem": "40GiB"})
    (offer,) = offers_after_pasting(at, half)
    assert offer == ("This log's run had SGLang's token pool of 300,000 tokens (a rank with "
                     "39,321,600,000 B of KV cache memory sizes its pools so) and 8,192 tokens a "
                     "request: take them, and 1 line would still differ, so other settings "
                     "differ too (an engine release's defaults, the TP, attention DP, the "
                     "weights).")
    # a chunk the pages cannot run (1,000 at page 64: SGLang refuses a chunk of part pages)
    # would leave no line of SGLang's to agree: nothing is offered
    paged = open_app("app_pages/compare.py", {"model": "Llama-3.1-8B", "ctx": "4096",
                                              "gpu": "KV cache memory", "kv_mem": "40GiB",
                                              "sg_page": "64"})
    own = run_strategy("sglang", load_preset("Llama-3.1-8B").profile(), budget_bytes=40 << 30,
                       context_tokens=4_096,
                       options=StrategyOptions(sglang_page_size=64)).extras["log_lines"]
    refused = "\n".join(f"[2026-12-06 07:01:0{i} TP0] {line}" for i, line in enumerate(
        [own[0], own[1].replace("=...", "=16384").replace("chunked_prefill_size=8192",
                                                         "chunked_prefill_size=1000")]))
    paged.text_area(key="compare.check_log").set_value(refused).run()
    assert [shown(e) for e in paged.error] == [
        "SGLang: 1 of 2 lines differs from the log, 1 agrees."]
    assert not [i for i in paged.info if "This log's run had" in shown(i)]
    # a vLLM 0.34 log of gpt-oss-20b run with its defaults on an H100 80GB (0.9: 71.68 GiB),
    # blocks of 64 tokens in two groups of 12 layers, 64 x 2,048 x 12 = 1,572,864 B a block:
    # 76,968,728,985 // 1,572,864 = 48,935, where the pages keep 0.19's (blocks of 16): its
    # budget is the pages' own, so only 0.34's defaults are offered, and taken, its lines agree
    vllm_034 = "\n".join(f"(EngineCore_DP0 pid=4123) INFO 12-06 07:00:0{i} [x.py:1] {line}"
                         for i, line in enumerate((
        "Available KV cache memory: 71.68 GiB",
        "Memory after warmup: 74.21 GiB free, 2.50 GiB committed to the KV cache, 1.12 GiB "
        "kept for transient activations (0.98 GiB allocated at peak, 0.14 GiB of torch "
        "reservation growth); 48935 KV cache blocks (71.68 GiB) fit within the requested "
        "71.68 GiB. Torch may reserve up to 4.61 GiB.",
        "GPU KV cache size: 2,780,237 tokens, Maximum concurrency for 131,072 tokens per "
        "request: 21.21x")))
    at = open_app("app_pages/compare.py", {"model": "gpt-oss-20b"})
    at.text_area(key="compare.check_log").set_value(vllm_034).run()
    assert [shown(e) for e in at.error] == ["vLLM: 2 of 3 lines differ from the log, 1 agrees."]
    (offer,) = [shown(i) for i in at.info if "This log's run had" in shown(i)]
    assert offer == ("This log's run had vLLM 0.34's defaults: the figures here are at other "
                     "settings, so its lines differ for that alone. Take its settings, then "
                     "read the check again.")
    agreed = take_offer(at)
    assert (at.query_params["block"], at.query_params["v_async"]) == ("64", "1")
    assert agreed == [
        "vLLM: all 3 lines are in the log and agree with it."]


def test_compare_takes_a_logs_tp_from_its_settings_line_or_its_ranks():
    # SPEC's anchor log (vLLM 0.10.2, Qwen3-Next-80B-A3B at TP 2, 44.59 GiB, 262,144 tokens:
    # tests/test_log_check.py) with its engine config line, on pages at TP 1 and the default
    # GPU: its TP and Available memory are offered, and taken, its lines agree (0.34's blocks
    # line is not in a 0.10 log)
    from test_log_check import ANCHOR_LOG

    config = ("(EngineCore_DP0 pid=1805889) INFO 10-23 15:10:30 [core.py:77] Initializing a V1 "
              "LLM engine (v0.10.2) with config: model='Qwen/Qwen3-Next-80B-A3B-Instruct', "
              "max_seq_len=262144, tensor_parallel_size=2, pipeline_parallel_size=1")
    # without the config line its workers' prefixes, Worker_TP0 and Worker_TP1, give TP 2:
    # offered and taken alike (the offer used to leave the TP, and a line still differed)
    assert "(Worker_TP1 pid=" in ANCHOR_LOG and "tensor_parallel_size" not in ANCHOR_LOG
    for log in (config + "\n" + ANCHOR_LOG, ANCHOR_LOG):
        offer, agreed, taken = offer_taken({"model": "Qwen3-Next-80B-A3B"}, log)
        assert offer.startswith("This log's run had TP 2 and 44.59 GiB of KV cache memory a "
                                "rank (its \"Available KV cache memory\" line): the figures "
                                "here are at other settings")
        assert (taken["tp"], taken["kv_mem"]) == ("2", "44.59GiB")
        assert agreed == ["vLLM: 4 of 5 lines are in the log and agree with it; 1 not in it."]


def test_compare_takes_an_available_line_in_gb_as_its_budget_exactly():
    # SPEC's anchor log (its ranks give TP 2) with its Available lines in GB, as a build
    # printing GB (10**9 B) would: the 44.59 GiB budget is 47.88 GB there, rounded to 0.01 GB,
    # so the budget taken is the figure as printed, 47,880,000,000 B (its link's 47.88GB).
    # There FlatKV's Available line prints 44.59 GiB (47,880,000,000 / 2**30 = 44.5917) and
    # differs from the log's in its unit alone, as the offer says; the KV cache size agrees
    # (7,162 blocks at 47,880,000,000 B as at 44.59 GiB: 973,760 tokens in 0.10's form)
    from test_log_check import ANCHOR_LOG

    at = open_app("app_pages/compare.py", {"model": "Qwen3-Next-80B-A3B"})
    (offer,) = offers_after_pasting(at, ANCHOR_LOG.replace("44.59 GiB", "47.88 GB"))
    assert offer == ("This log's run had TP 2 and 47.88 GB of KV cache memory a rank (its "
                     "\"Available KV cache memory\" line, which prints GB to 0.01 GB: the "
                     "budget is the figure as printed, 47,880,000,000 B, and FlatKV's line, in "
                     "GiB, differs in its unit alone): the figures here are at other settings, "
                     "so its lines differ for that alone. Take its settings, then read the "
                     "check again.")
    take_offer(at)
    assert (at.query_params["tp"], at.query_params["kv_mem"]) == ("2", "47.88GB")
    assert [shown(e) for e in at.error] == [
        "vLLM: 1 of 5 lines differs from the log, 3 agree; 1 not in the log."]
    rows = at.table[0].value
    assert rows["in the log"][2].endswith(
        "47\\.88 GB is 44\\.59 GiB\\, as FlatKV\\'s\\)")
    # taken, its budget is the settings' own: nothing more is offered
    assert not [shown(i) for i in at.info if "This log's run had" in shown(i)]


def test_compare_takes_the_mamba_cache_mode_a_vllm_log_says_it_set():
    # Qwen3-Next-80B-A3B on the default pages (mamba cache mode none): a vLLM 0.28+ log of a
    # run with prefix caching says it set align, and its lines are FlatKV's at align; the mode
    # is offered, and taken, they agree
    from dataclasses import replace

    from flatkv.app_state import AppState
    from flatkv.strategies import run_strategy

    aligned = replace(AppState(model="Qwen3-Next-80B-A3B"), mamba_cache_mode="align")
    vllm = run_strategy("vllm", aligned.profile(), budget_bytes=aligned.budget().cache_bytes,
                        context_tokens=aligned.context_length(),
                        options=aligned.strategy_options())
    prefix = "(EngineCore_DP0 pid=9) INFO 12-06 07:00:00 [x.py:1] "
    log = "\n".join(prefix + line.replace("...", "0") for line in (
        "Mamba cache mode is set to 'align' for Qwen3NextForCausalLM by default when prefix "
        "caching is enabled", *vllm.extras["log_lines"]))
    at = open_app("app_pages/compare.py", {"model": "Qwen3-Next-80B-A3B"})
    (offer,) = offers_after_pasting(at, log)
    assert offer.startswith("This log's run had vLLM's mamba cache mode align: the figures "
                            "here are at other settings")
    agreed = take_offer(at)
    assert at.query_params["mamba"] == "align"
    n = len(vllm.extras["log_lines"])
    assert agreed == [
        f"vLLM: all {n} lines are in the log and agree with it."]


def test_compare_takes_a_logs_attention_dp_from_its_server_args():
    # DeepSeek-V3 at TP 8 with attention DP 8 in 40 GiB of KV cache memory: a group's pool is
    # the same 611,191 tokens (an MLA latent is whole at any TP), its chunk 8,192 // 8 = 1,024
    # and the scheduler line says so; pasted on pages without attention DP, D is offered (not
    # a chunk of 1,024), and taken, both lines agree
    from flatkv.strategies import StrategyOptions, run_strategy

    grouped = run_strategy("sglang", load_preset("DeepSeek-V3").with_options(tp=8).profile(),
                           budget_bytes=40 << 30, context_tokens=163_840,
                           options=StrategyOptions(sglang_attn_dp_size=8,
                                                   sglang_chunked_prefill_size=8_192))
    assert ", chunked_prefill_size=1024, " in grouped.extras["scheduler_line"]
    log = "\n".join(f"[2026-12-06 07:00:0{i} DP0 TP0 EP0] {line}" for i, line in enumerate((
        "server_args={'tp_size': 8, 'attn_dp_size': 8, 'dp_size': 1}",
        *(line.replace("=...", "=16384") for line in grouped.extras["log_lines"]))))
    at = open_app("app_pages/compare.py", {"model": "DeepSeek-V3", "tp": "8",
                                           "gpu": "KV cache memory", "kv_mem": "40GiB"})
    (offer,) = offers_after_pasting(at, log)
    assert offer.startswith("This log's run had SGLang's attention DP 8: the figures here are "
                            "at other settings")
    agreed = take_offer(at)
    assert at.query_params["sg_dp"] == "8" and "sg_chunk" not in at.query_params
    assert agreed == [
        "SGLang: both lines are in the log and agree with it."]


def test_compare_takes_a_groups_chunk_times_its_attention_dp():
    # gpt-oss-20b at TP 2, attention DP 2, 40 GiB: SGLang logs a group's chunk, 8,192 // 2 =
    # 4,096 at its own 8,192; a log of 4,096 there agrees, and one of 2,048 a group was run
    # with 4,096 told, which the offer takes (not 2,048, which FlatKV would halve again)
    from flatkv.strategies import StrategyOptions, run_strategy

    link = {"model": "gpt-oss-20b", "tp": "2", "sg_dp": "2", "gpu": "KV cache memory",
            "kv_mem": "40GiB"}
    at = open_app("app_pages/compare.py", link)
    sglang = run_strategy("sglang", load_preset("gpt-oss-20b").with_options(tp=2).profile(),
                          budget_bytes=40 << 30, context_tokens=131_072,
                          options=StrategyOptions(sglang_attn_dp_size=2,
                                                  sglang_chunked_prefill_size=8_192))
    scheduler = sglang.extras["scheduler_line"]
    assert ", chunked_prefill_size=4096, " in scheduler
    log = "[2026-12-06 07:01:09 TP0] " + scheduler.replace("=...", "=16384").replace(
        "chunked_prefill_size=4096", "chunked_prefill_size=2048")
    (offer,) = offers_after_pasting(at, log)
    assert offer.startswith("This log's run had SGLang's prefill chunk of 4,096 tokens (2,048 a "
                            "group of 2): the figures here are at other settings")
    agreed = take_offer(at)
    assert at.query_params["sg_chunk"] == "4096"
    assert agreed == [
        f"SGLang: 1 of {len(sglang.extras['log_lines'])} lines are in the log and agree with "
        f"it; {len(sglang.extras['log_lines']) - 1} not in it."]


def test_compare_checks_a_pasted_engine_log():
    # falcon-mamba-7b in 40 GiB at 2,048 tokens: vLLM's three lines, derived by hand in
    # tests/test_cli.py (2,155 blocks, 4,413,440 tokens), pasted as a prefixed vLLM log
    from test_cli import FALCON_VLLM_LOG

    link = {**open_falcon_mamba_config().query_params, "gpu": "KV cache memory",
            "kv_mem": "40GiB"}
    at = open_app("app_pages/compare.py", link)
    area = at.text_area(key="compare.check_log")
    # nothing pasted: the area alone, no verdict or table
    assert area.value == "" and not at.success and not at.table and not at.warning
    area.set_value(FALCON_VLLM_LOG).run()
    assert_clean(at)
    (verdict,) = [shown(s) for s in at.success]
    assert verdict == "vLLM: all 3 lines are in the log and agree with it."
    (table,) = at.table
    rows = table.value
    assert list(rows["outcome"]) == [":green[same]"] * 3
    # FlatKV's lines as code, as in a log (Markdown showed ">=" as a "≥")
    assert rows["FlatKV's line"][0] == "` Available KV cache memory: 40.0 GiB `"
    # SGLang's lines are not in this log: no table of them, no noise
    assert "compare.check_log" not in str(dict(at.query_params))  # the link stays short
    # one block more in the log: the verdict is an error and the row names the figure
    at.text_area(key="compare.check_log").set_value(
        FALCON_VLLM_LOG.replace("2155 KV", "2156 KV")).run()
    assert [shown(e) for e in at.error] == ["vLLM: 1 of 3 lines differs from the log, 2 agree."]
    detail = [unescaped(v) for v in at.table[0].value["in the log"]]
    assert detail[1] == "line 2 (EngineCore_DP0 pid=812): KV cache blocks: FlatKV 2155, log 2156"
    # the pages at 30 GiB: every figure differs for that alone, so the log's run is offered
    # (its 2,155 blocks after warm-up and its 2,048 tokens); taken, the blocks line and the
    # size line agree again, and the Available line (vLLM's estimate before warm-up, which the
    # blocks do not give back: 2,155 x 311,296 x 64 B is 39.99 GiB) is found, not compared
    at.text_area(key="compare.check_log").set_value(FALCON_VLLM_LOG).run()
    assert not [i for i in at.info if "This log's run had" in shown(i)]  # all agree: no offer
    at30 = open_app("app_pages/compare.py", {**link, "kv_mem": "30GiB"})
    (offer,) = offers_after_pasting(at30, FALCON_VLLM_LOG)
    assert offer.startswith("This log's run had 2,155 vLLM KV cache blocks a rank (fit after "
                            "warm-up): the figures here are at other settings")
    agreed = take_offer(at30)
    assert_clean(at30)
    assert (at30.query_params["gpu"], at30.query_params["kv_blocks"]) == (
        "vLLM KV cache blocks", "2155")
    assert agreed == [
        "vLLM: all 3 lines are in the log and agree with it."]
    assert at30.table[0].value["FlatKV's line"][0] == "` Available KV cache memory: ... GiB `"
    # an SGLang log: vLLM's lines say so, SGLang's (its Mamba line of 553 request slots, 1.62 /
    # 17.31 GB: tests/test_log_check.py derives them; its scheduler's line: a token pool of no
    # layers of context_len 2,048 tokens, 553 // 3 = 184 running, the 8,192 chunk assumed
    # where the GPU is not told) are checked; its cap warning is not pasted
    sglang = ("[2026-12-06 07:01:02 TP0] Mamba Cache is allocated. max_mamba_cache_size: 553, "
              "conv_state size: 1.62GB, ssm_state size: 17.31GB\n"
              "[2026-12-06 07:01:09 TP0] max_total_num_tokens=2048, chunked_prefill_size=8192, "
              "max_prefill_tokens=16384, max_running_requests=184, context_len=2048, "
              "available_gpu_mem=10.00 GB")
    at.text_area(key="compare.check_log").set_value(sglang).run()
    assert_clean(at)
    assert [shown(s) for s in at.success] == [
        "SGLang: 2 of 3 lines are in the log and agree with it; 1 not in it."]
    # bad input: an error that names the problem, no traceback
    for bad, said in (("\x00" * 10, "The log holds a NUL character (at character 0)"),
                      ("x" * 1_000_001, "The log is 1,000,001 characters, over the 1,000,000 "
                       "this check reads")):
        at.text_area(key="compare.check_log").set_value(bad).run()
        assert not at.exception and not at.table
        (error,) = [shown(e) for e in at.error]
        assert error.startswith(said)


def test_compare_offers_sglang_on_a_blackwell_for_a_b200_log_of_deepseek_v32():
    # DeepSeek-V3.2's SGLang lines on a B200 in 40 GiB (tests/test_log_check.py: 994,432
    # tokens of 61 x (576 + 132) B in float8_e4m3fn, chunk 16,384) pasted on pages whose
    # budget names no preset: checked there (a Hopper's bfloat16, 548,352 tokens) both lines
    # differ; the offer names the Blackwell beside the chunk, and taken, both agree
    from test_log_check import deepseek_v32_b200_sglang_lines

    log = as_sglang_log(deepseek_v32_b200_sglang_lines())
    link = {"model": "DeepSeek-V3.2", "gpu": "KV cache memory", "kv_mem": "40GiB"}
    at = open_app("app_pages/compare.py", link)
    at.text_area(key="compare.check_log").set_value(log).run()
    assert [shown(e) for e in at.error] == ["SGLang: both lines differ from the log."]
    offer, agreed, taken = offer_taken(link, log)
    assert offer == ("This log's run had SGLang on a Blackwell GPU (a B200: DeepSeek's sparse "
                     "attention in fp8) and SGLang's prefill chunk of 16,384 tokens: the figures "
                     "here are at other settings, so its lines differ for that alone. Take its "
                     "settings, then read the check again.")
    assert taken == {"model": "DeepSeek-V3.2", "gpu": "KV cache memory", "gpu_arch": "blackwell",
                     "sg_chunk": "16384"}  # 40 GiB, the KV cache memory's default, kept
    assert agreed == ["SGLang: both lines are in the log and agree with it."]
    # on H100 pages, with the log's own budget (994,432 x 61 x 708 B), which leaves the preset
    offer, agreed, taken = offer_taken({"model": "DeepSeek-V3.2", "gpu": "H100 80GB"}, log)
    assert offer.startswith("This log's run had SGLang on a Blackwell GPU (a B200: DeepSeek's "
                            "sparse attention in fp8), SGLang's token pool of 994,432 tokens (a "
                            "rank with 42,947,529,216 B of KV cache memory sizes its pools so)")
    assert (taken["gpu"], taken["kv_mem"], taken["gpu_arch"]) == (
        "KV cache memory", "42947529216B", "blackwell")
    assert agreed == ["SGLang: both lines are in the log and agree with it."]


def test_a_logs_budget_off_an_a100_preset_keeps_its_ampere(tmp_path):
    # DeepSeek-V3 at TP 8 in fp8 on the A100 80GB, 90 GB of weights, 32,768 tokens: its
    # SGLang log of 1,870,410 tokens (tests/test_cli.py's deepseek_v3_sglang_log) offers
    # 1,870,410 x 61 x 576 = 65,718,725,760 B of KV cache memory, which names no GPU: the
    # offer sets the GPU architecture to the preset's Ampere (it set none: vLLM's column took
    # a Hopper, 116,900 blocks at P 16, where on the A100 (SM 8.0) it won't start an fp8 MLA
    # cache, and a sentence said so), so taken, vLLM still refuses; bfloat16 starts there, and
    # there the Ampere moves no figure from a Hopper's: none is set, as the CLI's offer names
    # no --gpu-arch (test_cli's test_compare_check_log_off_an_a100_preset_keeps_its_ampere)
    from test_cli import deepseek_v3_sglang_log

    from flatkv.app_model import pack_spec, spec_to_json

    def offer(kv_dtype: str) -> tuple[str, AppTest]:
        spec = load_preset("DeepSeek-V3").with_options(kv_dtype=kv_dtype)
        link = {"model": "spec", "spec": pack_spec(spec_to_json(spec)), "tp": "8",
                "gpu": "A100 80GB", "weights": "90GB", "ctx": "32768"}
        at = open_app("app_pages/compare.py", link)
        (text,) = offers_after_pasting(at, deepseek_v3_sglang_log(tmp_path, kv_dtype).read_text())
        take_offer(at)
        arch = "ampere" if kv_dtype == "fp8" else ""
        assert (at.query_params["gpu"], at.query_params["kv_mem"],
                at.query_params.get("gpu_arch", ""), at.selectbox(key="w.gpu_arch").value) == (
            "KV cache memory", "65718725760B", arch, arch)
        return text, at

    head = ("This log's run had SGLang's token pool of {} tokens (a rank with 65,718,725,760 B "
            "of KV cache memory sizes its pools so): the figures here are at other settings, "
            "so its lines differ for that alone. Take its settings, then read the check again.")
    text, at = offer("fp8")
    assert text == head.format("1,870,410")
    refused = "vLLM refuses to start: on SM 8.0 (A100)"
    assert [m for m in [*at.warning, *at.caption, *at.markdown] if refused in shown(m)]
    text, at = offer("bfloat16")
    assert text == head.format("935,205")
    assert not [m for m in [*at.warning, *at.caption, *at.markdown] if refused in shown(m)]


def test_compare_says_a_log_of_an_engine_that_wont_start_here_is_from_elsewhere(tmp_path):
    # DeepSeek-V3.2's vLLM log from an H100 (tests/test_cli.py's deepseek_v32_vllm_log) pasted
    # at the A100 80GB (SM 8.0), where vLLM has no sparse MLA backend: not "This log is vLLM's,
    # not SGLang's: check it against vLLM's lines", as vLLM's column has none, but vLLM's
    # refusal and that the log's run was elsewhere; at 40 GiB of KV cache memory it agrees
    from test_cli import deepseek_v32_vllm_log

    log = deepseek_v32_vllm_log(tmp_path).read_text()
    at = open_app("app_pages/compare.py", {"model": "DeepSeek-V3.2", "gpu": "A100 80GB"})
    at.text_area(key="compare.check_log").set_value(log).run()
    assert_clean(at)
    (warning,) = [shown(w) for w in at.warning if "log" in shown(w)]
    assert warning.startswith("This log is vLLM's, but here vLLM refuses to start: on SM 8.0 "
                              "(A100) it has no sparse MLA backend for DeepSeek's sparse "
                              "attention (its indexer), in any KV dtype: ")
    assert warning.endswith("pick a GPU of SM 9.0 or 10.0 (H100, H200, B200); the log's run "
                            "was on another GPU or at other settings.")
    at = open_app("app_pages/compare.py", {"model": "DeepSeek-V3.2", "gpu": "KV cache memory",
                                           "kv_mem": "40GiB"})
    at.text_area(key="compare.check_log").set_value(log).run()
    assert [shown(s) for s in at.success] == ["vLLM: all 3 lines are in the log and agree with it."]


def test_the_gpu_architecture_select_shows_where_the_budget_names_no_gpu_preset():
    # "GPU architecture" in the sidebar on KV cache memory (and Custom, vLLM's blocks), not on
    # a preset, which says it itself; not said by default (figures as on a Hopper); blackwell
    # picked,
    # the link carries gpu_arch=blackwell and SGLang's figures are the B200's layout (994,432
    # tokens in 40 GiB, 61 x 708 B), and the link opens the same view again
    at = open_app("app_pages/compare.py", {"model": "DeepSeek-V3.2", "gpu": "H100 80GB"})
    assert not [c for c in at.selectbox if c.key == "w.gpu_arch"]
    link = {"model": "DeepSeek-V3.2", "gpu": "KV cache memory", "kv_mem": "40GiB"}
    at = open_app("app_pages/compare.py", link)
    (select,) = [c for c in at.selectbox if c.key == "w.gpu_arch"]
    assert select.label == "GPU architecture" and select.value == ""
    assert select.options == ["not said (figures as on a Hopper)", "ampere (SM 8.0: A100)",
                              "ada (SM 8.9: L40S, RTX 4090)", "hopper (SM 9.0: H100, H200)",
                              "blackwell (SM 10.0: B200)"]
    select.set_value("blackwell").run()
    assert_clean(at)
    assert at.query_params["gpu_arch"] == "blackwell"
    again = open_app("app_pages/compare.py", {**link, "gpu_arch": "blackwell"})
    assert [c.value for c in again.selectbox if c.key == "w.gpu_arch"] == ["blackwell"]
    # an older link's sg_bw=1 (the checkbox's) opens the same select, and the same figures
    older = open_app("app_pages/compare.py", {**link, "sg_bw": "1"})
    assert [c.value for c in older.selectbox if c.key == "w.gpu_arch"] == ["blackwell"]
    assert [d.value.equals(e.value) for d, e in zip(older.dataframe, again.dataframe,
                                                   strict=True)] == [True] * len(again.dataframe)
    # the figures take the Blackwell layout, and the note that says so shows as on the B200
    # preset, the GPU named as a Blackwell one (it showed only on the preset)
    assert [shown(c) for c in at.caption if c.value.startswith("SGLang 0.5.23 on a")] == [
        "SGLang 0.5.23 on a Blackwell GPU keeps DeepSeek's sparse attention in fp8_e4m3 where "
        "no --kv-cache-dtype is told, on its trtllm DSA backends, which store the raw latent "
        "beside the index keys, 576 + 132 = 708 B a token a layer (kv_cache_configurator.py "
        "3425-3440): these figures are that layout's (told bfloat16 it keeps 1,284 B, as on a "
        "Hopper)."]


def test_a_b200_log_told_bfloat16_offers_sglangs_kv_cache_dtype():
    # DeepSeek-V3.2's SGLang lines on the B200 told --kv-cache-dtype bfloat16: 173,039,262,105
    # B // (61 x 1,284) = 2,209,275 tokens, 2,209,216 in pages of 64, in torch.bfloat16; at the
    # B200 preset (auto: raw fp8, 4,006,592) both lines differ, and the offer is the KV cache
    # dtype told alone (not a budget sizing 2,209,216 tokens of 708 B); taken, both agree
    from test_log_check import deepseek_v32_b200_bfloat16_lines

    assert 173_039_262_105 // (61 * 1_284) // 64 * 64 == 2_209_216
    log = as_sglang_log(deepseek_v32_b200_bfloat16_lines(173_039_262_105))
    # a run told none of a config with learnable_sink: true logs these lines too (SGLang keeps
    # it in bfloat16 on a Blackwell): said under the offer, as the CLI's note says it
    at = open_app("app_pages/compare.py", {"model": "DeepSeek-V3.2", "gpu": "B200 192GB"})
    offers_after_pasting(at, log)
    assert ("Or a run told no --kv-cache-dtype of the model's config.json with "
            "learnable_sink: true logs the same lines, as SGLang keeps that in bfloat16 there "
            "too: give that config instead if so.") in [
        c.value for c in at.caption]
    offer, agreed, taken = offer_taken({"model": "DeepSeek-V3.2", "gpu": "B200 192GB"}, log)
    assert offer == ("This log's run had SGLang's --kv-cache-dtype bfloat16: the figures here "
                     "are at other settings, so its lines differ for that alone. Take its "
                     "settings, then read the check again.")
    assert taken == {"model": "DeepSeek-V3.2", "gpu": "B200 192GB", "sg_kvdtype": "bfloat16"}
    assert agreed == ["SGLang: both lines are in the log and agree with it."]


def test_a_b200_log_with_a_drafters_kv_line_offers_the_blackwell_by_the_models_kv_size():
    # DeepSeek-V3.2 on a B200 in 40 GiB with one token drafted (MTP): SGLang logs the model's
    # KV line, 994,432 tokens of 61 x 708 B, (994,432 + 64) x 61 x 708 B = 40.00 GB, then its
    # drafter's pool of the same tokens for its one MTP layer, (994,432 + 64) x 708 B = 0.66
    # GB (the scheduler allocates the target's pool first: scheduler.py 1098-1111), and its
    # scheduler line (48 running with drafting). Pasted on pages of fp8 (a Hopper's 656 + 132
    # = 788 B, logged in float8_e4m3fn as the B200's raw 708 B) at 30 GiB, where neither
    # layout gives the log's tokens ((30 << 30) // (61 x 788) = 670,139 -> 670,080; // (61 x
    # 708) = 745,861 -> 745,856), the model's 40.00 GB tells the Blackwell: offered beside
    # the budget its layout takes, 994,432 x 61 x 708 = 42,947,529,216 B, at which both lines
    # agree and the drafter's is not compared. Read as two sizes, the offer was the budget of
    # those tokens in 788 B, 47,800,357,376 B, whose KV line says 44.52 GB
    from flatkv.app_model import pack_spec, spec_to_json
    from flatkv.strategies import StrategyOptions, run_strategy

    assert (30 << 30) // (61 * 788) // 64 * 64 == 670_080
    assert (30 << 30) // (61 * 708) // 64 * 64 == 745_856
    assert f"{(994_432 + 64) * 61 * 708 / 2**30:.2f}" == "40.00"
    assert f"{(994_432 + 64) * 708 / 2**30:.2f}" == "0.66"
    assert 994_432 * 61 * 708 == 42_947_529_216
    assert f"{(994_432 + 64) * 61 * 788 / 2**30:.2f}" == "44.52"
    v32 = load_preset("DeepSeek-V3.2")
    kv, scheduler = run_strategy(
        "sglang", v32.profile(), budget_bytes=40 << 30, context_tokens=163_840,
        options=StrategyOptions(gpu_compute_capability=(10, 0), sglang_chunked_prefill_size=16_384,
                                speculative_tokens=1)).extras["log_lines"]
    assert kv == ("KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 994432, KV "
                  "size: 40.00 GB")
    assert "max_running_requests=48," in scheduler
    log = as_sglang_log([kv, kv.replace("40.00", "0.66"), scheduler])
    link = {"model": "spec", "spec": pack_spec(spec_to_json(v32.with_options(kv_dtype="fp8"))),
            "gpu": "KV cache memory", "kv_mem": "30GiB", "spec_tokens": "1",
            "sg_chunk": "16384"}
    # before the offer is taken, at 30 GiB, the drafter's line is named, not compared, as the
    # CLI names it (its #tokens the model's line's, its size not): it was shown as differing
    at = open_app("app_pages/compare.py", link)
    at.text_area(key="compare.check_log").set_value(log).run()
    assert [shown(e) for e in at.error] == [
        "SGLang: both lines differ from the log; 1 log line not compared: the drafter's own "
        "pool, logged after the model's (speculative decoding)."]
    assert unescaped(at.table[0].value["in the log"][0]) == (
        "line 1 (TP0): #tokens: FlatKV 670080, log 994432; KV size (GB): FlatKV 30.00, log "
        "40.00 | line 2 (TP0): not compared, the drafter's own pool, logged after the model's "
        "(speculative decoding)")
    offer, agreed, taken = offer_taken(link, log)
    assert offer.startswith("This log's run had SGLang on a Blackwell GPU (a B200: DeepSeek's "
                            "sparse attention in fp8) and SGLang's token pool of 994,432 "
                            "tokens (a rank with 42,947,529,216 B of KV cache memory sizes its "
                            "pools so): the figures here are at other settings")
    assert (taken["kv_mem"], taken["gpu_arch"]) == ("42947529216B", "blackwell")
    assert agreed == ["SGLang: both lines are in the log and agree with it; 1 log line not "
                      "compared: the drafter's own pool, logged after the model's "
                      "(speculative decoding)."]


def test_a_b200_log_of_auto_on_pages_told_bfloat16_off_a_blackwell_offers_both():
    # DeepSeek-V3.2's SGLang lines on a B200 of auto in 40 GiB (tests/test_log_check.py:
    # 994,432 tokens of 61 x 708 B in float8_e4m3fn, chunk 16,384) pasted on pages told
    # --kv-cache-dtype bfloat16 off a Blackwell (idle there: 548,352 tokens of 61 x 1,284 B in
    # torch.bfloat16). A Blackwell alone keeps bfloat16's 1,284 B, so the offer is the
    # Blackwell with the KV cache dtype auto (the told bfloat16 dropped from the link), not a
    # budget; taken, both lines agree
    from test_log_check import deepseek_v32_b200_sglang_lines

    assert (40 << 30) // (61 * 708) // 64 * 64 == 994_432
    log = as_sglang_log(deepseek_v32_b200_sglang_lines())
    link = {"model": "DeepSeek-V3.2", "gpu": "KV cache memory", "kv_mem": "40GiB",
            "sg_kvdtype": "bfloat16"}
    offer, agreed, taken = offer_taken(link, log)
    assert offer == ("This log's run had SGLang on a Blackwell GPU (a B200: DeepSeek's sparse "
                     "attention in fp8), SGLang's --kv-cache-dtype auto and SGLang's prefill "
                     "chunk of 16,384 tokens: the figures here are at other settings, so its "
                     "lines differ for that alone. Take its settings, then read the check "
                     "again.")
    assert taken == {"model": "DeepSeek-V3.2", "gpu": "KV cache memory", "gpu_arch": "blackwell",
                     "sg_chunk": "16384"}
    assert agreed == ["SGLang: both lines are in the log and agree with it."]
    # on H100 pages told bfloat16, with the log's own budget (994,432 x 61 x 708 B), which
    # leaves the preset
    assert 994_432 * 61 * 708 == 42_947_529_216
    offer, agreed, taken = offer_taken(
        {"model": "DeepSeek-V3.2", "gpu": "H100 80GB", "sg_kvdtype": "bfloat16"}, log)
    assert offer.startswith("This log's run had SGLang on a Blackwell GPU (a B200: DeepSeek's "
                            "sparse attention in fp8), SGLang's --kv-cache-dtype auto, SGLang's "
                            "token pool of 994,432 tokens (a rank with 42,947,529,216 B of KV "
                            "cache memory sizes its pools so)")
    assert (taken["gpu"], taken["kv_mem"], taken["gpu_arch"], "sg_kvdtype" in taken) == (
        "KV cache memory", "42947529216B", "blackwell", False)
    assert agreed == ["SGLang: both lines are in the log and agree with it."]


def test_a_log_of_one_engine_without_flatkvs_lines_is_told_of_that_engine_alone():
    """Qwen3-Next-80B-A3B, where FlatKV prints 5 vLLM lines and 4 SGLang lines: SGLang's
    server_args line pasted alone (the fixture, no prefix: its words say SGLang's) also got
    "None of FlatKV's 5 vLLM lines is in this log", as if a vLLM log lacked them. A log that
    reads as one engine's is told of that engine's lines alone; one of neither, of both."""
    from app_helpers import ROOT

    def warnings(log: str) -> list[str]:
        at = open_app("app_pages/compare.py", {"model": "Qwen3-Next-80B-A3B"})
        at.text_area(key="compare.check_log").set_value(log).run()
        assert_clean(at)
        assert not at.success and not at.table
        return [shown(w) for w in at.warning]

    def none_of(count: int, name: str, read: str) -> str:
        return (f"None of FlatKV's {count} {name} lines is in this log ({read} read): paste "
                f"{name}'s start-up log of a run at these settings, from its start to its KV "
                "cache lines.")

    server_args = (ROOT / "assets" / "fixtures"
                   / "sglang-0.5.23-server-args-qwen3-next-lazy.txt").read_text()
    assert warnings(server_args) == [none_of(4, "SGLang", "1 line")]
    # by SGLang's prefix, and by vLLM's
    assert warnings("[2026-12-06 07:01:00 TP0] Load weight end. type=Qwen3NextForCausalLM") \
        == [none_of(4, "SGLang", "1 line")]
    assert warnings("(EngineCore_DP0 pid=812) INFO 12-06 07:00:00 [gpu_model_runner.py:2000] "
                    "Model loading took 75.0 GiB") == [none_of(5, "vLLM", "1 line")]
    assert warnings("hello\nworld") == [none_of(5, "vLLM", "2 lines"),
                                        none_of(4, "SGLang", "2 lines")]
    # vLLM's concurrency line pasted alone, as 0.26 logs it (kv_cache_utils.py: "Maximum
    # concurrency for %s tokens per request: %.2fx"), without its prefix: its words say vLLM's
    assert warnings("Maximum concurrency for 262,144 tokens per request: 6.62x") == [
        none_of(5, "vLLM", "1 line")]


def pasted(link: dict, line: str) -> tuple[AppTest, list[str]]:
    """Compare at ``link`` with SGLang's ``line`` pasted as its TP0 logs it (no error shown),
    and the warnings it shows."""
    at = open_app("app_pages/compare.py", link)
    at.text_area(key="compare.check_log").set_value(f"[2026-12-06 07:01:00 TP0] {line}").run()
    assert not at.exception and not at.error
    return at, [shown(w) for w in at.warning]


def test_compare_offers_the_kv_dtype_an_sglang_log_names_where_the_model_keeps_int8():
    # Llama-3.1-8B's raw bytes (32 layers of K and V 1,024 + 1,024 B) in int8 on the default
    # H100 (76,968,728,985 B): neither engine keeps a cache in int8, so no line is checked.
    # SGLang's log names the dtype its run kept, and the offer sets the model's KV dtype to
    # it, the raw bytes re-sized by its element size (SGLang's page of 1 token; K and V each
    # (tokens + 1) x 32 x their bytes, in GB of 2**30 B):
    # - fp8 (torch.float8_e4m3fn), 1 byte an element as int8's: the bytes stand,
    #   76,968,728,985 // (32 x 2,048) = 1,174,449 tokens, K and V 35.84 GB;
    # - bfloat16, 2 bytes an element: 4,096 B a token a layer, K and V 2,048 each,
    #   76,968,728,985 // (32 x 4,096) = 587,224 tokens, K and V 35.84 GB (the bytes kept, as
    #   before, gave 1,174,449 tokens, and the line differed).
    # At either the KV line agrees
    assert 76_968_728_985 // (32 * 2_048) == 1_174_449
    assert f"{(1_174_449 + 1) * 32 * 1_024 / 2**30:.2f}" == "35.84"
    assert 76_968_728_985 // (32 * 4_096) == 587_224
    assert f"{(587_224 + 1) * 32 * 2_048 / 2**30:.2f}" == "35.84"
    link = {"model": "custom", "layers": "full*32", "kv": "2048", "kv_split": "1024,1024",
            "kv_dtype": "int8"}
    kv = "KV Cache is allocated. dtype: torch.{}, #tokens: {}, K size: 35.84 GB, V size: 35.84 GB"
    notice = ("Neither vLLM nor SGLang keeps a KV cache in int8: no lines to check. This log's "
              "run kept its KV cache in ")
    for dtype, tokens, said, taken in (
            ("float8_e4m3fn", 1_174_449, "float8_e4m3fn (fp8): take that KV dtype",
             ("float8_e4m3fn", "2048", "1024,1024")),
            ("bfloat16", 587_224, "bfloat16: take that KV dtype, in which the model's int8 "
             "bytes, 2,048 B a token a layer, are 4,096", ("bfloat16", "4096", "2048,2048"))):
        at, warnings = pasted(link, kv.format(dtype, tokens))
        assert warnings == [f"{notice}{said}, then read the check again."]
        at.button(key="compare.log_kv_dtype").click().run()
        assert not at.exception and not at.error
        assert tuple(at.query_params[key] for key in ("kv_dtype", "kv", "kv_split")) == taken
        assert [shown(s) for s in at.success] == [
            "SGLang: 1 of 2 lines are in the log and agree with it; 1 not in it."]
    # raw bytes that hold an indexer's keys (DeepSeek-V3.2's 656 + 132 B in int8) do not scale
    # to bfloat16's elements: no button, the bytes to be given again
    at, warnings = pasted({"model": "custom", "layers": "full*61", "kv": "788",
                           "kv_split": "788", "indexer": "132", "model_kernel": "64",
                           "kv_dtype": "int8"},
                          "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 548352, "
                          "KV size: 40.00 GB")
    assert warnings == [
        f"{notice}bfloat16: kv_bytes_per_slot 788 holds an indexer's keys "
        "(indexer_bytes_per_slot 132, fp8 whatever the KV dtype) and fp8_ds_mla scales, which "
        "bfloat16's element size does not scale; give the KV bytes in bfloat16 again on the "
        "Model page, then read the check again."]
    assert not [b for b in at.button if b.key == "compare.log_kv_dtype"]
    # a log that names no dtype (SGLang before 0.5.17) keeps the notice alone, with no offer
    at, warnings = pasted(link, kv.format("float8_e4m3fn", 1_174_449).replace(
        "dtype: torch.float8_e4m3fn, ", ""))
    assert warnings == ["Neither vLLM nor SGLang runs at these settings: no lines to check."]
    assert not [b for b in at.button if b.key == "compare.log_kv_dtype"]


def test_compare_offers_the_log_kv_dtype_for_an_edited_model_in_int8():
    # Llama-3.1-8B edited to keep its KV in int8, 40 GiB a rank: the offer sets the edited
    # model's KV dtype to the log's fp8, whose K and V are 1 byte too: 40 GiB // (32 x 2,048)
    # = 655,360 tokens, K and V each 655,360 x 32 x 1,024 B = 20.00 GB (2**30 B), as logged
    from flatkv.app_model import pack_spec, spec_to_json

    assert 40 * 2**30 // (32 * 2_048) == 655_360 and 655_360 * 32 * 1_024 == 20 * 2**30
    llama = load_preset("Llama-3.1-8B")
    at = open_app("app_pages/compare.py", {
        "model": "spec", "gpu": "KV cache memory", "kv_mem": "40GiB",
        "spec": pack_spec(spec_to_json(llama.with_options(kv_dtype="int8")))})
    at.text_area(key="compare.check_log").set_value(
        "[2026-12-06 07:01:00 TP0] KV Cache is allocated. dtype: torch.float8_e4m3fn, "
        "#tokens: 655360, K size: 20.00 GB, V size: 20.00 GB").run()
    assert not at.exception and not at.error
    at.button(key="compare.log_kv_dtype").click().run()
    assert not at.exception and not at.error
    assert [shown(s) for s in at.success] == [
        "SGLang: 1 of 2 lines are in the log and agree with it; 1 not in it."]


def test_a_logs_budget_off_a_preset_takes_no_architecture_told_before_the_preset():
    # DeepSeek-V3.2 told blackwell (or ampere) on KV cache memory, then the H100 80GB picked:
    # the select hides and the preset says the GPU, but the field kept its value. An H100's
    # SGLang log of 30 GiB (61 x 1,284 B a token: 32,212,254,720 // 78,324 = 411,269, 411,264
    # in pages of 64) offers its budget as KV cache memory, which left the preset and woke the
    # hidden architecture: on blackwell no offer at all (its 708 B layout agrees no more), on
    # ampere vLLM's column refusing what ran on the H100. The offer is the fresh H100's, and
    # taken, the link says no architecture (a Hopper taken, as the H100's) and SGLang's lines
    # agree
    from flatkv.presets import load_preset
    from flatkv.strategies import run_strategy
    from flatkv.strategies.base import StrategyOptions

    assert (30 << 30) // (61 * 1_284) // 64 * 64 == 411_264
    log = as_sglang_log(run_strategy(
        "sglang", load_preset("DeepSeek-V3.2").profile(), budget_bytes=30 << 30,
        context_tokens=163_840, options=StrategyOptions(sglang_chunked_prefill_size=8_192)
    ).extras["log_lines"])
    fresh = open_app("app_pages/compare.py", {"model": "DeepSeek-V3.2"})
    (offer,) = offers_after_pasting(fresh, log)
    assert offer.startswith("This log's run had SGLang's token pool of 411,264 tokens")
    for arch in ("blackwell", "ampere"):
        at = open_app("app_pages/compare.py", {"model": "DeepSeek-V3.2", "gpu": "KV cache memory",
                                               "gpu_arch": arch})
        at.selectbox(key="w.gpu").set_value("H100 80GB").run()
        assert offers_after_pasting(at, log) == [offer]
        assert take_offer(at) == ["SGLang: both lines are in the log and agree with it."]
        # the H100's Hopper moves no figure from none said (a Hopper taken): none is set
        assert "gpu_arch" not in at.query_params
        assert at.selectbox(key="w.gpu_arch").value == ""
        assert at.query_params["gpu"] == "KV cache memory"
        assert not [c for c in at.caption if "on SM 8.0 (A100)" in c.value]


def test_a_b200_log_at_an_a100_preset_does_not_say_vllm_takes_a_hopper():
    # DeepSeek-V3.2's B200 log pasted at the A100 80GB: the offer takes the Blackwell with its
    # budget, so off the preset vLLM's column takes a Blackwell, not a Hopper, and no sentence
    # says otherwise ("Off the A100 80GB preset vLLM's column takes the GPU for a Hopper" was)
    from test_log_check import deepseek_v32_b200_sglang_lines

    at = open_app("app_pages/compare.py", {"model": "DeepSeek-V3.2", "gpu": "A100 80GB"})
    assert offers_after_pasting(at, as_sglang_log(deepseek_v32_b200_sglang_lines())) == [
        "This log's run had SGLang on a Blackwell GPU (a B200: DeepSeek's sparse attention in "
        "fp8), SGLang's token pool of 994,432 tokens (a rank with 42,947,529,216 B of KV cache "
        "memory sizes its pools so) and SGLang's prefill chunk of 16,384 tokens: the figures "
        "here are at other settings, so its lines differ for that alone. Take its settings, "
        "then read the check again."]
    assert take_offer(at) == ["SGLang: both lines are in the log and agree with it."]
    assert at.query_params["gpu_arch"] == "blackwell"


def test_a_logs_budget_off_a_preset_sets_its_architecture_where_the_cli_offers_it(tmp_path,
                                                                                  capsys):
    # Llama-3.1-8B at 4,096 tokens on the L40S 48GB; its SGLang log at 40 GiB (32 layers x
    # 4,096 B a token: 42,949,672,960 // 131,072 = 327,680 tokens) and the L40S's chunk of
    # 4,096. The offer leaves the preset for that budget: the L40S's Ada moves none of Llama's
    # figures, so the CLI's offer names no --gpu-arch, and the app's sets none either (it set
    # ada, and Compare then said "GPU architecture ada ... changes no figure here" of an
    # architecture the user never chose). Where it moves one (DeepSeek-V3's fp8 MLA cache on
    # the A100, which vLLM refuses) both keep it: test_a_logs_budget_off_an_a100_preset_keeps_
    # its_ampere and test_cli's test_compare_check_log_off_an_a100_preset_keeps_its_ampere
    from flatkv.cli import main
    from flatkv.strategies import StrategyOptions, run_strategy

    assert (40 << 30) // (32 * 4_096) == 327_680
    r = run_strategy("sglang", load_preset("Llama-3.1-8B").profile(), budget_bytes=40 << 30,
                     context_tokens=4_096,
                     options=StrategyOptions(sglang_chunked_prefill_size=4_096))
    log = as_sglang_log(r.extras["log_lines"])
    offer, agreed, taken = offer_taken({"model": "Llama-3.1-8B", "ctx": "4096",
                                        "gpu": "L40S 48GB"}, log)
    assert offer.startswith("This log's run had SGLang's token pool of 327,680 tokens (a rank "
                            "with 42,949,672,960 B of KV cache memory sizes its pools so) and "
                            "SGLang's prefill chunk of 4,096 tokens (the L40S 48GB's, kept)")
    assert agreed == ["SGLang: both lines are in the log and agree with it."]
    # (40 GiB, the KV cache memory a link leaves out as its default)
    assert taken == {"model": "Llama-3.1-8B", "gpu": "KV cache memory", "ctx": "4096",
                     "sg_chunk": "4096"}
    at = open_app("app_pages/compare.py", taken)
    assert at.selectbox(key="w.gpu_arch").value == ""
    assert not [c for c in at.caption if "changes no figure here" in c.value]
    # the select then read "not said (a Hopper taken)", as if FlatKV took the L40S for an H100:
    # it says the figures are a Hopper's, and beside the offer a line says why none is said
    # (the log names no GPU: the L40S is the preset the offer leaves), the select's value
    # quoted as the select shows it (unquoted, "left not said (figures as on a Hopper): those
    # are" read as a sentence with a parenthesis whose "those" was unclear)
    assert at.selectbox(key="w.gpu_arch").options[0] == "not said (figures as on a Hopper)"
    l40s = open_app("app_pages/compare.py", {"model": "Llama-3.1-8B", "ctx": "4096",
                                             "gpu": "L40S 48GB"})
    offers_after_pasting(l40s, log)
    assert [c.value for c in l40s.caption if c.value.startswith("The L40S")] == [
        "The L40S 48GB's architecture, ada (SM 8.9: L40S, RTX 4090), changes no figure or "
        "note at the log's settings, so GPU architecture is left at \"not said (figures as on "
        "a Hopper)\": these figures are the L40S 48GB's too."]
    path = tmp_path / "sglang.log"
    path.write_text(log)
    assert main(["compare", "--preset", "Llama-3.1-8B", "--gpu-memory", "L40S 48GB",
                 "--context", "4096", "--check-log", str(path)]) == 1
    assert ("python -m flatkv: note: this log's run had --budget 40GiB "
            "--sglang-chunked-prefill-size 4096 (in place of --gpu-memory): every figure "
            "differs at other settings, so check it again with those"
            ) in capsys.readouterr().err.splitlines()


def test_compares_architecture_line_runs_each_engine_once_more(monkeypatch):
    # Compare at Llama-3.1-8B, KV cache memory, told ada: its line that the architecture
    # changes no figure asks vLLM's and SGLang's figures at no GPU said, once each (a render
    # ran each twice more: at ada, which the page had run, too)
    from collections import Counter

    from flatkv import strategy_notes

    ran: Counter[str] = Counter()
    real = strategy_notes.run_strategy

    def counted(name, *args, **kwargs):
        ran[name] += 1
        return real(name, *args, **kwargs)

    monkeypatch.setattr(strategy_notes, "run_strategy", counted)
    at = open_app("app_pages/compare.py", {"model": "Llama-3.1-8B", "gpu": "KV cache memory",
                                           "gpu_arch": "ada", "ctx": "4096"})
    assert [c.value for c in at.caption if "changes no figure here" in c.value] == [
        "GPU architecture ada (SM 8.9: L40S, RTX 4090) changes no figure here: vLLM and "
        "SGLang lay this model out on an SM 8.9 GPU as on a Hopper, the GPU the figures take "
        "where none is said."]
    assert ran == {"vllm": 1, "sglang": 1}


def test_a_vllm_logs_blocks_off_an_h100_keep_its_hopper_for_the_checkpoint_note():
    # Qwen3-Next-80B-A3B on the H100 80GB in align at 32,768 tokens, told no checkpoint block,
    # and vLLM 0.34's H100 log of it (test_cli's QWEN3_NEXT_H100_VLLM_LOG: 2,275 blocks fit, 1
    # checkpoint block a request kept): the offer of its blocks leaves the preset, and the
    # Hopper moves no figure there but is what the checkpoint note and vLLM 0.34's defaults
    # read (strategy_notes.arch_matters), so the offer keeps it (it set none: the GPU not
    # known, no checkpoint block known, the note that names the fix gone), as the CLI offers
    # --gpu-arch hopper (test_cli's test_check_log_off_an_h100_offers_its_hopper_...)
    from test_cli import QWEN3_NEXT_H100_VLLM_LOG

    at = open_app("app_pages/compare.py", {"model": "Qwen3-Next-80B-A3B", "gpu": "H100 80GB",
                                           "mamba": "align", "ctx": "32768"})
    (offer,) = offers_after_pasting(at, QWEN3_NEXT_H100_VLLM_LOG)
    assert offer.startswith("This log's run had 2,275 vLLM KV cache blocks a rank")
    take_offer(at)
    assert_clean(at)
    assert offer.endswith("and vLLM 0.34's defaults: the figures here are at other settings, "
                          "so its lines differ for that alone. Take its settings, then read "
                          "the check again.")
    assert (at.query_params["gpu"], at.query_params["kv_blocks"], at.query_params["ckpt"],
            at.query_params.get("gpu_arch"), at.selectbox(key="w.gpu_arch").value) == (
        "vLLM KV cache blocks", "2275", "1", "hopper", "hopper")
    assert not [c for c in at.caption if "changes no figure here" in c.value]
    # the checkpoint block dropped again, the note names the fix on the Hopper kept
    at.number_input(key="w.prefill_checkpoint_blocks").set_value(0).run()
    assert [c.value for c in at.caption if c.value.startswith(
        "Mamba cache mode align counts 2 state pages a request in each state group here, as "
        "vLLM 0.28 to 0.32 did. Since 0.33 vLLM keeps a prefill checkpoint page more for this "
        "model's GDN layers on the Hopper GPU (SM 9.0), whose prefill runs on FlashInfer "
        "there (3 a request)")]


def test_a_vllm_logs_blocks_off_an_h100_in_mode_none_keep_its_hopper_for_the_defaults():
    # Qwen3-Next-80B-A3B on the H100 80GB in mode none at 32,768 tokens, and vLLM 0.34's log of
    # it in mode none told --block-size 16 (test_cli's QWEN3_NEXT_H100_NONE_VLLM_LOG: 2,409
    # blocks of P 544): the
    # offer of its blocks leaves the preset. Mode none's figures keep no checkpoint block, but
    # the "vLLM 0.34's defaults" button sets align with the one a Hopper keeps there
    # (strategy_notes.checkpoint_reads_arch, any mode): the offer set no architecture, and the
    # button then set none and its help asked for the GPU the user had picked ("pick the GPU
    # or its architecture, or set Prefill checkpoint blocks to 1 for a log of one"). Now the
    # Hopper is kept, as the CLI offers --gpu-arch hopper (test_cli's ..._in_mode_none_...)
    from test_cli import QWEN3_NEXT_H100_NONE_VLLM_LOG

    link = {"model": "Qwen3-Next-80B-A3B", "gpu": "H100 80GB", "ctx": "32768"}
    at = open_app("app_pages/compare.py", link)
    before = at.button(key="options.recent_vllm").help
    (offer,) = offers_after_pasting(at, QWEN3_NEXT_H100_NONE_VLLM_LOG)
    assert offer.startswith("This log's run had 2,409 vLLM KV cache blocks a rank")
    assert take_offer(at) == ["vLLM: all 5 lines are in the log and agree with it."]
    assert_clean(at)
    assert (at.query_params["gpu"], at.query_params["kv_blocks"],
            at.query_params.get("gpu_arch"), at.selectbox(key="w.gpu_arch").value) == (
        "vLLM KV cache blocks", "2409", "hopper", "hopper")
    after = at.button(key="options.recent_vllm").help
    assert "pick the GPU or its architecture" not in after
    assert "and 1 prefill checkpoint block (vLLM 0.33 and later, for GDN layers, whose " \
           "prefill runs on FlashInfer on the Hopper GPU (SM 9.0))" in after
    assert before == after.replace("the Hopper GPU (SM 9.0)", "the H100 80GB")
    assert not [c for c in at.caption if "changes no figure here" in c.value]


def test_compare_takes_the_vllm_ssm_dtype_a_logs_p_gives():
    # Nemotron-H-8B's default vLLM log (float32: P 1,040, 2,520 blocks at 40 GiB) pasted at the
    # preset told vLLM's ssm cache dtype bfloat16 (P 528): its P names float32, offered and
    # taken (the select's v_ssm), every line agrees
    from test_log_check import nemotron_h_default_vllm_log

    offer, agreed, taken = offer_taken({"model": "Nemotron-H-8B", "ctx": "8192",
                                        "gpu": "KV cache memory", "kv_mem": "40GiB",
                                        "v_ssm": "bfloat16"}, nemotron_h_default_vllm_log())
    assert offer.startswith("This log's run had vLLM's ssm cache dtype float32 "
                            "(--mamba-ssm-cache-dtype: its \"Setting attention block size\" "
                            "line's P)")
    assert taken["v_ssm"] == "float32"
    assert agreed == ["vLLM: all 5 lines are in the log and agree with it."]
