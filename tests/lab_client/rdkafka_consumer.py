"""One member of a Kafka lab group on librdkafka (confluent-kafka from PyPI): subscribed,
polling and auto-committing, with the assignor it is told. SIGTERM closes it (a
LeaveGroup); SIGKILL leaves nothing behind. Its consumer-group debug log (stderr) names
each JoinGroup response's generation (`JoinGroup response: GenerationId <n>`): the lab's
record of the group's generations that does not come from the brokers' logs.

    python rdkafka_consumer.py bootstrap=127.0.0.1:9092 group=g topics=orders client=c-1 \
        assignor=cooperative-sticky
"""

from __future__ import annotations

import signal
import sys

from confluent_kafka import Consumer


def main(argv: list[str]) -> int:
    opts = dict(arg.split("=", 1) for arg in argv)
    consumer = Consumer(
        {
            "bootstrap.servers": opts["bootstrap"],
            "group.id": opts["group"],
            "client.id": opts["client"],
            "partition.assignment.strategy": opts.get("assignor", "cooperative-sticky"),
            "session.timeout.ms": int(opts.get("session_ms", "10000")),
            "heartbeat.interval.ms": 1000,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": True,
            "auto.commit.interval.ms": 1000,
            "topic.metadata.refresh.interval.ms": 3000,
            "debug": "cgrp",
        }
    )
    running = [True]
    signal.signal(signal.SIGTERM, lambda *_: running.__setitem__(0, False))
    consumer.subscribe(opts["topics"].split(","))
    print(f"started {opts['client']}", flush=True)
    try:
        while running[0]:
            consumer.poll(0.2)
    finally:
        consumer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
