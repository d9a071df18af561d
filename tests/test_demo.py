"""`make demo`, the README's first command: its only warning is on purpose, and its output
says why (issue 26, item 1)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from tests.helpers.trees import ROOT

pytestmark = pytest.mark.skipif(
    shutil.which("make") is None or not (ROOT / ".venv" / "bin" / "ctxasm").exists(),
    reason="make demo runs .venv/bin/ctxasm",
)


def test_make_demo_explains_every_warning_it_shows() -> None:
    # -o: never reinstall .venv from inside a test, whatever the stamps say.
    ran = subprocess.run(
        ["make", "-s", "--no-print-directory", "-o", ".venv/.stamp-run", "demo"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    warned = re.findall(r"\[(CTX\d{3})\]$", ran.stderr, re.MULTILINE)
    assert warned == ["CTX204"]  # the one the demo tree shows on purpose
    rendered, _, note = ran.stdout.partition("\n\ndemo: ")
    assert rendered.startswith("<managed_policy ")
    assert note.startswith("the CTX204 warning is on purpose.")
    assert all(code in note for code in warned)
    assert "docs/architecture.md, outside services/api where the agent starts" in note
