"""The docs speak in the third person (issue 23, item 5): of ctxasm, the user and the caller,
never as "I" or "we" to a "you", and never to the team that writes them.

Code (fenced blocks and code spans) is quoted, not spoken: `/home/me/.bashrc` or an
instruction file's "before you push" stay as they are.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
_FENCED = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
_SPAN = re.compile(r"`[^`]*`")
_PERSONAL = re.compile(
    r"(?<![\w/'-])(?:(?-i:I|I'm|I've|I'd)|me|my|mine|we|we're|we've|us|our|ours|you|you're|your|yours)"
    r"(?![\w/'-])|\bthe lead\b",
    re.IGNORECASE,
)


def _prose(text: str) -> str:
    """`text` with its code blanked out, line breaks kept (so line numbers stay)."""
    for code in (_FENCED, _SPAN):
        text = code.sub(lambda m: "\n" * m.group().count("\n"), text)
    return text


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: str(path.relative_to(ROOT)))
def test_a_doc_speaks_in_the_third_person(doc: Path) -> None:
    spoken: list[str] = []
    for number, line in enumerate(_prose(doc.read_text(encoding="utf-8")).splitlines(), 1):
        spoken += (f"{number}: {m.group()!r} in {line.strip()!r}" for m in _PERSONAL.finditer(line))
    assert not spoken, "\n".join(spoken)


# What the code has, named in the docs (issue 26, item 5): every output format and command in
# the README and the command-line reference, every file the pre-commit hook runs on and every
# code it fails on in its section of docs/lint.md; and every relative link resolves.

README = ROOT / "README.md"
CLI = ROOT / "docs" / "cli.md"
LINT = ROOT / "docs" / "lint.md"


def _spans(text: str) -> set[str]:
    return {span.strip("`") for span in _SPAN.findall(text)}


def _section(doc: Path, heading: str) -> str:
    text = doc.read_text(encoding="utf-8")
    start = text.index(f"\n{heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def _table(section: str) -> dict[str, list[str]]:
    """First cell -> the code spans of the other cells, for each row of the tables in it."""
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) >= 2:
            rows[cells[0].strip("`")] = [s.strip("`") for s in _SPAN.findall(" ".join(cells[1:]))]
    return rows


def _paragraph(doc: Path, mark: str) -> str:
    """The first paragraph (or table row) of `doc` that holds `mark`."""
    text = doc.read_text(encoding="utf-8")
    return next(p for p in re.split(r"\n\s*\n|\n(?=\|)", text) if mark in p)


def _formats() -> list[str]:
    from assembler.output import formats

    return list(formats.names())


def test_every_format_is_named_where_the_docs_list_them() -> None:
    lists = {
        "README.md": _paragraph(README, "`--format`"),
        "docs/cli.md --format": _paragraph(CLI, "| `--format` |"),
        "docs/cli.md Output formats": _section(CLI, "## Output formats"),
    }
    missing = {
        where: [f for f in _formats() if f not in _spans(text)] for where, text in lists.items()
    }
    assert missing == {where: [] for where in lists}
    synopsis = re.search(r"ctxasm render \[PATH\][^`]*?\[--format ([\w|-]+)\]", CLI.read_text())
    assert synopsis is not None, "docs/cli.md: no `ctxasm render` synopsis with --format"
    assert synopsis.group(1).split("|") == _formats()


@pytest.mark.parametrize("doc", [README, CLI], ids=["README.md", "docs/cli.md"])
def test_every_command_is_named(doc: Path) -> None:
    from assembler.commands import COMMANDS

    text = doc.read_text(encoding="utf-8")
    assert [c for c in COMMANDS if f"ctxasm {c}" not in text] == []


_ALTERNATIVE = re.compile(r"\(\?:([^()|]+)\)\?")


def _file_names(pattern: str) -> list[str]:
    """The files a client's `instruction_files` pattern names, as the docs write them
    (`.claude/rules/**`, `.github/instructions/**/*.instructions.md`)."""
    body = pattern.removeprefix("(?:^|/)").removesuffix("$")
    if body.startswith("(?:") and body.endswith(")"):
        body = body[3:-1]
    names = []
    for alternative in body.split("|"):
        optional = _ALTERNATIVE.search(alternative)
        forms = (
            [_ALTERNATIVE.sub("", alternative), _ALTERNATIVE.sub(r"\1", alternative)]
            if optional
            else [alternative]
        )
        for form in forms:
            name = form.replace(r".+\.", "**/*.").replace(".+", "**").replace("\\", "")
            assert not set(name) & set("()[]?+|^$"), f"{pattern}: cannot name {form}"
            example = name.replace("**/*", "a/b/x").replace("**", "a/b")
            assert re.search(pattern, example), f"{name} does not match {pattern}"
            names.append(name)
    return names


def test_the_hook_section_names_every_file_of_every_client() -> None:
    from assembler.clients import registry

    table = _table(_section(LINT, "## The hook"))
    for client in registry.clients():
        if client.instruction_files is not None:
            assert table.get(client.name) == _file_names(client.instruction_files), client.name


def test_the_hook_section_names_every_code_it_fails_on() -> None:
    from assembler.clients import registry

    table = _table(_section(LINT, "## The hook"))
    size = [entry.code for entry in registry.catalogue() if entry.size]
    assert [code for code in table if code.startswith("CTX")] == size


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(doc: Path) -> set[str]:
    text = _FENCED.sub("", doc.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    for heading in re.findall(r"^#{1,6} (.+?)\s*$", text, re.MULTILINE):
        slug = _slug(heading.replace("`", ""))
        seen[slug] = seen.get(slug, -1) + 1
    return {f"{slug}-{n}" if n else slug for slug, count in seen.items() for n in range(count + 1)}


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_relative_link_resolves(doc: Path) -> None:
    broken = []
    for link in re.findall(r"\]\(([^)\s]+)\)", _prose(doc.read_text(encoding="utf-8"))):
        if re.match(r"[a-z][a-z+.-]*:", link):
            continue  # https:, mailto:
        path, _, anchor = link.partition("#")
        target = (doc.parent / path).resolve() if path else doc
        if not target.exists() or not target.is_relative_to(ROOT):
            broken.append(f"{link}: no such file in the repository")
        elif anchor and target.suffix == ".md" and anchor not in _anchors(target):
            broken.append(f"{link}: no heading #{anchor} in {target.relative_to(ROOT)}")
    assert not broken, "\n".join(broken)


# The install story as written (issue 26, item 1): the README, the docs, the examples and the
# hook definition name no tag the repository does not have (a tag made in a clone never
# reaches it), never install ctxasm from PyPI (it is not there), and run the examples with
# the interpreter of the `.venv` that `make demo` creates.

TOLD = [*DOCS, *sorted((ROOT / "examples").glob("*.py")), ROOT / ".pre-commit-hooks.yaml"]
_TAG = re.compile(
    r"\bv\d+(?:\.\d+)+\b"  # v0.1.0
    r"|\brev: *(?!<)[\"']?([^\s\"'#`]+)"  # a pre-commit rev that is not a placeholder
    r"|\bgit (?:checkout|switch|clone --branch|clone -b) +(?!-|<)(\S+)"
)
_HASH = re.compile(r"[0-9a-f]{40}")


def _tags() -> set[str]:
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "tag", "--list"], capture_output=True, text=True, check=True
    )
    return set(listed.stdout.split())


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="asks git which tags exist")
def test_every_tag_the_docs_name_exists() -> None:
    tags = _tags()
    named = {
        f"{doc.relative_to(ROOT)}: {found.group()}"
        for doc in TOLD
        for found in _TAG.finditer(doc.read_text(encoding="utf-8"))
        if (name := found.group(1) or found.group(2) or found.group()) not in tags
        and not _HASH.fullmatch(name)
    }
    assert not named, f"tags the repository does not have ({sorted(tags)}): {sorted(named)}"


_INSTALL = re.compile(r"\bpipx? install +([^\n`#]*)")
_FROM_PYPI = re.compile(r"ctxasm(?:\[[\w,]+\])?(?:[=<>~!]=?.*)?")  # a name, not a path


def test_nothing_installs_ctxasm_from_pypi_or_runs_an_example_outside_the_venv() -> None:
    wrong = set()
    for doc in TOLD:
        text = doc.read_text(encoding="utf-8")
        for found in _INSTALL.finditer(text):
            if any(_FROM_PYPI.fullmatch(word) for word in found.group(1).split()):
                wrong.add(f"{doc.relative_to(ROOT)}: {found.group()}")
        for found in re.finditer(r"(?<![/\w])python3? examples/\S+", text):
            wrong.add(f"{doc.relative_to(ROOT)}: {found.group()}")
    assert not wrong, sorted(wrong)


def test_the_readme_starts_with_the_two_commands_and_stays_a_front_page() -> None:
    text = README.read_text(encoding="utf-8")
    first = re.search(r"```sh\n(.*?)```", text, re.DOTALL)
    assert first is not None
    assert [line.split("#")[0].strip() for line in first.group(1).splitlines()] == [
        "make demo",
        "make test",
    ]
    assert len(text.encode()) <= 12_500  # about 12 KB: the rest is in docs/


_SNIPPET = re.compile(r"^```(?:sh|yaml|toml|bash)\n(.*?)^```", re.MULTILINE | re.DOTALL)
# What a reader would have to replace before a snippet runs (issue 34: a user pasted
# `<a commit hash>` and both hashes of `git ls-remote URL HEAD`).
_PLACEHOLDER = re.compile(r"<(?:the|a|an|your|owner)\b[^>\n]*>|ls-remote")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_shell_and_config_snippet_runs_as_written(doc: Path) -> None:
    """No snippet holds a placeholder to fill in: where no URL can be named, the docs show
    the form that needs none (a local hook over the installed command, the clone's path,
    repository variables in CI)."""
    blocks = _SNIPPET.findall(doc.read_text(encoding="utf-8"))
    found = [m.group() for block in blocks for m in _PLACEHOLDER.finditer(block)]
    assert found == [], f"{doc.name}: placeholders in snippets: {found}"
