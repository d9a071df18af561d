"""The literal gates in front of the secret patterns never change what is found: each pattern
run on every text, with no gate, finds the same secrets."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.lint import files

PIECES = [
    "sk-ant-", "sk-", "AKIA", "ASIA", "ghp_", "github_pat_", "glpat-", "xoxb-", "AIza",
    "sk_live_", "eyJ", "-----BEGIN RSA PRIVATE KEY-----", "://", "user:", "@host",
    "api_key", "API-KEY", "Secret", "\u017fecret", "\u212aey", "token", "password", "passwd",
    " = ", ": ", "=", '"', "'", " ", "\n", "_", "-", "x7Qz9LmN2pR4sT6vW8yA0bC", "0123456789ABCDEF",
    "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5", "long-prose-words ",
    # one of each kind, whole
    "sk-ant-api03-aB3dE5fG7hJ9kL1mN3pQ5", "sk-proj-aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z",
    "AKIAABCDEFGHIJKLMNOP", "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5b",
    "github_pat_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7dE", "glpat-aB3dE5fG7hJ9kL1mN3pQ5",
    "xoxb-1234567890-abc", "AIzaSyA1B2C3D4E5F6G7H8I9J0K1L2M3N4O5P6Q", "rk_live_aB3dE5fG7hJ9kL1mN3pQ5",
    "eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2QT4f", "postgres://admin:s3cr3tPassw0rd@db",
]  # fmt: skip


def _ungated(text: str) -> list[tuple[int, str]]:
    """`files._secrets` with every pattern run on every text."""
    gates = files._SECRETS, files._ASSIGNED_NEEDLE
    try:
        files._SECRETS = tuple((label, ("",), pattern) for label, _, pattern in gates[0])
        files._ASSIGNED_NEEDLE = re.compile("")
        return list(files._secrets(text))
    finally:
        files._SECRETS, files._ASSIGNED_NEEDLE = gates


@settings(max_examples=400, derandomize=True)
@given(st.lists(st.sampled_from(PIECES), max_size=30))
def test_gates_find_what_the_patterns_find(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert list(files._secrets(text)) == _ungated(text)


def test_folded_names_still_pass_the_gate() -> None:
    """`(?i)` matches the Kelvin sign for `k` and the long s for `s`; the gate must too."""
    for name in ("api_\u212aey", "\u017fecret"):
        text = f"{name} = x7Qz9LmN2pR4sT6vW8yA0bCdE"
        assert list(files._secrets(text)) == _ungated(text) != []
