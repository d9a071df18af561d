"""A deterministic synthetic monorepo: 10,000 directories, 1,000 instruction files.

`generate(seed)` lays out (once per seed; later calls reuse the tree on disk) a repository
with `CLAUDE.md`, `.claude/CLAUDE.md`, `CLAUDE.local.md` and `.claude/rules/**/*.md` (with and
without `paths:`, as a string, a comma list, a YAML list, brace globs and `"**"`) at varied
depths, `@imports` between files (nested up to three hops, some missing, one cycle, one
duplicate, one chain beyond the four-hop limit), a home directory with `~/.claude/CLAUDE.md`,
user rules and an auto-memory index, and a managed directory with a file, rules and
`managed-settings.json`.

One chain of directories goes ten levels below the repository root, with instruction files
along the way; `deep_cwd` is the directory eight levels down. The generator also says, from its
own model of the client (SPEC section 4), not from the library, which files the client must
read for a cwd (`must_read`), which missing candidates it must stat (`must_stat`) and which
rule directories it must list (`must_list`): the floor of `assemble_deep`.

    python -m benchmarks.monorepo [SEED]     # generate and print the summary
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .harness import WORK

SEED = 1729
N_DIRS = 10_000
N_FILES = 1_000
GENERATOR_VERSION = 4
MAX_IMPORT_DEPTH = 4  # SPEC 4: the root file is depth 0; depth 5 and beyond is refused
# The deep chain; deep_cwd is CHAIN[:CWD_DEPTH], the two levels below it are for touches.
CHAIN = (
    "packages",
    "platform",
    "services",
    "billing",
    "src",
    "core",
    "domain",
    "invoices",
    "handlers",
    "v2",
)
CWD_DEPTH = 8
MAX_RANDOM_DEPTH = 12

WORDS = (
    "api", "app", "auth", "billing", "cache", "cli", "client", "common", "config", "core",
    "data", "db", "deploy", "docs", "domain", "events", "gateway", "graph", "infra", "jobs",
    "kit", "lib", "logging", "mail", "metrics", "models", "notify", "orders", "payments",
    "plugins", "queue", "reports", "search", "server", "shared", "storage", "sync", "tests",
    "tools", "ui", "users", "utils", "web", "worker",
)  # fmt: skip

CANDIDATES = ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md")


@dataclass(frozen=True, slots=True)
class Spec:
    """One generated file: its text, the root-relative files it imports, in order."""

    text: str
    imports: tuple[str, ...] = ()
    conditional: bool = False


@dataclass(slots=True)
class Layout:
    """The whole generated tree in memory, root-relative posix paths (`repo/...`, `home/...`)."""

    dirs: list[str] = field(default_factory=list)
    files: dict[str, Spec] = field(default_factory=dict)
    instruction_files: int = 0
    imported_files: int = 0

    def digest(self) -> str:
        h = hashlib.sha256(f"v{GENERATOR_VERSION}\n".encode())
        for d in self.dirs:
            h.update(f"d {d}\n".encode())
        for path in sorted(self.files):
            h.update(f"f {path}\n{self.files[path].text}\n".encode())
        return h.hexdigest()


@dataclass(frozen=True, slots=True)
class Expected:
    """What the client must do for one cwd, by the generator's own model of it."""

    must_read: tuple[Path, ...]  # files it opens and reads (loaded or not)
    must_stat: tuple[Path, ...]  # candidates it has to look for that are missing (or .git)
    must_list: tuple[Path, ...]  # rule directories it lists
    loaded: tuple[str, ...]  # the sources that end up in the assembly (absolute paths)
    unmodelled: tuple[str, ...]  # instruction files above the generated root (not ours)


