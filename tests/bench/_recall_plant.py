"""Plant fake secrets (tests/bench/_recall_fakes.py) into copies of real repositories.

``build(repos, out, seed)`` copies the chosen files of each repository into ``out/clean`` and
``out/planted`` (same relative paths, ``<repo>/...``), inserts the fakes into the planted copy
where people leak them, and returns the ground truth: one ``Plant`` per secret with its file,
its line range (1-based, inclusive; a PEM block spans its lines) and its family. Insertions
keep each file's syntax (YAML, TOML, JSON, notebooks, Python, shell): ``check_syntax`` says so.
Files that a repository does not have (``.env``, notebooks, ``.npmrc``, ``.pypirc``, ``.netrc``,
a docker ``config.json``, a Kubernetes Secret, PowerShell) are written with a plain base, which
the clean copy holds without the secrets.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import _recall_fakes as fk

VALUE_CONTEXTS = ("env", "yaml", "toml", "ini", "json", "shell", "ci", "notebook", "markdown", "python")
LINE_CONTEXTS = ("shell", "ci", "markdown", "notebook", "python")
PEM_CONTEXTS = ("pemfile", "yaml", "json", "python", "markdown", "env")
POWERSHELL_CONTEXTS = ("ps1", "ci", "markdown", "python", "ps1")
FILE_PLANTS_PER_REPO = 2
NEW_FILES = {
    "env": ".env",
    "json": "config/settings.json",
    "notebook": "examples/tour.ipynb",
    "ps1": "scripts/deploy.ps1",
    "npmrc": ".npmrc",
    "pypirc": ".pypirc",
    "netrc": ".netrc",
    "docker-config-auth": ".docker/config.json",
    "kubernetes-secret": "deploy/k8s/secret.yaml",
}
BINARY = {".png", ".gif", ".jpg", ".jpeg", ".ico", ".svg", ".woff", ".woff2", ".ttf", ".lock", ".pdf", ".zip"}


@dataclass
class Plant:
    fake: fk.Fake
    context: str
    path: str  # relative to the tree root: <repo>/<file>
    key: str = ""  # the name it is assigned to, unique within its file
    first: int = 0
    last: int = 0

    @property
    def lookalike(self) -> bool:
        return self.fake.family in fk.LOOKALIKES


def contexts_of(family: str) -> tuple[str, ...]:
    if family in ("cli-without-secret", "header-variable", "cli-format-placeholder"):
        return LINE_CONTEXTS
    if family in fk.FILE_FAMILIES:
        return ()
    if family == "cli-powershell":
        return POWERSHELL_CONTEXTS
    if family == "private-key":
        return PEM_CONTEXTS
    if family in fk.CLI_FAMILIES or family in fk.HEADER_FAMILIES:
        return LINE_CONTEXTS
    return VALUE_CONTEXTS


# -- choosing files -----------------------------------------------------------------------------


def tracked(repo: Path) -> list[str]:
    """Text files of a repository, translations of the docs left out (``docs/<lang>/`` other than en)."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=repo, capture_output=True, check=True).stdout
        names = [n for n in out.decode().split("\0") if n]
    except (OSError, subprocess.CalledProcessError):
        names = [str(p.relative_to(repo)) for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts]
    keep = []
    for name in sorted(names):
        lang = re.match(r"docs/([a-z]{2}(?:-[a-z]+)?)/", name)
        if lang and lang.group(1) != "en" or Path(name).suffix.lower() in BINARY:
            continue
        path = repo / name
        if path.is_file() and not path.is_symlink() and path.stat().st_size < 512 * 1024:
            keep.append(name)
    return keep


def _shell(repo: Path, name: str) -> bool:
    if name.endswith(".sh"):
        return True
    if not name.startswith("scripts/") or "." in Path(name).name:
        return False
    with open(repo / name, "rb") as handle:
        first = handle.readline()
    return first.startswith(b"#!") and b"sh" in first


def candidates(repo: Path, names: list[str]) -> dict[str, list[str]]:
    """Existing files of each context (and whether they offer a place to insert)."""
    out: dict[str, list[str]] = {c: [] for c in ("yaml", "ci", "toml", "ini", "shell", "markdown", "python")}
    for name in names:
        suffix, base = Path(name).suffix, Path(name).name
        context = None
        if name.startswith(".github/workflows/") and suffix in (".yml", ".yaml"):
            context = "ci"
        elif suffix in (".yml", ".yaml"):
            context = "yaml"
        elif suffix == ".toml":
            context = "toml"
        elif suffix in (".ini", ".cfg") or base in (".coveragerc", ".flake8"):
            context = "ini"
        elif _shell(repo, name):
            context = "shell"
        elif suffix == ".md":
            context = "markdown"
        elif suffix == ".py" and re.search(r"(^|/)tests?/.*test_[^/]*\.py$", name):
            context = "python"
        if context is None:
            continue
        text = (repo / name).read_text(encoding="utf-8", errors="replace")
        if context == "shell" and "<<" in text:
            continue
        if POINTS[context](text.splitlines()):
            out[context].append(name)
    return out


