"""The Codex CLI releases ctxasm models (`0.171` stands for every `0.171.x`).

0.171 is still Codex's newest release (SPEC 4b, where Claude Code's two models were recorded):
it has no version-gated facts yet. A release that loads differently is one more entry of
`MODELLED` and a row of `FACTS`, asked by name as Claude Code's are
(`clients/claude_code/versions.py`).
"""

from __future__ import annotations

from ...versions import VersionTable

MODELLED = ("0.171",)

TABLE = VersionTable("Codex", MODELLED)