@dataclass(frozen=True, slots=True)
class Monorepo:
    root: Path
    repo: Path
    home: Path
    managed: Path
    deep_cwd: Path
    must_read: tuple[Path, ...]
    must_stat: tuple[Path, ...]
    must_list: tuple[Path, ...]
    loaded: tuple[str, ...]
    layout: Layout = field(compare=False, repr=False)
    reused: bool = False

    @property
    def depth(self) -> int:
        return len(self.deep_cwd.relative_to(self.repo).parts)

    def expected(self, cwd: Path) -> Expected:
        return expected_io(self.layout, self.root, cwd)

    def chain_dir(self, depth: int) -> Path:
        return self.repo.joinpath(*CHAIN[:depth])


# --- text ---------------------------------------------------------------------------------


def _token(importer: str, target: str) -> str:
    """How `importer` spells an import of `target` (both root-relative, maybe with #fragment)."""
    if importer == "home/.claude/CLAUDE.md":
        return "~/" + target[len("home/") :]
    path, hash_, fragment = target.partition("#")
    rel = os.path.relpath(path, os.path.dirname(importer)).replace(os.sep, "/")
    return rel + hash_ + fragment


def _body(rng: random.Random, title: str, importer: str, imports: list[str], lines: int) -> str:
    out = [f"# {title}", ""]
    import_lines = [f"- See @{_token(importer, t)} for the details" for t in imports]
    fillers = [
        "- Run `make check` before pushing; it runs lint, types and tests.",
        "- Prefer small pure functions; keep I/O at the edges.",
        "- Ask owners@example.com before changing public APIs.",
        "- Packages are scoped: `@acme/shared` (a code span, not an import).",
        "- Never log secrets or personal data.",
        "- Tests live next to the code they test, named `*_test.py` or `*.test.ts`.",
        "- Use the shared logger; no print statements in library code.",
        "- Keep modules under 400 lines; split by responsibility.",
    ]
    body: list[str] = []
    for i in range(lines):
        body.append(rng.choice(fillers) if i % 7 else f"## Section {i // 7 + 1}")
    if rng.random() < 0.3:
        body.insert(rng.randrange(len(body) + 1), "<!-- maintainers: not sent to the model -->")
    if rng.random() < 0.2:
        body += ["", "```sh", "pnpm add @acme/ui   # inside a fence: not an import", "```"]
    for line in import_lines:
        body.insert(rng.randrange(len(body) + 1), line)
    return "\n".join(out + body) + "\n"


def _frontmatter(kind: str, rng: random.Random) -> tuple[str, bool]:
    """YAML frontmatter of a rule and whether it makes the rule conditional."""
    if kind == "brace":
        return '---\npaths: "src/**/*.{ts,tsx}"\n---\n', True
    if kind == "comma":
        return '---\npaths: "**/*.sql, **/migrations/**"\n---\n', True
    if kind == "list":
        pats = rng.choice(
            (
                ('"lib/**/*.py"', '"tests/**/test_*.py"'),
                ('"{app,web}/**/*.{ts,tsx}"', '"**/*.css"'),
                ('"docs/**"', '"*.md"'),
            )
        )
        return "---\npaths:\n" + "".join(f"  - {p}\n" for p in pats) + "---\n", True
    if kind == "all":
        return '---\npaths: "**"\n---\n', False  # SPEC 4: `paths: "**"` is unconditional
    if kind == "described":
        return "---\ndescription: house style\n---\n", False
    return "", False


# --- layout -------------------------------------------------------------------------------


class _Builder:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.layout = Layout()
        self.children: dict[str, set[str]] = {}

    def add_dir(self, path: str) -> None:
        self.layout.dirs.append(path)
        parent, _, name = path.rpartition("/")
        self.children.setdefault(parent, set()).add(name)

    def add_file(
        self,
        path: str,
        title: str,
        imports: Sequence[str] = (),
        *,
        front: str = "",
        conditional: bool = False,
        lines: int | None = None,
        instruction: bool = True,
    ) -> None:
        assert path not in self.layout.files, path
        n = lines if lines is not None else self.rng.randint(8, 60)
        text = front + _body(self.rng, title, path, list(imports), n)
        self.layout.files[path] = Spec(text, tuple(imports), conditional)
        if instruction and path.startswith("repo/"):
            self.layout.instruction_files += 1
        elif not instruction:
            self.layout.imported_files += 1

    def add_doc(self, path: str, imports: Sequence[str] = ()) -> None:
        self.add_file(path, os.path.basename(path), imports, instruction=False)


