"""kafka-consumer-groups.sh --describe: the offsets, members and state views.

kafka-share-groups.sh and kafka-streams-groups.sh views and the group lists are
recognised here by their headers too; share_streams.py reads their rows. By role:
- headers.py: which view a header line starts, its columns;
- dispatch.py: parse_describe, each line to the bulk or the per-line path;
- bulk_view.py, bulk_offsets.py, bulk_members.py: common rows in Arrow's kernels;
- per_line.py: any other line: rows, tool messages and errors, quarantine;
- split.py: a row's text as values by column; rows.py: values as bronze rows;
- message_groups.py: the group of a block without GROUP column, from a tool message.
"""

from fleet_rebalance.capture.describe.dispatch import parse_describe
from fleet_rebalance.capture.describe.headers import HEADER_WORDS, header_view

__all__ = ["HEADER_WORDS", "header_view", "parse_describe"]
