"""Every metric the pages show is pinned by a test that derives its value by hand or from
SPEC.md (the project's standard, which nothing else enforces: a metric added to a page passes
every other test). The pages are opened at views chosen to draw every kind of metric they have,
and each label they show must be listed in ``PINNED_BY`` under the test that pins it; that test
must exist and read the label. A new metric fails here until its test is written and named.

The tables are held to the same rule by their headers: each table the views draw is listed in
``TABLES_PINNED_BY`` under a test that reads every one of its columns, so a column added to a
table fails here until a test derives its figures. Charts are pinned by the tests of their
builders (test_charts, test_app_data) and of their pages."""

from __future__ import annotations

import ast
import functools
import re

from app_helpers import ROOT, STATE_ONLY_LINK, open_app, tables

from flatkv.profile import KIND_NAMES, MLA_KIND_NAME

# page and link: between them every metric the pages draw before a GPU lab run (the lab's run
# metrics are pinned by test_app_gpu's run tests, which take seconds each)
VIEWS = (
    ("model", {}),  # a state hybrid: Constant state, State per request
    ("model", {"model": "gpt-oss-20b"}),  # sliding layers and their window
    ("model", {"model": "Llama-4-Scout-17B-16E"}),  # chunked layers and their chunk
    ("layout", {}),
    ("layout", {"planner": "per-component"}),
    ("layout", {**STATE_ONLY_LINK, "planner": "per-component"}),  # no token slots
    ("budget", {}),
    ("budget", {"b_layout": "vllm"}),  # the engine's logged tokens, old and new
    ("gpu", {}),
    ("compare", {}),
)

# each test that pins metrics -> their labels, figures as # and groups as <group>
PINNED_BY = {
    ("test_app_model.py", "test_the_model_summary_gives_kv_per_token_and_state_per_request"): (
        "Cache layers, all kinds", "Full attention", "Constant state", "KV per token, all layers",
        "State per request"),
    ("test_app_model.py", "test_model_page_shows_the_sliding_window"): (
        "Sliding attention", "Sliding window", "KV per token, past the window"),
    ("test_app_model.py", "test_a_chunked_model_shows_its_chunk_and_edits_it_as_raw_bytes"): (
        "Chunked attention", "Attention chunk", "KV per token, past the chunk"),
    ("test_app_shared.py", "test_the_sidebar_shows_the_cache_budget_per_rank"): (
        "Cache budget per rank",),
    ("test_app_layout.py", "test_layout_shows_the_worked_example_from_a_link"): (
        "P (tokens per page)", "Block bytes", "Blocks", "Capacity (tokens)",
        "Cache budget per rank", "Unused"),
    ("test_app_layout.py",
     "test_layout_of_a_state_only_model_has_no_token_slots_and_no_workload"): (
        "Token slots (blocks x P)",),
    ("test_app_layout.py", "test_layout_names_the_padding_its_planner_has"): (
        "Uniform pages pad the block", "Padding of a block (per component)"),
    ("test_app_layout.py", "test_layout_names_the_dead_weight_of_one_page"): (
        "Dead share of a <group> block",),
    ("test_app_budget.py", "test_budget_page_concurrency_by_hand"): ("Concurrency at # tokens",),
    ("test_app_budget.py",
     "test_budget_gives_the_least_budget_and_gpu_for_the_requests_to_hold"): (
        "Budget for # requests", "GPU memory for it"),
    ("test_app_budget.py", "test_budget_page_for_a_state_only_model_has_no_capacity"): (
        'vLLM\'s "GPU KV cache size" (tokens)',),
    ("test_app_budget.py", "test_budget_sweeps_an_engine_layout_picked_on_the_page"): (
        "Older vLLM log (tokens)",),
    ("test_app_gpu.py", "test_planned_blocks_bytes_budget_and_unused_are_the_worked_example"): (
        "Planned blocks", "Planned bytes"),
}
PINNED = {label: test for test, labels in PINNED_BY.items() for label in labels}

# each test that derives a table's figures -> the tables, by their headers (``table_key``)
TABLES_PINNED_BY = {
    ("test_app_model.py", "test_model_page_builds_a_hybrid_from_scratch"): (
        # a model with state in two tables at 1000 px, each led by the kind's name
        ("name", "kind", "layers", "KV B per token"),
        ("name", "state B per layer", "conv shape", "ssm shape"),
        ("field", "<kinds>"),
    ),
    ("test_app_state.py", "test_layer_rows_and_kind_summary_by_hand"): (
        ("cache layer", "kind", "group", "slot", "bytes per token", "state bytes"),),
    ("test_app_data.py", "test_dead_weight_rows_by_hand_under_the_clis_headers"): (
        ("group", "layers", "used B/block", "dead B/block", "dead share"),),
    ("test_app_data.py", "test_budget_curves_by_hand"): (
        ("block size (tokens)", "P (tokens)", "capacity (tokens)", "concurrency"),),
    ("test_app_compare.py", "test_compare_page_lists_every_strategy"): (
        ("strategy", "concurrency", "capacity (tokens)", "P (tokens)", "blocks"),
        ("strategy", "block bytes", "engine log", "older vLLM log"),
        ("context", "packed", "per component", "vLLM", "SGLang", "two-level"),
        ("category (bytes)", "packed", "per component", "vLLM"),
        ("category (bytes)", "SGLang", "two-level"),
    ),
    ("test_app_compare.py", "test_compare_gives_each_layouts_budget_for_the_requests_to_hold"): (
        ("strategy", "cache budget", "GPU memory"),
        ("strategy", "cache budget (B)", "GPU memory (B)"),  # under it, in an expander
    ),
}
TABLES_PINNED = {key: test for test, keys in TABLES_PINNED_BY.items() for key in keys}