def build_layout(seed: int = SEED, n_dirs: int = N_DIRS, n_files: int = N_FILES) -> Layout:
    b = _Builder(seed)
    rng = b.rng
    chain = ["repo/" + "/".join(CHAIN[: i + 1]) for i in range(len(CHAIN))]
    cwd = chain[CWD_DEPTH - 1]
    fixed_dirs = [
        *chain,
        "repo/docs",
        "repo/docs/adr",
        "repo/packages/platform/docs",
        f"{cwd}/notes",
        f"{cwd}/notes/deeper",
    ]
    for d in fixed_dirs:
        b.add_dir(d)

    # The chain's own files (hand-placed so every feature is on the deep cwd's path).
    b.add_file(
        "repo/CLAUDE.md",
        "Acme monorepo",
        ["repo/docs/architecture.md#overview", "repo/docs/missing-guide.md"],
    )
    b.add_doc("repo/docs/architecture.md", ["repo/docs/adr/0001-monorepo.md"])
    b.add_doc("repo/docs/adr/0001-monorepo.md", ["repo/docs/adr/glossary.md"])
    b.add_doc("repo/docs/adr/glossary.md", ["repo/docs/architecture.md"])  # a cycle
    b.add_doc("repo/docs/logging.md")
    b.add_file("repo/CLAUDE.local.md", "My local notes")
    rules = "repo/.claude/rules"
    b.add_file(f"{rules}/style.md", "Style")
    b.add_file(f"{rules}/testing.md", "Testing", front=_frontmatter("described", rng)[0])
    b.add_file(
        f"{rules}/frontend.md", "Frontend", front=_frontmatter("brace", rng)[0], conditional=True
    )
    b.add_file(f"{rules}/api.md", "API", front=_frontmatter("list", rng)[0], conditional=True)
    b.add_file(f"{rules}/everything.md", "Everywhere", front=_frontmatter("all", rng)[0])
    b.add_file(
        f"{rules}/backend/db.md", "Database", front=_frontmatter("comma", rng)[0], conditional=True
    )
    b.add_file(f"{rules}/backend/logging.md", "Logging", ["repo/docs/logging.md"])
    b.add_file(f"{chain[0]}/CLAUDE.md", "Packages")
    b.add_file(
        f"{chain[1]}/.claude/CLAUDE.md",
        "Platform",
        [f"{chain[1]}/docs/platform.md", "repo/docs/architecture.md"],  # the second: duplicate
    )
    b.add_doc(f"{chain[1]}/docs/platform.md")
    too_deep = [f"{chain[3]}/hop-{i}.md" for i in range(1, 7)]
    b.add_file(f"{chain[3]}/CLAUDE.md", "Billing", [too_deep[0]])
    for i, path in enumerate(too_deep):
        b.add_doc(path, too_deep[i + 1 : i + 2])
    b.add_file(f"{chain[3]}/CLAUDE.local.md", "Billing, locally")
    b.add_file(f"{chain[3]}/.claude/rules/money.md", "Money")
    b.add_file(
        f"{chain[3]}/.claude/rules/invoices.md",
        "Invoices",
        front='---\npaths: "src/**/*.{ts,tsx,js}"\n---\n',
        conditional=True,
    )
    b.add_file(f"{chain[5]}/CLAUDE.local.md", "Core, locally")
    b.add_file(f"{chain[6]}/.claude/rules/ddd.md", "Domain-driven design")
    b.add_file(
        f"{cwd}/CLAUDE.md", "Invoices", [f"{cwd}/notes/overview.md", f"{cwd}/notes/missing.md"]
    )
    b.add_doc(f"{cwd}/notes/overview.md", [f"{cwd}/notes/details.md"])
    b.add_doc(f"{cwd}/notes/details.md", [f"{cwd}/notes/deeper/edge-cases.md"])
    b.add_doc(f"{cwd}/notes/deeper/edge-cases.md")
    b.add_file(f"{cwd}/.claude/CLAUDE.md", "Invoices team")
    b.add_file(
        f"{cwd}/.claude/rules/tests.md",
        "Invoice tests",
        front='---\npaths: "**/*.test.ts"\n---\n',
        conditional=True,
    )
    b.add_file(f"{chain[8]}/CLAUDE.md", "Handlers")
    b.add_file(f"{chain[9]}/CLAUDE.local.md", "v2, locally")
    b.add_file(
        f"{chain[9]}/.claude/rules/v2.md", "v2", front='---\npaths: "*.ts"\n---\n', conditional=True
    )

    # Home and managed directories.
    shared = "home/.claude/shared"
    b.add_file(
        "home/.claude/CLAUDE.md",
        "My preferences",
        [f"{shared}/style.md", f"{shared}/gone.md"],
    )
    b.add_doc(f"{shared}/style.md", [f"{shared}/tone.md"])
    b.add_doc(f"{shared}/tone.md", [f"{shared}/examples/good.md"])
    b.add_doc(f"{shared}/examples/good.md")
    b.add_file("home/.claude/rules/git.md", "Git")
    b.add_file(
        "home/.claude/rules/python.md",
        "Python",
        front='---\npaths: "**/*.py"\n---\n',
        conditional=True,
    )
    b.add_file(
        "home/.claude/rules/lang/ts.md",
        "TypeScript",
        front=_frontmatter("list", rng)[0],
        conditional=True,
    )
    b.add_file("managed/CLAUDE.md", "Acme policy")
    b.add_file("managed/.claude/rules/security.md", "Security")
    b.add_file(
        "managed/.claude/rules/licences.md",
        "Licences",
        front='---\npaths: "**/package.json, **/pyproject.toml"\n---\n',
        conditional=True,
    )

    # The other directories: a random recursive tree below the repo root, depth-capped.
    depth = {"repo": 0, **{d: d.count("/") for d in b.layout.dirs}}
    pool = ["repo", *b.layout.dirs]
    while len(b.layout.dirs) < n_dirs:
        parent = rng.choice(pool)
        if depth[parent] >= MAX_RANDOM_DEPTH:
            continue
        word = rng.choice(WORDS)
        taken = b.children.get(parent, set())
        name, n = word, 1
        while name in taken:
            n += 1
            name = f"{word}{n}"
        path = f"{parent}/{name}"
        b.add_dir(path)
        depth[path] = depth[parent] + 1
        pool.append(path)

    # The other instruction files, in directories off the chain.
    reserved = set(fixed_dirs) | {"repo"}
    free = [d for d in b.layout.dirs if d not in reserved]
    kinds = ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md", "rule")
    weights = (35, 10, 15, 40)
    while b.layout.instruction_files < n_files:
        directory = rng.choice(free)
        kind = rng.choices(kinds, weights)[0]
        front, conditional = "", False
        if kind == "rule":
            sub = f"{rng.choice(WORDS)}/" if rng.random() < 0.15 else ""
            path = f"{directory}/.claude/rules/{sub}{rng.choice(WORDS)}.md"
            style = rng.choice(("plain", "plain", "described", "brace", "comma", "list", "all"))
            front, conditional = _frontmatter(style, rng)
        else:
            path = f"{directory}/{kind}"
        if path in b.layout.files:
            continue
        imports: list[str] = []
        if not conditional and rng.random() < 0.3:
            hops = rng.choice((1, 1, 2, 2, 3)) if rng.random() > 0.05 else 6
            stem = f"{directory}/{rng.choice(WORDS)}-{len(b.layout.files)}"
            docs = [f"{stem}-notes-{i}.md" for i in range(hops)]
            if any(d in b.layout.files for d in docs):
                continue
            for i, doc in enumerate(docs):
                b.add_doc(doc, docs[i + 1 : i + 2])
            imports.append(docs[0])
            if rng.random() < 0.15:
                imports.append(f"{directory}/does-not-exist-{len(b.layout.files)}.md")
        b.add_file(
            path, f"{kind} of {directory[5:]}", imports, front=front, conditional=conditional
        )
    return b.layout


