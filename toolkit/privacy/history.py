"""``workgroup privacy scan --history [REVS]``: the lines each commit added, every commit once.

One ``git log -p`` process is read as a stream and parsed line by line (``parse_log``):

* every commit of ``git rev-list REVS`` is listed once, whatever branches and merges lead to it,
  so a line a commit added is scanned with that commit only; a line a later commit removed was
  still found where it went in (that is the point: it is in the history);
* a commit's ``+`` lines (``--unified=0``: no context lines) are its added lines, numbered as
  lines of the file in that commit; a root commit is diffed against the empty tree;
* a merge (``--cc``, the dense combined diff) contributes only the lines that differ from
  every parent: a conflict resolution or an edit made in the merge itself. What a merge
  brings from a branch was added by that branch's commits, which the range lists too; a range
  that excludes them (``main..merge --first-parent``-like ranges) leaves it out on purpose;
* renames and copies add nothing by themselves (``-M``);
* a binary file (git says ``Binary files ... differ``) is read as the blob it became, by its
  id, through ``git cat-file --batch`` and scanned as a binary file is (its printable runs,
  the fixed-format secret rules; compressed data by its content); each blob id once;
* the rules are the ones of the file's context (``files.context_of``: by path, and session notes
  by content), as a file scan applies them; inline ``workgroup: allow`` comments and the reviewed allowlist are honoured, by
  (rule, path, fingerprint) as in ``gate.apply_allowlist``.

Standard library only: ``git`` runs as a subprocess.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.core.errors import EnvironmentFailure, InvalidInput
from toolkit.privacy.files import (
    BATCH_FILE_LIMIT,
    FileFinding,
    ScanReport,
    context_of,
    scan_batch,
    scan_loaded,
    scan_stream,
    scan_windows,
    unreadable,
)
from toolkit.privacy.gate import apply_allowlist
from toolkit.privacy.streams import HEAD_BYTES, Budget, Unreadable, sniff
from toolkit.privacy.types import Context, Finding

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO

SHORT = 12  # hex digits of a commit id in text output
PIECE_BYTES = 1024 * 1024  # a longer added line is scanned in pieces of this size (bounded memory)
PENDING_BYTES = 4 * 1024 * 1024  # added text held before it is scanned
PART_CHARS = 4 * 1024 * 1024  # one file's added text scanned in parts of about this size
_CARRY_LINES = 32  # lines of a part scanned again with the next (a multi-line secret across the cut)
_NULL_BLOB = "0" * 40
_EMPTY = ""


@dataclass(frozen=True)
class HistoryFinding:
    """A finding in the lines ``commit`` added to ``item.repo_path``."""

    commit: str
    item: FileFinding


@dataclass
class HistoryReport:
    findings: list[HistoryFinding] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    commits: int = 0


@dataclass
class _Added:
    """The lines one commit added to one file: the scanned ``lines`` and, for each, its line
    number in the file and the column its text starts at (a long line comes in pieces)."""

    commit: str
    path: str
    blob: str = ""
    lines: list[str] = field(default_factory=list)
    where: list[tuple[int, int]] = field(default_factory=list)
    size: int = 0

    def add(self, number: int, text: str) -> None:
        if len(text) <= PIECE_BYTES:
            self.lines.append(text)
            self.where.append((number, 0))
            self.size += len(text) + 1
            return
        for start in range(0, len(text), PIECE_BYTES):
            self.lines.append(text[start : start + PIECE_BYTES])
            self.where.append((number, start))
            self.size += min(PIECE_BYTES, len(text) - start) + 1


@dataclass(frozen=True)
class _Binary:
    commit: str
    path: str
    blob: str


def unquote(raw: bytes) -> str:
    """A path as git prints it: as is, or C-quoted (``"a\\tb"``, octal escapes for bytes)."""
    if not raw.startswith(b'"') or not raw.endswith(b'"') or len(raw) < 2:
        return raw.decode("utf-8", "replace")
    body = raw[1:-1]
    out = bytearray()
    simple = {ord("a"): 7, ord("b"): 8, ord("t"): 9, ord("n"): 10, ord("v"): 11, ord("f"): 12, ord("r"): 13}
    i = 0
    while i < len(body):
        c = body[i]
        if c != 0x5C or i + 1 == len(body):
            out.append(c)
            i += 1
            continue
        nxt = body[i + 1]
        if 0x30 <= nxt <= 0x37 and i + 3 < len(body):
            out.append(int(body[i + 1 : i + 4], 8) & 0xFF)
            i += 4
        else:
            out.append(simple.get(nxt, nxt))
            i += 2
    return bytes(out).decode("utf-8", "replace")


def _strip_prefix(path: str, prefix: str) -> str:
    return path[len(prefix) :] if path.startswith(prefix) else path


def _git_path(raw: bytes) -> str:
    """The path of a ``diff --git a/P b/P`` line (the one form git prints for an unrenamed file)."""
    rest = raw[len(b"diff --git ") :].rstrip(b"\n")
    if rest.startswith(b'"'):
        end = rest.find(b'" ', 1)
        while end != -1 and rest[end - 1 : end] == b"\\":
            end = rest.find(b'" ', end + 1)
        second = rest[end + 2 :] if end != -1 else rest
        return _strip_prefix(unquote(second), "b/")
    half = (len(rest) - 1) // 2
    return _strip_prefix(rest[half + 1 :].decode("utf-8", "replace"), "b/")


def parse_log(
    stream: IO[bytes],
    on_commit: Callable[[str], None],
    on_added: Callable[[_Added], None],
    on_binary: Callable[[_Binary], None],
) -> None:
    """Parse ``git log -p --cc -U0 --format=%x00%H`` output (the ``git_log_args`` form) as it
    streams: ``on_commit`` for each commit, ``on_added`` with the lines a commit added to a file,
    ``on_binary`` for a binary file a commit changed (its new blob id)."""
    state = _LogState(on_added, on_binary)
    while True:
        raw = stream.readline(PIECE_BYTES)
        if not raw:
            break
        long_line = not raw.endswith(b"\n")
        if state.in_hunk and raw[:1] in (b"+", b"-", b" ", b"\\"):  # the hot path: inline
            prefix = raw[: state.parents]
            if b"-" in prefix or raw[:1] == b"\\":
                _skip_rest(stream, long_line)
                continue
            state.new_line += 1
            if prefix == b"+" * state.parents:
                if state.added is None:
                    state.added = _Added(state.commit, state.path, state.blob)
                state.added.add(state.new_line, _whole_line(stream, raw, long_line)[state.parents :])
            else:
                _skip_rest(stream, long_line)
            continue
        state.in_hunk = False
        if raw.startswith(b"\0"):
            state.flush()
            state.commit = raw[1:].strip().decode("ascii", "replace").split(" ")[0]
            on_commit(state.commit)
            continue
        _skip_rest(stream, long_line)
        state.header(raw.rstrip(b"\n"))
    state.flush()


class _LogState:
    """Where ``parse_log`` is: the commit, the file and blob of the diff, the hunk's line numbers."""

    def __init__(self, on_added: Callable[[_Added], None], on_binary: Callable[[_Binary], None]) -> None:
        self.on_added, self.on_binary = on_added, on_binary
        self.commit = self.path = self.blob = _EMPTY
        self.added: _Added | None = None
        self.in_hunk = False
        self.parents = 1  # prefix columns of a hunk line: 1, or the parent count of a combined diff
        self.new_line = 0

    def flush(self) -> None:
        if self.added is not None and self.added.lines:
            self.on_added(self.added)
        self.added = None

    def header(self, line: bytes) -> None:
        """One line of a diff's header (the file, its blob ids, a hunk's start, a binary change)."""
        if line.startswith(b"diff --git "):
            self.flush()
            self.path, self.blob, self.parents = _git_path(line), _EMPTY, 1
        elif line.startswith((b"diff --cc ", b"diff --combined ")):
            self.flush()
            self.path, self.blob = unquote(line.split(b" ", 2)[2]), _EMPTY
        elif line.startswith((b"rename to ", b"copy to ")):
            self.path = unquote(line.split(b" ", 2)[2])
        elif line.startswith(b"+++ "):
            # git ends a name holding a space with a tab here; a name with a tab of its own is quoted
            target = line[4:-1] if line.endswith(b"\t") else line[4:]
            if target != b"/dev/null":
                self.path = _strip_prefix(unquote(target), "b/")
        elif line.startswith(b"index "):
            self.blob = line.split(b" ")[1].split(b"..")[-1].decode("ascii", "replace")
        elif line.startswith(b"@@"):
            self.hunk(line)
        elif line.startswith(b"Binary files ") and line.endswith(b" differ") and self.blob.strip("0"):
            self.on_binary(_Binary(self.commit, self.path, self.blob))

    def hunk(self, line: bytes) -> None:
        """``@@ -a,b +c,d @@`` (``@@@`` and more for a combined diff): the new side starts at c."""
        at = line.find(b" +", 2)
        marks = len(line) - len(line.lstrip(b"@"))
        self.parents = max(1, marks - 1)
        start = line[at + 2 :].split(b" ")[0].split(b",")[0] if at != -1 else b"1"
        self.new_line = int(start) - 1 if start.isdigit() else 0
        self.in_hunk = True


