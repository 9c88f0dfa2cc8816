"""The failures a caller of the agent handles, one class each."""

from __future__ import annotations


class ConfigError(ValueError):
    """The capture config is missing, malformed or refers to a secret that is absent;
    the message names the key and what was expected."""


class ClusterUnavailable(RuntimeError):
    """A cluster could not be captured this cycle (unreachable, listing failed, cycle
    deadline passed): nothing is written for it and the runner retries with backoff."""