# --- the client's I/O for one cwd, by the model ----------------------------------------------


def _slug(path: Path) -> str:
    """SPEC 4: the git root's absolute path, every non-alphanumeric character replaced by `-`."""
    text = re.sub(r"[^a-zA-Z0-9]", "-", str(path))
    assert len(text) <= 200, "work directory path too long for the simple slug"
    return text


def memory_path(root: Path) -> Path:
    return root / "home" / ".claude" / "projects" / _slug(root / "repo") / "memory" / "MEMORY.md"


def expected_io(layout: Layout, root: Path, cwd: Path) -> Expected:
    """Which files the client reads, stats and lists for `cwd` (in `root/repo`), at start.

    External imports are approved (`~/.claude.json`), so every import within the depth limit
    is followed; conditional rules are read (for their frontmatter) but not loaded.
    """
    read: list[Path] = []
    missing: list[Path] = []
    listed: list[Path] = []
    loaded: list[str] = []
    unmodelled: list[str] = []
    processed: set[str] = set()

    def rel(path: Path) -> str | None:
        return path.relative_to(root).as_posix() if path.is_relative_to(root) else None

    def load(path: str, depth: int) -> None:
        path = path.partition("#")[0]  # SPEC 4: a #fragment is dropped
        if path in processed or depth > MAX_IMPORT_DEPTH:
            return
        processed.add(path)
        spec = layout.files.get(path)
        if spec is None:
            missing.append(root / path)
            return
        read.append(root / path)
        if not spec.conditional:
            loaded.append(str(root / path))
        for target in spec.imports:
            load(target, depth + 1)

    def rules(directory: str) -> None:
        prefix = directory + "/"
        found = sorted(p for p in layout.files if p.startswith(prefix))
        if not found:
            missing.append(root / directory)
            return
        subdirs = {directory}
        for p in found:
            d = os.path.dirname(p)
            while d != directory:
                subdirs.add(d)
                d = os.path.dirname(d)
        listed.extend(root / d for d in sorted(subdirs))
        for path in found:
            load(path, 0)

    load("managed/CLAUDE.md", 0)
    read.append(root / "managed" / "managed-settings.json")
    loaded.append("<managed-settings>")
    rules("managed/.claude/rules")
    load("home/.claude/CLAUDE.md", 0)
    rules("home/.claude/rules")
    ancestors = [*list(reversed(cwd.parents))[1:], cwd]
    for directory in ancestors:
        where = rel(directory)
        if where is None or where in ("", "."):
            for name in (*CANDIDATES, ".claude/rules"):
                candidate = directory / name
                if candidate.exists():  # not ours: read and loaded, imports not modelled
                    unmodelled.append(str(candidate))
                    if candidate.is_file():
                        read.append(candidate)
                        loaded.append(str(candidate))
                else:
                    missing.append(candidate)
            continue
        for name in CANDIDATES[:2]:
            load(f"{where}/{name}", 0)
        rules(f"{where}/.claude/rules")
        load(f"{where}/CLAUDE.local.md", 0)
    memory = memory_path(root)
    read.append(memory)
    loaded.append(str(memory))
    # Settings layers, the approval file and the git root search.
    read.append(root / "home" / ".claude.json")
    missing += [
        root / "home" / ".claude" / "settings.json",
        cwd / ".claude" / "settings.json",
        cwd / ".claude" / "settings.local.json",
    ]
    repo = root / "repo"
    missing += [d / ".git" for d in (cwd, *cwd.parents) if d.is_relative_to(repo)]
    # Skills (SPEC section 4): the user's skills directory and `.claude/skills` from cwd up to
    # the git root. This tree has none, so each is one stat.
    missing.append(root / "home" / ".claude" / "skills")
    missing += [d / ".claude" / "skills" for d in (cwd, *cwd.parents) if d.is_relative_to(repo)]
    return Expected(tuple(read), tuple(missing), tuple(listed), tuple(loaded), tuple(unmodelled))


