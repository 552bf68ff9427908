"""Take the README screenshots from the running app (headless Chromium, 1400 x 900).

    python assets/screenshots/take_screenshots.py

Starts ``streamlit run app.py`` on a free port, opens the Layout and Compare pages for the
default model (Qwen3-Next-80B-A3B) on an H200 with 80 GB of weights, and writes layout.png and
compare.png here.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "tests" / "browser"))

from app_server import CHROMIUM, CHROMIUM_ARGS, running_app  # noqa: E402
from playwright.sync_api import expect, sync_playwright  # noqa: E402

QUERY = "gpu=H200+141GB&weights=80GB"  # e.g. fp8 weights of an 80B model on one GPU


def main() -> None:
    with running_app() as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})

        page.goto(f"{url}/layout?{QUERY}")
        expect(page.locator("h1").filter(has_text="Layout")).to_be_visible(timeout=30_000)
        page.get_by_text("Why this P, step by step").click()  # fold it: show the page rows
        page.get_by_text("Draw rows padded to the page row").click()  # hatched padding
        expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=30_000)
        page.wait_for_timeout(2500)
        page.screenshot(path=str(HERE / "layout.png"))

        page.goto(f"{url}/compare?{QUERY}")
        expect(page.locator("h1").filter(has_text="Compare")).to_be_visible(timeout=30_000)
        expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=30_000)
        page.wait_for_timeout(2500)
        page.screenshot(path=str(HERE / "compare.png"))
        browser.close()
    print(f"wrote {HERE / 'layout.png'} and {HERE / 'compare.png'}")


if __name__ == "__main__":
    main()
