"""Policies: built-ins, validation with file and key in the message, project extension."""

from __future__ import annotations

from pathlib import Path

import pytest

from assembler import Layer, PolicyError, load_policy
from assembler.model import RulesOrder
from assembler.policy import builtin_names, resolve_policy
from tests.helpers.cli import ctxasm
from tests.helpers.trees import build, git_init, run


def test_builtin_policies_load() -> None:
    assert builtin_names() == ("bootstrap", "claude-code", "codex", "copilot", "cursor", "gemini")
    cc = load_policy("claude-code")
    assert (cc.client, cc.limits.skip_bytes, cc.limits.index_lines, cc.import_depth) == (
        "claude-code",
        4 * 1024 * 1024,
        200,
        4,
    )
    boot = load_policy("bootstrap")
    assert [(f.path, f.tag, f.layer) for f in boot.workspace] == [
        ("soul.md", "soul", Layer.BASE),
        ("user.md", "user_profile", Layer.USER),
        ("agent.md", "agent", Layer.BASE),
        ("memory/MEMORY.md", "memory_index", Layer.MEMORY),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            'extends = "claude-code"\n[limits]\nfile_char = 3\n',
            "unknown key 'limits.file_char'; known keys here: file_chars,",
        ),
        (
            'extends = "claude-code"\n[limits]\nfile_chars = "big"\n',
            "'limits.file_chars' must be a non-negative integer, not 'big'",
        ),
        (
            'extends = "claude-code"\n[limits]\nfile_chars = -1\n',
            "'limits.file_chars' must be a non-negative integer, not -1",
        ),
        (
            'extends = "claude-code"\n[rules]\norder = "random"\n',
            "'rules.order' must be 'directory' or 'name'",
        ),
        ('extends = "claude-code"\nrender = 3\n', "'render' must be a table"),
        (
            'extends = "claude-code"\n[render]\nstatic_layers = ["base", "everything"]\n',
            "'render.static_layers' must be a list of layers",
        ),
        (
            'extends = "nope"\n',
            "nope: no such built-in policy; choose one of bootstrap, claude-code, codex, copilot, cursor, gemini",
        ),
        ("name = 'x'\n", "missing 'client'; add 'extends = \"claude-code\"'"),
        (
            'client = "cursor-9000"\n',
            "'client' must be one of claude-code, bootstrap, codex, gemini, cursor, copilot, not 'cursor-9000'",
        ),
        (
            'extends = "claude-code"\n[render]\nformat = "yaml"\n',
            "'render.format' must be one of xml, markdown, json, claude-code, codex, gemini, anthropic, openai, not 'yaml'",
        ),
        ('discoverer = "claude-code"\n', "'discoverer' is now called 'client'; rename the key"),
        (
            'extends = "claude-code"\n[tags]\nproject = "x y"\n',
            "'tags.project' must be a tag name (a lower-case letter or _, then lower-case letters, digits or _), not 'x y'",
        ),
        (
            'extends = "claude-code"\n[tags]\nproject = "user_instructions source"\n',
            "'tags.project' must be a tag name",
        ),
        ('extends = "claude-code"\n[tags]\nuser = "Project"\n', "'tags.user' must be a tag name"),
        (
            'extends = "claude-code"\n[render]\norder = ["x>y"]\n',
            "'render.order' must be a list of section tags",
        ),
        (
            'extends = "claude-code"\n[imports]\nmax_depth = 100000\n',
            "'imports.max_depth' must be a non-negative integer up to 64, not 100000",
        ),
        (
            'extends = "claude-code"\n[limits]\nskip_bytes = 1099511627776\n',
            "'limits.skip_bytes' must be a non-negative integer up to 16,777,216",
        ),
        ("this is not toml", "invalid TOML"),
    ],
)
def test_invalid_policies_name_the_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(PolicyError) as info:
        load_policy(path)
    assert message in str(info.value)
    if "no such built-in" not in message:
        assert str(info.value).startswith(str(path))
    assert "\n" not in str(info.value)


