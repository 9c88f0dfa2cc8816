"""The per-line path of the describe views: any row shape, the tool's messages and
errors, and the quarantine reasons.

The tool's messages among the tables are structural, or quarantined where the tool
printed one instead of a row (tool_messages.py). A tool error and its stack trace make
a failed capture. A row that does not fit its header, or holds a control character,
is quarantined with the reason.
"""

from __future__ import annotations

from fleet_rebalance.capture import share_streams as ss
from fleet_rebalance.capture import tool_messages as msg
from fleet_rebalance.capture.context import ParseContext
from fleet_rebalance.capture.describe.headers import MEMBERS_VIEW, STATE_VIEW, Header
from fleet_rebalance.capture.describe.rows import ROW_BUILDERS, TABLES
from fleet_rebalance.capture.describe.split import ROW_LINE, printable, split
from fleet_rebalance.capture.result import FAILED_CAPTURE, ParseResult
from fleet_rebalance.capture.text import BLANKS


class LineState:
    """Reads one line at a time under the header the caller set (`use`), in line order."""

    def __init__(self, result: ParseResult, context: ParseContext) -> None:
        self.result, self.context = result, context
        self.header: Header | None = None
        self.in_error = False
        self.owner = -1  # the line's header line (index), -1 before any
        self.tasks = ss.TaskLines()

    def use(self, header: Header | None, owner: int, context: ParseContext) -> None:
        """The header (line index `owner`) and context of the lines that follow."""
        self.header, self.owner, self.context = header, owner, context

    def line(self, number: int, line: str, stripped: str) -> None:
        result = self.result
        header = self.header
        columns = header.columns if header is not None else []
        in_trace = self.in_error and line[:1] in "\t "
        if not in_trace and self._message(number, line, stripped):
            return
        if not in_trace and ss.STREAMS_MEMBER in columns and self._task_line(number, line):
            return
        if header is None:
            problem = "row before any header line"
        elif not in_trace:
            try:
                values = split(stripped, columns, header.comma, header.view)
                if header.view == STATE_VIEW:
                    values[ROW_LINE] = stripped
                row = ROW_BUILDERS[header.view](values, self.context)
                printable(stripped)
            except ValueError as exc:  # RowProblem, NumberError: no value error escapes
                problem = str(exc)
            else:
                if row is None:
                    result.structural += 1
                else:
                    row.update(self.context["common"])
                    row["line_number"] = number
                    result.add(TABLES[header.view], row)
                    result.row_lines += 1
                    if header.view == MEMBERS_VIEW:
                        self.tasks.member(self.owner, row, columns)
                return
        else:
            problem = "tool error stack trace"
        failure = msg.tool_error(stripped)
        if failure is not None:
            result.reject(number, line, f"tool error: {failure}")
            result.status = FAILED_CAPTURE
            self.in_error = True
        elif msg.is_stack_trace(line) or in_trace:
            result.reject(number, line, "tool error stack trace")
            result.status = FAILED_CAPTURE
        elif msg.is_log_noise(stripped):
            result.structural += 1
        else:
            result.reject(number, line, problem)

    def _task_line(self, number: int, line: str) -> bool:
        """A pre-release streams task line: its tasks join the member row above (the
        line counts as parsed), or it is quarantined with the reason."""
        try:
            taken = self.tasks.take(self.owner, line.strip(BLANKS))
        except ss.RowProblem as exc:
            self.result.reject(number, line, str(exc))
            return True
        self.result.row_lines += taken
        return taken

    def _message(self, number: int, line: str, stripped: str) -> bool:
        """A tool message: structural (with a note when a row shows a value as unknown
        because of it), or quarantined when the tool printed it instead of a row."""
        found = msg.tool_message(stripped) or msg.tool_message(stripped, ss.MESSAGES)
        if found is None:
            return False
        message = found[0]
        if message.lost_row:
            self.result.reject(number, line, f"tool message: {stripped} ({message.lost_row})")
        else:
            self.result.structural += 1
            if message.note:
                self.result.notes[message.note] += 1
        return True