# a group as Layout names it (``app_model.group_name``), MLA's before the plain full
GROUPS = "|".join(map(re.escape, (MLA_KIND_NAME, *KIND_NAMES.values(), "state")))


def label_key(label: str) -> str:
    """A metric's label as ``PINNED`` lists it: its figures as #, its group as <group>."""
    return re.sub(rf"(?<=of a )({GROUPS})(?= block)", "<group>",
                  re.sub(r"\d[\d,]*", "#", label))


def test_label_key_reads_figures_and_groups_alike():
    assert [label_key(s) for s in ("Concurrency at 262,144 tokens", "Budget for 4 requests",
                                   "Dead share of a sliding attention block",
                                   "Dead share of a state block", "Constant state", "Blocks")] == [
        "Concurrency at # tokens", "Budget for # requests", "Dead share of a <group> block",
        "Dead share of a <group> block", "Constant state", "Blocks"]


def test_every_metric_the_pages_show_is_pinned_by_a_named_test():
    shown: dict[str, str] = {}
    for page, link in VIEWS:
        at = open_app(f"app_pages/{page}.py", link)
        assert not at.exception and not at.error, (page, link)
        for m in at.metric:
            shown.setdefault(label_key(m.label), f"{page} {link}")
    unlisted = {k: v for k, v in shown.items() if k not in PINNED}
    assert not unlisted, (f"metrics shown without a test named in PINNED: {unlisted}: write "
                          "the test that derives each value by hand and name it there")
    # and each listed one is still drawn at these views (a renamed label leaves a stale entry)
    assert set(PINNED) <= set(shown), set(PINNED) - set(shown)


def table_key(columns) -> tuple[str, ...]:
    """A table as ``TABLES_PINNED`` lists it: its headers, the Model page's config-field table
    by its first (its other columns are the model's own kind names, whatever the model)."""
    columns = tuple(str(c) for c in columns)
    return (columns[0], "<kinds>") if columns[0] == "field" else columns


def test_every_table_the_pages_show_is_pinned_by_a_named_test():
    shown: dict[tuple[str, ...], str] = {}
    for page, link in VIEWS:
        at = open_app(f"app_pages/{page}.py", link)
        assert not at.exception and not at.error, (page, link)
        # as drawn at 1000 px: a table split there is drawn whole too for a wider place, its
        # runs' figures (pinned with them: test_app_compare's
        # test_a_table_split_at_1000_px_is_drawn_whole_where_its_place_holds_it, test_app_model's
        # test_models_tables_fit_the_page_at_1000_px)
        for frame in tables(at):
            shown.setdefault(table_key(frame.value.columns), f"{page} {link}")
    unlisted = {k: v for k, v in shown.items() if k not in TABLES_PINNED}
    assert not unlisted, (f"tables shown without a test named in TABLES_PINNED: {unlisted}: "
                          "write the test that derives their figures and name it there")
    assert set(TABLES_PINNED) <= set(shown), set(TABLES_PINNED) - set(shown)


def test_each_table_pinning_test_exists_and_reads_every_column():
    # a column is read where the test writes its header as a string of its own (``["layers"]``,
    # ``.loc["full", "layers"]``): a header found anywhere in its source would pass a short one
    # ("layers", "kind") unread, as the test's own variable names hold it
    for key, (file, name) in TABLES_PINNED.items():
        strings = _test_strings(file).get(name)
        assert strings is not None, f"{file}::{name}, named for {key}, is not there"
        unread = [c for c in key if c != "<kinds>" and c not in strings]
        assert not unread, f"{file}::{name} does not read the columns {unread} of {key}"


def test_each_pinning_test_exists_and_reads_its_metric():
    for key, (file, name) in PINNED.items():
        source = _test_sources(file).get(name)
        assert source is not None, f"{file}::{name}, named for {key!r}, is not there"
        # the label's longest fixed part, as the test writes it
        stem = max(re.split(r"#|<group>", key), key=len).strip()
        assert _bare(stem) in _bare(source), f"{file}::{name} does not read {key!r}"


@functools.cache
def _test_sources(file: str) -> dict[str, str]:
    """The source of each test function in ``tests/<file>``, by name."""
    text = (ROOT / "tests" / file).read_text()
    return {node.name: ast.get_source_segment(text, node) or ""
            for node in ast.parse(text).body if isinstance(node, ast.FunctionDef)}


@functools.cache
def _test_strings(file: str) -> dict[str, frozenset[str]]:
    """The string constants each test function in ``tests/<file>`` writes, by name."""
    tree = ast.parse((ROOT / "tests" / file).read_text())
    return {node.name: frozenset(c.value for c in ast.walk(node)
                                 if isinstance(c, ast.Constant) and isinstance(c.value, str))
            for node in tree.body if isinstance(node, ast.FunctionDef)}


def _bare(text: str) -> str:
    """Text without quotes or backslashes: a label as a test's source writes it (escaped) or as
    the page shows it."""
    return re.sub(r"[\\'\"]", "", text)
