"""Policies: TOML documents that say where to look, the limits, and how to render.

Built-in policies live in `policies/` (shipped in the wheel). A project extends one from
`.ctxasm.toml` or `[tool.ctxasm]` in `pyproject.toml`; `--policy` also takes a TOML path.
Every document is checked against one schema when it loads: unknown keys, wrong types, an
unknown `client` (the client registry) or `render.format` (the format registry) are errors
that name the file and the key. Policy files are read through the run's `Disk`, bounded, so
the `Assembler` and `ctxasm watch` follow edits to them.
"""

from __future__ import annotations

import os
import re
import stat
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from . import resources
from .clients import registry
from .clients.base import Client
from .discovery.disk import Disk
from .discovery.locations import within
from .discovery.reader import ReadStatus
from .display import shown
from .errors import PolicyError
from .model import (
    BOUNDARY,
    ContentRules,
    Layer,
    Limits,
    LintSettings,
    Policy,
    RulesOrder,
    WorkspaceFile,
)
from .output import formats
from .parsing.parse import toml_document

# What a project without a configuration of its own runs with (the registry says whose).
DEFAULT_POLICY = registry.default_policy()
PROJECT_CONFIG = ".ctxasm.toml"
POLICY_BYTES = 1024 * 1024  # a policy is a page of TOML; a pyproject.toml rarely passes 100 KB

__all__ = [
    "DEFAULT_POLICY",
    "PROJECT_CONFIG",
    "Policy",
    "builtin_names",
    "find_project_config",
    "is_policy_path",
    "load_policy",
    "resolve_policy",
]


# --- schema -------------------------------------------------------------------------------

Check = Callable[[object], bool]


def _is_int(v: object) -> bool:
    return type(v) is int and v >= 0


def _is_str(v: object) -> bool:
    return isinstance(v, str)


def _is_bool(v: object) -> bool:
    return isinstance(v, bool)


def _one_of(*choices: str) -> Check:
    return lambda v: v in choices


def _list_of(check: Check) -> Check:
    return lambda v: isinstance(v, list) and all(check(x) for x in v)


# Every string a policy sets has a length limit, and every list and table of strings a
# count: the marker added to each cut file, the boundary, the text of a missing workspace
# file end up in every rendering (a 1,000,000-character marker on 999 cut rules made a
# gigabyte), and the lists are searched for each code (`[lint] select`). Names and paths
# get what a path may hold (4,096, Linux's PATH_MAX), texts 1,024, names of things 64.
MAX_NAME = 64  # a tag, a layer, a code or code prefix, an order
MAX_LINE = 256  # a policy's name, a client's, a format's, the boundary marker
MAX_TEXT = 1024  # the truncation marker, the text of a missing workspace file
MAX_PATH = 4096  # `extends`, a workspace file's path, the description
MAX_ENTRIES = 1000  # of any list or table of strings

_LAYERS = tuple(layer.value for layer in Layer)
_ORDERS = tuple(order.value for order in RulesOrder)
_INT, _BOOL = (_is_int, "a non-negative integer", 0), (_is_bool, "true or false", 0)  # 0: no length


def _text(limit: int) -> tuple[Check, str, int]:
    return (_is_str, "a string", limit)


_LAYER = (_one_of(*_LAYERS), f"one of {', '.join(_LAYERS)}", MAX_NAME)
_LINT_LEVELS = ("error", "warning", "info", "off")

# A section's tag: lower-case letters, digits and `_`, so that a policy can neither break the
# markup nor forge another layer's tag with an attribute or a namespace.
TAG_NAME = re.compile(r"[a-z_][a-z0-9_]*")
_TAG = (
    lambda v: isinstance(v, str) and TAG_NAME.fullmatch(v) is not None,
    "a tag name (a lower-case letter or _, then lower-case letters, digits or _)",
    MAX_NAME,
)
# Settings that bound what a run reads cannot be raised past these, by any policy.
MAX_IMPORT_DEPTH = 64
MAX_SKIP_BYTES = 16 * 1024 * 1024