def test_extends_cycle_is_reported(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text('extends = "b.toml"\n')
    (tmp_path / "b.toml").write_text('extends = "a.toml"\n')
    with pytest.raises(PolicyError, match="loops back"):
        load_policy(tmp_path / "a.toml")


def test_missing_policy_file(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="policy file not found; check the path"):
        load_policy(tmp_path / "absent.toml")


def test_project_config_extends_the_default_from_ctxasm_toml(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    build(tmp_path, {"repo/.ctxasm.toml": "[limits]\nmax_tokens = 1234\n", "repo/sub/x": None})
    policy = resolve_policy(None, repo / "sub", repo)
    assert (policy.name, policy.limits.max_tokens, policy.origin) == (
        "claude-code",
        1234,
        str(repo / ".ctxasm.toml"),
    )


def test_project_config_from_pyproject_tool_table(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "repo/pyproject.toml": '[project]\nname = "x"\n[tool.ctxasm]\n[tool.ctxasm.rules]\norder = "name"\n'
        },
    )
    policy = resolve_policy(None, repo, repo)
    assert policy.rules_order is RulesOrder.NAME
    assert policy.origin.endswith("pyproject.toml [tool.ctxasm]")


def test_bad_project_config_names_the_pyproject(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(tmp_path, {"repo/pyproject.toml": "[tool.ctxasm]\ncolour = 'red'\n"})
    with pytest.raises(PolicyError, match=r"pyproject.toml \[tool.ctxasm\]: unknown key 'colour'"):
        run(tmp_path, "repo")


def test_pyproject_without_the_table_is_not_a_config(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    build(tmp_path, {"repo/pyproject.toml": '[project]\nname = "x"\n'})
    assert resolve_policy(None, repo, repo).origin.endswith("claude-code.toml")


def test_another_tools_broken_pyproject_is_not_judged(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    build(tmp_path, {"repo/pyproject.toml": "[project\nname = 'x'\n"})
    assert resolve_policy(None, repo, repo).origin.endswith("claude-code.toml")
    build(tmp_path, {"repo/pyproject.toml": "[tool.ctxasm\n"})  # ours: it must be valid
    with pytest.raises(PolicyError, match=r"pyproject.toml: invalid TOML"):
        resolve_policy(None, repo, repo)


def test_a_table_named_with_escapes_is_found(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    build(tmp_path, {"repo/pyproject.toml": '[tool."ctx\\u0061sm".rules]\norder = "name"\n'})
    assert resolve_policy(None, repo, repo).rules_order is RulesOrder.NAME


def test_explicit_policy_wins_over_the_project_config(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    build(tmp_path, {"repo/.ctxasm.toml": "[limits]\nmax_tokens = 5\n"})
    assert resolve_policy("claude-code", repo, repo).limits.max_tokens == 0


def test_policy_from_project_config_drives_the_assembly(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "repo/.ctxasm.toml": 'extends = "bootstrap"\n[workspace]\nfiles = [{ path = "AGENT.md", tag = "agent", layer = "base" }]\n',
            "repo/AGENT.md": "be brief",
        },
    )
    assert (
        run(tmp_path, "repo").text
        == "<agent>\nbe brief\n</agent>\n\n__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__"
    )


@pytest.mark.parametrize(
    "config",
    [
        '[workspace]\nfiles = [{ path = "/etc/passwd", tag = "x" }]\n',
        '[workspace]\nfiles = [{ path = "~/.ssh/id_rsa", tag = "x" }]\n',
        '[workspace]\nfiles = [{ path = "../secret.md", tag = "x" }]\n',
        'extends = "../outside.toml"\n',
        'extends = "/tmp/anywhere.toml"\n',
        'extends = "inside.toml"\n',  # itself a link that leads out
    ],
)
def test_a_projects_configuration_cannot_name_files_outside_it(tmp_path: Path, config: str) -> None:
    repo = git_init(tmp_path / "repo")
    (tmp_path / "outside.toml").write_text('extends = "bootstrap"\n')
    (tmp_path / "secret.md").write_text("SECRET")
    (repo / "inside.toml").symlink_to(tmp_path / "outside.toml")
    (repo / ".ctxasm.toml").write_text('client = "bootstrap"\n' + config)
    with pytest.raises(PolicyError, match="outside the project") as info:
        run(tmp_path, "repo")
    assert str(info.value).startswith(str(repo / ".ctxasm.toml"))


def test_the_users_own_policy_may_name_files_anywhere(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    (tmp_path / "notes.md").write_text("my notes")
    policy = tmp_path / "mine.toml"
    policy.write_text(
        'extends = "bootstrap"\n[workspace]\n'
        f'files = [{{ path = "{tmp_path / "notes.md"}", tag = "notes" }}]\n'
    )
    a = run(tmp_path, repo, policy=str(policy))
    assert [s.content for s in a.sources] == ["my notes"]
    assert a.diagnostics == ()


def test_a_workspace_file_linked_outside_the_project_is_reported(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    (tmp_path / "home/.ssh").mkdir(parents=True)
    (tmp_path / "home/.ssh/id_rsa").write_text("PRIVATE")
    (repo / "soul.md").symlink_to(tmp_path / "home/.ssh/id_rsa")
    (repo / ".ctxasm.toml").write_text('extends = "bootstrap"\n')
    a = run(tmp_path, "repo")
    assert [d.code for d in a.diagnostics if d.path == "soul.md"] == ["CTX802"]


def test_a_workspace_tag_taken_from_the_file_name_is_a_valid_tag(tmp_path: Path) -> None:
    policy = tmp_path / "p.toml"
    policy.write_text('extends = "bootstrap"\n[workspace]\nfiles = [{ path = "My Notes-2.md" }]\n')
    assert [f.tag for f in load_policy(policy).workspace] == ["my_notes_2"]


@pytest.mark.parametrize(
    ("pyproject", "used"),
    [
        ('tool = "ctxasm"\n', False),  # not a table of tools: not ours to judge
        ("[tool]\nctxasm = 1\n", "must be a table, not int"),
        ("[tool]\nctxasm = [1]\n", "must be a table, not list"),
        ("[[tool.ctxasm]]\nx = 1\n", "must be a table, not list"),
        ('[tool.other]\nname = "ctxasm"\n', False),
    ],
)
def test_odd_pyproject_shapes(tmp_path: Path, pyproject: str, used: str | bool) -> None:
    repo = git_init(tmp_path / "repo")
    (repo / "pyproject.toml").write_text(pyproject)
    if used is False:
        assert run(tmp_path, "repo").policy.name == "claude-code"
        return
    with pytest.raises(PolicyError, match=str(used)) as info:
        run(tmp_path, "repo")
    assert str(info.value).startswith(str(repo / "pyproject.toml"))


# Every string a policy sets, with the most it may hold: (key, TOML that sets it to VALUE).
_STRINGS = [
    ("name", 256, 'name = "VALUE"\nextends = "claude-code"\n'),
    ("description", 4096, 'extends = "claude-code"\ndescription = "VALUE"\n'),
    ("extends", 4096, 'extends = "VALUE"\n'),
    ("client", 256, 'client = "VALUE"\n'),
    ("limits.truncation_marker", 1024, 'extends = "claude-code"\n[limits]\ntruncation_marker = "VALUE"\n'),
    ("render.format", 256, 'extends = "claude-code"\n[render]\nformat = "VALUE"\n'),
    ("render.boundary", 256, 'extends = "claude-code"\n[render]\nboundary = "VALUE"\n'),
    ("render.order[1]", 64, 'extends = "claude-code"\n[render]\norder = ["skills", "VALUE"]\n'),
    ("render.static_layers[0]", 64, 'extends = "claude-code"\n[render]\nstatic_layers = ["VALUE"]\n'),
    ("rules.order", 64, 'extends = "claude-code"\n[rules]\norder = "VALUE"\n'),
    ("tags.project", 64, 'extends = "claude-code"\n[tags]\nproject = "VALUE"\n'),
    ("workspace.missing", 1024, 'extends = "bootstrap"\n[workspace]\nmissing = "VALUE"\n'),
    ("workspace.files[0].path", 4096, 'extends = "bootstrap"\n[[workspace.files]]\npath = "VALUE"\n'),
    ("workspace.files[0].tag", 64, 'extends = "bootstrap"\n[[workspace.files]]\npath = "a.md"\ntag = "VALUE"\n'),
    ("workspace.files[0].layer", 64, 'extends = "bootstrap"\n[[workspace.files]]\npath = "a.md"\nlayer = "VALUE"\n'),
    ("lint.select[0]", 64, 'extends = "claude-code"\n[lint]\nselect = ["VALUE"]\n'),
    ("lint.ignore[0]", 64, 'extends = "claude-code"\n[lint]\nignore = ["VALUE"]\n'),
]  # fmt: skip


@pytest.mark.parametrize(("key", "limit", "toml"), _STRINGS, ids=[s[0] for s in _STRINGS])
def test_every_string_a_policy_sets_is_bounded(
    tmp_path: Path, key: str, limit: int, toml: str
) -> None:
    """A string one character over its limit is refused in one line naming the file, the key
    and the limit (a 1,000,000-character truncation marker, added to every cut file, made
    `render` of 999 tiny rules run out of memory); one at the limit is not refused for it."""
    path = tmp_path / "p.toml"
    path.write_text(toml.replace("VALUE", "a" * (limit + 1)))
    with pytest.raises(PolicyError) as info:
        load_policy(path)
    assert str(info.value) == (
        f"{path}: '{key}' is {limit + 1:,} characters, over the {limit:,}-character limit "
        "for it; shorten it"
    )
    path.write_text(toml.replace("VALUE", "a" * limit))
    try:
        load_policy(path)
    except PolicyError as err:  # `client = "aaa"` is no client, `extends` no file: not its length
        assert "-character limit" not in str(err)


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        (
            'extends = "claude-code"\n[lint]\nselect = [' + '"CTX1", ' * 1001 + "]\n",
            "'lint.select' has 1,001 entries, over the 1,000 a policy may list; list fewer",
        ),
        (
            'extends = "claude-code"\n[lint.severity]\n'
            + "".join(f'CTX{i} = "off"\n' for i in range(1001)),
            "'lint.severity' has 1,001 entries, over the 1,000 a policy may list; list fewer",
        ),
        (
            'extends = "claude-code"\n[lint.severity]\n' + "C" * 100 + ' = "off"\n',
            f"'lint.severity.{'C' * 31}…{'C' * 31}' is 100 characters, over the 64-character limit",
        ),
        (
            'extends = "bootstrap"\n' + '[[workspace.files]]\npath = "a.md"\n' * 1001,
            "'workspace.files' has 1,001 entries, over the 1,000 a policy may list",
        ),
    ],
    ids=["select", "severity", "severity key", "workspace files"],
)
def test_lists_and_tables_a_policy_sets_are_bounded(
    tmp_path: Path, toml: str, message: str
) -> None:
    path = tmp_path / "p.toml"
    path.write_text(toml)
    with pytest.raises(PolicyError) as info:
        load_policy(path)
    assert str(info.value).startswith(f"{path}: {message}")


@pytest.mark.parametrize(
    "toml",
    [
        'extends = "claude-code"\n' + "k" * 100_000 + " = 1\n",  # an unknown key
        "name = [" + "1, " * 100_000 + "]\n",  # not a string
        'extends = "claude-code"\n[content]\nskip_empty = "' + "x" * 100_000 + '"\n',
    ],
    ids=["unknown key", "list for a string", "string for a boolean"],
)
def test_a_refused_value_is_never_printed_whole(tmp_path: Path, toml: str) -> None:
    path = tmp_path / "p.toml"
    path.write_text(toml)
    with pytest.raises(PolicyError) as info:
        load_policy(path)
    message = str(info.value)
    assert message.startswith(str(path)) and "\n" not in message
    assert len(message) < len(str(path)) + 600


def test_the_projects_own_huge_marker_is_refused_before_any_work(tmp_path: Path) -> None:
    """`.ctxasm.toml` with a 1,000,000-character marker and `file_chars = 1`, 999 tiny rules:
    `render` and `cache` ended in `MemoryError` (exit 3); now one line and exit 2."""
    repo = git_init(tmp_path / "repo")
    files: dict[str, str | None] = {f".claude/rules/r{i}.md": f"rule {i}\n" for i in range(999)}
    files[".ctxasm.toml"] = f'[limits]\nfile_chars = 1\ntruncation_marker = "{"x" * 1_000_000}"\n'
    build(repo, files)
    (tmp_path / "home").mkdir()
    where = ["--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "managed")]
    for command in ("render", "cache"):
        ran = ctxasm([command, str(repo), *where])
        assert (ran.exit_code, ran.stdout) == (2, ""), command
        assert ran.stderr == (
            f"ctxasm: {repo / '.ctxasm.toml'}: 'limits.truncation_marker' is 1,000,000 "
            "characters, over the 1,024-character limit for it; shorten it\n"
        )