def _skip_rest(stream: IO[bytes], long_line: bool) -> None:
    while long_line:
        more = stream.readline(PIECE_BYTES)
        long_line = bool(more) and not more.endswith(b"\n")


def _whole_line(stream: IO[bytes], raw: bytes, long_line: bool) -> str:
    """The line whose first ``PIECE_BYTES`` are ``raw``, decoded (UTF-8, bad bytes as U+FFFD)."""
    parts = [raw]
    while long_line:
        more = stream.readline(PIECE_BYTES)
        parts.append(more)
        long_line = bool(more) and not more.endswith(b"\n")
    data = b"".join(parts)
    return data.rstrip(b"\n").rstrip(b"\r").decode("utf-8", "replace")


def git_log_args(revs: list[str]) -> list[str]:
    """The one ``git log`` whose output ``parse_log`` reads, with every setting that would change
    that output pinned (prefixes, colours, external diff and textconv drivers, quoting)."""
    return [
        "git",
        "-c",
        "core.quotepath=off",
        "-c",
        "diff.noprefix=false",
        "-c",
        "diff.mnemonicPrefix=false",
        "-c",
        "log.showSignature=false",
        "-c",
        "log.showRoot=true",
        "log",
        "-p",
        "--cc",
        "--unified=0",
        "--full-index",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--no-abbrev",
        "-M",
        "--reverse",  # oldest first: a blob seen again later is reported where it first went in
        "--src-prefix=a/",
        "--dst-prefix=b/",
        "--format=%x00%H",
        *revs,
        "--",
    ]


