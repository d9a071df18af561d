"""A real browser for the report's page: Debian's Chromium, headless, driven by Playwright for
Python (never `playwright install`: the browser is the system's, as CI installs it).

`missing()` says why the browser tests cannot run here (then they skip with that reason);
`open_page` loads a page at a width and colour scheme, recording every console message,
script error, dialog and request it makes.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM = Path(os.environ.get("CTXASM_CHROMIUM", "/usr/bin/chromium"))
FLAGS = (
    "--no-sandbox",  # CI runs as root
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def missing() -> str | None:
    """Why no browser test can run, or None."""
    if not os.access(CHROMIUM, os.X_OK):
        return f"no Chromium at {CHROMIUM}: `apt-get install chromium` (.ci/run installs it)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright is not installed: pip install -e '.[test]'"
    return None


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium with a fresh profile (Playwright makes one per launch)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=list(FLAGS)
        )
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class Loaded:
    """A page as loaded, and everything it did while loading."""

    page: Any
    console: list[tuple[str, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


def open_page(browser: Any, path: Path, width: int, scheme: str = "light") -> Loaded:
    context = browser.new_context(
        viewport={"width": width, "height": 900}, color_scheme=scheme, java_script_enabled=True
    )
    page = context.new_page()
    loaded = Loaded(page)
    page.on("console", lambda m: loaded.console.append((m.type, m.text)))
    page.on("pageerror", lambda e: loaded.errors.append(str(e)))
    page.on("request", lambda r: loaded.requests.append(r.url))

    def dialog(d: Any) -> None:
        loaded.dialogs.append(d.message)
        d.dismiss()

    page.on("dialog", dialog)
    page.goto(path.as_uri(), wait_until="load")
    return loaded


# The page's structure as a reader sees it: per section, whether it is shown, and how many of
# each thing it lists. Compared across widths, not pixels.
STRUCTURE = """() => {
  const shown = (e) => { const r = e.getBoundingClientRect(); const s = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none'; };
  const count = (sel) => [...document.querySelectorAll(sel)].filter(shown).length;
  const sections = {};
  for (const s of document.querySelectorAll('main section[id], main header[id]')) {
    sections[s.id] = shown(s);
  }
  return {
    sections,
    agentCards: count('.agent-card'),
    fileRows: count('table.files tbody tr'),
    bars: count('.bar'),
    segments: [...document.querySelectorAll('.bar .seg')].filter(
      (e) => e.getBoundingClientRect().width > 0).length,
    findings: count('ul.findings li'),
    files: count('.file'),
    overflow: document.documentElement.scrollWidth > window.innerWidth,
  };
}"""
