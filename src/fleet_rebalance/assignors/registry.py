"""Assignors by name, and user plug-ins by dotted path."""

from __future__ import annotations

import importlib

from fleet_rebalance.assignors.range import RangeAssignor
from fleet_rebalance.assignors.roundrobin import RoundRobinAssignor
from fleet_rebalance.assignors.sticky import CooperativeStickyAssignor, StickyAssignor
from fleet_rebalance.assignors.types import Assignor
from fleet_rebalance.assignors.uniform import UniformAssignor
from fleet_rebalance.vocabulary import RebalanceProtocol

BUILT_IN: dict[str, type] = {
    cls.name: cls
    for cls in (
        RangeAssignor,
        RoundRobinAssignor,
        StickyAssignor,
        CooperativeStickyAssignor,
        UniformAssignor,
    )
}
PROTOCOLS = tuple(RebalanceProtocol)


class PluginError(ValueError):
    """A plug-in path that does not lead to a usable assignor."""


def available_assignors() -> list[str]:
    return list(BUILT_IN)


def get_assignor(name: str) -> Assignor:
    """A built-in by name ("range", ...) or a plug-in as "package.module:ClassName"."""
    if name in BUILT_IN:
        return BUILT_IN[name]()
    if ":" not in name:
        raise ValueError(
            f"unknown assignor {name!r}: expected one of "
            f"{', '.join(BUILT_IN)} or 'package.module:ClassName'"
        )
    return load_plugin(name)


def load_plugin(path: str) -> Assignor:
    module_name, _, class_name = path.partition(":")
    if not module_name or not class_name:
        raise PluginError(f"plug-in {path!r}: expected 'package.module:ClassName'")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise PluginError(f"plug-in {path!r}: module {module_name!r} not found ({exc})") from exc
    cls = getattr(module, class_name, None)
    if cls is None:
        raise PluginError(f"plug-in {path!r}: module {module_name!r} has no class {class_name!r}")
    try:
        assignor = cls()
    except Exception as exc:
        raise PluginError(f"plug-in {path!r}: {class_name}() failed: {exc}") from exc
    for attribute in ("name", "protocol", "assign"):
        if not hasattr(assignor, attribute):
            raise PluginError(f"plug-in {path!r}: {class_name} has no {attribute!r}")
    if not callable(assignor.assign):
        raise PluginError(f"plug-in {path!r}: {class_name}.assign is not a method")
    if assignor.protocol not in PROTOCOLS:
        raise PluginError(
            f"plug-in {path!r}: protocol must be 'eager' or 'cooperative', "
            f"found {assignor.protocol!r}"
        )
    return assignor
