"""Reading files for the privacy gate safely, and choosing the context of a file by its path.

The gate never passes what it did not read (``load``; the reading itself is ``streams``):

* text is decoded by its byte-order mark (UTF-8, UTF-16, UTF-32; BOM-less UTF-16 by its NUL
  pattern), else as UTF-8; undecodable bytes become U+FFFD so columns stay code points;
* a file up to ``HEAD_BYTES`` is scanned whole; a larger one in windows of whole lines with an
  overlap (bounded memory, no size limit), findings numbered by the file's own lines;
* binary data (NUL and control bytes) has its ASCII and UTF-16LE printable runs scanned for
  the fixed-format secret rules; gzip, bzip2, xz and zip content is decompressed as a stream;
* what still cannot be read (permission denied, corrupt or encrypted compressed data, a
  decompression bomb) is an ``unreadable-file`` finding in a workflow artifact and a notice
  elsewhere;
* directories are walked without following symlinks (``.git`` is never entered);
* a symlink whose target lies outside the scan root (the repository) is skipped with a notice.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.infra.boundedio import NOT_A_FILE, NOT_FOUND, FileRefused, open_checked, read_regular
from toolkit.privacy import streams
from toolkit.privacy.artifacts import compile_globs, session_notes
from toolkit.privacy.engine import MAX_FINDINGS_PER_RULE, scan_text_with_values
from toolkit.privacy.filters import forget_text
from toolkit.privacy.rules import lazy
from toolkit.privacy.secrets import BATCH_SEPARATOR
from toolkit.privacy.streams import HEAD_BYTES, Budget, Runs, Unreadable, blocks_of, sniff, windows
from toolkit.privacy.types import Category, Context, FileKind, Finding

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing stays out of the hooks' cold start
    import re
    from collections.abc import Iterable
    from typing import IO


MAX_FILE_BYTES = 4 * 1024 * 1024
_SNIFF = 8192
_SKIP_DIRS = frozenset({".git", "__pycache__"})
_CAPSULE = lazy(r"(^|/)\.workgroup/workgroups/[^/]+/capsules/[^/]+\.json$")
_HANDOFF = lazy(r"(?i)(^|/)(\.reviews/session-handoff\.md|[^/]*handoff[^/]*\.md)$")
_EVENT_LOG = lazy(r"(?i)(^|/)(运行日志\.jsonl|[^/]*events?[^/]*\.jsonl)$")
# Workflow artifacts: where the seeds forbid emails, home paths, session ids and transcripts.
_ARTIFACT = lazy(r"(?i)(^|/)(\.workgroup|\.reviews|knowzcode)/|\.log$|(^|/)[^/]*handoff[^/]*$")
_DATA_SUFFIXES = (
    ".svg",
    ".svgz",
    ".ai",
    ".eps",
    ".ps",
    ".map",
    ".lock",
    ".sum",
    ".min.js",
    ".min.css",
    ".min.mjs",
    ".sha1",
    ".sha256",
    ".sha512",
    ".md5",
    ".pdf",
)
_DATA_NAMES = frozenset(
    {
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "poetry.lock",
        "pipfile.lock",
        "uv.lock",
        "pdm.lock",
        "cargo.lock",
        "gemfile.lock",
        "composer.lock",
        "go.sum",
        "go.work.sum",
        "flake.lock",
        "mix.lock",
        "pubspec.lock",
        "podfile.lock",
        "packages.lock.json",
        "sha256sums",
        "sha512sums",
        "sha1sums",
        "md5sums",
        "checksums.txt",
    }
)
_MINIFIED_LINE = 2000  # a line this long in code or CSS is a bundle, not something people wrote


@dataclass(frozen=True)
class FileFinding:
    """A finding in a file: the repository-relative POSIX ``path`` plus the engine's finding."""

    path: str
    finding: Finding
    fingerprint_value: str = field(repr=False, compare=False, default="")
    rel: str = field(compare=False, default="")  # repository-relative (allowlist), when path is not

    @property
    def repo_path(self) -> str:
        return self.rel or self.path


@dataclass
class ScanReport:
    findings: list[FileFinding] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    files_scanned: int = 0


# the team's own artifact globs (privacy.artifact_paths, --artifact-path), set by the caller
_TEAM_ARTIFACTS: list[re.Pattern[str]] = []
_TEAM_GLOBS: list[str] = []


def set_artifact_paths(globs: tuple[str, ...]) -> None:
    """Treat files matching ``globs`` (repository-relative) as workflow artifacts from now on."""
    pattern = compile_globs(globs)
    _TEAM_ARTIFACTS[:] = [pattern] if pattern is not None else []
    _TEAM_GLOBS[:] = globs


