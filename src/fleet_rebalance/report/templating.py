"""The report's one Jinja2 environment: markup lives in templates/, escaping is
autoescape's, and every value a template writes is first shown as visible() spells it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from fleet_rebalance.report.shown import Shown, visible


class _JoinedLines(PackageLoader):
    """Templates are indented for reading; their line breaks and indentation are not
    part of the page, which writes no whitespace between tags. A space that shows (between
    inline elements, in text) is written inside a line, and a tag never spans lines."""

    def get_source(self, environment: Environment, template: str) -> tuple[str, str, Any]:
        source, filename, uptodate = super().get_source(environment, template)
        return "".join(line.strip() for line in source.splitlines()), filename, uptodate


def _shown(value: object) -> object:
    """A template's own markup (a macro's output) as it is; any other value spelled out."""
    return value if isinstance(value, Markup | Shown) else visible(value)


ENV = Environment(
    loader=_JoinedLines("fleet_rebalance.report", "templates"),
    autoescape=True,
    undefined=StrictUndefined,
    finalize=_shown,
)


class Macros:
    """The macros of one template, each called like a function returning its markup."""

    def __init__(self, template: str) -> None:
        self._module = ENV.get_template(template).module

    def __getattr__(self, name: str) -> Callable[..., Markup]:
        macro: Callable[..., Markup] = getattr(self._module, name)
        return macro


def render(template: str, **context: object) -> str:
    return ENV.get_template(template).render(**context)
