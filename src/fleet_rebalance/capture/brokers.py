"""kafka-configs.sh --describe --entity-type brokers --all (FORMATS 1.7): each broker's
rack, the brokers' half of the zones cross-zone traffic is measured between.

ConfigCommand prints a block per broker, `All configs for broker <id> are:`, then one
line per config, sorted by name: `  <name>=<value> sensitive=<bool> synonyms={...}`;
an unset value prints as `null` (so a rack named `null` reads as none). A block without
a `broker.rack` line (never printed with `--all`) gives no row: that broker's zone is
unknown, not guessed. Without `--all` the header says `Dynamic configs` and
the block holds only dynamic configs, never `broker.rack` (a read-only, static config):
such a file would say every broker has no rack, so it is refused whole. The cluster's
default block (`Default configs for brokers in the cluster are:`) holds no rack.
"""

from __future__ import annotations

import re

from fleet_rebalance.capture import tool_messages as msg
from fleet_rebalance.capture.context import ParseContext
from fleet_rebalance.capture.numbers import INT32, not_negative, parse_int
from fleet_rebalance.capture.result import BROKERS, FAILED_CAPTURE, ParseResult
from fleet_rebalance.capture.text import BLANKS, UNPRINTED

HEADER = re.compile(r"^(?P<source>All|Dynamic) configs for broker (?P<broker>\S+) are:$")
DEFAULT_HEADER = re.compile(r"^Default configs for brokers in the cluster are:$")
CONFIG = re.compile(r"^  (?P<name>[^=\s]+)=(?P<value>.*) sensitive=(?:true|false) synonyms=\{.*\}$")
RACK = "broker.rack"
VIEW = "kafka-configs.sh --describe --all"
NOT_ALL = (
    "kafka-configs.sh --describe without --all: it shows dynamic configs only, never "
    "broker.rack; capture with --all"
)


def is_brokers_line(line: str) -> bool:
    return bool(HEADER.match(line) or DEFAULT_HEADER.match(line))


def parse_brokers(text_lines: list[str], result: ParseResult, context: ParseContext) -> None:
    broker: int | None = None  # the block being read; None in the default block
    racks: set[int] = set()  # brokers whose rack was read
    for number, line in enumerate(text_lines, start=1):
        stripped = line.strip(BLANKS)
        header = HEADER.match(stripped)
        if header is not None and header["source"] == "Dynamic":
            result.reject_file(NOT_ALL, line)
            result.status = FAILED_CAPTURE
            return
        if header is not None:
            try:
                broker = not_negative(parse_int(header["broker"], "broker id", INT32), "broker id")
            except ValueError as exc:
                result.reject(number, line, f"malformed broker header: {exc}")
                broker = None
                continue
            result.structural += 1
            continue
        if DEFAULT_HEADER.match(stripped):
            broker = None
            result.structural += 1
            continue
        if not stripped or msg.is_log_noise(stripped):
            result.structural += 1
            continue
        config = CONFIG.match(line)
        if config is None:
            failure = msg.tool_error(stripped)
            trace = "stack trace" if msg.is_stack_trace(line) else None
            result.reject_foreign(number, line, failure or trace, VIEW)
            continue
        if config["name"] != RACK or broker is None:
            result.structural += 1
            continue
        rack = config["value"]
        if UNPRINTED.search(rack):
            result.reject(number, line, "broker.rack holds a control character")
            continue
        if broker in racks:
            result.reject(number, line, f"a second broker.rack for broker {broker}")
            continue
        racks.add(broker)
        result.add(
            BROKERS,
            {
                "broker": broker,
                "rack": None if rack == "null" else rack,
                **context["common"],
                "line_number": number,
            },
        )
        result.row_lines += 1
