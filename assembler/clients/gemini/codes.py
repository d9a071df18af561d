"""Gemini CLI's own diagnostic codes: its `@import` processor and its settings.
`clients.registry.catalogue()` lists them with the shared ones (`assembler.codes`)."""

from __future__ import annotations

from ...codes import INFO, WARNING, Code

# fmt: off
GEMINI_IMPORT_OUTSIDE = Code("CTX911", "gemini-import-outside", "a GEMINI.md @import that leaves the project: Gemini CLI refuses it", WARNING, WARNING)
GEMINI_IMPORT_TOO_DEEP = Code("CTX912", "gemini-import-too-deep", "a GEMINI.md @import past Gemini CLI's 5 levels: left in the text unread", None, WARNING)
GEMINI_IMPORT_FAILED = Code("CTX913", "gemini-import-failed", "a GEMINI.md @import that cannot be read: Gemini CLI inlines an error comment", WARNING, INFO)
GEMINI_IMPORT_CYCLE = Code("CTX914", "gemini-import-cycle", "GEMINI.md @imports that come back to a file of the chain: Gemini CLI inlines a marker", WARNING, INFO)
GEMINI_SETTINGS_INVALID = Code("CTX915", "gemini-settings-invalid", "a Gemini settings.json unusable, or a context.fileName of the wrong type: it is ignored", WARNING, WARNING)
# fmt: on

CODES = (
    GEMINI_IMPORT_OUTSIDE,
    GEMINI_IMPORT_TOO_DEEP,
    GEMINI_IMPORT_FAILED,
    GEMINI_IMPORT_CYCLE,
    GEMINI_SETTINGS_INVALID,
)