def check_revs(revs: list[str], root: Path) -> int:
    """The number of commits ``revs`` names (``git rev-list --count``); ``BAD_REVISION`` (exit 2)
    for a range git does not know or an option in disguise, ``NOT_A_REPOSITORY`` (exit 3)."""
    for rev in revs:
        if rev.startswith("-") and rev not in ("--all", "--branches", "--tags"):
            raise InvalidInput("BAD_REVISION", f"not a revision range: {rev[:80]!r}")
        if "\n" in rev or "\0" in rev or not rev:
            raise InvalidInput("BAD_REVISION", "a revision range cannot be empty or hold a line break")
    done = subprocess.run(
        ["git", "rev-list", "--count", *revs, "--"], cwd=root, capture_output=True, check=False
    )
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        if any("not a git repository" in s for s in said):
            raise EnvironmentFailure("NOT_A_REPOSITORY", "--history needs a git repository")
        first = said[0].removeprefix("fatal: ") if said else "git rev-list failed"
        raise InvalidInput("BAD_REVISION", f"git does not know the range {' '.join(revs)[:200]!r}: {first}")
    return int(done.stdout.strip() or b"0")


def _shallow(root: Path) -> bool:
    done = subprocess.run(
        ["git", "rev-parse", "--is-shallow-repository"], cwd=root, capture_output=True, check=False
    )
    return done.stdout.strip() == b"true"


