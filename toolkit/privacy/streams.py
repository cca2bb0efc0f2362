"""Reading any file for the privacy gate in bounded memory: what it is, its text, its windows.

The gate never passes what it did not read, so every regular file is read whole, whatever its
size or encoding:

* ``sniff`` tells the encoding from a byte-order mark (UTF-8, UTF-16, UTF-32), or from the NUL
  pattern of BOM-less UTF-16/32 text, compressed data from its magic number (gzip, bzip2, xz,
  zip), and binary data from NUL and control bytes (a text file with a stray NUL stays text);
* ``decoded`` decodes a stream of blocks incrementally (undecodable bytes become U+FFFD);
* ``windows`` cuts decoded text into windows of whole lines with an overlap (of a line longer
  than the overlap, only its tail), so memory stays a constant plus about twice the longest
  line and a finding spanning a cut is still whole in one window (the caller drops the
  findings a window repeats from the one before);
  ``utf8_windows`` makes the same windows of UTF-8 data from its bytes, decoding each once;
* ``printable_runs`` gives the ASCII and UTF-16LE printable runs of binary data (what a secret
  in a binary file looks like), block by block;
* ``expanded`` streams the content of a compressed file under a byte budget: past it (a
  decompression bomb), or corrupt, encrypted or nested too deep, the file is ``Unreadable``.

Standard library only; the decompressors are imported when a compressed file is met.
"""

from __future__ import annotations

import codecs
import re
import sys
import zlib
from collections.abc import Callable, Iterator

from toolkit.core.errors import ExitCode, ToolkitError

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing stays out of the hooks' cold start
    from typing import IO, Protocol

    class _Decompressor(Protocol):
        @property
        def eof(self) -> bool: ...
        @property
        def unused_data(self) -> bytes: ...
        @property
        def needs_input(self) -> bool: ...

        def decompress(self, data: bytes, max_length: int = -1) -> bytes: ...


HEAD_BYTES = 4 * 1024 * 1024  # a file up to this size is read in one go and scanned whole
BLOCK_BYTES = 1024 * 1024  # raw read (and decompressed output) size when streaming
WINDOW_CHARS = 1024 * 1024  # new text per window of a larger text
OVERLAP_CHARS = 16 * 1024  # trailing whole lines of a window scanned again with the next one
LINE_TAIL = 4  # of a last line longer than the overlap, this many overlaps are scanned again
SNIFF_BYTES = 8192
MAX_EXPANDED_BYTES = 256 * 1024 * 1024  # decompressed bytes per file; past that it is a bomb
MAX_NESTING = 3  # compressed data inside compressed data inside compressed data
MIN_RUN = 8  # printable characters in a row that make a run in binary data
_RUN_OVERLAP = 4096  # bytes of a block searched again with the next (a run across the cut)

TEXT_ENCODINGS = frozenset({"utf-8", "utf-8-sig", "utf-16", "utf-32", "utf-16-le", "utf-16-be", "utf-32-le"})
COMPRESSED = frozenset({"gzip", "bzip2", "xz", "zip"})
# bytes of ordinary text: tab, newlines, form feed, escape, printable ASCII and every byte >= 0x80
_TEXTISH = bytes([9, 10, 11, 12, 13, 27, *range(0x20, 0x7F), *range(0x80, 0x100)])
# printable runs are found on a mask of the data (P printable, Z NUL, . other) with plain
# substring searches, ten times faster than a regular expression over the bytes
_PRINTABLE = frozenset([9, *range(0x20, 0x7F)])
_MASK = bytes(0x50 if b in _PRINTABLE else 0x5A if b == 0 else 0x2E for b in range(256))
_ASCII_RUN = b"P" * MIN_RUN
_WIDE_RUN = b"PZ" * MIN_RUN
_WIDE_MORE = re.compile(rb"(?:PZ)+")