def _int_up_to(top: int) -> tuple[Check, str, int]:
    return (lambda v: _is_int(v) and v <= top, f"a non-negative integer up to {top:,}", 0)


_WORKSPACE_FILE: dict[str, Any] = {
    "path": _text(MAX_PATH),
    "tag": _TAG,
    "layer": _LAYER,
    "index": _BOOL,
}

_SCHEMA: dict[str, Any] = {
    "name": _text(MAX_LINE),
    "description": _text(MAX_PATH),
    "extends": _text(MAX_PATH),
    "client": (
        lambda v: v in registry.names(),
        lambda: "one of " + ", ".join(registry.names()),
        MAX_LINE,
    ),
    "limits": {
        "file_chars": _INT,
        "truncation_marker": _text(MAX_TEXT),
        "skip_bytes": _int_up_to(MAX_SKIP_BYTES),
        "large_file_chars": _INT,
        "index_lines": _INT,
        "index_chars": _INT,
        "max_tokens": _INT,
    },
    "content": {"strip_frontmatter": _BOOL, "strip_html_comments": _BOOL, "skip_empty": _BOOL},
    "imports": {"enabled": _BOOL, "max_depth": _int_up_to(MAX_IMPORT_DEPTH)},
    "rules": {"order": (_one_of(*_ORDERS), " or ".join(repr(o) for o in _ORDERS), MAX_NAME)},
    "render": {
        "format": (
            lambda v: v in formats.names(),
            lambda: "one of " + ", ".join(formats.names()),
            MAX_LINE,
        ),
        "order": (_list_of(lambda v: _TAG[0](v)), "a list of section tags", MAX_NAME),
        "boundary": _text(MAX_LINE),
        "static_layers": (
            _list_of(_one_of(*_LAYERS)),
            f"a list of layers ({', '.join(_LAYERS)})",
            MAX_NAME,
        ),
        "source_attribute": _BOOL,
    },
    "tags": dict.fromkeys(_LAYERS, _TAG),
    "workspace": {"missing": _text(MAX_TEXT), "files": [_WORKSPACE_FILE]},
    "skills": {"enabled": _BOOL},
    "lint": {
        "select": (_list_of(_is_str), "a list of codes or code prefixes", MAX_NAME),
        "ignore": (_list_of(_is_str), "a list of codes or code prefixes", MAX_NAME),
        "severity": (
            lambda v: isinstance(v, dict) and all(x in _LINT_LEVELS for x in v.values()),
            'a table of CODE = "error" | "warning" | "info" | "off"',
            MAX_NAME,
        ),
        "max_lines": _INT,
        "max_bytes": _INT,
    },
}


def _validate(doc: Mapping[str, Any], schema: Mapping[str, Any], origin: str, prefix: str) -> None:
    for key, value in doc.items():
        dotted = f"{prefix}{key}"
        if key not in schema:
            known = ", ".join(sorted(schema))
            raise PolicyError(
                f"{origin}: unknown key '{shown(dotted, MAX_LINE)}'; known keys here: {known}"
            )
        spec = schema[key]
        if isinstance(spec, dict):
            if not isinstance(value, dict):
                raise PolicyError(f"{origin}: '{dotted}' must be a table")
            _validate(value, spec, origin, f"{dotted}.")
        elif isinstance(spec, list):
            if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
                raise PolicyError(f"{origin}: '{dotted}' must be an array of tables")
            _bounded(value, MAX_PATH, origin, dotted)
            for i, item in enumerate(value):
                _validate(item, spec[0], origin, f"{dotted}[{i}].")
        else:
            check, expected, limit = spec
            if limit:
                _bounded(value, limit, origin, dotted)  # its length first, then what it says
            if not check(value):
                wanted = expected() if callable(expected) else expected
                raise PolicyError(
                    f"{origin}: '{dotted}' must be {wanted}, not {shown(repr(value), MAX_LINE)}"
                )


