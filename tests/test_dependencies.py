"""The declared dependencies are what the code imports (issue 23, item 4).

`pyproject.toml`'s `dependencies` must name exactly the distributions whose modules
`assembler/` imports (at module level, inside functions or for type checking alike): an
import nothing declares works only while something else happens to install it, and a
declared package nothing imports is installed for nothing. The tests, benchmarks and
examples may import those and the `test` extra's. Distributions are found from module names
through the installed metadata (`importlib.metadata.packages_distributions`).
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_OWN = frozenset({"assembler", "tests", "benchmarks", "examples", "agent_loop", "__future__"})
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def _normal(name: str) -> str:
    """A distribution name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared(requirements: Iterable[str]) -> set[str]:
    found = set()
    for requirement in requirements:
        match = _NAME.match(requirement)
        assert match is not None, requirement
        found.add(_normal(match.group()))
    return found


def _project() -> dict[str, object]:
    with (ROOT / "pyproject.toml").open("rb") as f:
        project: dict[str, object] = tomllib.load(f)["project"]
    return project


def _third_party_modules(directory: Path) -> dict[str, set[str]]:
    """Top-level module name -> the files under `directory` that import it, for every
    absolute import that is neither the standard library nor this repository's own."""
    found: dict[str, set[str]] = {}
    for path in sorted(directory.rglob("*.py")):
        if ".work" in path.parts:  # benchmarks' generated trees
            continue
        for node in ast.walk(ast.parse(path.read_bytes(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.partition(".")[0]
                if top not in sys.stdlib_module_names and top not in _OWN:
                    found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def _distributions(modules: Iterable[str]) -> dict[str, str]:
    """Each module's distribution (normalized), or the module's own name when none is
    installed (then no declared name can match it, and the test says which)."""
    installed = metadata.packages_distributions()
    out = {}
    for module in modules:
        dists = installed.get(module) or [module]
        assert len(dists) == 1, f"{module} is installed by several distributions: {dists}"
        out[module] = _normal(dists[0])
    return out


def test_the_library_declares_exactly_what_it_imports() -> None:
    imported = _third_party_modules(ROOT / "assembler")
    by_module = _distributions(imported)
    declared = _declared(_project()["dependencies"])  # type: ignore[arg-type]
    undeclared = {
        f"{dist} (import {module}: {', '.join(sorted(imported[module]))})"
        for module, dist in by_module.items()
        if dist not in declared
    }
    unused = declared - set(by_module.values())
    assert not undeclared, f"imported but not in [project] dependencies: {sorted(undeclared)}"
    assert not unused, f"declared but imported nowhere in assembler/: {sorted(unused)}"


def test_tests_benchmarks_and_examples_import_only_what_is_declared() -> None:
    project = _project()
    extras: dict[str, list[str]] = project["optional-dependencies"]  # type: ignore[assignment]
    declared = _declared([*project["dependencies"], *extras["test"]])  # type: ignore[misc]
    for top in ("tests", "benchmarks", "examples"):
        imported = _third_party_modules(ROOT / top)
        undeclared = {
            f"{dist} (import {module}: {', '.join(sorted(imported[module]))})"
            for module, dist in _distributions(imported).items()
            if dist not in declared
        }
        assert not undeclared, (
            f"{top}/ imports what no dependency or test extra names: {undeclared}"
        )
