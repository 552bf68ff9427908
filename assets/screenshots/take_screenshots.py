"""Take the README screenshots from the running app (headless Chromium, 1400 x 900).

    python assets/screenshots/take_screenshots.py [layout] [compare] [gpu]

Starts ``streamlit run app.py`` on a free port, opens the Layout, Compare and GPU lab pages for
the default model (Qwen3-Next-80B-A3B) on an H200 with 80 GB of weights, and writes layout.png,
compare.png and gpu.png here (only the pages named, when some are). The GPU lab shot runs one
benchmark with the page's defaults, on the CPU where there is no GPU (a few seconds).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "tests" / "browser"))

from app_server import CHROMIUM, CHROMIUM_ARGS, browser_page, running_app, warm_up  # noqa: E402
from playwright.sync_api import expect, sync_playwright  # noqa: E402

QUERY = "gpu=H200+141GB&weights=80GB"  # e.g. fp8 weights of an 80B model on one GPU


def layout(page, url: str) -> None:
    page.goto(f"{url}/layout?{QUERY}")
    expect(page.locator("h1").filter(has_text="Layout")).to_be_visible(timeout=30_000)
    page.get_by_text("Why this P, step by step").click()  # fold it: show the page rows
    page.get_by_text("Draw rows padded to the widest row").click()  # hatched padding
    expect(page.locator(".js-plotly-plot >> visible=true").first).to_be_visible(timeout=30_000)
    page.wait_for_timeout(2500)
    # the view opens at the metric row of Blocks (the toggle's click scrolled to it, cutting
    # the row above in half), then the page rows under it
    blocks = page.locator('[data-testid="stMetricLabel"]', has_text="Blocks").first
    blocks.evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(1000)
    page.screenshot(path=str(HERE / "layout.png"))


def compare(page, url: str) -> None:
    page.goto(f"{url}/compare?{QUERY}")
    expect(page.locator("h1").filter(has_text="Compare")).to_be_visible(timeout=30_000)
    expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=30_000)
    page.wait_for_timeout(2500)
    page.screenshot(path=str(HERE / "compare.png"))


def gpu(page, url: str) -> None:
    page.goto(f"{url}/gpu?{QUERY}")
    expect(page.locator("h1").filter(has_text="GPU lab")).to_be_visible(timeout=30_000)
    page.get_by_role("button", name="Run benchmark").click()
    expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=120_000)
    page.wait_for_timeout(2500)
    results = page.get_by_role("heading", name="Results")
    results.evaluate("e => e.scrollIntoView({block: 'start'})")  # the results fill the view
    page.wait_for_timeout(1000)
    page.screenshot(path=str(HERE / "gpu.png"))


SHOTS = {"layout": layout, "compare": compare, "gpu": gpu}


def main() -> None:
    names = sys.argv[1:] or list(SHOTS)
    unknown = sorted(set(names) - set(SHOTS))
    if unknown:
        sys.exit(f"unknown screenshot {unknown}: choose from {', '.join(SHOTS)}")
    with running_app() as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        warm_up(browser, url)
        with browser_page(browser) as page:
            for name in names:
                SHOTS[name](page, url)
        browser.close()
    print("wrote " + ", ".join(str(HERE / f"{n}.png") for n in names))


if __name__ == "__main__":
    main()