def _bounded(value: object, limit: int, origin: str, dotted: str) -> None:
    """A string of at most `limit` characters; a list or table of at most `MAX_ENTRIES`,
    each string in it (a table's keys too) at most `limit`."""
    if isinstance(value, str):
        if len(value) > limit:
            raise PolicyError(
                f"{origin}: '{dotted}' is {len(value):,} characters, over the {limit:,}-character "
                "limit for it; shorten it"
            )
        return
    if isinstance(value, list | dict):
        if len(value) > MAX_ENTRIES:
            raise PolicyError(
                f"{origin}: '{dotted}' has {len(value):,} entries, over the {MAX_ENTRIES:,} a "
                "policy may list; list fewer"
            )
        if isinstance(value, dict):  # a table's keys: `lint.severity.CTX101`
            named = [(f"{dotted}.{shown(key, MAX_NAME)}", key) for key in value]
        else:
            named = [(f"{dotted}[{i}]", item) for i, item in enumerate(value)]
        for where, item in named:
            if isinstance(item, str):
                _bounded(item, limit, origin, where)


# --- loading ------------------------------------------------------------------------------


def _read_toml(path: Path, disk: Disk, data: bytes | None = None) -> dict[str, Any]:
    """The parsed file (`data`: its bytes, when read already). Never mutate the result: it is
    shared by every read of the same bytes."""
    if data is None:
        data = _read_bytes(path, disk)
    try:
        return toml_document(data)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise PolicyError(f"{path}: invalid TOML ({e}); fix the syntax") from None
    except RecursionError:
        raise PolicyError(f"{path}: invalid TOML (nested too deeply); fix the file") from None
    except ValueError as e:  # an integer too long to convert
        raise PolicyError(f"{path}: invalid TOML ({e}); fix the value") from None


def _read_bytes(path: Path, disk: Disk) -> bytes:
    result = disk.read(str(path), POLICY_BYTES)
    if result.status in (ReadStatus.OK, ReadStatus.BINARY):
        return result.data
    if result.status in (ReadStatus.MISSING, ReadStatus.BROKEN_LINK):
        raise PolicyError(f"{path}: policy file not found; check the path")
    if result.status is ReadStatus.TOO_LARGE:
        raise PolicyError(
            f"{path}: {result.size:,} bytes, over the {POLICY_BYTES:,}-byte limit for a policy; "
            "check the path"
        )
    raise PolicyError(f"{path}: cannot read ({result.detail}); check permissions")


def _may_configure_ctxasm(data: bytes) -> bool:
    """Whether a `pyproject.toml` can hold `[tool.ctxasm]` at all: not without the word, unless
    a quoted key spells it with escapes. Other projects' files are not parsed (nor judged)."""
    return b"ctxasm" in data or b"\\u" in data or b"\\U" in data


def builtin_names() -> tuple[str, ...]:
    return tuple(sorted(p.stem for p in resources.data_dir("policies").glob("*.toml")))


def _builtin_path(name: str) -> Path:
    path = resources.data_dir("policies") / f"{name}.toml"
    try:
        found = path.is_file()
    except OSError as err:  # an installation this user may not read
        raise PolicyError(f"{path}: cannot read ({err.strerror}); reinstall ctxasm") from None
    if not found:
        known = ", ".join(builtin_names())
        hint = " (`all` compares every agent, with `ctxasm explain` only)" if name == "all" else ""
        raise PolicyError(
            f"{name}: no such built-in policy{hint}; choose one of {known} or a .toml path"
        )
    return path


