"""Policies: TOML documents that say where to look, the limits, and how to render.

Built-in policies live in `policies/` (shipped in the wheel). A project extends one from
`.ctxasm.toml` or `[tool.ctxasm]` in `pyproject.toml`; `--policy` also takes a TOML path.
Every document is checked against one schema: unknown keys and wrong types are errors that
name the file and the key.
"""

from __future__ import annotations

import functools
import os
import stat
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from .errors import PolicyError
from .model import Layer
from .resources import data_dir

DEFAULT_POLICY = "claude-code"
BOUNDARY = "__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__"
PROJECT_CONFIG = ".ctxasm.toml"


class Limits(NamedTuple):
    file_chars: int = 0
    truncation_marker: str = "\n...(truncated)"
    skip_bytes: int = 4 * 1024 * 1024
    large_file_chars: int = 40_000
    index_lines: int = 200
    index_chars: int = 25_000
    max_tokens: int = 0


class ContentRules(NamedTuple):
    strip_frontmatter: bool = True
    strip_html_comments: bool = True
    skip_empty: bool = True


class WorkspaceFile(NamedTuple):
    path: str
    tag: str
    layer: Layer
    is_index: bool = False


class Policy(NamedTuple):
    name: str
    origin: str
    discoverer: str
    description: str = ""
    limits: Limits = Limits()
    content: ContentRules = ContentRules()
    imports: bool = True
    import_depth: int = 4
    rules_order: str = "directory"
    format: str = "xml"
    order: tuple[str, ...] = ()
    boundary: str = BOUNDARY
    static_layers: tuple[Layer, ...] = (Layer.BASE, Layer.MANAGED)
    source_attribute: bool = True
    tags: tuple[tuple[Layer, str], ...] = ()
    workspace: tuple[WorkspaceFile, ...] = ()
    missing_text: str = "(file not found)"
    skills: bool = True  # the `<skills>` index (claude-code discoverer only)
    lint_select: tuple[str, ...] = ()
    lint_ignore: tuple[str, ...] = ()
    lint_severity: tuple[tuple[str, str], ...] = ()

    def tag_for(self, layer: Layer) -> str:
        return dict(self.tags).get(layer, layer.value)


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


_LAYERS = tuple(layer.value for layer in Layer)
_INT, _STR, _BOOL = (
    (_is_int, "a non-negative integer"),
    (_is_str, "a string"),
    (_is_bool, "true or false"),
)
_LAYER = (_one_of(*_LAYERS), f"one of {', '.join(_LAYERS)}")
_LINT_LEVELS = ("error", "warning", "info", "off")

_WORKSPACE_FILE: dict[str, Any] = {
    "path": _STR,
    "tag": _STR,
    "layer": _LAYER,
    "index": _BOOL,
}

_SCHEMA: dict[str, Any] = {
    "name": _STR,
    "description": _STR,
    "extends": _STR,
    "discoverer": (_one_of("claude-code", "bootstrap"), "'claude-code' or 'bootstrap'"),
    "limits": {
        "file_chars": _INT,
        "truncation_marker": _STR,
        "skip_bytes": _INT,
        "large_file_chars": _INT,
        "index_lines": _INT,
        "index_chars": _INT,
        "max_tokens": _INT,
    },
    "content": {"strip_frontmatter": _BOOL, "strip_html_comments": _BOOL, "skip_empty": _BOOL},
    "imports": {"enabled": _BOOL, "max_depth": _INT},
    "rules": {"order": (_one_of("directory", "name"), "'directory' or 'name'")},
    "render": {
        "format": _STR,
        "order": (_list_of(_is_str), "a list of section tags"),
        "boundary": _STR,
        "static_layers": (_list_of(_one_of(*_LAYERS)), f"a list of layers ({', '.join(_LAYERS)})"),
        "source_attribute": _BOOL,
    },
    "tags": dict.fromkeys(_LAYERS, _STR),
    "workspace": {"missing": _STR, "files": [_WORKSPACE_FILE]},
    "skills": {"enabled": _BOOL},
    "lint": {
        "select": (_list_of(_is_str), "a list of codes or code prefixes"),
        "ignore": (_list_of(_is_str), "a list of codes or code prefixes"),
        "severity": (
            lambda v: isinstance(v, dict) and all(x in _LINT_LEVELS for x in v.values()),
            'a table of CODE = "error" | "warning" | "info" | "off"',
        ),
    },
}


