"""The row types the report's modules pass each other name exactly the columns facts
selects: a column added to ATTENTION_COLUMNS or CHANGE_COLUMNS without its field (or the
reverse) fails here, not as an AttributeError on a night the column is first read."""

from __future__ import annotations

import typing

from fleet_rebalance.report.facts import (
    ATTENTION_COLUMNS,
    CHANGE_COLUMNS,
    AttentionRow,
    ChangeRow,
    GroupRow,
    SavingRow,
)


def _fields(row: type) -> set[str]:
    return set(typing.get_type_hints(row))


def test_attention_rows_have_the_attention_columns():
    """Given: AttentionRow's fields. Then/Expected: exactly ATTENTION_COLUMNS."""
    assert _fields(AttentionRow) == set(ATTENTION_COLUMNS)


def test_change_rows_have_the_change_columns():
    """Given: ChangeRow's fields. Then/Expected: exactly CHANGE_COLUMNS."""
    assert _fields(ChangeRow) == set(CHANGE_COLUMNS)


def test_the_shared_fields_are_in_both_frames():
    """Given: SavingRow (what actions.change_text and actions.saving read) and GroupRow.
    Then/Expected: the columns both frames select, the group's key among them."""
    assert _fields(SavingRow) == set(ATTENTION_COLUMNS) & set(CHANGE_COLUMNS)
    assert _fields(GroupRow) == {"cluster", "group_id"}