def has_commits(root: Path) -> bool:
    done = subprocess.run(
        ["git", "rev-parse", "--verify", "-q", "HEAD^{commit}"], cwd=root, capture_output=True, check=False
    )
    return done.returncode == 0


class _Blobs:
    """``git cat-file --batch``, started on the first binary file: blobs by id, in blocks."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.proc: subprocess.Popen[bytes] | None = None

    def blocks(self, blob: str) -> tuple[int, Iterator[bytes]] | None:
        if self.proc is None:
            self.proc = subprocess.Popen(
                ["git", "cat-file", "--batch"], cwd=self.root, stdin=subprocess.PIPE, stdout=subprocess.PIPE
            )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(blob.encode("ascii") + b"\n")
        self.proc.stdin.flush()
        header = self.proc.stdout.readline().split()
        if len(header) != 3 or header[1] != b"blob" or not header[2].isdigit():
            return None  # missing (a partial clone) or not a blob
        size = int(header[2])
        out = self.proc.stdout

        def read() -> Iterator[bytes]:
            left = size
            while left:
                block = out.read(min(left, PIECE_BYTES))
                if not block:
                    raise EnvironmentFailure("GIT_FAILED", "git cat-file ended in the middle of a blob")
                left -= len(block)
                yield block
            out.read(1)  # the newline after the content

        return size, read()

    def close(self) -> None:
        if self.proc is not None:
            if self.proc.stdin:
                self.proc.stdin.close()
            self.proc.wait()


class _Scanner:
    """Collects added text and scans it in batches, mapping findings back to commit and line."""

    def __init__(self, root: Path, context: Context | None, report: HistoryReport) -> None:
        self.root = root
        self.context = context
        self.report = report
        self.pending: list[_Added] = []
        self.size = 0
        self.blobs = _Blobs(root)
        self.seen_blobs: set[str] = set()

    def added(self, item: _Added) -> None:
        if item.size > PART_CHARS:
            self._scan_large(item)
            return
        self.pending.append(item)
        self.size += item.size
        if self.size >= PENDING_BYTES:
            self.flush()

    def flush(self) -> None:
        batch: list[tuple[str, str, str]] = []
        large: list[int] = []
        for index, item in enumerate(self.pending):
            text = "\n".join(item.lines) + "\n"
            if len(text) <= BATCH_FILE_LIMIT and "\x00" not in text:
                batch.append((text, str(index), item.path))
            else:
                large.append(index)
        found = scan_batch(batch, self.context)
        for index in large:
            item = self.pending[index]
            found.extend(self._windows(item.lines, str(index), item.path))
        by_item: dict[int, list[FileFinding]] = {}
        for hit in found:
            by_item.setdefault(int(hit.path), []).append(hit)
        for index, hits in by_item.items():
            item = self.pending[index]
            for hit in self._confirmed(item, hits, 0):
                self._keep(item, hit, 0)
        self.pending = []
        self.size = 0

    def _windows(self, lines: list[str], shown: str, path: str) -> list[FileFinding]:
        text = "\n".join(lines) + "\n"
        # added session notes (a transcript in Markdown) are an artifact, as in a file scan
        ctx = self.context if self.context is not None else context_of(path, text)
        return scan_windows(iter([text]), shown, path, ctx)

    def _scan_large(self, item: _Added) -> None:
        """One file's added text in parts (bounded memory), each overlapping the previous."""
        start = 0
        seen: set[tuple[int, int, int, str]] = set()
        while start < len(item.lines):
            end, size = start, 0
            while end < len(item.lines) and (end == start or size < PART_CHARS):
                size += len(item.lines[end]) + 1
                end += 1
            hits = self._windows(item.lines[start:end], "0", item.path)
            for hit in self._confirmed(item, hits, start):
                number, column = item.where[start + hit.finding.line - 1]
                key = (number, column, hit.finding.start, hit.finding.rule)
                if key not in seen:
                    seen.add(key)
                    self._keep(item, hit, start)
            if end == len(item.lines):
                break
            start = max(start + 1, end - _CARRY_LINES)

    def _confirmed(self, item: _Added, hits: list[FileFinding], offset: int) -> list[FileFinding]:
        """The findings in added lines that the whole file, as the commit left it, confirms.

        Added lines are scanned without the lines around them, so a rule that reads context
        (a certificate's body is public, a line of generated data) can fire on lines that the
        whole file clears. A finding is kept when the scan of the whole blob finds the same rule
        on the same line, or, once per block as ``private-key``, when the line lies inside a
        private key block (a key rotated under the same BEGIN line); otherwise the file's own
        context cleared it. A blob that cannot be read back, or is larger than a
        file scanned whole, keeps every finding (never a pass on what was not read)."""
        if not hits or not item.blob.strip("0"):
            return hits
        got = self.blobs.blocks(item.blob)
        if got is None:
            return hits
        size, blocks = got
        if size > HEAD_BYTES:
            for _ in blocks:
                pass
            return hits
        text = b"".join(blocks).decode("utf-8", "replace")
        whole = {
            (h.finding.line, h.finding.rule) for h in scan_loaded(text, item.path, item.path, self.context)
        }
        lines = text.splitlines()
        kept = []
        blocks_seen: set[int] = set()
        for hit in hits:
            number, _column = item.where[offset + hit.finding.line - 1]
            if (number, hit.finding.rule) in whole:
                kept.append(hit)
                continue
            begin = _private_key_begin(lines, number)
            if begin is not None and begin not in blocks_seen:
                # new lines in a key whose BEGIN line stayed: one private-key finding per block
                blocks_seen.add(begin)
                f = hit.finding
                key = Finding(f.line, f.start, f.end, f.category, "private-key", f.masked, f.pointer)
                kept.append(FileFinding(hit.path, key, hit.fingerprint_value, hit.rel))
        return kept

    def _keep(self, item: _Added, hit: FileFinding, offset: int) -> None:
        f = hit.finding
        number, column = item.where[offset + f.line - 1]
        local = Finding(number, f.start + column, f.end + column, f.category, f.rule, f.masked, f.pointer)
        self.report.findings.append(
            HistoryFinding(item.commit, FileFinding(item.path, local, hit.fingerprint_value, item.path))
        )

    def binary(self, item: _Binary) -> None:
        """The blob a binary change produced, scanned as a binary file is; each blob once."""
        if item.blob in self.seen_blobs:
            return
        self.seen_blobs.add(item.blob)
        got = self.blobs.blocks(item.blob)
        where = f"{item.commit[:SHORT]}:{item.path}"
        if got is None:
            self.report.notices.append(f"{where}: not scanned (blob {item.blob[:SHORT]} not in this clone)")
            return
        _size, blocks = got
        try:
            head = next(blocks, b"")
            rest = _chain(head, blocks)
            hits = scan_stream(rest, sniff(head), item.path, item.path, self.context, Budget())
        except Unreadable as exc:
            for _ in blocks:  # the rest of the blob, so the batch stream stays in step
                pass
            loaded = unreadable(item.path, item.path, exc.reason, self.context)
            if loaded.notice:
                self.report.notices.append(f"{item.commit[:SHORT]}:{loaded.notice}")
            hits = loaded.findings
        for _ in blocks:
            pass
        for hit in hits:
            self.report.findings.append(HistoryFinding(item.commit, hit))

    def close(self) -> None:
        self.blobs.close()


