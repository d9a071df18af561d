"""Lint output: `path:line:col: severity CODE message` lines and a summary, a JSON list, or
SARIF 2.1.0."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..clients import registry
from ..display import dumps, shown
from ..model import Severity
from .files import Finding

FORMATS = ("text", "json", "sarif")
_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)


def _version() -> str:
    # importlib.metadata costs ~18 ms to import: only SARIF output needs the version.
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ctxasm")
    except PackageNotFoundError:  # running from a checkout that was never installed
        return "0+unknown"


def text(findings: Sequence[Finding]) -> str:
    """`path:line:col: severity CODE message`, one line per finding."""
    return "".join(
        f"{shown(f.path)}:{f.line}:{f.col}: {_level(f)} {f.code} {shown(f.message)}\n"
        for f in findings
    )


def _level(finding: Finding) -> str:
    return (finding.severity or registry.lookup(finding.code).lint or Severity.INFO).value


# Git-ignored files the summary line names; a monorepo's hundreds of private files are
# counted past these (the library's `LintResult.ignored` holds them all).
NAMED_IGNORED = 10


def summary(
    findings: Sequence[Finding],
    files: int,
    ignored: Sequence[str] = (),
    memory: Sequence[str] = (),
    modelled: str = "",
) -> str:
    """The last line of the text output: how many findings of each severity, in how many files,
    which of those git ignores (an agent reads them all the same), the repository's auto
    memory, which lives outside it, and the client's release modelled."""
    counts = dict.fromkeys(Severity, 0)
    for f in findings:
        counts[f.severity or Severity.INFO] += 1
    parts = [
        f"{n} {level.value}{'s' if n != 1 else ''}"
        for level in (Severity.ERROR, Severity.WARNING, Severity.INFO)
        if (n := counts[level])
    ]
    said = ", ".join(parts) if parts else "no findings"
    line = f"{said} in {files} file{'s' if files != 1 else ''} checked"
    if modelled:
        line += f" as {modelled} loads them"
    if ignored:
        names = ", ".join(shown(name) for name in ignored[:NAMED_IGNORED])
        more = len(ignored) - NAMED_IGNORED
        names += f" and {more:,} more" if more > 0 else ""
        line += f", {len(ignored)} of them git-ignored (an agent reads them anyway): {names}"
    if memory:
        line += f"; with the repository's auto memory: {', '.join(shown(m) for m in memory)}"
    return line


def size_note(findings: Sequence[Finding]) -> str | None:
    """The line that says why a size finding is an error (`--size-errors`, the hook's
    default) and how a repository relaxes it; None when no finding is one."""
    raised = sorted(
        {
            f.code
            for f in findings
            if f.severity is Severity.ERROR
            and (entry := registry.lookup(f.code)).size
            and entry.lint is not Severity.ERROR
        }
    )
    if not raised:
        return None
    return (
        f"{', '.join(raised)}: errors with --size-errors (the pre-commit hook's default); "
        "shorten the file, or relax the code in [lint.severity] or with --no-size-errors"
    )


def as_json(findings: Sequence[Finding]) -> str:
    rows = [
        {
            "path": f.path,
            "line": f.line,
            "col": f.col,
            "code": f.code,
            "name": registry.lookup(f.code).name,
            "severity": f.severity.value if f.severity else None,
            "message": f.message,
        }
        for f in findings
    ]
    return dumps(rows, indent=2) + "\n"


def sarif(findings: Sequence[Finding]) -> str:
    """A SARIF 2.1.0 log with one run; rules list every check so uploads can show them all."""
    rules = registry.lint_codes()
    index = {rule.code: i for i, rule in enumerate(rules)}
    log: dict[str, Any] = {
        "$schema": _SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "ctxasm",
                        "version": _version(),
                        "rules": [
                            {
                                "id": rule.code,
                                "name": rule.name,
                                "shortDescription": {"text": rule.summary},
                                "defaultConfiguration": {
                                    "level": _SARIF_LEVEL[rule.lint or Severity.WARNING]
                                },
                            }
                            for rule in rules
                        ],
                    }
                },
                "originalUriBaseIds": {
                    "SRCROOT": {"description": {"text": "The directory ctxasm lint ran in."}}
                },
                "results": [
                    {
                        "ruleId": f.code,
                        "ruleIndex": index[f.code],
                        "level": _SARIF_LEVEL.get(f.severity or Severity.WARNING, "warning"),
                        "message": {"text": f.message},
                        "locations": [
                            {
                                "physicalLocation": {
                                    "artifactLocation": {
                                        "uri": _uri(f.path),
                                        "uriBaseId": "SRCROOT",
                                    },
                                    "region": {"startLine": f.line, "startColumn": f.col},
                                }
                            }
                        ],
                    }
                    for f in findings
                ],
            }
        ],
    }
    return dumps(log, indent=2) + "\n"


def _uri(path: str) -> str:
    from urllib.parse import quote

    # A file name that is not UTF-8 reaches us with surrogate escapes: give back its bytes.
    return quote(path.replace("\\", "/"), safe="/:~-._", errors="surrogateescape")


def render(findings: Sequence[Finding], fmt: str) -> str:
    if fmt == "json":
        return as_json(findings)
    if fmt == "sarif":
        return sarif(findings)
    return text(findings)
