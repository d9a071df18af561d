"""Importing the conversation runtime loads no heavy or SDK module."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers.trees import ROOT

HEAVY = {"jinja2", "watchdog", "rich", "click", "anthropic", "openai", "httpx", "yaml"}


def test_importing_the_runtime_stays_light() -> None:
    code = (
        "import sys, assembler.conversation\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({sorted(HEAVY)!r})))\n"
        "print(sorted(m for m in sys.modules if m.startswith('assembler.') and"
        " not m.startswith('assembler.conversation')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    heavy, ours = done.stdout.splitlines()
    assert heavy == "[]"
    assert ours == str(
        [
            "assembler.compaction",  # the values of a client's profile (Trigger, CompactionProfile)
            "assembler.display",
            "assembler.errors",
            "assembler.model",
            "assembler.output",
            "assembler.output.write",  # the one atomic replace, for ctx.json
            "assembler.resources",
            "assembler.tokens",
        ]
    )
