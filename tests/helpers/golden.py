"""Golden files: one case per file, compared byte for byte, a unified diff on failure."""

from __future__ import annotations

import difflib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
# Outputs holding the temporary directory get it replaced by this (same length as the real one).
PLACEHOLDER = "/tmp/ctxasm-golden-XXXXXXXX"


@pytest.fixture
def fixed_tmp() -> Iterator[Path]:
    """A temporary directory whose path always has the same length (absolute paths appear in
    some formats, and their lengths in the json stats)."""
    path = Path(tempfile.mkdtemp(prefix="ctxasm-golden-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path)


def check_golden(actual: str, golden: Path, update: bool) -> None:
    """Fail with a diff when `actual` differs from `golden` (rewrite it first when `update`)."""
    if update:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(actual, encoding="utf-8", newline="")
    expected = golden.read_text(encoding="utf-8")
    if actual != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True),
                actual.splitlines(keepends=True),
                str(golden),
                "actual",
            )
        )
        pytest.fail(f"{golden.relative_to(ROOT)} differs (rerun with --update-goldens):\n{diff}")
