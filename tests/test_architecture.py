"""docs/architecture.md's table of packages is the package, and the import contracts are the
table (issue 23, item 5).

Every module of `assembler/` is listed in the row of its package (an `__init__` that only
re-exports need not be), and every listed module exists. The layers contract of
`[tool.importlinter]` in `pyproject.toml`, which `make test` runs as `lint-imports`, names the
same top-level modules and subpackages as the table, in the table's order: a row never sits
in a higher layer than a row after it.
"""

from __future__ import annotations

import ast
import itertools
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "assembler"
_TICKED = re.compile(r"`([^`]+)`")
_TOP_LEVEL_ROWS = ("values", "top", "edge")


def _rows() -> list[tuple[str, list[str]]]:
    """(package, modules) of each row of the table, in order: package "" for the rows of
    top-level modules, else the subpackage's name."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## The packages", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.startswith("| ") or len(cells) != 3 or cells[0] in ("layer", "---"):
            continue
        layer, modules, _ = cells
        package = "" if layer in _TOP_LEVEL_ROWS else layer.strip("`").rstrip("/")
        rows.append((package, _TICKED.findall(modules)))
    return rows


def _defines_something(path: Path) -> bool:
    tree = ast.parse(path.read_bytes(), str(path))
    return any(isinstance(node, ast.FunctionDef | ast.ClassDef) for node in tree.body)


def _package_modules() -> set[str]:
    """Every module of the package, dotted from `assembler` ("" for the root's `__init__`),
    except an `__init__` that defines nothing (a docstring, or names re-exported)."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).with_suffix("")
        if rel.name == "__init__" and not _defines_something(path):
            continue
        found.add(".".join(rel.parts))
    return found


def _listed() -> set[str]:
    return {".".join(filter(None, (package, name))) for package, names in _rows() for name in names}


def test_the_table_lists_every_module_of_the_package() -> None:
    missing = _package_modules() - _listed()
    assert not missing, f"modules docs/architecture.md does not list: {sorted(missing)}"


def test_every_module_the_table_lists_exists() -> None:
    ghosts = {
        name
        for name in _listed()
        if not (PACKAGE / f"{name.replace('.', '/')}.py").is_file()
        and not (PACKAGE / name.replace(".", "/") / "__init__.py").is_file()
    }
    assert not ghosts, f"docs/architecture.md lists modules that do not exist: {sorted(ghosts)}"


def _contract_layers() -> dict[str, int]:
    """Top-level module or subpackage -> its layer in the layers contract (0 is highest)."""
    with (ROOT / "pyproject.toml").open("rb") as f:
        contracts = tomllib.load(f)["tool"]["importlinter"]["contracts"]
    (layers,) = [c for c in contracts if c["type"] == "layers" and c["containers"] == ["assembler"]]
    assert layers["exhaustive"], "the contract must place every top-level module"
    return {
        tail.strip().strip("()"): index
        for index, layer in enumerate(layers["layers"])
        for tail in re.split(r"[|:]", layer)
    }


def test_the_layers_contract_is_the_table() -> None:
    layer_of = _contract_layers()
    rows = [
        {name.partition(".")[0] for name in names if name != "__init__"}
        if not package
        else {package}
        for package, names in _rows()
    ]
    assert set().union(*rows) == set(layer_of), "the contract and the table name other modules"
    for lower, higher in itertools.pairwise(rows):
        assert max(layer_of[m] for m in higher) <= min(layer_of[m] for m in lower), (
            f"{sorted(higher)} come after {sorted(lower)} in the table, so their layer is not below"
        )
