"""Debian's Chromium through Playwright for the browser tests: one launcher, so every test file
skips (locally) or fails (in CI, ``CI`` set) alike when Playwright or the browser is missing."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("VAULTSEEK_CHROMIUM", "/usr/bin/chromium")
ARGS = ("--no-sandbox", "--disable-gpu", "--disable-background-networking")


@contextmanager
def chromium(*extra_args: str) -> Iterator[Any]:
    """A headless Chromium (Playwright's ``Browser``), closed afterwards; ``extra_args`` are
    added to its command line (a fake microphone, say)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("playwright is missing in CI: it is in the test extra")
        pytest.skip("playwright is not installed")
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        if os.environ.get("CI"):
            pytest.fail("chromium is missing in CI: .ci/run should have installed it")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=[*ARGS, *extra_args])
        try:
            yield browser
        finally:
            browser.close()
