"""fio's stdout split into its JSON documents and the other text it prints between (or inside) them.

fio pretty-prints each document: a lone `{`, indented lines, a lone `}`. A json+ document holds a line per latency
bin, thousands per job, so the stream is cut a chunk at a time with string searches; only a document holding a line
that cannot be JSON of fio's layout (a "note: ..." fio printed meanwhile, a new `{` when one was cut short) is taken
apart line by line.
"""

import codecs
import json
import re
from collections.abc import Callable, Iterator
from typing import IO, Any

from ptsbench.fio.output import load_fio_json

CHUNK_BYTES = 1 << 16
# a line of a document that is not an indented line or a closing bracket
_FOREIGN_LINE = re.compile(r"\n[^ \t}\]]")
_BINS = '"bins" : {'  # as fio prints a json+ histogram's key (a quote inside a job name is escaped: no match)

OnDocument = Callable[[str, dict[str, Any]], None]


def read_documents(stream: IO[str], on_document: OnDocument, without_bins: bool = False) -> str:
    """Read fio's stdout as it comes; call on_document(text, doc) for every JSON document; return the other text.
    `without_bins`: each doc is parsed with its latency histograms emptied (see bins_emptied); the text is whole."""
    splitter = _Splitter(on_document, without_bins)
    for text in _chunks(stream):
        splitter.feed(text)
    return splitter.finish()


def _chunks(stream: IO[str]) -> Iterator[str]:
    """What the stream holds, as soon as it comes (a pipe's read1 returns what is there); UTF-8, bad bytes replaced."""
    raw = getattr(stream, "buffer", None)
    if raw is None:  # a text stream with no bytes beneath (io.StringIO)
        yield from iter(lambda: stream.read(CHUNK_BYTES), "")
        return
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while chunk := raw.read1(CHUNK_BYTES):
        yield decoder.decode(chunk)
    yield decoder.decode(b"", final=True)


def bins_emptied(text: str) -> str:
    """A json+ document's text with every latency histogram (`"bins" : {...}`, a flat map of numbers) emptied.
    They are most of a json+ document (a line per bin, per job and direction): a caller that reads only a status
    document's counters and means skips parsing them every second."""
    parts, start = [], 0
    while (found := text.find(_BINS, start)) >= 0 and (end := text.find("}", found)) >= 0:
        parts += [text[start:found], _BINS, "}"]
        start = end + 1
    parts.append(text[start:])
    return "".join(parts)


class _Splitter:
    def __init__(self, on_document: OnDocument, without_bins: bool) -> None:
        self.on_document = on_document
        self.without_bins = without_bins
        self.other: list[str] = []
        self.pending: list[str] = []  # the document begun, whole lines
        self.tail = ""  # a line not finished yet

    def feed(self, text: str) -> None:
        text = self.tail + text
        cut = text.rfind("\n") + 1
        self.tail = text[cut:]
        self._lines(text[:cut])

    def finish(self) -> str:
        if self.tail:
            self._lines(self.tail + "\n")
        self.other.extend(self.pending)  # an unfinished document: fio died mid-write
        return "".join(self.other)

    def _lines(self, block: str) -> None:
        """Whole lines: text outside documents set aside, documents' text gathered up to their closing line."""
        while block:
            if not self.pending:
                start = 0 if block.startswith("{\n") else block.find("\n{\n") + 1
                if start == 0 and not block.startswith("{\n"):
                    self.other.append(block)
                    return
                self.other.append(block[:start])
                self.pending.append(block[start:start + 2])
                block = block[start + 2:]
                continue
            end = 2 if block.startswith("}\n") else block.find("\n}\n") + 3
            if end == 2 and not block.startswith("}\n"):
                self.pending.append(block)
                return
            text = "".join(self.pending) + block[:end]
            self.pending, block = [], block[end:]
            self._document(text)

    def _document(self, text: str) -> None:
        if _FOREIGN_LINE.search(text, 1) is None:
            self._parse(text)
        else:
            self._line_by_line(text)

    def _line_by_line(self, text: str) -> None:
        """A document with foreign lines: those set aside, a `{` line starts over (the one before was cut short)."""
        pending: list[str] = []
        for line in text.splitlines(keepends=True):
            if not pending:
                (pending if line == "{\n" else self.other).append(line)
            elif line == "{\n":
                self.other.extend(pending)
                pending = [line]
            elif not line.startswith((" ", "\t", "}", "]")):
                self.other.append(line)
            else:
                pending.append(line)
                if line == "}\n":
                    self._parse("".join(pending))
                    pending = []
        self.other.extend(pending)

    def _parse(self, text: str) -> None:
        try:
            doc = load_fio_json(bins_emptied(text) if self.without_bins else text)
        except json.JSONDecodeError:
            self.other.append(text)
            return
        self.on_document(text, doc)
