"""Codex CLI's own diagnostic codes: its byte budget, its config, its project docs.
`clients.registry.catalogue()` lists them with the shared ones (`assembler.codes`)."""

from __future__ import annotations

from ...codes import ERROR, INFO, WARNING, Code, Skip

# fmt: off
CODEX_DOC_CUT = Code("CTX901", "codex-doc-cut", "AGENTS.md text past Codex's project_doc_max_bytes: Codex stops reading there", WARNING, WARNING, size=True)
CODEX_DOC_DROPPED = Code("CTX902", "codex-doc-dropped", "a project doc after Codex's byte budget is spent: Codex does not load it", WARNING, WARNING, Skip.CLIENT_BUDGET, size=True)
CODEX_CONFIG_INVALID = Code("CTX903", "codex-config-invalid", "CODEX_HOME/config.toml unusable, or a value of the wrong type: the default is used", None, WARNING)
CODEX_DOCS_FAILED = Code("CTX904", "codex-docs-failed", "a project doc Codex finds but cannot read: Codex loads no project doc at all", None, ERROR, Skip.UNREADABLE)
CODEX_DOC_SHADOWED = Code("CTX905", "codex-doc-shadowed", "a project doc beside an earlier candidate name in its directory: Codex reads only the first", None, INFO)
# fmt: on

CODES = (
    CODEX_DOC_CUT,
    CODEX_DOC_DROPPED,
    CODEX_CONFIG_INVALID,
    CODEX_DOCS_FAILED,
    CODEX_DOC_SHADOWED,
)
