"""The failures a caller of the agent handles, one class each."""

from __future__ import annotations

# The job's ConfigError: a capture config that is missing, malformed or refers to an
# absent secret is refused as any conf file is, in one line naming the key.
from fleet_rebalance.yaml_file import ConfigError

__all__ = ["ClusterUnavailable", "ConfigError"]


class ClusterUnavailable(RuntimeError):
    """A cluster could not be captured this cycle (unreachable, listing failed, cycle
    deadline passed): nothing is written for it and the runner retries with backoff."""
