"""Findings (``toolkit/core/findings.py``) as SARIF 2.1.0 for code scanning, and as GitHub
Actions annotations.

SARIF: one run, ``tool.driver`` with the toolkit's name, version and one rule per rule id
found (a short description and help text), a result per finding with ``ruleId``, ``level``,
the masked message (callers never pass a secret value), a location relative to the
repository root (``uriBaseId`` ``%SRCROOT%``; a region only when the finding has a line),
``partialFingerprints`` when the caller has a fingerprint, and for a finding in a past commit
the commit in ``properties`` and the run's ``versionControlProvenance``.

Annotations: ``::error file=P,line=L,col=C,title=RULE::message``, escaped as the runner
expects (``%``, CR and LF in the message; also ``:`` and ``,`` in properties).

Standard library only.
"""

from __future__ import annotations

import json
from urllib.parse import quote

from toolkit import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import IO

    from toolkit.core.findings import Finding
    from toolkit.core.sarif_shapes import DriverRule, Log, PhysicalLocation, Provenance, Region, Result, Run

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
VERSION = "2.1.0"
INFORMATION_URI = "https://github.com/workgroup-toolkit/workgroup-toolkit"
_LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def _uri(path: str) -> str:
    """A relative URI reference for a repository path (percent-encoded, ``/`` kept)."""
    return quote(path, safe="/")


def document(
    tool: str,
    findings: list[Finding],
    *,
    rules: Mapping[str, tuple[str, str]] | None = None,
    fingerprints: list[str | None] | None = None,
    commits: list[str | None] | None = None,
    paths: list[str] | None = None,
    repository_uri: str | None = None,
) -> Log:
    """The SARIF log of ``findings``: ``rules`` maps a rule id to (short description, help);
    ``fingerprints``, ``commits`` and ``paths`` (the file path when ``Finding.path`` says more)
    run parallel to ``findings``."""

    ids = sorted({f.code for f in findings})
    driver_rules = _driver_rules(tool, ids, dict(rules or {}))
    index = {rule_id: i for i, rule_id in enumerate(ids)}
    results = [
        _result(
            tool,
            f,
            paths[i] if paths else f.path,
            index[f.code],
            fingerprints[i] if fingerprints else None,
            commits[i] if commits else None,
        )
        for i, f in enumerate(findings)
    ]
    run: Run = {
        "tool": {
            "driver": {
                "name": f"workgroup {tool}",
                "version": __version__,
                "informationUri": INFORMATION_URI,
                "rules": driver_rules,
            }
        },
        "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "The repository's work tree."}}},
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    provenance = _provenance(repository_uri, commits)
    if provenance:
        run["versionControlProvenance"] = provenance
    return {"$schema": SCHEMA, "version": VERSION, "runs": [run]}


def _driver_rules(tool: str, ids: list[str], known: Mapping[str, tuple[str, str]]) -> list[DriverRule]:
    """The driver's rule entries for ``ids``, described from ``known`` or by a pointer to the help."""
    driver_rules: list[DriverRule] = []
    for rule_id in ids:
        short, help_text = known.get(rule_id, (f"{tool}: {rule_id}", f"See `workgroup {tool} --help`."))
        driver_rules.append(
            {
                "id": rule_id,
                "name": _rule_name(rule_id),
                "shortDescription": {"text": short},
                "fullDescription": {"text": short},
                "help": {"text": help_text},
                "defaultConfiguration": {"level": "error"},
            }
        )
    return driver_rules


def _provenance(repository_uri: str | None, commits: list[str | None] | None) -> list[Provenance]:
    """One version-control provenance entry per distinct commit the findings name, sorted; none
    without a repository URI."""
    if not repository_uri or not commits:
        return []
    return [{"repositoryUri": repository_uri, "revisionId": c} for c in sorted({c for c in commits if c})]


def _result(
    tool: str, f: Finding, path: str, rule_index: int, fingerprint: str | None, commit: str | None
) -> Result:
    """The SARIF result of one finding at ``path``: its rule, level, message and physical location
    (a region only for a known line, a start column only for a known column), its fingerprint
    and its commit when it has them."""
    location: PhysicalLocation = {"artifactLocation": {"uri": _uri(path), "uriBaseId": "%SRCROOT%"}}
    if f.line > 0:
        region: Region = {"startLine": f.line}
        if f.col > 0:
            region["startColumn"] = f.col
        location["region"] = region
    result: Result = {
        "ruleId": f.code,
        "ruleIndex": rule_index,
        "level": _LEVELS.get(f.severity, "error"),
        "message": {"text": f.message},
        "locations": [{"physicalLocation": location}],
    }
    if fingerprint:
        result["partialFingerprints"] = {f"{tool}/v1": fingerprint}
    if commit:
        result["properties"] = {"commit": commit}
    return result


def _rule_name(rule_id: str) -> str:
    """``private-key`` -> ``PrivateKey`` (SARIF's ``name`` is an identifier-like word)."""
    return "".join(part[:1].upper() + part[1:] for part in rule_id.replace("_", "-").split("-") if part)


def write(stdout: IO[str], doc: Log) -> None:
    stdout.write(json.dumps(doc, ensure_ascii=False, indent=1) + "\n")


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(f: Finding, path: str | None = None) -> str:
    """One workflow command line for ``f`` (``::error``, ``::warning`` or ``::notice``)."""
    kind = {"error": "error", "warning": "warning"}.get(f.severity, "notice")
    props = [f"file={_escape_property(path if path is not None else f.path)}"]
    if f.line > 0:
        props.append(f"line={f.line}")
        if f.col > 0:
            props.append(f"col={f.col}")
    props.append(f"title={_escape_property(f.code)}")
    return f"::{kind} {','.join(props)}::{_escape_data(f.message)}"
