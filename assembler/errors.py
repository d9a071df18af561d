"""One exception base; one subclass per stage. The CLI maps them to exit codes in one place."""

from __future__ import annotations


class AssemblerError(Exception):
    """An expected error: the message is one line that names the file and the next step."""

    exit_code = 2


class RequestError(AssemblerError):
    """A library option that cannot be used: a negative budget, a path given as bytes or
    holding a NUL byte, a single path where a list of them is expected."""


class PolicyError(AssemblerError):
    """A policy or project configuration file is invalid."""


class DiscoveryError(AssemblerError):
    """The working directory or another discovery input is unusable."""


class BudgetError(AssemblerError):
    """A budget that cannot be met (e.g. managed sources alone exceed it)."""

    exit_code = 1


class RenderError(AssemblerError):
    """An unknown format or a template that cannot be found or rendered."""


class SkillError(AssemblerError):
    """A skill asked for by name that is not listed or cannot be read."""


class CacheError(AssemblerError):
    """Cache options that the API would reject, or a snapshot that cannot be used."""


class ConversationError(AssemblerError):
    """A conversation step that could not be done (a `raw.jsonl` that cannot be written, a
    summariser that failed): the message list is left as it was."""


class VerifyError(AssemblerError):
    """`ctxasm verify` could not run the client or read what it sent (not installed, no
    version to read, a timeout, fewer requests than a run makes)."""