def _read_builtin(path: Path) -> dict[str, Any]:
    """A built-in policy ships with ctxasm: part of the program, not of the project, so it is
    read like any file but not observed (a watch does not follow the installation)."""
    return _read_toml(path, Disk())


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _load_document(
    doc: dict[str, Any],
    origin: str,
    base_dir: Path,
    seen: tuple[str, ...],
    disk: Disk,
    confine: Path | None = None,
) -> dict[str, Any]:
    """Validate one document and resolve its `extends` chain into one merged mapping.

    `confine`: the project a repository's own configuration came from; it may name no file
    outside it (`extends`, `workspace.files`). A `--policy` the user passes is not confined.
    """
    if "discoverer" in doc:
        raise PolicyError(f"{origin}: 'discoverer' is now called 'client'; rename the key")
    _validate(doc, _SCHEMA, origin, "")
    if confine is not None:
        _confine_workspace(doc, origin)
    parent = doc.get("extends")
    if parent is None:
        return doc
    if parent in seen:
        raise PolicyError(f"{origin}: 'extends' loops back to '{parent}'; break the cycle")
    if parent.endswith(".toml"):
        disk.saw(str(base_dir / parent))  # as named: a symlink retargeted later is seen
        parent_path = (base_dir / parent).resolve()
        if confine is not None and not within(str(parent_path), str(confine)):
            raise PolicyError(
                f"{origin}: 'extends' names {parent_path}, outside the project; a project's "
                "configuration may extend only built-in policies and files in the project "
                "(pass --policy to use another file)"
            )
        parent_doc = _read_toml(parent_path, disk)
    else:
        parent_path = _builtin_path(parent)
        parent_doc = _read_builtin(parent_path)
        confine = None  # a built-in policy is part of the program
    parent_doc = _load_document(
        parent_doc, str(parent_path), parent_path.parent, (*seen, parent), disk, confine
    )
    return _merge(parent_doc, {k: v for k, v in doc.items() if k != "extends"})


def _confine_workspace(doc: Mapping[str, Any], origin: str) -> None:
    """A repository's configuration names workspace files below cwd, as written (a link
    there that leads out is reported when the file is read, as any instruction file's)."""
    for i, item in enumerate(doc.get("workspace", {}).get("files", [])):
        path = item.get("path", "")
        if os.path.isabs(path) or path.startswith("~") or ".." in Path(path).parts:
            raise PolicyError(
                f"{origin}: 'workspace.files[{i}].path' is {path!r}, outside the project; a "
                "project's configuration may name only files in the project (pass --policy "
                "to use another file)"
            )


def _build(doc: Mapping[str, Any], origin: str) -> Policy:
    if "client" not in doc:
        raise PolicyError(f"{origin}: missing 'client'; add 'extends = \"{DEFAULT_POLICY}\"'")
    limits = doc.get("limits", {})
    imports = doc.get("imports", {})
    render = doc.get("render", {})
    workspace = doc.get("workspace", {})
    for f in workspace.get("files", []):
        if "path" not in f:
            raise PolicyError(f"{origin}: every 'workspace.files' entry needs a 'path'")
    mixed = formats.for_another_client(render.get("format", "xml"), doc["client"])
    if mixed is not None:
        raise PolicyError(f"{origin}: 'render.format': {mixed}")
    return Policy(
        name=doc.get("name", Path(origin).stem),
        origin=origin,
        client=doc["client"],
        description=doc.get("description", ""),
        limits=Limits(**limits),
        content=ContentRules(**doc.get("content", {})),
        imports=imports.get("enabled", True),
        import_depth=imports.get("max_depth", 4),
        rules_order=RulesOrder(doc.get("rules", {}).get("order", "directory")),
        format=render.get("format", "xml"),
        order=tuple(render.get("order", ())),
        boundary=render.get("boundary", BOUNDARY),
        static_layers=tuple(Layer(v) for v in render.get("static_layers", ("base", "managed"))),
        source_attribute=render.get("source_attribute", True),
        tags=tuple((Layer(k), v) for k, v in sorted(doc.get("tags", {}).items())),
        workspace=_workspace_files(workspace),
        missing_text=workspace.get("missing", "(file not found)"),
        skills=doc.get("skills", {}).get("enabled", True),
        lint=_lint_settings(doc.get("lint", {})),
    )


def _workspace_files(workspace: Mapping[str, Any]) -> tuple[WorkspaceFile, ...]:
    return tuple(
        WorkspaceFile(
            f["path"],
            f.get("tag", _tag_from(f["path"])),
            Layer(f.get("layer", "project")),
            f.get("index", False),
        )
        for f in workspace.get("files", [])
    )


def _tag_from(path: str) -> str:
    """A workspace file's tag when the policy names none: its stem, as a valid tag name."""
    tag = re.sub(r"[^a-z0-9_]", "_", Path(path).stem.lower())
    return tag if TAG_NAME.fullmatch(tag) else f"_{tag}"