def artifact_paths() -> tuple[str, ...]:
    """The globs ``set_artifact_paths`` was last given."""
    return tuple(_TEAM_GLOBS)


def context_for(rel_path: str) -> Context:
    """The engine context a committed file belongs to, from its repository-relative path:
    capsules, handoffs and event logs by name, other workflow artifacts (``.workgroup/``,
    ``.reviews/``, ``knowzcode/``, ``*.log``, the team's ``privacy.artifact_paths``) as GENERIC,
    everything else as SOURCE."""
    if _CAPSULE.search(rel_path):
        return Context.CAPSULE
    if _HANDOFF.search(rel_path):
        return Context.HANDOFF
    if _EVENT_LOG.search(rel_path):
        return Context.EVENT_LOG
    if _ARTIFACT.search(rel_path) or (_TEAM_ARTIFACTS and _TEAM_ARTIFACTS[0].search(rel_path)):
        return Context.GENERIC
    return Context.SOURCE


def context_of(rel_path: str, text: str) -> Context:
    """``context_for``, and a Markdown or text file holding a chat transcript (session notes) is
    an artifact wherever it lies (``toolkit.privacy.artifacts.session_notes``)."""
    context = context_for(rel_path)
    if context is Context.SOURCE:
        if session_notes(rel_path, text):
            return Context.GENERIC
    return context


def file_kind(rel_path: str, text: str) -> FileKind:
    """DATA for generated content (the ``data-file`` filter): vector path data (SVG,
    Illustrator, EPS), lock files, source maps, checksum files (``go.sum``, ``SHA256SUMS``) and
    minified bundles (``*.min.js``, or JS/CSS with a line over 2,000 characters). TEXT otherwise."""
    low = rel_path.lower()
    name = low.rsplit("/", 1)[-1]
    if name in _DATA_NAMES or low.endswith(_DATA_SUFFIXES):
        return FileKind.DATA
    if low.endswith((".js", ".mjs", ".cjs", ".css")) and len(text) > _MINIFIED_LINE:
        start = 0
        while start < len(text):
            end = text.find("\n", start)
            end = len(text) if end == -1 else end
            if end - start > _MINIFIED_LINE:
                return FileKind.DATA
            start = end + 1
    return FileKind.TEXT


