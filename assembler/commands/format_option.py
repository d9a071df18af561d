"""`--format` of `render` and `watch`: one of the format registry's names."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ..output import formats

if TYPE_CHECKING:
    _Choice = click.Choice[str]
else:  # click.Choice is generic from click 8.4 on
    _Choice = click.Choice


class FormatChoice(_Choice):
    """The format registry's names, read whenever click needs them, not when the command is
    defined: the formats of a client registered later (a plugin, a test) are offered too."""

    def __init__(self) -> None:
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        return formats.names()

    @choices.setter
    def choices(self, value: tuple[str, ...]) -> None:
        """`click.Choice.__init__` sets them once; these are always the registry's."""


format_option = click.option(
    "--format",
    "fmt",
    type=FormatChoice(),
    help="Output format (default: the policy's, xml).",
)
