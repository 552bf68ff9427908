"""What the AppTest files (tests/test_app_*.py) share: the app's path, opening a page at a link,
reading what a page shows, and the links and views more than one page's tests start from. Not a
test file (no test_ prefix), imported as ``from app_helpers import ...``, as tests/ is on the
path (pytest's rootdir-relative import of a test directory without __init__.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")


# SPEC worked example on a custom 80 GB GPU, all of it for the cache, block 64, alignment 16.
QWEN35_LINK = {
    "model": "custom", "layers": "(3*linear,full)*12", "kv": "2048",
    "state": "conv=49152,ssm=2097152", "gpu": "Custom", "gpu_mem": "80GB", "frac": "1",
    "block": "64", "align": "16",
}


def open_app(page: str | None = None, query: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(query or {})
    at.run()
    if page:
        at.switch_page(page).run()
    return at


def unescaped(text: str) -> str:
    """Markdown text as the page shows it: user text is escaped for Markdown
    (units.markdown_literal), and the backslashes do not show."""
    return re.sub(r"\\(.)", r"\1", text)


def shown(element) -> str:
    return unescaped(element.value)


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def caption_starting(at: AppTest, prefix: str) -> str:
    """The one caption of the page that starts with ``prefix``."""
    (caption,) = [c.value for c in at.caption if c.value.startswith(prefix)]
    return caption


def budget_caption(at: AppTest) -> str:
    """Budget's line under its inputs: the model, the layout and the options that act."""
    (line,) = [c.value for c in at.caption if c.value.endswith("are in the sidebar.")]
    return line


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [shown(e) for e in at.exception]
    assert not at.error, [shown(e) for e in at.error]


def open_falcon_mamba_config(at: AppTest | None = None) -> AppTest:
    """The Model page with falcon-mamba-7b's config.json loaded (in ``at``, on its Model page,
    or a new session): it gives no length field, so vLLM (and SGLang) assume 2,048 tokens."""
    at = at or open_app("app_pages/model.py")
    at.segmented_control(key="model.source").set_value("config.json").run()
    at.text_area(key="hf.paste").set_value(json.dumps({
        "model_type": "falcon_mamba", "num_hidden_layers": 64, "hidden_size": 4096,
        "intermediate_size": 8192, "state_size": 16, "conv_kernel": 4,
        "torch_dtype": "bfloat16", "architectures": ["FalconMambaForCausalLM"]})).run()
    at.button(key="hf.load").click().run()
    return at


def layout_figures(at: AppTest):
    """Compare's figures a row a layout, indexed by it: its first table (concurrency,
    capacity, P, blocks) and the one under it (block bytes, the engines' logged tokens) joined
    on the layout, as one table held them before 1000 px asked for two."""
    first, logs = (tables(at)[i].value.set_index("strategy") for i in (0, 1))
    assert list(first.index) == list(logs.index)  # the same rows, in the same order
    return first.join(logs)


def least_budgets(at: AppTest):
    """Compare's least budget for the requests to hold, a row a layout: its table in words and
    the one of exact bytes under it (in an expander) joined on the layout (``strategy``), as
    one table held them before 1000 px asked for two."""
    words = next(d.value for d in at.dataframe if "cache budget" in d.value.columns)
    exact = next(d.value for d in at.dataframe if "cache budget (B)" in d.value.columns)
    assert list(words["strategy"]) == list(exact["strategy"])
    return words.merge(exact, on="strategy")


def column_widths(frame) -> dict[str, int]:
    """The pixels each column of a drawn table (an AppTest dataframe) is given, by its name."""
    config = json.loads(frame.proto.columns)
    return {name: config[name]["width"] for name in frame.value.columns}


def _blocks_keyed(node, key: str, inside: bool = False) -> list:
    """The elements of a page (an AppTest node and those under it) inside a container whose
    key starts with ``key``."""
    keyed = node.type == "flex_container" and f"-{key}" in str(node.proto.id)
    found = [node] if inside or keyed else []
    for child in (getattr(node, "children", None) or {}).values():
        found += _blocks_keyed(child, key, inside or keyed)
    return found


def whole_tables(at: AppTest) -> list:
    """The tables a page draws whole for a place wide enough to hold them (its CSS hides them
    elsewhere), beside their runs (``_frame.table``: ``table-whole-`` keyed)."""
    return [d for d in at.dataframe if any(d is n for n in _blocks_keyed(at.main, "table-whole-"))]


def tables(at: AppTest) -> list:
    """The tables a page shows at 1000 px: a table too wide for its place there as its runs
    (``_frame.column_runs``), not the whole drawn for a wider place."""
    whole = whole_tables(at)
    return [d for d in at.dataframe if not any(d is w for w in whole)]


def category_tables(at: AppTest) -> list:
    """Compare's tables of where the budget goes: a row a category, a column a layout under
    its short name, as many tables as the main column needs at 1000 px."""
    return [d for d in tables(at) if d.value.columns[0] == "category (bytes)"]


def joined_tables(at: AppTest, first: str):
    """The tables of the page led by the column ``first`` as one, indexed by it: a table wider
    than its place at 1000 px is drawn as a few, each its first column and a run of the others
    (``_frame.column_runs``)."""
    import pandas as pd

    return pd.concat([d.value.set_index(first) for d in tables(at)
                      if d.value.columns[0] == first], axis=1)


def bytes_by_category(at: AppTest):
    """Compare's bytes by category in one table, indexed by category, the layouts under their
    short names as the tables head them."""
    return joined_tables(at, "category (bytes)")


def vllm_row(at: AppTest):
    return layout_figures(at).loc["vLLM v1"]


# GPU lab: a raw model of two full-attention layers at 4,096 B per token, block 16 (alignment
# = block size, no state row to cover): P = 16, page = 2 x 4,096 x 16 = 131,072 B.
TINY_LINK = {"model": "custom", "layers": "full*2", "kv": "4096", "block": "16", "device": "cpu"}


STATE_ONLY_LINK = {"model": "custom", "layers": "linear*24", "kv": "0",
                   "state": "conv=32768,ssm=1MiB"}
