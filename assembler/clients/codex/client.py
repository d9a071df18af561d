"""The `codex` client: what Codex CLI (observed on 0.171) puts in its AGENTS.md user message.

Rules (SPEC section 5; openai/codex `codex-rs/core/src/project_doc.rs`, `agents_md.rs`):
  * global instructions: `CODEX_HOME/AGENTS.override.md`, else `CODEX_HOME/AGENTS.md`
    (`CODEX_HOME` defaults to `~/.codex`), trimmed; an empty one falls through to the next;
  * the project root is the nearest ancestor of cwd holding one of `project_root_markers`
    (default `.git`); none found, or no markers: cwd alone. From the root down to cwd, each
    directory gives the first of `AGENTS.override.md`, `AGENTS.md`, then the configured
    `project_doc_fallback_filenames` that is a file or a symlink; nothing above the root,
    nothing below cwd;
  * `project_doc_max_bytes` (default 32,768; 0: no project docs) is shared by the project
    docs, root first: each is read up to what is left, the one that crosses the limit is
    cut and the later ones are dropped; a doc that is only whitespace costs nothing. Codex
    cuts bytes blindly (a character may be split); ctxasm cuts at the character boundary
    before, and reports the cut (CTX901) and the docs dropped (CTX902);
  * a doc Codex finds but cannot read makes it load no project doc at all (CTX904);
  * text: the global instructions, `\\n\\n--- project-doc ---\\n\\n` when both are there, the
    project docs joined by `\\n\\n`, raw; the `codex` format wraps it as
    `# AGENTS.md instructions for <cwd>\\n\\n<INSTRUCTIONS>\\n<text>\\n</INSTRUCTIONS>`.
Settings come from `CODEX_HOME/config.toml` (`config`).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ... import codes
from ...discovery.context import Discovery, LoadNote, Run
from ...discovery.loader import Loader, text_source
from ...discovery.reader import ReadStatus
from ...model import Assembled, Cut, Layer, Reason, Source, Why
from ..base import PLAIN_FILE_CHECKS, Advice, Client, FileKind, FileRole, FormatContext
from ..headless import Headless
from ..walk import marked_root, root_to_cwd
from .codes import (
    CODES,
    CODEX_CONFIG_INVALID,
    CODEX_DOC_CUT,
    CODEX_DOC_DROPPED,
    CODEX_DOC_SHADOWED,
    CODEX_DOCS_FAILED,
)
from .config import OVERRIDE, PRIMARY, CodexConfig, read_config
from .headless import CodexHeadless
from .versions import TABLE

NAME = "codex"
SEPARATOR = "\n\n--- project-doc ---\n\n"
# What Rust's `str::trim` removes: Unicode White_Space.
RUST_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
_GLOBAL = Reason(Why.USER_FILE, "Codex global instructions (CODEX_HOME)")
_IN_CWD = Reason(Why.CWD, "project doc in cwd")
_ON_THE_WAY = Reason(Why.ANCESTOR, "project doc between the project root and cwd")
_NAMES = (PRIMARY, OVERRIDE)
# Codex's `read_project_docs` stops at the first error that is not "not found".
_FAILED = (ReadStatus.UNREADABLE, ReadStatus.DIRECTORY, ReadStatus.LOOP, ReadStatus.SPECIAL)


class Codex(Client[CodexConfig]):
    name = NAME
    title = "Codex"
    read_when_ignored = ("**/AGENTS.md", "**/AGENTS.override.md")  # read by name, ignored or not
    advice = Advice(split="move detail into the AGENTS.md of the directory it is about")
    notes_at_start = True  # the byte budget: where Codex stops reading (lint reports it)
    own_codes = CODES
    instruction_files = r"(?:^|/)AGENTS(?:\.override)?\.md$"
    lint_codes = PLAIN_FILE_CHECKS | {CODEX_DOC_CUT.code, CODEX_DOC_DROPPED.code}
    versions = TABLE
    version_command = ("codex", "--version")

    @property
    def formats(self) -> Mapping[str, FormatContext]:
        return {NAME: agents_message}

    def discover(self, run: Run) -> Discovery[CodexConfig]:
        loader = Loader(run)
        config, problems = read_config(run.context, run.disk)
        for path, problem in problems:
            loader.note(CODEX_CONFIG_INVALID, path, problem)
        notes: list[LoadNote] = []
        sources = [*_global(config, loader), *_project_docs(run, config, loader, notes)]
        notes += loader.notes  # docs above the project that reach elsewhere
        return Discovery(
            tuple(sources), tuple(loader.diagnostics), state=config, notes=tuple(notes)
        )

    def classify(self, path: Path) -> FileRole | None:
        # (An AGENTS.md in a skill's folder is the skill's reference: lint says so first.)
        return FileRole(FileKind.INSTRUCTIONS, path.parent) if path.name in _NAMES else None

    @property
    def headless(self) -> Headless:
        return HEADLESS


CLIENT = Codex()


def _global(config: CodexConfig, loader: Loader) -> list[Source]:
    """`AGENTS.override.md`, else `AGENTS.md`, in CODEX_HOME: the first with text."""
    for name in (OVERRIDE, PRIMARY):
        path = str(config.home / name)
        loader.trace(path, Layer.USER, _GLOBAL)
        parsed = loader.read(path, "global instructions")
        if parsed is None:
            continue
        content = parsed.text.strip(RUST_SPACE)
        if not content:
            loader.note(codes.EMPTY, path, "global instructions are empty; Codex reads the next")
            continue
        source = text_source(
            Layer.USER, path, loader.display(path), _GLOBAL, content,
            loader.policy.tag_for(Layer.USER), loader.counter, raw=parsed.text,
        )  # fmt: skip
        return [source]
    return []


def _candidates(run: Run, config: CodexConfig, loader: Loader) -> list[str] | None:
    """Codex's `discover_project_doc_paths`: one path per directory, root to cwd; None when
    a candidate could not be looked at (Codex then loads no project doc)."""
    ctx = run.context
    root = marked_root(ctx.cwd, config.markers, run.disk)
    found: list[str] = []
    for directory in root_to_cwd(ctx.cwd, root):
        reason = _IN_CWD if directory == str(ctx.cwd) else _ON_THE_WAY
        chosen: str | None = None
        for name in config.names:
            path = os.path.join(directory, name)
            if chosen is None:
                loader.trace(path, Layer.PROJECT, reason)
            try:
                mode = run.disk.lstat(path).st_mode
            except OSError as err:
                if err.errno in (errno.ENOENT, errno.ENOTDIR):
                    continue
                loader.note(
                    CODEX_DOCS_FAILED, path,
                    f"Codex cannot look at this project doc ({err.strerror}) and loads no project doc at all: fix its permissions",
                )  # fmt: skip
                return None
            except ValueError:
                continue
            if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
                continue
            if chosen is None:
                chosen = path
                found.append(path)
            else:
                loader.note(
                    CODEX_DOC_SHADOWED, path,
                    f"not read by Codex: {loader.display(chosen)} comes first in this directory",
                )  # fmt: skip
                break
    return found


def _project_docs(
    run: Run, config: CodexConfig, loader: Loader, notes: list[LoadNote]
) -> list[Source]:
    """Codex's `read_project_docs`: the docs root to cwd within `project_doc_max_bytes`."""
    if config.max_bytes == 0:
        return []
    found = _candidates(run, config, loader)
    if found is None:
        return []
    out: list[Source] = []
    remaining = config.max_bytes
    cwd = str(run.context.cwd)
    skip = run.policy.limits.skip_bytes
    for index, path in enumerate(found):
        if remaining == 0:
            for dropped in found[index:]:
                message = (
                    f"not loaded by Codex: the {config.max_bytes:,}-byte project_doc_max_bytes "
                    "is spent by the docs above it; shorten those or raise the limit in config.toml"
                )
                loader.note(CODEX_DOC_DROPPED, dropped, message)
                notes.append(LoadNote(dropped, 1, 1, CODEX_DOC_DROPPED.code, message))
            break
        result = run.disk.read_head(path, min(remaining, skip))
        if result.status in (ReadStatus.MISSING, ReadStatus.BROKEN_LINK):
            if result.status is ReadStatus.BROKEN_LINK:
                loader.note(
                    codes.BROKEN_SYMLINK,
                    path,
                    f"project doc is a broken symlink ({result.detail}); Codex skips it",
                )
            continue
        if result.status in _FAILED:
            loader.note(
                CODEX_DOCS_FAILED, path,
                f"Codex cannot read this project doc ({result.detail or result.status.value}) and loads no project doc at all: fix it or remove it",
            )  # fmt: skip
            return []
        if result.status is ReadStatus.BINARY:
            loader.note(codes.BINARY, path, f"project doc is binary ({result.detail}); not loaded")
            continue
        if remaining > skip and result.size > skip:
            loader.note(
                codes.TOO_LARGE,
                path,
                f"project doc is {result.size:,} bytes; ctxasm reads at most {skip:,}",
            )
            continue
        data = result.data
        kept = utf8_boundary(data) if result.size > len(data) else len(data)
        text = data[:kept].decode("utf-8", "replace")
        if not text.strip(RUST_SPACE):
            continue  # Codex skips it, and it costs no budget
        remaining -= len(data)
        reason = _IN_CWD if os.path.dirname(path) == cwd else _ON_THE_WAY
        source = text_source(
            Layer.PROJECT, path, loader.display(path), reason, text.strip(RUST_SPACE),
            loader.policy.tag_for(Layer.PROJECT), loader.counter, raw=text,
        )  # fmt: skip
        if result.size > len(data):
            whole = run.disk.read(path, skip)  # what never reaches the model, for the report
            rest = whole.data[kept:].decode("utf-8", "replace") if whole.ok else ""
            source = _cut(source, config, data, kept, result.size, rest, loader, notes)
        loader.note_if_outside(path, "project doc", above=True)  # the root may be above
        out.append(source)
    return out