def _validate(doc: Mapping[str, Any], schema: Mapping[str, Any], origin: str, prefix: str) -> None:
    for key, value in doc.items():
        dotted = f"{prefix}{key}"
        if key not in schema:
            known = ", ".join(sorted(schema))
            raise PolicyError(f"{origin}: unknown key '{dotted}'; known keys here: {known}")
        spec = schema[key]
        if isinstance(spec, dict):
            if not isinstance(value, dict):
                raise PolicyError(f"{origin}: '{dotted}' must be a table")
            _validate(value, spec, origin, f"{dotted}.")
        elif isinstance(spec, list):
            if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
                raise PolicyError(f"{origin}: '{dotted}' must be an array of tables")
            for i, item in enumerate(value):
                _validate(item, spec[0], origin, f"{dotted}[{i}].")
        else:
            check, expected = spec
            if not check(value):
                raise PolicyError(f"{origin}: '{dotted}' must be {expected}, not {value!r}")


# --- loading ------------------------------------------------------------------------------


def _read_toml(path: Path, data: bytes | None = None) -> dict[str, Any]:
    """The parsed file (`data`: its bytes, when read already). Never mutate the result: it is
    shared by every read of the same bytes."""
    if data is None:
        data = _read_bytes(path)
    try:
        return _parse_toml(data)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise PolicyError(f"{path}: invalid TOML ({e}); fix the syntax") from None


def _read_bytes(path: Path) -> bytes:
    try:
        with path.open("rb") as f:
            return f.read()
    except FileNotFoundError:
        raise PolicyError(f"{path}: policy file not found; check the path") from None
    except OSError as e:
        raise PolicyError(f"{path}: cannot read ({e.strerror}); check permissions") from None


def _may_configure_ctxasm(data: bytes) -> bool:
    """Whether a `pyproject.toml` can hold `[tool.ctxasm]` at all: not without the word, unless
    a quoted key spells it with escapes. Other projects' files are not parsed (nor judged)."""
    return b"ctxasm" in data or b"\\u" in data or b"\\U" in data


@functools.lru_cache(maxsize=32)
def _parse_toml(data: bytes) -> dict[str, Any]:
    # Keyed by the bytes read, so a changed file is parsed again: an agent's process
    # assembling every turn parses its policy once.
    return tomllib.loads(data.decode("utf-8"))


def builtin_names() -> tuple[str, ...]:
    return tuple(sorted(p.stem for p in data_dir("policies").glob("*.toml")))


def _builtin_path(name: str) -> Path:
    path = data_dir("policies") / f"{name}.toml"
    if not path.is_file():
        known = ", ".join(builtin_names())
        raise PolicyError(f"{name}: no such built-in policy; choose one of {known} or a .toml path")
    return path


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _load_document(
    doc: dict[str, Any], origin: str, base_dir: Path, seen: tuple[str, ...]
) -> dict[str, Any]:
    """Validate one document and resolve its `extends` chain into one merged mapping."""
    _validate(doc, _SCHEMA, origin, "")
    parent = doc.get("extends")
    if parent is None:
        return doc
    if parent in seen:
        raise PolicyError(f"{origin}: 'extends' loops back to '{parent}'; break the cycle")
    if parent.endswith(".toml"):
        parent_path = (base_dir / parent).resolve()
    else:
        parent_path = _builtin_path(parent)
    parent_doc = _load_document(
        _read_toml(parent_path), str(parent_path), parent_path.parent, (*seen, parent)
    )
    return _merge(parent_doc, {k: v for k, v in doc.items() if k != "extends"})