def relative_to_root(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` as POSIX text (the absolute path only when outside root)."""
    absolute = os.path.abspath(path)
    base = str(root)
    prefix = base.rstrip("/") + "/"
    if (
        os.sep == "/"
        and base == os.path.abspath(base)
        and absolute.startswith(prefix)
        and absolute != prefix
        and not absolute.startswith("//")
    ):
        return absolute[len(prefix) :]  # the common case, without pathlib's parsing
    try:
        return Path(absolute).relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def read_text(path: Path, limit: int = MAX_FILE_BYTES) -> tuple[str | None, str | None]:
    """(text, None) or (None, reason) for a file that is binary, huge or unreadable."""
    try:
        # regular files only: a FIFO among the staged paths must not hang the hook
        data = read_regular(path, limit=limit, what="the file", allow_over=True) or b""
    except FileRefused as exc:
        if exc.code == NOT_A_FILE:
            return None, exc.message.removeprefix("the file ").split(";")[0]
        return None, f"unreadable ({exc.code})"
    if len(data) > limit:
        return None, f"larger than {limit} bytes"
    if b"\0" in data[:_SNIFF]:
        return None, "binary"
    return data.decode("utf-8", errors="replace"), None


UNREADABLE_RULE = "unreadable-file"
_COMPRESSED_SUFFIXES = (".gz", ".gzip", ".tgz", ".bz2", ".tbz2", ".xz", ".txz")


@dataclass
class Loaded:
    """What ``load`` made of a file: the whole ``text`` of a text file up to ``HEAD_BYTES``
    (the caller scans it, in a batch when small), or the ``findings`` of a file scanned as it
    was read (larger, binary, compressed, unreadable), or a ``notice`` for one not scanned."""

    text: str | None = None
    findings: list[FileFinding] = field(default_factory=list)
    notice: str | None = None


def is_artifact(rel: str, context: Context | None = None) -> bool:
    """A workflow artifact (``context_for`` is not SOURCE, or the context given is not)."""
    return (context if context is not None else context_for(rel)) is not Context.SOURCE


def unreadable(shown: str, rel: str, reason: str, context: Context | None = None) -> Loaded:
    """A file the gate could not read whole: a finding in a workflow artifact, a notice elsewhere."""
    if is_artifact(rel, context):
        finding = Finding(1, 0, 0, Category.UNREADABLE, UNREADABLE_RULE, reason)
        return Loaded(findings=[FileFinding(shown, finding, "", rel)])
    return Loaded(notice=f"{shown}: not scanned ({reason})")


def load(path: Path, shown: str, rel: str, context: Context | None = None) -> Loaded:
    """Read ``path`` whole in bounded memory: its text (up to ``HEAD_BYTES`` of text), or its
    findings (anything else), or a notice (absent, not a regular file, unreadable outside
    workflow artifacts). ``shown`` is the path reported, ``rel`` decides context and kind."""
    try:
        # regular files only, opened without blocking: a FIFO among the staged paths must not
        # hang the hook (checked on the open descriptor too)
        opened = open_checked(path, "the file", True, False)
    except FileRefused as exc:
        if exc.code == NOT_FOUND:
            return Loaded(notice=f"{shown}: skipped (does not exist)")
        if exc.code == NOT_A_FILE:
            return Loaded(notice=f"{shown}: skipped ({exc.message.removeprefix('the file ').split(';')[0]})")
        reason = "permission denied" if "permission" in exc.message else "cannot be read"
        return unreadable(shown, rel, reason, context)
    assert opened is not None
    fd, info = opened
    try:
        want = min(info.st_size, HEAD_BYTES) + 1
        try:
            head = _read_head(fd, want)
        except OSError:
            return unreadable(shown, rel, "cannot be read (I/O error)", context)
        kind = sniff(head)
        if len(head) < want:  # the whole file: the common case, no file object needed
            if kind == "utf-8":
                return Loaded(text=head.decode("utf-8", errors="replace"))
            if kind not in ("binary", "gzip", "bzip2", "xz", "zip"):
                return Loaded(text=head.decode(kind, errors="replace"))
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as handle:
            blocks = blocks_of(handle, head)
            del head  # the first 4 MiB are let go once scanned, not held through the whole file
            try:
                found = scan_stream(blocks, kind, shown, rel, context, Budget(), 0, handle)
            except Unreadable as exc:
                return unreadable(shown, rel, exc.reason, context)
        return Loaded(findings=found)
    finally:
        os.close(fd)


def _read_head(fd: int, want: int) -> bytes:
    """Up to ``want`` bytes from ``fd`` (fewer only at the end of the file)."""
    head = os.read(fd, want)
    if len(head) in (0, want):
        return head
    parts = [head]
    got = len(head)
    while got < want:
        more = os.read(fd, want - got)
        if not more:
            break
        parts.append(more)
        got += len(more)
    return b"".join(parts)


def scan_stream(
    blocks: Iterable[bytes],
    kind: str,
    shown: str,
    rel: str,
    context: Context | None,
    budget: Budget,
    depth: int = 0,
    handle: IO[bytes] | None = None,
) -> list[FileFinding]:
    """Findings of a stream of ``kind`` (``streams.sniff``): text in windows, binary data by
    its printable runs, compressed data by its content (``Unreadable`` when it cannot be)."""
    if kind in streams.TEXT_ENCODINGS:
        ctx = context if context is not None else context_for(rel)
        if kind in ("utf-8", "utf-8-sig"):
            return scan_window_list(streams.utf8_windows(iter(blocks), kind), shown, rel, ctx)
        return scan_windows(streams.decoded(iter(blocks), kind), shown, rel, ctx)
    if kind == "binary":
        return scan_runs(streams.Runs(iter(blocks)), shown, rel)
    if depth >= streams.MAX_NESTING:
        raise Unreadable("compressed data nested too deep")
    found: list[FileFinding] = []
    if kind == "zip":
        if handle is None:
            raise Unreadable("a zip archive inside compressed data")
        for name, member in streams.zip_members(handle, budget):
            head, again = streams.head_of(member)
            found.extend(scan_stream(again, sniff(head), f"{shown}!{name}", rel, context, budget, depth + 1))
        return found
    inner = streams.expanded(kind, iter(blocks), budget)
    head, again = streams.head_of(inner)
    if context is None:  # x.jsonl.gz is read as x.jsonl would be
        low = rel.lower()
        unpacked = rel[: low.rfind(".")] if low.endswith(_COMPRESSED_SUFFIXES) else rel
        context = context_for(unpacked + ".tar" if low.endswith((".tgz", ".tbz2", ".txz")) else unpacked)
    return scan_stream(again, sniff(head), shown, rel, context, budget, depth + 1)


def scan_windows(pieces: Iterable[str], shown: str, rel: str, context: Context) -> list[FileFinding]:
    """Findings of a text of any length given in pieces, scanned in windows of whole lines
    (``streams.windows``); a finding the overlap of two windows repeats is kept once. As in one
    scan of a text, at most ``MAX_FINDINGS_PER_RULE`` findings of a rule are kept per file."""
    return scan_window_list(windows(iter(pieces)), shown, rel, context)


def scan_window_list(
    parts: Iterator[tuple[str, int, int, int]], shown: str, rel: str, context: Context
) -> list[FileFinding]:
    """Findings of the windows ``parts`` (``(text, first_line, repeated, shift)``, as
    ``streams.windows`` makes them); see ``scan_windows``.

    A finding in the repeated lines is kept only when the previous window did not find it and
    the repeated lines alone do not give it either: then it reaches into the new lines (a key's
    header before the cut, its body after). Found by the repeated lines alone, it was made by
    the window's start (a private key's header or a long line's head, ``shift`` > 0, left out),
    which the previous window held."""
    found: list[FileFinding] = []
    previous: set[tuple[int, int, str]] = set()
    per_rule: dict[str, int] = {}
    for text, first, repeated, shift in parts:
        current: set[tuple[int, int, str]] = set()
        alone: set[tuple[int, int, str]] | None = None
        for f, value in _window_findings(text, first, shift, rel, context):
            key = (f.line, f.start, f.rule)
            current.add(key)
            if f.line - first < repeated:
                if key in previous:
                    continue  # found in the previous window already
                if alone is None:
                    head = text[: _line_ends(text, repeated)]
                    alone = {
                        (g.line, g.start, g.rule)
                        for g, _ in _window_findings(head, first, shift, rel, context)
                    }
                if key in alone:
                    continue
            per_rule[f.rule] = count = per_rule.get(f.rule, 0) + 1
            if count > MAX_FINDINGS_PER_RULE:
                continue
            found.append(FileFinding(shown, f, value, rel))
        previous = current
        del text  # not held while the next window is read (two long lines would be 3x one)
        forget_text()
    return found


def _line_ends(text: str, count: int) -> int:
    """The offset just past the ``count``-th line end of ``text``."""
    at = -1
    for _ in range(count):
        at = text.find("\n", at + 1)
    return at + 1


def _window_findings(
    text: str, first: int, shift: int, rel: str, context: Context
) -> Iterator[tuple[Finding, str]]:
    """The findings of one window at their line and column in the file (the window's first line
    begins ``shift`` characters into its line)."""
    for f, value in scan_text_with_values(text, context, file_kind(rel, text)):
        moved = shift if f.line == 1 else 0
        yield Finding(first + f.line - 1, f.start + moved, f.end + moved, f.category, f.rule, f.masked), value


def scan_runs(runs: Runs, shown: str, rel: str) -> list[FileFinding]:
    """Findings of the printable runs of binary data (``streams.Runs``): the fixed-format
    secret rules only (source context, generated data), so random bytes raise no false alarm.
    Lines are the data's own (counted line ends), columns bytes."""
    found: list[FileFinding] = []
    seen: set[tuple[int, str]] = set()
    for items in runs.blocks():
        if not items:
            continue
        text = "\n".join(run for _, _, run in items)
        current: set[tuple[int, str]] = set()
        for f, value in scan_text_with_values(text, Context.SOURCE, FileKind.DATA):
            offset, width, _ = items[f.line - 1]
            at = offset + f.start * width
            current.add((at, f.rule))
            if (at, f.rule) in seen:
                continue  # a run across the previous cut, found whole there already
            line, col = runs.line_col(at)
            local = Finding(line, col, col + (f.end - f.start) * width, f.category, f.rule, f.masked)
            found.append(FileFinding(shown, local, value, rel))
        seen = current
    return found


def _inside(path: Path, root: Path) -> bool:
    try:
        Path(os.path.realpath(path)).relative_to(os.path.realpath(root))
    except ValueError:
        return False
    return True


def iter_files(paths: list[Path], root: Path, notices: list[str]) -> Iterator[Path]:
    """Files named or under the named directories, in a stable order, symlinks kept in the root."""
    for given in paths:
        if given.is_symlink() and not _inside(given, root):
            notices.append(f"{given.as_posix()}: skipped (symlink to outside the repository)")
            continue
        if given.is_dir():
            yield from _walk(given, root, notices)
        else:
            yield given


def _walk(top: Path, root: Path, notices: list[str]) -> Iterator[Path]:
    for current, dirs, files in os.walk(top, followlinks=False):
        base = Path(current)
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not (base / d).is_symlink())
        for name in sorted(files):
            path = base / name
            if path.is_symlink() and not _inside(path, root):
                notices.append(f"{relative_to_root(path, root)}: skipped (symlink to outside the repository)")
                continue
            yield path


def scan_file(path: Path, root: Path, context: Context | None = None) -> tuple[list[FileFinding], str | None]:
    """Findings of one file (context chosen from its path unless given), or a skip notice."""
    rel = relative_to_root(path, root)
    loaded = load(path, rel, rel, context)
    if loaded.text is None:
        return loaded.findings, loaded.notice
    return scan_loaded(loaded.text, rel, rel, context), None


def scan_loaded(text: str, shown: str, rel: str, context: Context | None = None) -> list[FileFinding]:
    """Findings of a file already read: ``shown`` is the path reported, ``rel`` the
    repository-relative path that decides its context and kind."""
    ctx = context if context is not None else context_of(rel, text)
    kind = file_kind(rel, text)
    return [FileFinding(shown, f, v, rel) for f, v in scan_text_with_values(text, ctx, kind)]


BATCH_FILE_LIMIT = 256 * 1024
BATCH_BYTES = 1024 * 1024


def scan_batch(items: list[tuple[str, str, str]], context: Context | None = None) -> list[FileFinding]:
    """Findings of many small files, ``(text, shown, rel)`` each, as ``scan_loaded`` would give.

    Files of one context and kind are joined with a separator line no rule can span, scanned as
    one text and the findings mapped back: the engine's fixed cost per call (one pass per rule)
    is then paid per megabyte, not per file, which is most of the time on a tree of small files.
    """
    # ASCII files are batched apart: one non-ASCII character would store the whole joined text
    # at two or four bytes a character, and every pattern would then read more memory
    groups: dict[tuple[Context, FileKind, bool], list[tuple[str, str, str]]] = {}
    for text, shown, rel in items:
        ctx = context if context is not None else context_of(rel, text)
        groups.setdefault((ctx, file_kind(rel, text), text.isascii()), []).append((text, shown, rel))
    found: list[FileFinding] = []
    for (ctx, kind, _ascii), members in groups.items():
        start = 0
        while start < len(members):
            batch: list[tuple[str, str, str]] = []
            size = 0
            while start < len(members) and (not batch or size + len(members[start][0]) <= BATCH_BYTES):
                batch.append(members[start])
                size += len(members[start][0])
                start += 1
            # each text gets a final newline so the separator line stands alone
            joined = BATCH_SEPARATOR.join(
                text if text.endswith("\n") else text + "\n" for text, _, _ in batch
            )
            first_lines: list[int] = []
            line = 1
            for text, _, _ in batch:
                first_lines.append(line)
                line += text.count("\n") + (0 if text.endswith("\n") else 1) + 2
            for f, value in scan_text_with_values(joined, ctx, kind, cap=1000 * len(batch)):
                index = bisect.bisect_right(first_lines, f.line) - 1
                _, shown, rel = batch[index]
                local = Finding(f.line - first_lines[index] + 1, f.start, f.end, f.category, f.rule, f.masked)
                found.append(FileFinding(shown, local, value, rel))
    return found


def scan_paths(paths: list[Path], root: Path, context: Context | None = None) -> ScanReport:
    """Scan files and directories under ``root``; notices for everything skipped.

    Small files are scanned in batches (``scan_batch``), as ``privacy scan`` does, so the hooks
    pay the engine's fixed cost per megabyte rather than per file; findings come back in the
    order of the files, each file's sorted by (line, start, rule), as one scan per file gives.
    """
    report = ScanReport()
    small: list[tuple[str, str, str]] = []
    order: dict[str, int] = {}
    for path in iter_files(paths, root, report.notices):
        rel = relative_to_root(path, root)
        loaded = load(path, rel, rel, context)
        if loaded.notice is not None:
            report.notices.append(loaded.notice)
            continue
        report.files_scanned += 1
        order.setdefault(rel, len(order))
        text = loaded.text
        if text is None:
            report.findings.extend(loaded.findings)
        elif len(text) <= BATCH_FILE_LIMIT and "\x00" not in text:
            small.append((text, rel, rel))
        else:
            report.findings.extend(scan_loaded(text, rel, rel, context))
    report.findings.extend(scan_batch(small, context))
    report.findings.sort(
        key=lambda x: (order[x.repo_path], x.path, x.finding.line, x.finding.start, x.finding.rule)
    )
    return report