# -- insertion points: the index a snippet goes before, with its indentation --------------------


def _yaml_points(lines: list[str]) -> list[tuple[int, str]]:
    points = [(i, "") for i, line in enumerate(lines) if re.match(r"[A-Za-z_][\w.-]*:(\s|$)", line)]
    return points + [(len(lines), "")] if points else []


def _ci_points(lines: list[str]) -> list[tuple[int, str]]:
    return [
        (i, m.group(1)) for i, line in enumerate(lines) if (m := re.match(r"(\s+)- (name|uses|run):", line))
    ]


def _section_points(lines: list[str]) -> list[tuple[int, str]]:
    return [(i + 1, "") for i, line in enumerate(lines) if re.match(r"\[[^\]]+\]\]?\s*$", line)]


def _shell_points(lines: list[str]) -> list[tuple[int, str]]:
    points = []
    for i in range(1, len(lines) + 1):
        if lines[i - 1].rstrip().endswith(("\\", "&&", "||", "|")):
            continue
        if i == len(lines) or re.match(r"[A-Za-z.]", lines[i]):
            points.append((i, ""))
    return points


def _markdown_points(lines: list[str]) -> list[tuple[int, str]]:
    points, fenced = [], False
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if not fenced and i and not lines[i - 1].strip() and re.match(r"[A-Za-z]", line):
            points.append((i, ""))
    return points


def _python_points(lines: list[str]) -> list[tuple[int, str]]:
    points = []
    for i, line in enumerate(lines):
        m = re.match(r"(\s*)(async )?def test_\w*\(.*\).*:\s*$", line)
        if not m:
            continue
        body = next((b for b in lines[i + 1 :] if b.strip()), "")
        indent = body[: len(body) - len(body.lstrip())]
        if len(indent) > len(m.group(1)):
            points.append((i + 1, indent))
    return points


POINTS: dict[str, Callable[[list[str]], list[tuple[int, str]]]] = {
    "yaml": _yaml_points,
    "ci": _ci_points,
    "toml": _section_points,
    "ini": _section_points,
    "shell": _shell_points,
    "markdown": _markdown_points,
    "python": _python_points,
}

# -- snippets -----------------------------------------------------------------------------------


def _curl(value: str) -> str:
    quoted = f"'Authorization: {value}'" if "'" not in value else json.dumps(f"Authorization: {value}")
    return f"curl -sS -H {quoted} https://api.example.com/v1/items"


PREFIXES = ("", "prod_", "staging_", "ci_", "backup_", "legacy_", "new_", "old_", "dev_", "qa_")


def name_keys(group: list[Plant]) -> None:
    """Give each plant of one file its own name: the family's, or a prefixed one when taken."""
    used: set[str] = set()
    for plant in group:
        base = plant.fake.name
        for prefix in PREFIXES:
            key = (prefix.upper() if base.isupper() else prefix) + base
            if key.lower() not in used:
                break
        used.add(key.lower())
        plant.key = key