def _lint_settings(lint: Mapping[str, Any]) -> LintSettings:
    defaults = LintSettings()
    return LintSettings(
        select=tuple(lint.get("select", ())),
        ignore=tuple(lint.get("ignore", ())),
        severity=tuple(sorted(lint.get("severity", {}).items())),
        max_lines=lint.get("max_lines", defaults.max_lines),
        max_bytes=lint.get("max_bytes", defaults.max_bytes),
    )


def is_policy_path(text: str) -> bool:
    """Whether a `--policy` value names a TOML file (else a built-in policy)."""
    return text.endswith(".toml") or os.sep in text or "/" in text


def load_policy(spec: str | os.PathLike[str], disk: Disk | None = None) -> Policy:
    """A built-in policy by name, or a policy TOML file by path."""
    disk = disk or Disk()
    text = os.fspath(spec)
    if is_policy_path(text):
        disk.saw(os.path.abspath(text))  # as named: a symlink retargeted later is seen
        path = Path(text).resolve()
        doc = _read_toml(path, disk)
        return _build(_load_document(doc, str(path), path.parent, (), disk), str(path))
    path = _builtin_path(text)
    doc = _read_builtin(path)
    return _build(_load_document(doc, str(path), path.parent, (text,), disk), str(path))


def find_project_config(
    cwd: Path, project_root: Path, disk: Disk | None = None
) -> tuple[Path, dict[str, Any]] | None:
    """The nearest `.ctxasm.toml` or `pyproject.toml` with `[tool.ctxasm]`, cwd up to the root."""
    disk = disk or Disk()
    directory, root = str(cwd), str(project_root)
    while True:
        config = os.path.join(directory, PROJECT_CONFIG)
        if _is_file(config, disk):
            return Path(config), _read_toml(Path(config), disk)
        pyproject = os.path.join(directory, "pyproject.toml")
        data = _read_bytes(Path(pyproject), disk) if _is_file(pyproject, disk) else b""
        if _may_configure_ctxasm(data):
            tool = _read_toml(Path(pyproject), disk, data).get("tool", {})
            table = tool.get("ctxasm") if isinstance(tool, dict) else None
            if isinstance(table, dict):
                return Path(pyproject), table
            if table is not None:
                raise PolicyError(
                    f"{pyproject}: [tool.ctxasm] must be a table, not {type(table).__name__}; "
                    "fix it or remove it"
                )
        parent = os.path.dirname(directory)
        if directory == root or parent == directory:
            return None
        directory = parent


def _is_file(path: str, disk: Disk) -> bool:
    """`Path.is_file` without building a `Path` (this runs twice per directory of every run)."""
    try:
        return stat.S_ISREG(disk.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def resolve_policy(
    spec: str | os.PathLike[str] | Policy | None,
    cwd: Path,
    project_root: Path,
    disk: Disk | None = None,
) -> Policy:
    """The policy for a run: an explicit one wins; else the project's config; else the default."""
    disk = disk or Disk()
    if isinstance(spec, Policy):
        return spec
    if spec is not None:
        return load_policy(spec, disk)
    found = find_project_config(cwd, project_root, disk)
    if found is None:
        return load_policy(DEFAULT_POLICY, disk)
    path, doc = found
    origin = f"{path} [tool.ctxasm]" if path.name == "pyproject.toml" else str(path)
    doc = {"extends": DEFAULT_POLICY, **doc}
    return _build(_load_document(doc, origin, path.parent, (), disk, project_root), origin)


def agent_policy(client: Client[Any]) -> Policy:
    """The policy `client` runs with when only the client is named (`explain --client`,
    `--policy all`, lint asking a client that loads a file what it says of it)."""
    spec = client.default_policy
    try:
        policy = load_policy(spec)
    except PolicyError as err:
        raise PolicyError(f"client {client.name}: {err}") from None
    if policy.client != client.name:
        raise PolicyError(
            f"client {client.name}: its policy {policy.name} runs client {policy.client}; "
            "fix the client's default_policy"
        )
    return policy