class Unreadable(ToolkitError):
    """A file whose content cannot be read whole: ``reason`` says why (never its content)."""

    exit_code = ExitCode.ENVIRONMENT

    def __init__(self, reason: str) -> None:
        super().__init__("FILE_UNREADABLE", reason)
        self.reason = reason


def sniff(head: bytes) -> str:
    """What the data starting with ``head`` is: a text encoding (``TEXT_ENCODINGS``), a
    compression format (``COMPRESSED``) or ``binary``."""
    if head.startswith(b"\xef\xbb\xbf"):
        return "utf-8-sig"
    if head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "utf-32"  # before UTF-16: the UTF-32LE mark begins with the UTF-16LE one
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    if head.startswith(b"BZh") and head[4:10] in (b"1AY&SY", b"\x17rE8P\x90"):
        return "bzip2"
    if head.startswith(b"\xfd7zXZ\x00"):
        return "xz"
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "zip"
    sample = head[:SNIFF_BYTES]
    if b"\x00" not in sample:
        return "utf-8"
    return _with_nul(sample)


def _with_nul(sample: bytes) -> str:
    """BOM-less UTF-16/UTF-32 (ASCII text in them is every other or every fourth byte NUL),
    text with a stray NUL (NUL and control bytes under 1 %), else binary."""
    size = len(sample) - len(sample) % 4
    if size >= 16:
        lanes = [sample[i:size:4].count(0) for i in range(4)]
        quarter = size // 4
        if min(lanes[1:]) >= quarter * 0.6 and lanes[0] <= quarter * 0.02:
            return "utf-32-le"
        even, odd = lanes[0] + lanes[2], lanes[1] + lanes[3]
        half = size // 2
        if odd >= half * 0.4 and even <= half * 0.02:
            return "utf-16-le"
        if even >= half * 0.4 and odd <= half * 0.02:
            return "utf-16-be"
    if len(sample.translate(None, _TEXTISH)) * 100 <= len(sample):
        return "utf-8"
    return "binary"


def blocks_of(handle: IO[bytes], head: bytes) -> Iterator[bytes]:
    """``head`` (already read) and then the rest of ``handle``, a block at a time. A block
    given is not held here (``yield box.pop()`` keeps no reference): the consumer lets it go."""
    box = [head] if head else []
    del head
    while True:
        if not box:
            try:
                block = handle.read(BLOCK_BYTES)
            except OSError:
                raise Unreadable("cannot be read (I/O error)") from None
            if not block:
                return
            box.append(block)
            del block
        yield box.pop()


def decoded(blocks: Iterator[bytes], encoding: str) -> Iterator[str]:
    """The text of ``blocks`` in ``encoding``, decoded incrementally (U+FFFD for bad bytes)."""
    decoder = codecs.getincrementaldecoder(encoding)("replace")
    for block in blocks:
        text = decoder.decode(block)
        if text:
            yield text
    rest = decoder.decode(b"", True)
    if rest:
        yield rest


def windows(
    pieces: Iterator[str], size: int = WINDOW_CHARS, overlap: int = OVERLAP_CHARS
) -> Iterator[tuple[str, int, int, int]]:
    """``(text, first_line, repeated, shift)``: windows of whole lines of the text ``pieces`` make.

    ``first_line`` is the 1-based line number of the window's first line; its first
    ``repeated`` lines are the previous window's trailing lines (at most ``overlap`` characters),
    so whatever spans a cut lies whole in one window. When the previous window's last line is
    longer than ``overlap``, only its last ``LINE_TAIL * overlap`` characters are repeated (one
    line, ``repeated`` 1) and ``shift`` is the column of the window's first character in that
    line (else 0): two long lines in a row are never one window. A window is cut at the last
    line end once ``size`` characters are pending; a line longer than that is read to its end
    first. Held at once: a window, the pending piece and the overlap.
    """
    pending: list[str] = []
    pending_len = 0
    newline = False  # a line end among the pending pieces
    tail = ""
    repeated = shift = 0
    first_line = 1
    for piece in pieces:
        pending.append(piece)
        pending_len += len(piece)
        newline = newline or "\n" in piece
        if pending_len < size or not newline:
            continue
        buffer = "".join(pending)
        cut = buffer.rfind("\n") + 1
        window = tail + buffer[:cut] if tail else buffer[:cut]
        rest = buffer[cut:]
        del buffer
        # the pieces go before the window is scanned: a line longer than a window is in both
        pending, pending_len, newline = ([rest], len(rest), False) if rest else ([], 0, False)
        yield window, first_line, repeated, shift
        tail, repeated, first_line, shift = _next_start(window, overlap, first_line)
    rest = "".join(pending)
    if rest or first_line == 1 and not tail:
        yield (tail + rest if tail else rest), first_line, repeated, shift