def _private_key_begin(lines: list[str], number: int) -> int | None:
    """The line of the ``-----BEGIN ... PRIVATE KEY-----`` whose block holds line ``number``
    (1-based), if any (a key body is at most a few hundred lines)."""
    for index in range(min(number, len(lines)) - 1, max(-1, number - 200), -1):
        line = lines[index]
        if "-----END " in line and index != number - 1:
            return None
        if "-----BEGIN " in line:
            return index + 1 if "PRIVATE KEY" in line else None
    return None


def _chain(head: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    if head:
        yield head
    yield from rest


class Progress:
    """``privacy: 1200/6729 commits`` on stderr, each ``every`` commits, when enabled."""

    def __init__(self, stream: IO[str], total: int, enabled: bool, every: int = 250) -> None:
        self.stream = stream
        self.total = total
        self.enabled = enabled
        self.every = every
        self.done = 0
        self.shown = False
        self.tty = bool(getattr(stream, "isatty", lambda: False)())

    def __call__(self) -> None:
        self.done += 1
        if self.enabled and self.done % self.every == 0:
            self.shown = True
            end = "\r" if self.tty else "\n"
            self.stream.write(f"privacy: {self.done}/{self.total} commits{end}")
            self.stream.flush()

    def close(self) -> None:
        if self.shown and self.tty:
            self.stream.write("\033[K")
            self.stream.flush()


def scan_history(
    root: Path,
    revs: list[str] | None = None,
    context: Context | None = None,
    *,
    progress: IO[str] | None = None,
    show_progress: bool = False,
) -> HistoryReport:
    """Findings in the lines each commit of ``git rev-list REVS`` added (default: HEAD's
    history), the reviewed allowlist applied; ``BAD_REVISION`` for a range git does not know."""
    report = HistoryReport()
    if not revs:
        if not has_commits(root):
            report.notices.append("no commits yet")
            return report
        revs = ["HEAD"]
    total = check_revs(revs, root)
    if _shallow(root):
        report.notices.append(
            "shallow clone: commits before its boundary are not scanned, and each boundary commit is "
            "read as if it added its whole tree (fetch full history: git fetch --unshallow)"
        )
    tick = Progress(progress, total, show_progress) if progress is not None else None
    scanner = _Scanner(root, context, report)

    def on_commit(_sha: str) -> None:
        report.commits += 1
        if tick is not None:
            tick()

    env = {**os.environ, "GIT_PAGER": "cat", "LC_ALL": "C"}
    proc = subprocess.Popen(
        git_log_args(revs), cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    assert proc.stdout is not None and proc.stderr is not None
    try:
        parse_log(proc.stdout, on_commit, scanner.added, scanner.binary)
        scanner.flush()
        failed = proc.wait()
        said = proc.stderr.read().decode("utf-8", "replace").strip()
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    finally:
        scanner.close()
        if tick is not None:
            tick.close()
    if failed:
        raise EnvironmentFailure("GIT_FAILED", f"git log failed: {said.splitlines()[-1] if said else failed}")
    _allow(report, root)
    return report


def _allow(report: HistoryReport, root: Path) -> None:
    """The reviewed allowlist, by (rule, path, fingerprint) exactly as ``gate.apply_allowlist``."""
    items = ScanReport(findings=[h.item for h in report.findings])
    commits = {id(h.item): h.commit for h in report.findings}
    kept = apply_allowlist(items, root).findings
    report.findings = [HistoryFinding(commits[id(item)], item) for item in kept]
