"""The `anthropic` and `openai` formats: golden files, the shared static prefix, and what the
real SDKs send to a local server."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from assembler import Assembly, assemble
from assembler.output.tiers import RequestOptions, make_options, text_hash
from tests.helpers.cli import ctxasm
from tests.helpers.fake_api import FakeAPI
from tests.helpers.golden import PLACEHOLDER, check_golden
from tests.helpers.trees import DATA, bootstrap_assembly, build, demo_assembly, git_init

GOLDEN = DATA / "golden-agent"


def _skills(tmp: Path) -> Assembly:
    """A small repository with a user skill and two project skills."""
    git_init(tmp / "repo")
    build(
        tmp,
        {
            "managed/CLAUDE.md": "Use the company VPN for production access.",
            "repo/CLAUDE.md": "Run `make test` before pushing.",
            "repo/.claude/skills/release/SKILL.md": (
                "---\nname: release\ndescription: Cut a release: bump, tag, changelog.\n---\n"
                "1. Bump the version.\n2. Tag it.\n"
            ),
            "repo/.claude/skills/triage/SKILL.md": "# Triage new issues\n\nLabel and assign.\n",
            "home/.claude/skills/standup/SKILL.md": (
                "---\ndescription: Summarise yesterday's commits for the standup.\n---\nbody\n"
            ),
        },
    )
    return assemble(tmp / "repo", home=tmp / "home", managed_dir=tmp / "managed", environ={})


CASES: dict[str, Callable[[Path], Assembly]] = {
    "demo": demo_assembly,
    "bootstrap": bootstrap_assembly,
    "skills": _skills,
}
# Each variant: the format and the options of `ctxasm render --format F ...`.
VARIANTS: dict[str, tuple[str, RequestOptions]] = {
    "anthropic": ("anthropic", RequestOptions()),
    "anthropic-small-global-1h": (
        "anthropic",
        make_options(
            ttl=["1h", "local=5m", "subdirectory=5m", "memory=5m"], scope="global"
        )._replace(min_tokens=40),
    ),
    "anthropic-reserved": ("anthropic", make_options(min_tokens=40, reserve_breakpoint=True)),
    "openai-responses": ("openai", RequestOptions()),
    "openai-chat": ("openai", make_options(openai_api="chat")),
}
GOLDEN_CASES = sorted((case, variant) for case in CASES for variant in VARIANTS)


def test_golden_directory_holds_exactly_one_file_per_case_and_variant() -> None:
    files = sorted((c.name, f.stem) for c in GOLDEN.iterdir() if c.is_dir() for f in c.glob("*"))
    assert files == GOLDEN_CASES


@pytest.mark.parametrize(("case", "variant"), GOLDEN_CASES)
def test_golden(case: str, variant: str, fixed_tmp: Path, update_goldens: bool) -> None:
    fmt, options = VARIANTS[variant]
    actual = CASES[case](fixed_tmp).render(fmt, options=options)
    actual = actual.replace(str(fixed_tmp), PLACEHOLDER)
    # The key hashes the real static prefix, whose managed path holds the temporary directory
    # (checked against the prefix in the tests below).
    actual = re.sub(r'"ctxasm-[0-9a-f]{24}"', '"ctxasm-<sha256 of the static prefix>"', actual)
    check_golden(actual, GOLDEN / case / f"{variant}.txt", update_goldens)


def test_anthropic_blocks_are_the_tiers_with_breakpoints_at_tier_ends(tmp_path: Path) -> None:
    system = json.loads(
        demo_assembly(tmp_path).render("anthropic", options=make_options(min_tokens=40))
    )
    system = system["system"]
    tags = [b["text"].split(" ", 1)[0].lstrip("<") for b in system]
    assert tags == [
        "managed_policy",
        "user_instructions",
        "project_instructions",
        "local_instructions",
        "subdirectory_instructions",
        "auto_memory",
    ]
    assert sum("cache_control" in b for b in system) == 4
    assert all(b["cache_control"] == {"type": "ephemeral"} for b in system if "cache_control" in b)
    assert "__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__" not in json.dumps(system)


def test_openai_puts_the_static_prefix_first_and_keys_the_cache_on_it(tmp_path: Path) -> None:
    a = demo_assembly(tmp_path)
    responses = json.loads(a.render("openai"))
    chat = json.loads(a.render("openai", options=make_options(openai_api="chat")))
    static, _, dynamic = a.text.partition("\n\n__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__\n\n")
    assert responses == {
        "instructions": static,
        "input": [{"role": "developer", "content": dynamic}],
        "prompt_cache_key": "ctxasm-" + text_hash(static)[:24],
    }
    assert chat == {
        "messages": [
            {"role": "system", "content": static},
            {"role": "system", "content": dynamic},
        ],
        "prompt_cache_key": responses["prompt_cache_key"],
    }


def test_without_a_static_prefix_there_are_no_instructions(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(tmp_path, {"repo/CLAUDE.md": "Only a project file."})
    a = assemble(tmp_path / "repo", home=tmp_path / "h", managed_dir=tmp_path / "m", environ={})
    request = json.loads(a.render("openai"))
    assert list(request) == ["input", "prompt_cache_key"]
    # Keyed by the first tier (the project's), not by the hash of nothing that every project
    # without managed files would share.
    first = request["input"][0]["content"]
    assert request["prompt_cache_key"] == "ctxasm-" + text_hash(first)[:24]
    assert request["prompt_cache_key"] != "ctxasm-" + text_hash("")[:24]
    build(tmp_path, {"repo/CLAUDE.md": "Another project."})
    other = assemble(tmp_path / "repo", home=tmp_path / "h", managed_dir=tmp_path / "m", environ={})
    assert json.loads(other.render("openai"))["prompt_cache_key"] != request["prompt_cache_key"]


def test_without_any_stable_text_there_is_no_cache_key(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    a = assemble(tmp_path / "repo", home=tmp_path / "h", managed_dir=tmp_path / "m", environ={})
    assert "prompt_cache_key" not in json.loads(a.render("openai"))
    chat = a.render("openai", options=RequestOptions(openai_api="chat"))
    assert "prompt_cache_key" not in json.loads(chat)


def _two_users(tmp_path: Path) -> list[Assembly]:
    """Alice and Bob: one machine's managed policy, their own homes, usernames, checkouts
    and private files, the same repository; with the environment section."""
    managed = tmp_path / "etc" / "claude-code"
    build(managed, {"CLAUDE.md": "Company policy: never push to main.\n" * 30})
    out = []
    for user, home, repo in (
        ("alice", tmp_path / "home" / "alice", tmp_path / "home" / "alice" / "src" / "repo"),
        ("bob", tmp_path / "Users" / "bob", tmp_path / "work" / "bob" / "checkouts" / "repo"),
    ):
        git_init(repo)
        build(
            repo.parent,
            {
                "repo/CLAUDE.md": "Project rules.",
                "repo/CLAUDE.local.md": f"{user}'s sandbox is at {home}/sandbox.",
            },
        )
        build(home, {".claude/CLAUDE.md": f"I am {user}."})
        environ = {"USER": user, "LOGNAME": user, "HOME": str(home), "PATH": "/usr/bin:/bin"}
        out.append(
            assemble(repo, home=home, managed_dir=managed, environ=environ, environment=True)
        )
    return out


def test_the_static_prefix_is_byte_identical_for_two_users(tmp_path: Path) -> None:
    alice, bob = _two_users(tmp_path)
    options = make_options(scope="global", min_tokens=100)
    blocks = [json.loads(a.render("anthropic", options=options))["system"] for a in (alice, bob)]
    assert blocks[0][0] == blocks[1][0]  # text and breakpoint, byte for byte
    assert blocks[0][0]["cache_control"] == {"type": "ephemeral", "scope": "global"}
    assert blocks[0][1:] != blocks[1][1:]  # and the rest really is theirs
    openai_ = [json.loads(a.render("openai")) for a in (alice, bob)]
    assert openai_[0]["instructions"].encode() == openai_[1]["instructions"].encode()
    assert openai_[0]["prompt_cache_key"] == openai_[1]["prompt_cache_key"]
    # Nothing machine-specific (paths, usernames) before the boundary; the environment last.
    for a, user in ((alice, "alice"), (bob, "bob")):
        request = json.loads(a.render("anthropic", options=options))["system"]
        static = request[0]["text"]
        assert user not in static and str(tmp_path / "home") not in static
        assert request[-1]["text"].startswith(
            f'<environment source="&lt;environment>">\nWorking directory: {a.context.cwd}'
        )
        assert sum(str(a.context.cwd) in b["text"] for b in request) == 1


# --- the real SDKs against a local server -------------------------------------------------


def _blocks(tmp_path: Path) -> dict[str, Any]:
    a = demo_assembly(tmp_path)
    options = make_options(ttl=["1h", "memory=5m"], scope="global", min_tokens=40)
    request: dict[str, Any] = json.loads(a.render("anthropic", options=options))
    return request


def test_the_anthropic_sdk_sends_our_blocks_and_breakpoints_unchanged(tmp_path: Path) -> None:
    request = _blocks(tmp_path)
    marks = [b["cache_control"] for b in request["system"] if "cache_control" in b]
    assert {"type": "ephemeral", "ttl": "1h", "scope": "global"} in marks
    assert marks[-1] == {"type": "ephemeral"}  # memory: 5 minutes, after the 1-hour ones
    with FakeAPI().running() as api:
        client = anthropic.Anthropic(base_url=api.url, api_key="test-key", max_retries=0)
        reply = client.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=16,
            messages=[{"role": "user", "content": "hello"}],
            **request,
        )
    assert reply.content[0].type == "text"
    [sent] = api.requests
    assert sent.path == "/v1/messages"
    assert sent.body["system"] == request["system"]
    assert json.dumps(sent.body["system"]) == json.dumps(request["system"])  # order too


@pytest.mark.parametrize("api_shape", ["responses", "chat"])
def test_the_openai_sdk_sends_our_prefix_and_cache_key_unchanged(
    tmp_path: Path, api_shape: str
) -> None:
    options = make_options(openai_api=api_shape)
    request = json.loads(demo_assembly(tmp_path).render("openai", options=options))
    user: Any = {"role": "user", "content": "hello"}
    reply_text: str | None
    with FakeAPI().running() as api:
        client = openai.OpenAI(base_url=api.url + "/v1", api_key="test-key", max_retries=0)
        if api_shape == "responses":
            reply_text = client.responses.create(
                model="gpt-5",
                instructions=request["instructions"],
                input=[*request["input"], user],
                prompt_cache_key=request["prompt_cache_key"],
            ).output_text
        else:
            completion = client.chat.completions.create(
                model="gpt-5",
                messages=[*request["messages"], user],
                prompt_cache_key=request["prompt_cache_key"],
            )
            reply_text = completion.choices[0].message.content
    [sent] = api.requests
    assert reply_text == "ok"
    if api_shape == "responses":
        assert sent.path == "/v1/responses"
        assert sent.body["instructions"] == request["instructions"]
        assert sent.body["input"] == [*request["input"], user]
    else:
        assert sent.path == "/v1/chat/completions"
        assert sent.body["messages"] == [*request["messages"], user]
    assert sent.body["prompt_cache_key"] == request["prompt_cache_key"]


# --- the command line ---------------------------------------------------------------------


def _render(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    result = ctxasm(["render", str(tmp_path / "repo"), "--home", str(tmp_path / "home"),
         "--managed-dir", str(tmp_path / "managed"), *args])  # fmt: skip
    return result.exit_code, result.stdout, result.stderr


def test_render_takes_the_request_options(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "managed/CLAUDE.md": "Managed.",
            "home/.claude/CLAUDE.md": "User.",
            "repo/CLAUDE.md": "P.",
        },
    )
    code, out, err = _render(
        tmp_path, "--format", "anthropic", "--min-cache-tokens", "0", "--ttl", "1h", "--scope",
        "global", "--reserve-breakpoint",
    )  # fmt: skip
    assert (code, err) == (0, "")
    assert [b.get("cache_control") for b in json.loads(out)["system"]] == [
        {"type": "ephemeral", "ttl": "1h", "scope": "global"},
        {"type": "ephemeral", "ttl": "1h"},
        {"type": "ephemeral", "ttl": "1h"},
    ]
    code, out, err = _render(tmp_path, "--format", "openai", "--api", "chat", "--env")
    messages = json.loads(out)["messages"]
    assert (code, err, len(messages)) == (0, "", 2)
    assert messages[1]["content"].endswith("</environment>")
    code, out, err = _render(tmp_path, "--format", "anthropic", "--model", "claude-haiku-4-5")
    assert all("cache_control" not in b for b in json.loads(out)["system"])  # under 4,096
    code, out, err = _render(tmp_path, "--format", "anthropic", "--ttl", "user=1h")
    assert (code, out) == (2, "")
    assert err == (
        "ctxasm: ttl: user=1h follows managed at 5m; the API requires longer TTLs first: "
        "give 1h to every tier before user too\n"
    )