def utf8_boundary(data: bytes) -> int:
    """The length of the longest prefix of `data` that ends at a UTF-8 character boundary."""
    end = len(data)
    lead = end
    while lead > 0 and end - lead < 4 and data[lead - 1] & 0xC0 == 0x80:
        lead -= 1
    if lead == 0:
        return end
    first = data[lead - 1]
    width = 1 if first < 0x80 else 2 if first >> 5 == 0b110 else 3 if first >> 4 == 0b1110 else 4
    return end if end - (lead - 1) >= width else lead - 1


def _cut(
    source: Source,
    config: CodexConfig,
    data: bytes,
    kept: int,
    size: int,
    rest: str,
    loader: Loader,
    notes: list[LoadNote],
) -> Source:
    """The doc that crosses the budget: where Codex stops reading (`rest`: the text it never
    reads, "" when the file could not be read whole), in a diagnostic and as a cut."""
    line = data.count(b"\n") + 1
    split = (
        f"; Codex splits a character there, ctxasm keeps {kept:,} bytes" if kept < len(data) else ""
    )
    lost = f": {len(rest):,} characters never reach the model" if rest else ""
    message = (
        f"Codex stops reading at line {line} (byte {len(data):,} of {size:,}){lost}; the "
        f"{config.max_bytes:,}-byte project_doc_max_bytes is spent{split}; "
        "move what follows into a deeper AGENTS.md or raise the limit in config.toml"
    )
    loader.note(CODEX_DOC_CUT, source.path, message)
    notes.append(LoadNote(source.path, line, 1, CODEX_DOC_CUT.code, message))
    lines = rest.count("\n")
    cut = Cut(
        "codex-budget",
        f"{size - kept:,} bytes past project_doc_max_bytes",
        lines,
        len(rest) if rest else size - kept,
        loader.counter(rest) if rest else (size - kept) // 4,
    )
    return source._replace(cuts=(cut,))


# --- the `codex` format -------------------------------------------------------------------


def agents_message(assembly: Assembled, date: str) -> Mapping[str, Any]:
    """The variables of `templates/codex.j2`: cwd and Codex's user instructions text."""
    live = [s for s in assembly.sources if not s.dropped]
    user = "".join(s.content for s in live if s.reason.why is Why.USER_FILE)
    docs = [_as_sent(s) for s in live if s.layer is Layer.PROJECT]
    text = user
    if docs:
        text += (SEPARATOR if text else "") + "\n\n".join(docs)
    # Only CODEX_HOME's file contributing, the header names no directory (SPEC 4b, 0.171).
    return {"cwd": assembly.cwd if docs else "", "text": text}


def _as_sent(source: Source) -> str:
    """A project doc as Codex sends it: raw, unless the token budget trimmed it."""
    return source.raw if source.content == source.raw.strip(RUST_SPACE) else source.content


# How `ctxasm verify` runs it (`headless`), in its words above.
HEADLESS = CodexHeadless(SEPARATOR)
