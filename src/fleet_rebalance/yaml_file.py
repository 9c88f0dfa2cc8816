"""A conf file read as YAML by one hardened loader (the job's conf and the capture
agent's): bounded in size, UTF-8 only, no anchors, aliases, duplicate keys or deep
nesting; every refusal one ConfigError line naming the file and the line."""

from __future__ import annotations

import reprlib
from pathlib import Path
from typing import Any

import yaml

# A conf file is a few hundred bytes; these bound what a hostile one can make us do.
MAX_CONF_BYTES = 1 << 20
MAX_NESTING = 32
# A value quoted in an error, and a whole error message, in characters.
VALUE_CHARS = 200
MESSAGE_CHARS = 1000
ELLIPSIS = "..."
_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = VALUE_CHARS
_REPR.maxlevel, _REPR.maxlist, _REPR.maxdict = 2, 5, 5


def shown(value: Any) -> str:
    """value as an error message quotes it: its repr, bounded in size and depth (and so
    never the expansion of a huge structure), control characters escaped."""
    return _REPR.repr(value)


def one_line(text: str, limit: int = MESSAGE_CHARS) -> str:
    """text on one line of at most `limit` characters: newlines and other unprintable
    characters (bidi overrides, NUL, ...) escaped, the tail cut with an ellipsis."""
    head = text[: limit + 1]
    flat = "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in head)
    if len(flat) > limit or len(text) > len(head):
        return flat[: limit - len(ELLIPSIS)] + ELLIPSIS
    return flat


class ConfigError(ValueError):
    """A configuration file that cannot be used as it is. The message is one line."""

    def __init__(self, message: str) -> None:
        super().__init__(one_line(message))


class _Refused(yaml.MarkedYAMLError):
    """YAML this loader will not read, at a line of the file."""

    def __init__(self, problem: str, mark: yaml.Mark) -> None:
        super().__init__(problem=problem, problem_mark=mark)


class _ConfLoader(yaml.SafeLoader):
    """yaml.SafeLoader without anchors and aliases (a few hundred bytes of nested
    aliases expand to gigabytes), duplicate keys (the last would silently win) or deep
    nesting (the composer recurses once per level)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            raise _Refused(_NO_ALIASES.format(f"alias *{event.anchor}"), event.start_mark)
        if getattr(event, "anchor", None) is not None:
            raise _Refused(_NO_ALIASES.format(f"anchor &{event.anchor}"), event.start_mark)
        if self.depth >= MAX_NESTING:
            raise _Refused(f"nested deeper than {MAX_NESTING} levels", event.start_mark)
        self.depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag != _MERGE_TAG:
                key = self.construct_object(key_node)
                if (type(key), key) in seen:
                    raise _Refused(f"duplicate key {shown(key)}", key_node.start_mark)
                seen.add((type(key), key))
        return super().construct_mapping(node, deep=deep)

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, OverflowError) as exc:
            # YAML's own scalars can fail in Python: an int of more than 4300 digits,
            # a timestamp such as 2026-02-30.
            kind = node.tag.rsplit(":", 1)[-1]
            raise _Refused(f"not a valid {kind}: {exc}", node.start_mark) from exc


_NO_ALIASES = "YAML anchors and aliases are not allowed in a conf file (found {})"
_MERGE_TAG = "tag:yaml.org,2002:merge"


def read_yaml(path: Path) -> Any:
    """The file's YAML document; ConfigError for anything the loader refuses."""
    if not path.exists():
        raise ConfigError(f"{path}: configuration file not found")
    if not path.is_file():
        raise ConfigError(f"{path}: not a regular file; expected a YAML configuration file")
    try:
        with path.open("rb") as stream:
            data = stream.read(MAX_CONF_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if len(data) > MAX_CONF_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_CONF_BYTES} bytes; not a configuration file")
    # UTF-16 and UTF-32 text is mostly valid UTF-8 with NULs in between.
    bad = data.find(b"\0")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = exc.start if bad < 0 else min(bad, exc.start)
    if bad >= 0:
        raise ConfigError(
            f"{path}: not UTF-8 text (byte 0x{data[bad]:02x} at offset {bad}); "
            "expected a YAML configuration file in UTF-8"
        )
    try:
        return yaml.load(text, Loader=_ConfLoader)
    except _Refused as exc:
        raise ConfigError(f"{path}: line {exc.problem_mark.line + 1}: {exc.problem}") from None
    except yaml.MarkedYAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {_yaml_problem(exc)}") from None
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        raise ConfigError(
            f"{path}: not valid YAML: line {line}: character {shown(chr(exc.character))} "
            "is not allowed"
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None


def _yaml_problem(exc: yaml.MarkedYAMLError) -> str:
    mark = exc.problem_mark or exc.context_mark
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
    context = f" ({exc.context})" if exc.context else ""
    return f"{where}{exc.problem or 'cannot parse'}{context}"
