"""`@imports`: which tokens are imports, and where they point (Claude Code 2.1.x rules).

`@` must start the text or follow whitespace; `\\ ` escapes a space; a `#fragment` is dropped;
accepted forms are `./x`, `../x`, `~/x`, `/abs` and bare names starting with `[A-Za-z0-9._-]`.
Imports are looked for only outside code and non-comment HTML (see `markdown.import_texts`).
Paths resolve against the directory of the importing file's real path.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator

from .markdown import import_texts
from .marked.jsre import JS_SPACE

# A superset of where an import can start: `@` at a line start, after white space, or right
# after an inline token `marked` ends text with (any of them ends in ASCII punctuation).
# (Each pattern starts with the `@` and looks behind it: `re` then skips to each `@` at once.)
_MAYBE_IMPORT = re.compile(rf"@(?<![^{JS_SPACE}\s!-/:-@\[-`{{-~]@)")
# The client's pattern, `(?:^|\s)@((?:[^\s\\]|\\ )+)` with JavaScript's `\s`.
IMPORT_PATTERN = re.compile(rf"@(?<![^{JS_SPACE}]@)((?:[^{JS_SPACE}\\]|\\ )+)")
_BARE_START = re.compile(r"[a-zA-Z0-9._-]")
_BAD_START = re.compile(r"[#%^&*()]+")

# Claude Code's TEXT_FILE_EXTENSIONS (107 entries, checked lowercased; no extension is allowed).
TEXT_EXTENSIONS = frozenset(
    [
        ".md",
        ".txt",
        ".text",
        ".json",
        ".yaml",
        ".yml",
        ".toml",
        ".xml",
        ".csv",
        ".html",
        ".htm",
        ".css",
        ".scss",
        ".sass",
        ".less",
        ".js",
        ".ts",
        ".tsx",
        ".jsx",
        ".mjs",
        ".cjs",
        ".mts",
        ".cts",
        ".py",
        ".pyi",
        ".pyw",
        ".rb",
        ".erb",
        ".rake",
        ".go",
        ".rs",
        ".java",
        ".kt",
        ".kts",
        ".scala",
        ".c",
        ".cpp",
        ".cc",
        ".cxx",
        ".h",
        ".hpp",
        ".hxx",
        ".cs",
        ".swift",
        ".sh",
        ".bash",
        ".zsh",
        ".fish",
        ".ps1",
        ".bat",
        ".cmd",
        ".env",
        ".ini",
        ".cfg",
        ".conf",
        ".config",
        ".properties",
        ".sql",
        ".graphql",
        ".gql",
        ".proto",
        ".vue",
        ".svelte",
        ".astro",
        ".ejs",
        ".hbs",
        ".pug",
        ".jade",
        ".php",
        ".pl",
        ".pm",
        ".lua",
        ".r",
        ".R",
        ".dart",
        ".ex",
        ".exs",
        ".erl",
        ".hrl",
        ".clj",
        ".cljs",
        ".cljc",
        ".edn",
        ".hs",
        ".lhs",
        ".elm",
        ".ml",
        ".mli",
        ".f",
        ".f90",
        ".f95",
        ".for",
        ".cmake",
        ".make",
        ".makefile",
        ".gradle",
        ".sbt",
        ".rst",
        ".adoc",
        ".asciidoc",
        ".org",
        ".tex",
        ".latex",
        ".lock",
        ".log",
        ".diff",
        ".patch",
    ]
)


def _tokens(text: str) -> Iterator[str]:
    for piece in import_texts(text):
        for match in IMPORT_PATTERN.finditer(piece):
            path = match.group(1)
            hash_at = path.find("#")
            if hash_at != -1:
                path = path[:hash_at]
            if not path:
                continue
            path = path.replace("\\ ", " ")
            valid = (
                path.startswith(("./", "~/"))
                or (path.startswith("/") and path != "/")
                or (
                    not path.startswith("@")
                    and not _BAD_START.match(path)
                    and _BARE_START.match(path) is not None
                )
            )
            if valid:
                yield path


def resolve(token: str, base_dir: str, home: str) -> str:
    """Claude Code's `expandPath`: `~/` is the home directory; relative is from `base_dir`."""
    token = token.strip()
    if token == "~":
        return home
    if token.startswith("~/"):
        return os.path.normpath(os.path.join(home, token[2:]))
    if os.path.isabs(token):
        return os.path.normpath(token)
    return os.path.normpath(os.path.join(base_dir, token))


def import_tokens(text: str) -> tuple[str, ...]:
    """The import tokens of `text` as written, in order of appearance (before resolving)."""
    if "@" not in text or not _MAYBE_IMPORT.search(text):
        return ()
    return tuple(token for token in _tokens(text) if "\0" not in token)


def resolve_imports(tokens: Iterable[str], base_dir: str, home: str) -> list[tuple[str, str]]:
    """(token as written, absolute path) for each distinct target, in order of appearance."""
    return list(iter_imports(tokens, base_dir, home))


def iter_imports(tokens: Iterable[str], base_dir: str, home: str) -> Iterator[tuple[str, str]]:
    """`resolve_imports` one at a time (lint stops early in a file of 200,000 imports)."""
    seen: set[str] = set()
    for token in tokens:
        path = resolve(token, base_dir, home)
        if path not in seen:
            seen.add(path)
            yield token, path


def find_imports(text: str, base_dir: str, home: str) -> list[tuple[str, str]]:
    """(token as written, absolute path) for each distinct import, in order of appearance."""
    return resolve_imports(import_tokens(text), base_dir, home)


def has_text_extension(path: str) -> bool:
    """Claude Code's check: no extension, or one of TEXT_EXTENSIONS (case-insensitive)."""
    if path.endswith(".md"):  # nearly every path asked about
        return True
    ext = _extname(os.path.basename(path)).lower()
    return not ext or ext in TEXT_EXTENSIONS


def _extname(name: str) -> str:
    """Node's `path.extname`: '' for dotfiles and names without a dot; '.' for 'foo.'."""
    dot = name.rfind(".")
    if dot <= 0 or name.lstrip(".") == "":
        return ""
    return name[dot:]
