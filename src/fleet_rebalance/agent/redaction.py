"""Secrets out of every log line: a logging filter that blanks the resolved secret
values wherever they appear, in the message and its arguments (librdkafka's own log
and error callbacks are routed through the same loggers)."""

from __future__ import annotations

import logging
from collections.abc import Iterable

MASK = "***"


class RedactingFilter(logging.Filter):
    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        # Longest first, so a secret containing another is masked whole.
        self.secrets = sorted({s for s in secrets if s}, key=len, reverse=True)

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, MASK)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secrets:
            record.msg = self.redact(record.getMessage())
            record.args = None
            if record.exc_info and record.exc_info[1] is not None:
                record.exc_text = self.redact(logging.Formatter().formatException(record.exc_info))
                record.exc_info = None
        return True


def install(handler: logging.Handler, secrets: Iterable[str]) -> RedactingFilter:
    """Attach the filter to a handler: every record it emits, from any logger, is
    redacted (a filter on a logger would miss its children's records)."""
    redacting = RedactingFilter(secrets)
    handler.addFilter(redacting)
    return redacting
