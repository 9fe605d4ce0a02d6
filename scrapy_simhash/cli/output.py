"""Output of the ``scrapy-simhash`` command: fingerprints and times as text, a streamed table,
JSON or JSON lines, and progress on stderr."""

from __future__ import annotations

import codecs
import contextlib
import json
import re
import sys
import time
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from typing import Any, TextIO, cast

FORMATS = ("table", "json", "jsonl")


class CliError(Exception):
    """An expected failure: one line ``<program>: error: ...`` (``scrapy-simhash`` or
    ``scrapy simhash``), exit code 1."""


class CliUsage(Exception):
    """A usage error found after parsing: reported like the parser's own, exit code 2."""


class Terminated(BaseException):
    """SIGTERM reached the command: reported in one line, exit code 143 (a BaseException, as
    KeyboardInterrupt is, so that the handlers of errors do not take it for one)."""


#: What the hex digits of a fingerprint may hold (int() places the underscores).
_HEX = frozenset("0123456789abcdef_")


def format_fp(fingerprint: int) -> str:
    """A fingerprint as 16 lowercase hex digits."""
    return f"{fingerprint:016x}"


def parse_fp(text: str) -> int:
    """A fingerprint from 16 hex digits (``0x`` optional: exactly 16 digits are always read as
    hex) or a decimal number."""
    value = text.strip().lower()
    digits = value[2:] if value.startswith("0x") else value
    try:
        if value.startswith("0x") or len(value) == 16:
            # int() would also take a sign or spaces after 0x ("0x-1", "-000000000000001")
            if not set(digits) <= _HEX:
                raise ValueError(value)
            number = int(digits, 16)
        elif value.isdigit():
            number = int(value)
        else:
            raise ValueError(value)
    except ValueError:
        raise CliError(
            f"invalid fingerprint {text!r}: give 16 hex digits (0x optional) or a decimal number"
        ) from None
    if number >= 1 << 64:
        raise CliError(f"invalid fingerprint {text!r}: more than 64 bits")
    return number