def snippet(context: str, fake: fk.Fake, indent: str, k: int, name: str = "") -> list[str]:
    """The lines of one plant in ``context``: ``name`` is its key (default the family's),
    ``k`` its number in the file (step names, the prose or fenced form in docs)."""
    n, v = name or fake.name, fake.text
    lower = n.lower().replace("-", "_")
    pem = fake.text.splitlines()
    if fake.kind == "pem":
        if context == "yaml":
            return [f"{lower}: |", *("  " + line for line in pem)]
        if context == "python":
            return [f'{indent}{lower} = """{pem[0]}', *pem[1:-1], f'{pem[-1]}"""']
        if context == "markdown":
            return ["```", *pem, "```", ""]
        if context == "env":
            return [f'{n}="{pem[0]}', *pem[1:-1], f'{pem[-1]}"']
        raise ValueError(context)
    if fake.kind == "value":
        if context == "yaml":
            return [f"{lower}: '{v}'"]
        if context == "toml":
            return [f'{lower} = "{v}"']
        if context == "ini":
            return [f"{lower} = {v}"]
        if context == "shell":
            return [f"export {n}='{v}'"]
        if context == "ci":
            return [
                f"{indent}- name: Publish {k}",
                f"{indent}  env:",
                f"{indent}    {n}: '{v}'",
                f"{indent}  run: make publish",
            ]
        if context == "markdown":
            if k % 2:
                return [f"Set `{n}` to `{v}` before running the examples.", ""]
            return ["```bash", f"export {n}={v}", "```", ""]
        if context == "python":
            return [f'{indent}{lower} = "{v}"']
        raise ValueError(context)
    command = _curl(v) if fake.kind == "header" else v
    if context in ("shell", "ps1"):
        return [command]
    if context == "ci":
        shell = [f"{indent}  shell: pwsh"] if fake.family == "cli-powershell" else []
        return [f"{indent}- name: Step {k}", *shell, f"{indent}  run: |", f"{indent}    {command}"]
    if context == "markdown":
        if fake.kind == "header":
            return [
                "```http",
                "GET /v1/items HTTP/1.1",
                "Host: api.example.com",
                f"Authorization: {v}",
                "```",
                "",
            ]
        lang = "powershell" if fake.family == "cli-powershell" else "bash"
        return [f"```{lang}", command, "```", ""]
    if context == "python":
        if fake.kind == "header":
            return [f"{indent}headers = {{'Authorization': {v!r}}}"]
        if fake.family == "cli-powershell":
            return [f'{indent}subprocess.run(["pwsh", "-Command", {command!r}], check=True)']
        return [f"{indent}subprocess.run({command!r}, shell=True, check=True)"]
    raise ValueError(context)


def notebook_cell(fake: fk.Fake, name: str) -> list[str]:
    if fake.kind == "pem":
        pem = fake.text.splitlines()
        return [f'{name.lower()} = """{pem[0]}', *pem[1:-1], f'{pem[-1]}"""']
    if fake.kind == "value":
        return ["import os", f'os.environ["{name}"] = "{fake.text}"']
    if fake.kind == "header":
        return [
            f"headers = {{'Authorization': {fake.text!r}}}",
            "response = client.get('/v1/items', headers=headers)",
        ]
    return [f"!{fake.text}"]


# -- files ----------------------------------------------------------------------------------------


def insert(text: str, context: str, plants: list[Plant], rng: random.Random) -> str:
    lines = text.splitlines()
    points = POINTS[context](lines)
    chosen = sorted(
        ((rng.choice(points), k, p) for k, p in enumerate(plants)), key=lambda t: (-t[0][0], -t[1])
    )
    for (index, indent), k, plant in chosen:
        lines[index:index] = snippet(context, plant.fake, indent, k, plant.key)
    return "\n".join(lines) + "\n"


ENV_BASE = [
    "# local development settings",
    "DEBUG=false",
    "LOG_LEVEL=info",
    "DATABASE_URL=postgresql://localhost:5432/app",
]
ENV_BASE += ["API_BASE_URL=https://api.example.com", "CACHE_TTL=300", "ALLOWED_HOSTS=localhost,127.0.0.1"]
PS1_BASE = ['param([string]$Environment = "staging")', '$ErrorActionPreference = "Stop"']
PS1_BASE += [
    'Write-Host "Deploying to $Environment"',
    "Import-Module SqlServer",
    "Set-Location $PSScriptRoot",
]
NPMRC_BASE = [
    "registry=https://registry.npmjs.org/",
    "save-exact=true",
    "//registry.npmjs.org/:_authToken=${NPM_TOKEN}",
]
PYPIRC_BASE = "[distutils]\nindex-servers =\n    pypi\n    testpypi\n\n[pypi]\nusername = __token__\n\n[testpypi]\nrepository = https://test.pypi.org/legacy/\nusername = __token__\n"
NETRC_BASE = ["machine mirror.example.org login anonymous", "default login anonymous"]
K8S_BASE = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app-secrets\n  namespace: prod\ntype: Opaque\n"


def _interleave(base: list[str], parts: list[list[str]], rng: random.Random) -> list[str]:
    """``base`` with each part inserted whole at a random place (never inside another part)."""
    blocks = [[line] for line in base]
    for part in parts:
        blocks.insert(rng.randint(0, len(blocks)), part)
    return [line for block in blocks for line in block]


