"""The Gemini CLI releases ctxasm models (`0.61` stands for every `0.61.x`).

0.61 is still Gemini CLI's newest release (SPEC 4b): it has no version-gated facts yet. A
release that loads differently is one more entry of `MODELLED` and a row of `FACTS`, asked by
name as Claude Code's are (`clients/claude_code/versions.py`).
"""

from __future__ import annotations

from ...versions import VersionTable

MODELLED = ("0.61",)

TABLE = VersionTable("Gemini CLI", MODELLED)