def iso_time(seen: float | None) -> str | None:
    """A unix time as ISO 8601 UTC to the second (``2026-11-21T19:01:34Z``); a value that
    names no time (NaN, or a year past 9999, written through the API) is shown as it is."""
    if seen is None:
        return None
    try:
        return datetime.fromtimestamp(seen, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (ValueError, OverflowError, OSError):
        return repr(seen)


class _Written:
    """An output stream whose failures to write (a full disk, ``/dev/full``) are said as the
    output's, in one line (:class:`CliError`); a reader gone (BrokenPipeError) is not one."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise CliError(f"cannot write the output: {exc.strerror or exc}") from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise CliError(f"cannot write the output: {exc.strerror or exc}") from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class Output:
    """Writes rows as a table (fixed-width columns, the last one free: streamable), a JSON
    array (also streamed) or JSON lines."""

    def __init__(self, fmt: str, stream: TextIO | None = None) -> None:
        if fmt not in FORMATS:
            raise ValueError(f"unknown output format {fmt!r}")
        self.fmt = fmt
        self.stream = cast(TextIO, _Written(stream if stream is not None else sys.stdout))
        #: Whether the stream's encoding writes every character (else, a locale such as C or
        #: latin-1 without Python's UTF-8 mode: JSON is written as ASCII, with \u escapes,
        #: and a table writes what it cannot encode as backslash escapes, not an error).
        self.utf = writes_all(self.stream)
        if not self.utf:
            with contextlib.suppress(AttributeError, ValueError):  # not a text file
                self.stream.reconfigure(errors="backslashreplace")  # type: ignore[attr-defined]

    def _json(self, obj: Any, indent: int | None = None) -> str:
        """``obj`` as JSON: as UTF-8 text where the stream writes it, with ``\\u`` escapes
        where it does not, or where ``obj`` holds a lone surrogate (a file name's byte that is
        not UTF-8), which no UTF-8 stream writes."""
        text = json.dumps(obj, indent=indent, ensure_ascii=not self.utf)
        if self.utf and not text.isascii() and _SURROGATE.search(text):
            text = json.dumps(obj, indent=indent, ensure_ascii=True)
        return text

    def write_rows(self, columns: list[tuple[str, int]], rows: Iterable[dict[str, Any]]) -> int:
        """Every row (a dict with at least the ``columns`` keys); ``columns`` gives each table
        column's name and width (the last width is ignored). Returns the number of rows."""
        out = self.stream
        count = 0
        if self.fmt == "table":
            out.write(_table_line([(name.upper(), width) for name, width in columns]))
            for row in rows:
                cells = [(_cell(row.get(name)), width) for name, width in columns]
                out.write(_table_line(cells))
                count += 1
            return count
        if self.fmt == "json":
            out.write("[")
            for row in rows:
                out.write(("," if count else "") + "\n  " + self._json(row))
                count += 1
            out.write("\n]\n" if count else "]\n")
            return count
        for row in rows:
            out.write(self._json(row) + "\n")
            count += 1
        return count

    def write_object(self, obj: dict[str, Any], lines: list[tuple[str, Any]]) -> None:
        """One object: ``obj`` as JSON, or ``lines`` as ``label: value`` in a table."""
        if self.fmt == "json":
            self.stream.write(self._json(obj, indent=2) + "\n")
        elif self.fmt == "jsonl":
            self.stream.write(self._json(obj) + "\n")
        else:
            width = max((len(label) for label, _ in lines), default=0) + 2
            for label, value in lines:
                self.stream.write(f"{label + ':':<{width}}{_cell(value)}\n")

    def note(self, text: str) -> None:
        """A line for people, shown in the table format only."""
        if self.fmt == "table":
            self.stream.write(text + "\n")


def writes_all(stream: TextIO) -> bool:
    """Whether ``stream`` encodes every character (a UTF encoding, or none named)."""
    encoding = getattr(stream, "encoding", None)
    if not encoding:
        return True
    try:
        return codecs.lookup(encoding).name.startswith("utf")
    except LookupError:
        return False


#: Characters a terminal acts on rather than shows: C0 and C1 controls (escape sequences that
#: recolour, clear or retitle it) and the bidirectional overrides and isolates (which reorder
#: what follows). A page's title or URL comes from the site crawled.
#: Lone surrogates, the bytes of a file name that are not UTF-8, are written as escapes too: a
#: UTF-8 stream cannot write them.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def printable(text: str) -> str:
    """``text`` with :data:`_UNPRINTABLE` characters written as escapes (``\\x1b``)."""
    if not _UNPRINTABLE.search(text):
        return text
    return _UNPRINTABLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.1f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return printable(str(value))


def _table_line(cells: list[tuple[str, int]]) -> str:
    *fixed, (last, _) = cells
    return "".join(f"{text:<{width}}  " for text, width in fixed) + last + "\n"


class Progress:
    """``label: done / total`` on stderr, redrawn at most 5 times a second; silent when stderr
    is not a terminal, and for ``streaming`` commands (whose rows come out as the count goes)
    when stdout is one too: the rows show the progress, and the line would garble them."""

    def __init__(
        self,
        label: str,
        total: int | None = None,
        stream: TextIO | None = None,
        *,
        streaming: bool = False,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty() and not (streaming and sys.stdout.isatty())
        self.label = label
        self.total = total
        self.done = 0
        self._last = 0.0

    def step(self, count: int = 1) -> None:
        self.done += count
        if self.enabled and time.monotonic() - self._last >= 0.2:
            self._draw()

    def message(self, text: str) -> None:
        """Replace the progress line with ``text`` (a phase that has no count)."""
        if self.enabled:
            self.stream.write(f"\r\033[K{self.label}: {text}")
            self.stream.flush()

    def _draw(self) -> None:
        self._last = time.monotonic()
        total = f" / {self.total:,}" if self.total else ""
        self.message(f"{self.done:,}{total}")

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\r\033[K")
            self.stream.flush()

    def track(self, items: Iterable[Any]) -> Iterator[Any]:
        """``items``, counted as they are read; the line is cleared at the end."""
        try:
            for item in items:
                self.step()
                yield item
        finally:
            self.close()


def repeated_sentences(count: int) -> str:
    """``info``'s line for the guard's counts of the pages of a site dropped through a
    sentence."""
    return f"{count:,} (a long sentence and a site whose pages were dropped through it)"
