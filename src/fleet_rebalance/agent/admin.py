"""The admin client the agent talks to: confluent-kafka's AdminClient, or any object
with the same five calls (the tests' and the benchmark's fake).

Why confluent-kafka: librdkafka wheels (no JVM), maintained by Confluent, and it
describes KIP-848 consumer-protocol groups (type, target assignment) through
ConsumerGroupDescribe. What its Python API does not expose (2.16): member epochs,
group epoch, the members' client rack and subscriptions; the snapshot leaves them out.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, Protocol

from fleet_rebalance.agent.config import ClusterConfig

# Kafka's own spelling of a group state (GroupState.toString), as the CLI prints it and
# as replay compares it ("Empty"), from librdkafka's enum names.
STATE_NAMES = {
    "UNKNOWN": "Unknown",
    "PREPARING_REBALANCING": "PreparingRebalance",
    "COMPLETING_REBALANCING": "CompletingRebalance",
    "STABLE": "Stable",
    "DEAD": "Dead",
    "EMPTY": "Empty",
    "ASSIGNING": "Assigning",
    "RECONCILING": "Reconciling",
}


class AdminClientLike(Protocol):
    """The part of confluent_kafka.admin.AdminClient the agent uses."""

    def list_consumer_groups(self, **kwargs: Any) -> Future: ...

    def describe_consumer_groups(
        self, group_ids: list[str], **kwargs: Any
    ) -> dict[str, Future]: ...

    # The request positional: confluent-kafka names it list_consumer_group_offsets_request,
    # so an open **kwargs here could pass it twice.
    def list_consumer_group_offsets(
        self, requests: list[Any], /, *, request_timeout: float = ...
    ) -> dict[str, Future]: ...

    def list_offsets(
        self, topic_partition_offsets: dict[Any, Any], **kwargs: Any
    ) -> dict[Any, Future]: ...

    def list_topics(self, *args: Any, **kwargs: Any) -> Any: ...

    def describe_topics(self, topics: Any, **kwargs: Any) -> dict[str, Future]: ...

    def describe_cluster(self, **kwargs: Any) -> Future: ...


AdminFactory = Callable[[ClusterConfig], AdminClientLike]


def confluent_admin(cluster: ClusterConfig) -> AdminClientLike:
    """A librdkafka AdminClient for one cluster. Its log lines and connection errors go
    through this module's logger (so the secrets filter sees them) instead of stderr."""
    from confluent_kafka.admin import AdminClient

    client_log = logging.getLogger(f"fleet_rebalance.agent.librdkafka.{cluster.name}")

    def on_error(error: Any) -> None:
        # librdkafka reports every failed connection attempt; the cycle reports the outcome.
        client_log.debug("%s", error)

    properties: dict[str, Any] = {
        **cluster.admin_properties(),
        "error_cb": on_error,
        "logger": client_log,
    }
    properties.setdefault("client.id", "fleet-capture")
    return AdminClient(properties)


def state_name(state: Any) -> str | None:
    """Kafka's spelling of a librdkafka ConsumerGroupState (or of a plain string)."""
    if state is None:
        return None
    name = getattr(state, "name", None) or str(state)
    return STATE_NAMES.get(name.upper(), name)


def type_name(group_type: Any) -> str | None:
    """classic | consumer, as Kafka's GroupType prints them; None when the broker did
    not say (UNKNOWN: a broker without KIP-848's group types)."""
    if group_type is None:
        return None
    name = (getattr(group_type, "name", None) or str(group_type)).lower()
    return None if name == "unknown" else name


def error_text(failure: Any) -> str:
    """A failure as `NAME: message`: librdkafka's KafkaError code name when there is one
    (what an operator searches for), else the exception's class and text. Takes a
    KafkaException, a bare KafkaError (ListConsumerGroupsResult.errors) or any error."""
    error = failure.args[0] if isinstance(failure, BaseException) and failure.args else failure
    name = getattr(error, "name", None)
    text = getattr(error, "str", None)
    if callable(name) and callable(text):
        return f"{name()}: {text()}"
    return f"{type(failure).__name__}: {failure}"


def error_code(exc: BaseException) -> int | None:
    """librdkafka's error code of a KafkaException, else None."""
    error = exc.args[0] if exc.args else None
    code = getattr(error, "code", None)
    return code() if callable(code) else None
