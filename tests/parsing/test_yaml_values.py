"""Frontmatter values as Claude Code's parser reads them (`parsing.yaml_values`), and no value
that can crash a command (issue 30, item 3).

PyYAML's safe loader raised `ValueError` for `2021-02-30`, a time of `23:59:60` or an integer
of 5,000 digits, and every command, the pre-commit hook included, ended in "internal error".
The values are now built by functions that cannot fail; the record in
`tests/data/yaml/bun-1.4.0.jsonl` (`python3 -m tests.helpers.record_yaml`) says what
`Bun.YAML.parse`, the parser inside Claude Code, makes of each case, and the fuzz targets below
feed random scalars of every tag and style through the parser and through every file kind of
every client, by the real commands."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assembler.parsing import frontmatter as fm
from assembler.parsing import yaml_values
from tests.helpers.cli import ctxasm

RECORD = Path(__file__).resolve().parents[1] / "data" / "yaml" / "bun-1.4.0.jsonl"


def _decoded(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"$number"}:
            return float(value["$number"])
        return {k: _decoded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decoded(v) for v in value]
    return value


def _same(ours: Any, theirs: Any) -> bool:
    """Equal as JavaScript sees it: numbers by value (NaN equal to NaN), keys in order."""
    if isinstance(ours, bool) or isinstance(theirs, bool):
        return ours is theirs
    if isinstance(ours, int | float) and isinstance(theirs, int | float):
        return (math.isnan(ours) and math.isnan(theirs)) or float(ours) == float(theirs)
    if isinstance(ours, dict) and isinstance(theirs, dict):
        return list(ours) == list(theirs) and all(_same(ours[k], theirs[k]) for k in ours)
    if isinstance(ours, list) and isinstance(theirs, list):
        return len(ours) == len(theirs) and all(map(_same, ours, theirs))
    return type(ours) is type(theirs) and ours == theirs


def _value(text: str) -> Any:
    node = yaml_values.compose(text)
    return None if node is None else yaml_values.value_of(node)


def test_every_recorded_value_is_what_bun_gives() -> None:
    cases = [json.loads(line) for line in RECORD.read_text(encoding="utf-8").splitlines()]
    assert len(cases) > 2000
    wrong = []
    for case in cases:
        if "error" in case:
            with pytest.raises(yaml.YAMLError):
                _value(case["yaml"])
            continue
        ours = _value(case["yaml"])
        if not _same(ours, _decoded(case["value"])):
            wrong.append(f"{case['yaml'][:60]!r}: ours {ours!r:.60}, Bun {case['value']!r:.60}")
    assert wrong == []


@pytest.mark.parametrize(
    ("line", "value"),
    [
        ("updated: 2021-02-30", "2021-02-30"),
        ("t: 23:59:60", "23:59:60"),
        ("n: " + "9" * 5000, math.inf),
        ("d: !!timestamp 2021-02-30", "2021-02-30"),
        ("b: !!binary ===", "==="),
        ("m: <<", "<<"),
        ("y: yes", "yes"),
        ("s: 1:20", "1:20"),
    ],
)
def test_values_that_crashed_pyyaml_are_what_the_client_reads(line: str, value: object) -> None:
    front, body = fm.split_frontmatter(f"---\n{line}\n---\nBody\n")
    assert (front.error, front.too_complex, body) == ("", "", "Body\n")
    assert list(front.data.values()) == [value]


# --- fuzz: random scalars of every tag and style ---------------------------------------------

_TAGS = ["", "!!str ", "!!int ", "!!float ", "!!bool ", "!!null ", "!!timestamp ", "!!binary ",
         "!!merge ", "!!set ", "!!omap ", "!!pairs ", "!custom ", "! ", "!<tag:yaml.org,2002:int> ",
         "!!python/object ", "!<!> "]  # fmt: skip
_DATES = st.builds(
    lambda y, m, d, time: f"{y:04d}-{m:02d}-{d:02d}{time}",
    st.integers(0, 9999), st.integers(0, 99), st.integers(0, 99),
    st.sampled_from(["", "T23:59:60", " 25:61:61.5Z", "t00:00:00-99:99"]),
)  # fmt: skip
_NUMBERS = st.one_of(
    st.integers(-(10**40), 10**40).map(str),
    st.integers(1, 6000).map(lambda n: "9" * n),
    st.integers(1, 400).map(lambda n: "0x" + "f" * n),
    st.integers(1, 400).map(lambda n: "0o" + "7" * n),
    st.integers(1, 400).map(lambda n: "0b" + "1" * n),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from([".inf", "-.INF", ".NaN", "1e99999", "1_000", "12:30:45", "1:2:3:4", "+.5"]),
)
_WORDS = st.sampled_from(["yes", "No", "ON", "~", "null", "TRUE", "<<", "=", "", "é", "\u2028"])
_SCALARS = st.one_of(_DATES, _NUMBERS, _WORDS, st.text(max_size=30))


def _styled(scalar: str, style: str) -> str:
    if style == "double":
        return json.dumps(scalar)
    if style == "single":
        return "'" + scalar.replace("'", "''") + "'"
    return scalar


_LINES = st.builds(
    lambda key, tag, scalar, style: f"{key}: {tag}{_styled(scalar, style)}",
    st.sampled_from(["paths", "globs", "applyTo", "tools", "disallowedTools", "name",
                     "description", "alwaysApply", "excludeAgent", "model", "updated", "<<"]),
    st.sampled_from(_TAGS), _SCALARS, st.sampled_from(["plain", "double", "single"]),
)  # fmt: skip
_FRONTMATTERS = st.lists(_LINES, min_size=1, max_size=4).map("\n".join)


def _js_like(value: Any) -> bool:
    if isinstance(value, dict):
        return all(isinstance(k, str) and _js_like(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_js_like(v) for v in value)
    return value is None or isinstance(value, str | bool | int | float)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(text=_FRONTMATTERS)
def test_no_scalar_makes_the_frontmatter_parser_raise(text: str) -> None:
    """Whatever a scalar holds: a mapping of JavaScript-like values, or a diagnostic."""
    front, body = fm.split_frontmatter(f"---\n{text}\n---\nBody\n")
    assert front.present and body == "Body\n"
    assert _js_like(dict(front.data))
    assert not (front.data and front.error)


# Where each client reads frontmatter, with the keys that make the file load (a list of
# (path, text before the fuzzed lines, policy, extra command)).
_PLACES = {
    "rule": (".claude/rules/r.md", "", "claude-code", ()),
    "skill": (".claude/skills/s/SKILL.md", "name: s\ndescription: d\n", "claude-code", ()),
    "agent": (".claude/agents/a.md", "name: a\ndescription: d\n", "claude-code",
              ("render", "--subagent", "a")),
    "CLAUDE.md": ("CLAUDE.md", "", "claude-code", ()),
    "import": ("docs/imported.md", "", "claude-code", ()),
    "user rule": ("home:.claude/rules/u.md", "", "claude-code", ()),
    "cursor rule": (".cursor/rules/r.mdc", "description: d\n", "cursor", ()),
    "copilot instructions": (".github/instructions/x.instructions.md", "applyTo: '**'\n",
                             "copilot", ()),
    "gemini": ("GEMINI.md", "", "gemini", ()),
    "codex": ("AGENTS.md", "", "codex", ()),
}  # fmt: skip


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(place=st.sampled_from(sorted(_PLACES)), text=_FRONTMATTERS)
def test_no_frontmatter_value_crashes_a_command(tmp_path_factory: pytest.TempPathFactory,
                                                place: str, text: str) -> None:  # fmt: skip
    """Random scalars of every tag through every file kind: render, explain, lint (the
    pre-commit hook's run) and, for an agent definition, `render --subagent` end as usual:
    exit 0 or 1 (2 only for an agent the client would not offer), never an internal error."""
    where, lead, policy, extra = _PLACES[place]
    tmp = tmp_path_factory.mktemp("yaml")
    repo, home = tmp / "repo", tmp / "home"
    (repo / ".git").mkdir(parents=True)
    home.mkdir()
    root, _, rel = where.rpartition(":")
    path = (home if root == "home" else repo) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{lead}{text}\n---\nThe body.\n", encoding="utf-8")
    if rel != "CLAUDE.md":
        (repo / "CLAUDE.md").write_text("Root. @docs/imported.md\n", encoding="utf-8")
    machine = ["--policy", policy, "--home", str(home), "--managed-dir", str(tmp / "managed")]
    commands = [["render"], ["explain"], ["lint"], ["lint", "--format", "json"]]
    if extra:
        commands.append(list(extra))
    for command in commands:
        ran = ctxasm([*command, *machine, str(repo)])
        assert "internal error" not in ran.output, (command, ran.output[-2000:])
        allowed = (0, 1, 2) if command[:2] == ["render", "--subagent"] else (0, 1)
        assert ran.exit_code in allowed, (command, ran.output[-2000:])
        if command[-2:] == ["--format", "json"]:
            json.loads(ran.stdout)