def new_file(context: str, plants: list[Plant], rng: random.Random, readme: str) -> str:
    """A file the repository does not have, with ``plants`` in it (none: the clean copy)."""
    fakes = [p.fake for p in plants]
    if context == "env":
        parts = [
            snippet("env", p.fake, "", k, p.key) if p.fake.kind == "pem" else [f"{p.key}={p.fake.text}"]
            for k, p in enumerate(plants)
        ]
        return "\n".join(_interleave(ENV_BASE, parts, rng)) + "\n"
    if context == "json":
        doc: dict[str, object] = {
            "debug": False,
            "log_level": "info",
            "timeout": 30,
            "features": ["search", "export"],
        }
        doc["database"] = {"host": "localhost", "port": 5432, "name": "app"}
        items = list(doc.items())
        for p in plants:
            items.insert(rng.randint(0, len(items)), (p.key.lower(), p.fake.text))
        return json.dumps(dict(items), indent=2) + "\n"
    if context == "ps1":
        return "\n".join(_interleave(PS1_BASE, [[f.text] for f in fakes], rng)) + "\n"
    if context == "notebook":
        code = re.findall(r"```(?:python|py|pycon)\n(.*?)```", readme, re.S)[:6] or ["print('hello')\n"]
        cells = [_cell("markdown", ["# A tour"])] + [_cell("code", c.rstrip("\n").splitlines()) for c in code]
        for p in plants:
            cells.insert(rng.randint(1, len(cells)), _cell("code", notebook_cell(p.fake, p.key)))
        meta = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}}
        return (
            json.dumps({"cells": cells, "metadata": meta, "nbformat": 4, "nbformat_minor": 5}, indent=1)
            + "\n"
        )
    if context == "npmrc":
        return "\n".join(_interleave(NPMRC_BASE, [[f.text] for f in fakes], rng)) + "\n"
    if context == "pypirc":
        lines = PYPIRC_BASE.splitlines()
        spots = [i + 1 for i, line in enumerate(lines) if line.startswith("username")]
        for at, f in sorted(zip(spots, fakes, strict=False), key=lambda t: -t[0]):
            lines.insert(at, f.text)
        return "\n".join(lines) + "\n"
    if context == "netrc":
        parts = []
        for f in fakes:
            head = (
                [f"machine {f.meta['host']}", f"  login {f.meta['login']}"] if f.text.startswith(" ") else []
            )
            parts.append([*head, f.text])
        return "\n".join(_interleave(NETRC_BASE, parts, rng)) + "\n"
    if context == "docker-config-auth":
        auths: dict[str, object] = {"https://index.docker.io/v1/": {}}
        for k, f in enumerate(fakes):
            auths[f"registry{k}.example.com"] = {"auth": f.text}
        return (
            json.dumps(
                {"auths": auths, "HttpHeaders": {"User-Agent": "Docker-Client/24.0.7 (linux)"}}, indent=2
            )
            + "\n"
        )
    if context == "kubernetes-secret":
        data = [f"  {p.key}: {p.fake.text}" for p in plants]
        return K8S_BASE + ("data:\n" + "\n".join(data) + "\n" if data else "")
    raise ValueError(context)


def _cell(kind: str, lines: list[str]) -> dict[str, object]:
    source = [line + "\n" for line in lines[:-1]] + lines[-1:]
    if kind == "markdown":
        return {"cell_type": "markdown", "metadata": {}, "source": source}
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}


# -- the tree ----------------------------------------------------------------------------------


def plan(repos: dict[str, Path], seed: int) -> tuple[list[Plant], dict[str, list[str]]]:
    """Every family's plants, each with its context and file (``<repo>/<path>``)."""
    rng = random.Random(seed)
    names = {r: tracked(p) for r, p in repos.items()}
    cands = {r: candidates(repos[r], names[r]) for r in repos}
    plants: list[Plant] = []
    order = sorted(repos)
    for family in (*fk.FAMILIES, *fk.LOOKALIKES):
        if family in fk.FILE_FAMILIES:
            for repo in order:
                for i in range(FILE_PLANTS_PER_REPO):
                    plants.append(
                        Plant(fk.make(family, rng, i + len(plants)), family, f"{repo}/{NEW_FILES[family]}")
                    )
            continue
        for i, context in enumerate(contexts_of(family)):
            if family in fk.LOOKALIKES:
                fake = fk.lookalike(family, rng, sum(p.lookalike for p in plants))
            else:
                fake = fk.make(family, rng, i)
            if context == "pemfile":
                plants.append(Plant(fake, context, f"{rng.choice(order)}/deploy/keys/{family}-{i}.pem"))
            elif context in NEW_FILES:
                plants.append(Plant(fake, context, f"{rng.choice(order)}/{NEW_FILES[context]}"))
            else:
                having = [r for r in order if cands[r][context]]
                repo = rng.choice(having)
                plants.append(Plant(fake, context, f"{repo}/{rng.choice(cands[repo][context][:8])}"))
    return plants, names


