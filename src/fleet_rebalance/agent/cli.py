"""`fleet-capture`: capture every configured cluster's consumer groups into raw_root.

    fleet-capture --conf capture.yaml           # foreground, one status line per cycle
    fleet-capture --conf capture.yaml --once    # one cycle of every cluster (cron)

Exit status as the jobs use it: 0 done (every cluster captured; a clean stop on
SIGTERM/SIGINT), 1 a cluster could not be captured (--once), 2 a usage or config
mistake (one line on stderr, nothing captured).
"""

from __future__ import annotations

import argparse
import gc
import logging
import signal
import sys
import threading
from collections.abc import Sequence
from typing import NoReturn

from fleet_rebalance.agent.admin import AdminClientLike, AdminFactory, confluent_admin
from fleet_rebalance.agent.config import AgentConfig, load_config
from fleet_rebalance.agent.errors import ConfigError
from fleet_rebalance.agent.redaction import RedactingFilter, install

USAGE_STATUS = 2
# A cycle of a large cluster allocates a few hundred thousand long-lived objects (one
# concurrent Future per partition and offset kind from confluent-kafka, the snapshot's
# rows); with Python's default first threshold (700) the collector re-walks them
# thousands of times (docs/benchmarks.md, the capture agent).
GC_THRESHOLDS = (50_000, 20, 100)
PROG = "fleet-capture"
NO_CLIENT = "confluent-kafka (librdkafka's AdminClient) is not installed: pip install '.[capture]'"
EPILOG = (
    "exit status: 0 done; 1 a cluster could not be captured (--once); "
    "2 a usage or config mistake (nothing captured)"
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(USAGE_STATUS, f"{self.prog}: error: {message}\n")


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description=__doc__.split("\n", 1)[0], epilog=EPILOG)
    p.add_argument("--conf", required=True, help="the capture config (YAML)")
    p.add_argument("--once", action="store_true", help="one cycle of every cluster, then exit")
    p.add_argument("--verbose", action="store_true", help="debug logging (librdkafka's too)")
    return p


def main(argv: Sequence[str] | None = None, admin_factory: AdminFactory = confluent_admin) -> int:
    args = parser().parse_args(argv)
    try:
        config = load_config(args.conf)
    except ConfigError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return USAGE_STATUS
    try:  # after --help and the conf: neither needs librdkafka
        from fleet_rebalance.agent.runner import Reporter, run_forever, run_once
    except ModuleNotFoundError as exc:
        if exc.name != "confluent_kafka":
            raise
        print(f"{PROG}: error: {NO_CLIENT}", file=sys.stderr)
        return USAGE_STATUS
    redacting = _logging(config, args.verbose)
    tune_garbage_collector()
    try:
        admins = _admins(config, admin_factory)
    except ConfigError as exc:
        print(f"{PROG}: error: {redacting.redact(str(exc))}", file=sys.stderr)
        return USAGE_STATUS
    report = Reporter(lambda line: print(line, flush=True), redacting.redact)
    if args.once:
        return run_once(config, admins, report)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    return run_forever(config, admins, report, stop)


def tune_garbage_collector() -> None:
    gc.set_threshold(*GC_THRESHOLDS)


def _logging(config: AgentConfig, verbose: bool) -> RedactingFilter:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    redacting = install(handler, config.secrets)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    return redacting


def _admins(config: AgentConfig, factory: AdminFactory) -> dict[str, AdminClientLike]:
    """One client per cluster, made up front: librdkafka refuses an unknown or invalid
    property here, which is a config mistake, not a capture failure."""
    admins = {}
    for cluster in config.clusters:
        try:
            admins[cluster.name] = factory(cluster)
        except Exception as exc:  # KafkaException or ValueError on bad properties
            raise ConfigError(
                f"clusters {cluster.name!r}: client refused its properties: {exc}"
            ) from None
    return admins


if __name__ == "__main__":
    sys.exit(main())