def utf8_windows(
    blocks: Iterator[bytes], encoding: str, size: int = WINDOW_CHARS, overlap: int = OVERLAP_CHARS
) -> Iterator[tuple[str, int, int, int]]:
    """What ``windows(decoded(blocks, encoding))`` gives for UTF-8 data (``encoding`` is
    ``utf-8`` or ``utf-8-sig``), with ``size`` counted in bytes: the raw bytes of the pending
    lines are gathered in one buffer and each window's new text is decoded once, from the
    buffer (a line end never lies inside a character, so a cut there decodes as the whole
    stream would).

    A long line is not held as a list of decoded pieces and then joined: the pieces and the
    line were both held, and the allocator kept the freed pieces through the scan (2.6x the
    line, where the window and its lower-cased view are 2x). A block larger than ``size``
    (the 4 MiB first read) is taken ``BLOCK_BYTES`` at a time, and a block is let go before
    the window its last part completed is scanned. Held at once: the pending bytes (a
    window's, while it is decoded), a window, the overlap and one block while it is read.
    """
    pending = bytearray()
    last_end = -1  # offset of the last line end in pending
    bom = encoding == "utf-8-sig"
    tail = ""
    repeated = shift = 0
    first_line = 1
    ready = ""  # a window made from a block's last part: given once the block is let go
    for block in blocks:
        while block:
            after = b""
            with memoryview(block) as data:
                for at in range(0, len(data), BLOCK_BYTES):
                    if ready:
                        yield ready, first_line, repeated, shift
                        tail, repeated, first_line, shift = _next_start(ready, overlap, first_line)
                        ready = ""
                    start = len(pending)
                    pending += data[at : at + BLOCK_BYTES]
                    found = pending.rfind(b"\n", start)
                    last_end = found if found != -1 else last_end
                    if len(pending) < size or last_end == -1:
                        continue
                    text = _decode_utf8(pending, last_end + 1, bom)
                    bom = False
                    del pending[: last_end + 1]
                    last_end = -1
                    ready = tail + text if tail else text
                    del text
                    left = len(data) - at - BLOCK_BYTES
                    if 0 < left < len(ready):  # the 4 MiB first read: its rest is copied so the
                        after = bytes(data[at + BLOCK_BYTES :])  # read goes before the window is scanned
                        break
            block = after  # let go before its window is scanned
            del after
            if ready:
                yield ready, first_line, repeated, shift
                tail, repeated, first_line, shift = _next_start(ready, overlap, first_line)
                ready = ""
    rest = _decode_utf8(pending, len(pending), bom)
    del pending
    if rest or first_line == 1 and not tail:
        yield (tail + rest if tail else rest), first_line, repeated, shift


def _next_start(window: str, overlap: int, first_line: int) -> tuple[str, int, int, int]:
    """(tail, repeated, first_line, shift) of the window after ``window`` (which began at line
    ``first_line``): its overlap, that overlap's line count, the next window's first line and
    the column of the overlap's first character in its line."""
    tail, shift = _overlap(window, overlap)
    repeated = tail.count("\n")
    return tail, repeated, first_line + window.count("\n") - repeated, shift


