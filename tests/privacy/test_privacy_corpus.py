"""The labelled corpus (tests/privacy_corpus/cases.jsonl): every positive fires its rule, no
look-alike fires anything, and every detector has true and false cases."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from toolkit.privacy import Category, scan_text
from toolkit.privacy.engine import LINE_RULES, RULES

CORPUS = Path(__file__).resolve().parents[1] / "privacy_corpus" / "cases.jsonl"
CASES = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
POSITIVE = [c for c in CASES if c["expect"]]
NEGATIVE = [c for c in CASES if not c["expect"]]
RULE_CATEGORY = {r.id: r.category for r in RULES} | {r.id: r.category for r in LINE_RULES}


def test_corpus_size_and_coverage() -> None:
    assert len(POSITIVE) >= 150 and len(NEGATIVE) >= 150
    categories = Counter(RULE_CATEGORY[c["expect"]] for c in POSITIVE)
    # every category of the text rules (UNREADABLE is no rule's: the file reader reports it)
    assert set(categories) == set(Category) - {Category.UNREADABLE}, categories
    # each text detector has at least one true and one false (look-alike) case
    text_rules = {r.id for r in RULES if len(r.contexts) == len(list(type(next(iter(r.contexts)))))}
    # the families added by issue 13 have their own table (tests/privacy/test_privacy_families.py),
    # and so do issue 27's authorization schemes, connection strings and config files
    import test_privacy_auth_headers as headers
    import test_privacy_config_files as configs
    import test_privacy_connection_strings as connections
    import test_provider_families as providers
    from test_privacy_families import LOOK_ALIKES, POSITIVES

    tables = (headers, connections, configs, providers)
    positives = {r for r, _ in POSITIVES} | {r for m in tables for r, _, _ in m.POSITIVES}
    look_alikes = {n for n, _ in LOOK_ALIKES} | {n for m in tables for n, _ in m.LOOK_ALIKES}
    look_alikes |= {n for n, _ in providers.NEAR_MISSES}
    assert text_rules <= {c["expect"] for c in POSITIVE} | positives
    assert text_rules <= {c["near"] for c in NEGATIVE} | look_alikes


def test_every_positive_case_is_found() -> None:
    misses = []
    for case in POSITIVE:
        found = scan_text(case["text"])
        if case["expect"] not in {f.rule for f in found}:
            misses.append((case["expect"], case["text"][:60]))
        for finding in found:  # a finding never carries more than a short prefix of what it matched
            assert finding.masked.endswith("********")
            assert len(finding.masked) <= 12
    assert misses == []


def test_no_look_alike_fires() -> None:
    noisy = [(c["near"], c["text"][:60], [f.rule for f in scan_text(c["text"])]) for c in NEGATIVE]
    assert [n for n in noisy if n[2]] == []


def test_our_own_hook_configuration_excludes_the_corpus() -> None:
    import re

    import yaml

    config = yaml.safe_load((CORPUS.parents[2] / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    assert re.search(config["exclude"], "tests/privacy_corpus/cases.jsonl")
    assert not re.search(config["exclude"], "tests/privacy/test_privacy_corpus.py")
    assert any(scan_text(c["text"]) for c in POSITIVE)  # without the exclusion, our own commits would fail