# --- writing ------------------------------------------------------------------------------


def _write(layout: Layout, root: Path) -> None:
    for d in layout.dirs:
        os.makedirs(root / d, exist_ok=True)
    for path, spec in layout.files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(spec.text, encoding="utf-8")
    # A git repository as a team keeps one: local files ignored, everything else tracked.
    (root / "repo" / ".gitignore").write_text("CLAUDE.local.md\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(root / "repo")], check=True)
    subprocess.run(["git", "-C", str(root / "repo"), "add", "-A"], check=True)


def _write_machine_files(root: Path) -> None:
    """Files whose content depends on where the tree is (absolute paths): rewritten each run."""
    repo = root / "repo"
    approval = {"projects": {str(repo): {"hasClaudeMdExternalIncludesApproved": True}}}
    (root / "home" / ".claude.json").write_text(json.dumps(approval, indent=2), encoding="utf-8")
    settings = {"claudeMd": "Managed settings: all production access goes through the bastion."}
    (root / "managed" / "managed-settings.json").write_text(json.dumps(settings), encoding="utf-8")
    memory = memory_path(root)
    memory.parent.mkdir(parents=True, exist_ok=True)
    entries = [f"- [topic {i}](topic-{i}.md) — one line about topic {i}" for i in range(250)]
    memory.write_text("# Memory index\n" + "\n".join(entries) + "\n", encoding="utf-8")


def generate(seed: int = SEED, work: Path = WORK) -> Monorepo:
    """The monorepo for `seed` under `work`, generated once and reused while it matches."""
    layout = build_layout(seed)
    work.mkdir(parents=True, exist_ok=True)
    root = Path(os.path.realpath(work)) / f"monorepo-{seed}"
    stamp = root / "layout.json"
    digest = layout.digest()
    reused = False
    try:
        reused = json.loads(stamp.read_text())["digest"] == digest
    except (OSError, ValueError, KeyError):
        reused = False
    if not reused:
        if root.exists():
            shutil.rmtree(root)
        root.mkdir(parents=True)
        _write(layout, root)
        stamp.write_text(json.dumps({"seed": seed, "digest": digest}), encoding="utf-8")
    _write_machine_files(root)
    repo = root / "repo"
    deep_cwd = repo.joinpath(*CHAIN[:CWD_DEPTH])
    expected = expected_io(layout, root, deep_cwd)
    return Monorepo(
        root=root,
        repo=repo,
        home=root / "home",
        managed=root / "managed",
        deep_cwd=deep_cwd,
        must_read=expected.must_read,
        must_stat=expected.must_stat,
        must_list=expected.must_list,
        loaded=expected.loaded,
        layout=layout,
        reused=reused,
    )


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    mono = generate(int(args[0]) if args else SEED)
    layout = mono.layout
    depths = [d.count("/") for d in layout.dirs]
    print(f"root        {mono.root} ({'reused' if mono.reused else 'generated'})")
    print(f"directories {len(layout.dirs):,} below the repo root, max depth {max(depths)}")
    print(
        f"files       {layout.instruction_files:,} instruction files, {layout.imported_files:,} imported docs"
    )
    print(f"deep cwd    {mono.deep_cwd.relative_to(mono.repo)} (depth {mono.depth})")
    print(
        f"must read   {len(mono.must_read)} files, stat {len(mono.must_stat)}, list {len(mono.must_list)} dirs"
    )
    print(f"loaded      {len(mono.loaded)} sources")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