def _decode_utf8(data: bytearray, end: int, bom: bool) -> str:
    """``data[:end]`` decoded as UTF-8 (U+FFFD for bad bytes; a leading byte-order mark
    dropped when ``bom``), without a copy of the bytes."""
    start = 3 if bom and data.startswith(b"\xef\xbb\xbf") and end >= 3 else 0
    with memoryview(data) as view, view[start:end] as part:
        return str(part, "utf-8", "replace")


def _overlap(window: str, overlap: int) -> tuple[str, int]:
    """The trailing whole lines of ``window`` (which ends with a line end) within ``overlap``
    characters, or, when its last line alone is longer, that line's last ``LINE_TAIL *
    overlap`` characters; and the column in its line where the overlap begins."""
    end = len(window)
    start = 0 if end <= overlap else window.find("\n", end - overlap - 1) + 1
    if start < end:
        return window[start:], 0
    head = window.rfind("\n", 0, end - 1) + 1
    start = max(head, end - LINE_TAIL * overlap - 1)
    return window[start:], start - head


class Runs:
    """The printable runs of binary data, block by block: each item of ``blocks()`` is a list of
    ``(offset, width, text)`` (absolute byte offset, 1 for ASCII or 2 for UTF-16LE runs).

    A run crossing a block cut is found again whole with the next block (the last 4 KiB are
    searched again), so the caller drops repeated findings by their offset. ``line_col`` gives
    the 1-based line and 0-based byte column of an offset in the block last yielded.
    """

    def __init__(self, blocks: Iterator[bytes]) -> None:
        self._blocks = blocks
        self._data = b""
        self._base = 0  # absolute offset of self._data[0]
        self._lines_before = 0  # line ends before self._base
        self._line_start = 0  # absolute offset where the line holding self._base begins

    def blocks(self) -> Iterator[list[tuple[int, int, str]]]:
        tail = b""
        for block in self._blocks:
            # move on: what of the previous data is not searched again is behind us
            gone = self._data[: len(self._data) - len(tail)]
            self._lines_before += gone.count(b"\n")
            last = gone.rfind(b"\n")
            if last != -1:
                self._line_start = self._base + last + 1
            self._base += len(gone)
            data = tail + block
            self._data = data
            skip = len(tail)
            runs = _runs_of(data, skip, self._base)
            yield runs
            tail = data[-_RUN_OVERLAP:] if len(data) > _RUN_OVERLAP else data

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and 0-based byte column of ``offset`` in the block last yielded."""
        local = offset - self._base
        line = self._lines_before + self._data.count(b"\n", 0, local) + 1
        last = self._data.rfind(b"\n", 0, local)
        start = self._base + last + 1 if last != -1 else self._line_start
        return line, offset - start


def _runs_of(data: bytes, skip: int, base: int) -> list[tuple[int, int, str]]:
    """The printable runs of ``data`` that end past ``skip`` (ASCII, then UTF-16LE)."""
    runs: list[tuple[int, int, str]] = []
    mask = data.translate(_MASK)
    at = mask.find(_ASCII_RUN)
    while at != -1:
        end = mask.find(b".", at)
        end = len(mask) if end == -1 else end
        nul = mask.find(b"Z", at, end)
        end = end if nul == -1 else nul
        if end > skip:
            runs.append((base + at, 1, data[at:end].decode("ascii")))
        at = mask.find(_ASCII_RUN, end)
    if b"\x00" in data:
        at = mask.find(_WIDE_RUN)
        while at != -1:
            more = _WIDE_MORE.match(mask, at)
            end = more.end() if more else at + len(_WIDE_RUN)
            if end > skip:
                runs.append((base + at, 2, data[at:end].decode("utf-16-le")))
            at = mask.find(_WIDE_RUN, end)
    runs.sort()
    return runs


class Budget:
    """Decompressed bytes left for one file; ``take`` raises ``Unreadable`` past the cap."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = MAX_EXPANDED_BYTES if limit is None else limit
        self.left = self.limit

    def take(self, data: bytes) -> bytes:
        self.left -= len(data)
        if self.left < 0:
            raise Unreadable(f"decompresses to more than {self.limit} bytes")
        return data


