"""Stage 0 deterministic repository inventory (``workgroup index``).

An inventory/hash index, not an AST index (the seed's Debt & Gaps): every tracked path with its
blob id, size and a language guessed from the extension, in byte order of the path, plus one
digest over the whole. The bytes depend only on the tree (or the staged index), so two clones
at the same commit produce identical files, and an unchanged tree id reuses the previous result.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from toolkit.canonical import canonical_bytes, sha256_digest

SCHEMA = "workgroup.inventory/v1"

_BY_EXTENSION: dict[str, str] = {
    ".py": "python", ".pyi": "python", ".ipynb": "jupyter",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".tsx": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".go": "go", ".rs": "rust", ".java": "java", ".kt": "kotlin", ".kts": "kotlin", ".scala": "scala",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp",
    ".cs": "csharp", ".fs": "fsharp", ".swift": "swift", ".m": "objective-c", ".mm": "objective-c",
    ".rb": "ruby", ".php": "php", ".pl": "perl", ".pm": "perl", ".lua": "lua", ".r": "r",
    ".dart": "dart", ".ex": "elixir", ".exs": "elixir", ".erl": "erlang", ".hs": "haskell",
    ".clj": "clojure", ".ml": "ocaml", ".zig": "zig", ".nim": "nim", ".jl": "julia",
    ".sh": "shell", ".bash": "shell", ".zsh": "shell", ".fish": "shell", ".ps1": "powershell",
    ".sql": "sql", ".graphql": "graphql", ".proto": "protobuf",
    ".html": "html", ".htm": "html", ".css": "css", ".scss": "scss", ".sass": "scss", ".less": "less",
    ".vue": "vue", ".svelte": "svelte",
    ".md": "markdown", ".mdx": "markdown", ".rst": "restructuredtext", ".txt": "text", ".adoc": "asciidoc",
    ".json": "json", ".jsonl": "json", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".xml": "xml",
    ".ini": "ini", ".cfg": "ini", ".csv": "csv", ".tsv": "csv",
    ".tf": "terraform", ".hcl": "hcl", ".nix": "nix", ".cmake": "cmake", ".gradle": "gradle",
    ".png": "binary", ".jpg": "binary", ".jpeg": "binary", ".gif": "binary", ".ico": "binary",
    ".pdf": "binary", ".zip": "binary", ".gz": "binary", ".woff": "binary", ".woff2": "binary",
    ".svg": "svg",
}
_BY_NAME: dict[str, str] = {
    "Makefile": "make", "GNUmakefile": "make", "Dockerfile": "dockerfile", "CMakeLists.txt": "cmake",
    "Gemfile": "ruby", "Rakefile": "ruby", "BUILD": "bazel", "WORKSPACE": "bazel",
    "go.mod": "go", "Cargo.toml": "toml", "package.json": "json",
}
_SUBMODULE_MODE = 0o160000
_SYMLINK_MODE = 0o120000


def guess_language(path: str) -> str:
    """A language guess from the file name alone (deterministic, no content sniffing)."""
    name = PurePosixPath(path).name
    if name in _BY_NAME:
        return _BY_NAME[name]
    suffix = PurePosixPath(name.lower()).suffix
    return _BY_EXTENSION.get(suffix, "other")


@dataclass(frozen=True)
class Inventory:
    key: str  # tree id, or the index checksum for --staged
    document: dict[str, Any]
    reused: bool

    def to_bytes(self) -> bytes:
        return canonical_bytes(self.document) + b"\n"


def build_document(source: str, key: str, rows: list[tuple[str, str, int, int]]) -> dict[str, Any]:
    """rows: (path, blob id, mode, size). Pure: same rows give the same bytes."""
    files: list[dict[str, Any]] = []
    languages: Counter[str] = Counter()
    total_bytes = 0
    for path, blob, mode, size in sorted(rows, key=lambda r: r[0].encode("utf-8")):
        if mode == _SUBMODULE_MODE:
            kind, language = "submodule", "submodule"
        elif mode == _SYMLINK_MODE:
            kind, language = "symlink", "symlink"
        else:
            kind, language = "file", guess_language(path)
        languages[language] += 1
        total_bytes += max(size, 0)
        files.append({"path": path, "blob": blob, "size": size, "kind": kind, "language": language})
    body = {
        "schema": SCHEMA,
        "source": source,
        "key": key,
        "totals": {"files": len(files), "bytes": total_bytes, "languages": dict(sorted(languages.items()))},
        "files": files,
    }
    return {**body, "digest": sha256_digest(canonical_bytes(body))}


def load_cached(raw: bytes, key: str) -> dict[str, Any] | None:
    """A cached inventory is reused only if it parses, names the same key and its digest recomputes."""
    try:
        doc = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(doc, dict) or doc.get("key") != key or doc.get("schema") != SCHEMA:
        return None
    body = {k: v for k, v in doc.items() if k != "digest"}
    if doc.get("digest") != sha256_digest(canonical_bytes(body)):
        return None
    return doc
