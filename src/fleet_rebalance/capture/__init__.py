"""Parsers of the raw capture formats (shared/FORMATS.md) into bronze rows; no Spark."""

from fleet_rebalance.capture.parse import parse_capture
from fleet_rebalance.capture.result import ParseResult

__all__ = ["ParseResult", "parse_capture"]