class _Gzip:
    """zlib's gzip decompressor with the ``needs_input`` of the bz2 and lzma ones."""

    def __init__(self) -> None:
        self._d = zlib.decompressobj(31)
        self._pending = b""

    @property
    def eof(self) -> bool:
        return self._d.eof

    @property
    def unused_data(self) -> bytes:
        return self._d.unused_data

    @property
    def needs_input(self) -> bool:
        return not self._pending

    def decompress(self, data: bytes, max_length: int = -1) -> bytes:
        out = self._d.decompress(self._pending + data if self._pending else data, max(max_length, 0))
        self._pending = self._d.unconsumed_tail
        return out


def _factory(kind: str) -> Callable[[], _Decompressor]:
    if kind == "gzip":
        return _Gzip
    if kind == "bzip2":
        import bz2

        return bz2.BZ2Decompressor
    import lzma

    return lzma.LZMADecompressor


def _errors() -> tuple[type[BaseException], ...]:
    return (zlib.error, OSError, EOFError, ValueError, MemoryError) + _optional_errors()


def _optional_errors() -> tuple[type[BaseException], ...]:
    found: list[type[BaseException]] = []
    lzma = sys.modules.get("lzma")
    if lzma is not None:
        found.append(lzma.LZMAError)
    zipfile = sys.modules.get("zipfile")
    if zipfile is not None:
        found.extend([zipfile.BadZipFile, zipfile.LargeZipFile])
    return tuple(found)


def expanded(kind: str, blocks: Iterator[bytes], budget: Budget) -> Iterator[bytes]:
    """The decompressed content of a gzip, bzip2 or xz stream (concatenated members too)."""
    try:
        yield from _expand(_factory(kind), blocks, budget)
    except Unreadable:
        raise
    except _errors():
        raise Unreadable(f"{kind} data is corrupt") from None


def _expand(make: Callable[[], _Decompressor], blocks: Iterator[bytes], budget: Budget) -> Iterator[bytes]:
    current = make()
    for block in blocks:
        data = block
        while True:
            if current.eof:
                data = current.unused_data + data
                if not data:
                    break
                current = make()  # another member follows (or garbage, which fails to decompress)
            elif not data and current.needs_input:
                break
            out = current.decompress(data, BLOCK_BYTES)
            data = b""
            if out:
                yield budget.take(out)
    if not current.eof:
        raise Unreadable("compressed data is truncated")


def zip_members(handle: IO[bytes], budget: Budget) -> Iterator[tuple[str, Iterator[bytes]]]:
    """``(name, blocks)`` of each file in a zip archive; an encrypted member, an unsupported
    method or a corrupt archive is ``Unreadable``."""
    import zipfile

    try:
        with zipfile.ZipFile(handle) as archive:
            for info in archive.infolist():
                if info.is_dir():
                    continue
                if info.flag_bits & 0x1:
                    raise Unreadable(f"zip member {info.filename!r} is encrypted")
                with archive.open(info) as member:
                    yield info.filename, _member_blocks(member, budget)
    except Unreadable:
        raise
    except (NotImplementedError, RuntimeError):
        raise Unreadable("zip archive uses an unsupported method or encryption") from None
    except _errors():
        raise Unreadable("zip archive is corrupt") from None


def _member_blocks(member: IO[bytes], budget: Budget) -> Iterator[bytes]:
    while True:
        block = member.read(BLOCK_BYTES)
        if not block:
            return
        yield budget.take(block)


def head_of(blocks: Iterator[bytes], want: int = SNIFF_BYTES) -> tuple[bytes, Iterator[bytes]]:
    """The first ``want`` bytes of a stream (fewer at its end) and the whole stream again."""
    taken: list[bytes] = []
    size = 0
    for block in blocks:
        taken.append(block)
        size += len(block)
        if size >= want:
            break
    head = b"".join(taken)

    def again() -> Iterator[bytes]:
        if head:
            yield head
        yield from blocks

    return head[:want], again()