def build(repos: dict[str, Path], out: Path, seed: int, extra_per_repo: int = 150) -> list[Plant]:
    """Write ``out/clean`` and ``out/planted``; the plants, located (``first``/``last`` set)."""
    plants, names = plan(repos, seed)
    rng = random.Random(seed + 1)
    for tree in ("clean", "planted"):
        if (out / tree).exists():
            shutil.rmtree(out / tree)
    by_file: dict[str, list[Plant]] = {}
    for p in plants:
        by_file.setdefault(p.path, []).append(p)
    copied: set[str] = set(by_file)
    for repo, files in names.items():
        chosen = [f for f in files if f"{repo}/{f}" in by_file]
        chosen += sorted(rng.sample(files, min(extra_per_repo, len(files)))) if extra_per_repo else files
        for name in chosen:
            copied.add(f"{repo}/{name}")
    for rel in sorted(copied):
        repo, _, name = rel.partition("/")
        source = repos[repo] / name
        group = by_file.get(rel, [])
        name_keys(group)
        for tree in ("clean", "planted"):
            target = out / tree / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if source.is_file() and not group:
                shutil.copyfile(source, target)
                continue
            context = group[0].context
            if context == "pemfile":
                if tree == "planted":
                    target.write_text(group[0].fake.text + "\n", encoding="utf-8")
                continue
            if source.is_file():
                text = source.read_text(encoding="utf-8")
                target.write_text(
                    insert(text, context, group, random.Random(rel)) if tree == "planted" else text
                )
            else:
                readme = _readme(repos[repo])
                body = new_file(context, group if tree == "planted" else [], random.Random(rel), readme)
                target.write_text(body, encoding="utf-8")
    for rel, group in by_file.items():
        locate((out / "planted" / rel).read_text(encoding="utf-8"), group)
    return plants


def _readme(repo: Path) -> str:
    for name in ("README.md", "README.rst", "docs/index.md"):
        if (repo / name).is_file():
            return (repo / name).read_text(encoding="utf-8", errors="replace")
    return ""


def needles(fake: fk.Fake) -> tuple[str, str]:
    if fake.kind == "pem":
        body = fake.text.splitlines()
        return body[1], body[-2]
    return fake.secret, fake.secret


def locate(text: str, plants: list[Plant]) -> None:
    """Set each plant's line range from where its needles are in ``text`` (each exactly once)."""
    lines = text.splitlines()
    for plant in plants:
        span = []
        for needle in needles(plant.fake):
            hits = [i for i, line in enumerate(lines) if needle in line or json.dumps(needle)[1:-1] in line]
            if len(hits) != 1:
                raise AssertionError(f"{plant.path}: {plant.fake.family} found on {len(hits)} lines")
            span.append(hits[0])
        first, last = span
        if plant.fake.kind == "pem":
            first -= 1 if first and "BEGIN" in lines[first - 1] and "BEGIN" not in lines[first] else 0
            last += (
                1 if last + 1 < len(lines) and "END" in lines[last + 1] and "END" not in lines[last] else 0
            )
        plant.first, plant.last = first + 1, last + 1


def check_syntax(root: Path, plants: list[Plant]) -> list[str]:
    """Files of the planted tree whose syntax the planting broke (empty: none)."""
    import ast
    import tomllib

    import yaml

    broken = []
    for rel in sorted({p.path for p in plants}):
        path = root / rel
        text = path.read_text(encoding="utf-8")
        try:
            if path.suffix in (".json", ".ipynb"):
                json.loads(text)
            elif path.suffix in (".yml", ".yaml"):
                list(yaml.safe_load_all(text))
            elif path.suffix == ".toml":
                tomllib.loads(text)
            elif path.suffix == ".py":
                ast.parse(text)
            elif path.suffix == ".sh" or "/scripts/" in rel and not path.suffix:
                done = subprocess.run(["bash", "-n", str(path)], capture_output=True)
                if done.returncode:
                    raise SyntaxError(done.stderr.decode(errors="replace")[:200])
        except Exception as exc:  # noqa: BLE001 - any parser's error is a broken file
            broken.append(f"{rel}: {type(exc).__name__}")
    return broken


def tree_bytes(root: Path) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(root) for f in files)