def _build(doc: Mapping[str, Any], origin: str) -> Policy:
    if "discoverer" not in doc:
        raise PolicyError(f"{origin}: missing 'discoverer'; add 'extends = \"claude-code\"'")
    limits = doc.get("limits", {})
    content = doc.get("content", {})
    imports = doc.get("imports", {})
    render = doc.get("render", {})
    workspace = doc.get("workspace", {})
    files = tuple(
        WorkspaceFile(
            f["path"],
            f.get("tag", Path(f["path"]).stem),
            Layer(f.get("layer", "project")),
            f.get("index", False),
        )
        for f in workspace.get("files", [])
    )
    for f in workspace.get("files", []):
        if "path" not in f:
            raise PolicyError(f"{origin}: every 'workspace.files' entry needs a 'path'")
    return Policy(
        name=doc.get("name", Path(origin).stem),
        origin=origin,
        discoverer=doc["discoverer"],
        description=doc.get("description", ""),
        limits=Limits(**limits),
        content=ContentRules(**content),
        imports=imports.get("enabled", True),
        import_depth=imports.get("max_depth", 4),
        rules_order=doc.get("rules", {}).get("order", "directory"),
        format=render.get("format", "xml"),
        order=tuple(render.get("order", ())),
        boundary=render.get("boundary", BOUNDARY),
        static_layers=tuple(Layer(v) for v in render.get("static_layers", ("base", "managed"))),
        source_attribute=render.get("source_attribute", True),
        tags=tuple((Layer(k), v) for k, v in sorted(doc.get("tags", {}).items())),
        workspace=files,
        missing_text=workspace.get("missing", "(file not found)"),
        skills=doc.get("skills", {}).get("enabled", True),
        lint_select=tuple(doc.get("lint", {}).get("select", ())),
        lint_ignore=tuple(doc.get("lint", {}).get("ignore", ())),
        lint_severity=tuple(sorted(doc.get("lint", {}).get("severity", {}).items())),
    )


def is_policy_path(text: str) -> bool:
    """Whether a `--policy` value names a TOML file (else a built-in policy)."""
    return text.endswith(".toml") or os.sep in text or "/" in text


def load_policy(spec: str | os.PathLike[str]) -> Policy:
    """A built-in policy by name, or a policy TOML file by path."""
    text = os.fspath(spec)
    if is_policy_path(text):
        path = Path(text).resolve()
        doc = _read_toml(path)
        return _build(_load_document(doc, str(path), path.parent, ()), str(path))
    path = _builtin_path(text)
    return _build(_load_document(_read_toml(path), str(path), path.parent, (text,)), str(path))


def find_project_config(cwd: Path, project_root: Path) -> tuple[Path, dict[str, Any]] | None:
    """The nearest `.ctxasm.toml` or `pyproject.toml` with `[tool.ctxasm]`, cwd up to the root."""
    directory, root = str(cwd), str(project_root)
    while True:
        config = os.path.join(directory, PROJECT_CONFIG)
        if _is_file(config):
            return Path(config), _read_toml(Path(config))
        pyproject = os.path.join(directory, "pyproject.toml")
        data = _read_bytes(Path(pyproject)) if _is_file(pyproject) else b""
        if _may_configure_ctxasm(data):
            table = _read_toml(Path(pyproject), data).get("tool", {}).get("ctxasm")
            if isinstance(table, dict):
                return Path(pyproject), table
        parent = os.path.dirname(directory)
        if directory == root or parent == directory:
            return None
        directory = parent


def _is_file(path: str) -> bool:
    """`Path.is_file` without building a `Path` (this runs twice per directory of every run)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def resolve_policy(
    spec: str | os.PathLike[str] | Policy | None, cwd: Path, project_root: Path
) -> Policy:
    """The policy for a run: an explicit one wins; else the project's config; else the default."""
    if isinstance(spec, Policy):
        return spec
    if spec is not None:
        return load_policy(spec)
    found = find_project_config(cwd, project_root)
    if found is None:
        return load_policy(DEFAULT_POLICY)
    path, doc = found
    origin = f"{path} [tool.ctxasm]" if path.name == "pyproject.toml" else str(path)
    doc = {"extends": DEFAULT_POLICY, **doc}
    return _build(_load_document(doc, origin, path.parent, ()), origin)
