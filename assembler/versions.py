"""Client versions: which releases of an agent ctxasm models, and the facts that differ.

An agent's behaviour belongs to a range of its releases, never to the agent. Each client
declares, in one table of its own package (`VersionTable`), the versions it models and its
version-gated facts, each with the range it holds for and where it was observed; its code
asks the facts by name (`facts.agents_md`), never compares versions. A run models one
version (`ClientVersion`), chosen from what the caller asked (`choose`):

* an exact version: that model; a release that one model stands for (`0.171` models every
  `0.171.x`) counts as exact;
* `latest` (or nothing): the newest modelled;
* a release between two modelled ones: the nearest older model, with a note saying so;
* `installed`: the version the installed client reports (asked by the client, through
  `installed`), then as above;
* anything else (malformed, older than the oldest model, newer than the newest): a
  `RequestError` naming the versions modelled.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from .errors import RequestError
from .model import Diagnostic

LATEST = "latest"
INSTALLED = "installed"
# A release number as clients print it (`2.1.332`, `0.171.0`); a pre-release or build
# suffix (`-beta.1`) is not modelled.
_VERSION = re.compile(r"\d{1,9}(?:\.\d{1,9}){0,3}")
MAX_ASKED_CHARS = 64  # what a version option may hold; longer is malformed


def parse(text: str) -> tuple[int, ...]:
    """`"2.1.332"` as `(2, 1, 332)`; a `RequestError` when it is not a release number."""
    if not _VERSION.fullmatch(text):
        raise RequestError(
            f"client version {text[:MAX_ASKED_CHARS]!r} is not a release number like 2.1.332, "
            f"{LATEST!r} or {INSTALLED!r}"
        )
    return tuple(int(part) for part in text.split("."))


def checked_asked(value: object) -> str | None:
    """A `client_version` option as given: None (the newest), `latest`, `installed` or a
    release number; anything else is a `RequestError` before any work."""
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > MAX_ASKED_CHARS:
        raise RequestError(
            f"client_version: {value!r:.80} is not a version; pass a release number like "
            f"2.1.332, {LATEST!r} or {INSTALLED!r}"
        )
    if value not in (LATEST, INSTALLED):
        parse(value)
    return value


class ClientVersion(NamedTuple):
    """The version of its client a run models, and how it was chosen."""

    modelled: str  # the model used ("2.1.332"); "" for a client that models no versions
    asked: str = ""  # what the caller asked: a release number, `latest`, `installed`; "": nothing
    found: str = ""  # the release asked or reported (`installed`), when it is not `modelled`
    note: str = ""  # one line when the model is not the release asked for
    # `installed`: the relative PATH entries not looked in for the client's program
    # (`discovery.programs`), said once in the run's diagnostics (`CTX606`).
    path_notes: tuple[Diagnostic, ...] = ()

    def __str__(self) -> str:
        return self.modelled


NO_VERSION = ClientVersion("")


class Fact(NamedTuple):
    """One version-gated behaviour: the modelled versions it holds for, and its source.

    `since`: the first modelled version it holds for (None: from the oldest); `until`: the
    first modelled version it no longer holds for (None: up to the newest). `observed`: where
    the fact comes from (a SPEC section and the versions it was recorded on) and, when its
    boundary between two models is not known, which versions it was seen on.
    """

    name: str
    since: str | None
    until: str | None
    observed: str

    def holds(self, version: tuple[int, ...]) -> bool:
        if self.since is not None and version < parse(self.since):
            return False
        return self.until is None or version < parse(self.until)


class VersionTable(NamedTuple):
    """A client's modelled versions (oldest first) and its version-gated facts."""

    client: str  # how messages name the client (its `Client.title`)
    modelled: tuple[str, ...]
    facts: tuple[Fact, ...] = ()

    @property
    def latest(self) -> str:
        return self.modelled[-1]

    def choose(self, asked: str | None, installed: str | None = None) -> ClientVersion:
        """The model for `asked` (`checked_asked`'s values); `installed`: the release the
        installed client reported, when `asked` is `installed`."""
        if asked is None or asked == LATEST:
            return ClientVersion(self.latest, asked or "")
        release = installed if asked == INSTALLED else asked
        assert release is not None, "installed: ask the client first"
        wanted = parse(release)
        models = [parse(m) for m in self.modelled]
        for text, model in zip(self.modelled, models, strict=True):
            if wanted[: len(model)] == model:  # `0.171` stands for every `0.171.x`
                found = release if release != text or asked == INSTALLED else ""
                return ClientVersion(text, asked, found)
        older = [
            text for text, parsed in zip(self.modelled, models, strict=True) if parsed < wanted
        ]
        if not older or wanted > models[-1]:
            said = "the installed " if asked == INSTALLED else ""
            raise RequestError(
                f"{said}{self.client} {release} is not modelled (ctxasm models "
                f"{', '.join(self.modelled)}); pass --client-version with one of them, or latest"
            )
        nearest = older[-1]
        note = (
            f"{self.client} {release} is not modelled: modelling {nearest}, the nearest older "
            f"version ctxasm models"
        )
        return ClientVersion(nearest, asked, release, note)

    def facts_at(self, version: str) -> dict[str, bool]:
        """Whether each fact holds at `version` (a modelled one), by name: the fields of the
        client's NamedTuple of facts (`Facts(**table.facts_at(version))`)."""
        parsed = parse(version or self.latest)
        return {f.name: f.holds(parsed) for f in self.facts}
