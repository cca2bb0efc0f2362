"""The recall benchmark's generator (tests/bench/_recall_fakes.py) and planter (_recall_plant.py):
deterministic from a seed, every fake in its family's real format with a valid checksum or
signature, and plants that keep each file's syntax and sit exactly on the recorded lines."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import random
import re
import struct
import subprocess
import sys
from pathlib import Path

import pygit2
import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import _recall_fakes as fk  # noqa: E402
import _recall_plant as rp  # noqa: E402

from toolkit.privacy.providers import checksum_ok  # noqa: E402

PER_FAMILY = 6


def every_fake(seed: int) -> list[fk.Fake]:
    rng = random.Random(seed)
    return [fake for family in fk.FAMILIES for fake in fk.fakes_of(family, PER_FAMILY, rng)]


@pytest.fixture(scope="module")
def fakes() -> list[fk.Fake]:
    return every_fake(27)


def test_the_same_seed_gives_the_same_fakes_and_another_seed_others(fakes: list[fk.Fake]) -> None:
    again = every_fake(27)
    assert [(f.family, f.text, f.secret) for f in again] == [(f.family, f.text, f.secret) for f in fakes]
    other = every_fake(28)
    assert all(a.text != b.text for a, b in zip(fakes, other, strict=True))


def test_every_fake_has_a_secret_in_its_text(fakes: list[fk.Fake]) -> None:
    for fake in fakes:
        assert fake.secret and fake.secret in fake.text, fake.family
    assert {f.family for f in fakes} == set(fk.FAMILIES)


@pytest.mark.parametrize("family", sorted(fk.FORMATS))
def test_every_fake_matches_its_family_format(family: str, fakes: list[fk.Fake]) -> None:
    pattern = re.compile(fk.FORMATS[family])
    for fake in (f for f in fakes if f.family == family):
        assert pattern.fullmatch(fake.secret), f"{family}: {fake.secret[:12]}..."


def test_github_and_npm_tokens_carry_their_crc32(fakes: list[fk.Fake]) -> None:
    tokens = [f.text for f in fakes if f.family in ("github-token", "npm-token")]
    assert len(tokens) == 2 * PER_FAMILY and all(checksum_ok(t) for t in tokens)
    broken = tokens[0][:-1] + ("A" if tokens[0][-1] != "A" else "B")
    assert not checksum_ok(broken)


def _bech32_ok(text: str) -> bool:
    hrp, _, data = text.lower().rpartition("1")
    values = [fk.BECH32.index(c) for c in data]
    expanded = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]
    return fk._bech32_polymod(expanded + values) == 1


def test_age_keys_are_valid_bech32(fakes: list[fk.Fake]) -> None:
    keys = [f.text for f in fakes if f.family == "age-secret-key"]
    assert keys and all(_bech32_ok(k) for k in keys)
    assert not _bech32_ok(keys[0][:-1] + ("Q" if keys[0][-1] != "Q" else "P"))


def _fields(data: bytes, at: int) -> tuple[list[tuple[int, bytes]], int]:
    out = []
    while data[at] != 0:
        kind, size = data[at], data[at + 1]
        out.append((kind, data[at + 2 : at + 2 + size]))
        at += 2 + size
    return out, at + 1


def test_pypi_tokens_are_macaroons_signed_by_their_root_key(fakes: list[fk.Fake]) -> None:
    for fake in (f for f in fakes if f.family == "pypi-token"):
        raw = base64.urlsafe_b64decode(fake.text[5:] + "=" * (-len(fake.text[5:]) % 4))
        assert raw[0] == 2
        head, at = _fields(raw, 1)
        assert head[0] == (1, b"pypi.org")
        sig = hmac.new(
            hmac.new(b"macaroons-key-generator", fake.meta["root_key"], "sha256").digest(),
            head[1][1],
            "sha256",
        )
        digest = sig.digest()
        while raw[at] != 0:
            caveat, at = _fields(raw, at)
            digest = hmac.new(digest, caveat[0][1], hashlib.sha256).digest()
        assert raw[at + 1 : at + 3] == b"\x06\x20" and raw[at + 3 :] == digest


def test_jwts_verify_with_their_key(fakes: list[fk.Fake]) -> None:
    for fake in (f for f in fakes if f.family == "jwt"):
        head, body, sig = fake.text.split(".")
        expected = hmac.new(fake.meta["key"], f"{head}.{body}".encode(), hashlib.sha256).digest()
        assert base64.urlsafe_b64decode(sig + "=") == expected
        assert json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))["alg"] == "HS256"


def _der(data: bytes, at: int = 0) -> tuple[int, bytes, int]:
    tag, size, at = data[at], data[at + 1], at + 2
    if size & 0x80:
        count = size & 0x7F
        size, at = int.from_bytes(data[at : at + count], "big"), at + count
    return tag, data[at : at + size], at + size


def _der_items(body: bytes) -> list[tuple[int, bytes]]:
    items, at = [], 0
    while at < len(body):
        tag, value, at = _der(body, at)
        items.append((tag, value))
    return items


def test_private_keys_are_pem_whose_numbers_make_a_key(fakes: list[fk.Fake]) -> None:
    seen = set()
    for fake in (f for f in fakes if f.family == "private-key"):
        lines = fake.text.splitlines()
        label = re.fullmatch(r"-----BEGIN ((?:RSA |EC |OPENSSH )?)PRIVATE KEY-----", lines[0])
        assert label and lines[-1] == lines[0].replace("BEGIN", "END")
        seen.add(label.group(1))
        raw = base64.b64decode("".join(lines[1:-1]), validate=True)
        if label.group(1) == "EC ":
            items = _der_items(_der(raw)[1])
            assert items[0] == (2, b"\x01") and items[1][0] == 4 and len(items[1][1]) == 32
            continue
        k = fake.meta
        assert k["n"] == k["p"] * k["q"] and pow(pow(12345, k["e"], k["n"]), k["d"], k["n"]) == 12345
        if label.group(1) == "OPENSSH ":
            assert raw.startswith(b"openssh-key-v1\x00") and k["n"].to_bytes(129, "big") in raw
            continue
        if label.group(1) == "":
            raw = _der_items(_der(raw)[1])[2][1]  # PKCS#8: the OCTET STRING holds the PKCS#1 key
        numbers = [int.from_bytes(v, "big") for _, v in _der_items(_der(raw)[1])]
        assert numbers[1:4] == [k["n"], k["e"], k["d"]]
    assert seen == {"RSA ", "", "EC ", "OPENSSH "}


def test_headers_carry_valid_credentials(fakes: list[fk.Fake]) -> None:
    for fake in (f for f in fakes if f.kind == "header"):
        scheme, _, cred = fake.text.partition(" ")
        m = fake.meta
        if fake.family == "header-basic":
            assert base64.b64decode(cred).decode() == f"{m['user']}:{m['password']}"
        elif fake.family == "header-digest":
            ha1 = hashlib.md5(f"{m['user']}:api@example.com:{m['password']}".encode()).hexdigest()
            ha2 = hashlib.md5(f"GET:{m['uri']}".encode()).hexdigest()
            want = hashlib.md5(f"{ha1}:{m['nonce']}:00000001:{m['cnonce']}:auth:{ha2}".encode()).hexdigest()
            assert f'response="{want}"' in cred
        elif fake.family == "header-ntlm":
            raw = base64.b64decode(cred)
            assert raw[:8] == b"NTLMSSP\x00" and struct.unpack("<I", raw[8:12]) == (3,)
        elif fake.family == "header-aws4":
            date, region = m["string_to_sign"].split("\n")[2].split("/")[:2]
            key = ("AWS4" + m["secret"]).encode()
            for part in (date, region, "s3", "aws4_request"):
                key = hmac.new(key, part.encode(), hashlib.sha256).digest()
            assert cred.endswith(
                "Signature=" + hmac.new(key, m["string_to_sign"].encode(), "sha256").hexdigest()
            )
        elif fake.family == "header-oauth1":
            sig = base64.b64encode(
                hmac.new(m["key"].encode(), m["base"].encode(), hashlib.sha1).digest()
            ).decode()
            assert fake.secret == fk._pct(sig) and 'oauth_signature_method="HMAC-SHA1"' in cred
        else:
            assert scheme == "Bearer" and len(base64.urlsafe_b64decode(cred + "=" * (-len(cred) % 4))) == 33


def test_credential_files_encode_what_they_claim(fakes: list[fk.Fake]) -> None:
    for fake in (f for f in fakes if f.family == "docker-config-auth"):
        assert base64.b64decode(fake.text).decode() == f"{fake.meta['user']}:{fake.meta['password']}"
    for fake in (f for f in fakes if f.family == "kubernetes-secret"):
        assert base64.b64encode(base64.b64decode(fake.text, validate=True)).decode() == fake.text


def test_look_alikes_are_what_they_claim() -> None:
    rng = random.Random(27)
    made = {cls: [fk.lookalike(cls, rng, 8 * k + i) for i in range(8)] for k, cls in enumerate(fk.LOOKALIKES)}
    assert not any(checksum_ok(f.text) for f in made["bad-checksum-token"])
    assert all(re.fullmatch(fk.FORMATS["github-token"], f.text) for f in made["bad-checksum-token"])
    assert all(f.text.endswith("EXAMPLE") and len(f.text) == 20 for f in made["aws-example-key"])
    for fake in made["jwt-header-only"]:
        head = json.loads(base64.urlsafe_b64decode(fake.text + "=" * (-len(fake.text) % 4)))
        assert head["typ"] == "JWT" and "." not in fake.text
    for fake in made["ssh-public-key"]:
        kind, blob, _ = fake.text.split()
        assert base64.b64decode(blob)[4:].startswith(kind.encode())
    for fake in made["base64-json-config"]:
        assert "theme" in json.loads(base64.b64decode(fake.text))
    needles = [f.secret for fakes in made.values() for f in fakes]
    assert len(set(needles)) == len(needles)


# -- planting ------------------------------------------------------------------------------------

README = (
    "# demo\n\nUse it:\n\n```python\nimport demo\nprint(demo.get('https://example.org'))\n```\n\nMore text.\n"
)
FILES = {
    "README.md": README,
    "docs/guide.md": "# Guide\n\nIntro paragraph.\n\n```bash\nexport A=1\n```\n\nSecond paragraph.\n\nThird.\n",
    "pyproject.toml": '[project]\nname = "demo"\nversion = "1.0"\n\n[tool.ruff]\nline-length = 100\n',
    "tox.ini": "[tox]\nenvlist = py311\n\n[testenv]\ncommands = pytest\n",
    "mkdocs.yml": "site_name: demo\nnav:\n  - Home: index.md\ntheme:\n  name: material\n",
    ".github/workflows/ci.yml": (
        "name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@v4\n      - name: Test\n        run: |\n          pytest -q\n"
    ),
    "scripts/test.sh": "#!/bin/sh -e\n\nexport PREFIX=''\nif [ -d venv ] ; then\n    PREFIX=venv/bin/\nfi\n${PREFIX}pytest \"$@\"\n",
    "tests/test_demo.py": "import demo\n\n\ndef test_get():\n    assert demo.get('x')\n\n\ndef test_post():\n    assert demo.post('x')\n",
}


def _repo(path: Path) -> Path:
    pygit2.init_repository(str(path))
    for rel, text in FILES.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text, encoding="utf-8")
    subprocess.run(["git", "add", "."], cwd=path, check=True)
    return path


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("repos")
    return {name: _repo(base / name) for name in ("alpha", "beta", "gamma")}


def test_plants_keep_syntax_and_sit_on_their_lines(repos: dict[str, Path], tmp_path: Path) -> None:
    plants = rp.build(repos, tmp_path, 27, extra_per_repo=0)
    assert rp.check_syntax(tmp_path / "planted", plants) == []
    assert {p.fake.family for p in plants} == set(fk.FAMILIES) | set(fk.LOOKALIKES)
    taken: set[tuple[str, int]] = set()
    for plant in plants:
        lines = (tmp_path / "planted" / plant.path).read_text(encoding="utf-8").splitlines()
        span = lines[plant.first - 1 : plant.last]
        first, last = rp.needles(plant.fake)
        assert any(first in line or json.dumps(first)[1:-1] in line for line in span), plant.path
        assert any(last in line or json.dumps(last)[1:-1] in line for line in span), plant.path
        if plant.fake.kind == "pem" and plant.first < plant.last:  # a block stays whole, nothing inside
            body = plant.fake.text.splitlines()[1:-1]
            assert any(
                body == [line.strip() for line in span[i : i + len(body)]] for i in range(len(span))
            ), plant.path
        own = {(plant.path, n) for n in range(plant.first, plant.last + 1)}
        assert not own & taken, f"two plants share a line of {plant.path}"
        taken |= own
    clean = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "clean").rglob("*") if p.is_file())
    assert not [p for p in plants if not p.lookalike and rp.needles(p.fake)[0] in clean]
    for rel, text in FILES.items():  # the clean copy is the repository's file, byte for byte
        assert (tmp_path / "clean" / "alpha" / rel).read_text(encoding="utf-8") == text


@pytest.mark.parametrize("context", ["env", "netrc"])
def test_a_multi_line_plant_stays_whole_among_others(context: str) -> None:
    rng = random.Random(3)
    for seed in range(20):
        if context == "env":
            block = fk.make("private-key", rng, 0)
            others = [fk.make("github-token", rng) for _ in range(10)]
        else:  # netrc index 0: the three-line form (machine, login, password)
            block = fk.make("netrc", rng, 0)
            others = [fk.make("netrc", rng, 1) for _ in range(6)]
        plants = [rp.Plant(f, context, f"r/{context}") for f in (block, *others)]
        rp.name_keys(plants)
        lines = rp.new_file(context, plants, random.Random(seed), "").splitlines()
        if context == "env":
            want = block.text.splitlines()
        else:
            want = [f"machine {block.meta['host']}", f"  login {block.meta['login']}", block.text]
        end = next(i for i, line in enumerate(lines) if want[-1] in line)
        got = lines[end + 1 - len(want) : end + 1]
        assert [w in line for w, line in zip(want, got, strict=True)] == [True] * len(want), seed


def test_the_same_seed_plants_the_same_tree(repos: dict[str, Path], tmp_path: Path) -> None:
    first = rp.build(repos, tmp_path / "a", 5, extra_per_repo=0)
    second = rp.build(repos, tmp_path / "b", 5, extra_per_repo=0)
    assert [(p.path, p.first, p.last, p.fake.text) for p in first] == [
        (p.path, p.first, p.last, p.fake.text) for p in second
    ]
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert files and all(
        (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes() for f in files
    )


def test_a_broken_plant_is_reported(repos: dict[str, Path], tmp_path: Path) -> None:
    plants = rp.build(repos, tmp_path, 27, extra_per_repo=0)
    target = next(p for p in plants if p.path.endswith("pyproject.toml"))
    path = tmp_path / "planted" / target.path
    path.write_text(path.read_text(encoding="utf-8") + "broken = \n", encoding="utf-8")
    assert rp.check_syntax(tmp_path / "planted", plants) == [f"{target.path}: TOMLDecodeError"]


def test_the_bench_skips_and_says_why_without_its_tools(tmp_path: Path) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("WORKGROUP_BENCH_REPOS", "DETECT_SECRETS_BIN", "SECRETLINT_BIN")
    }
    done = subprocess.run(
        [sys.executable, str(BENCH / "bench_privacy_recall.py")],
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 0 and done.stdout.startswith("skipped: WORKGROUP_BENCH_REPOS")
    env["WORKGROUP_BENCH_REPOS"] = os.pathsep.join(str(tmp_path / n) for n in "abc")
    done = subprocess.run(
        [sys.executable, str(BENCH / "bench_privacy_recall.py")],
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 0 and done.stdout.startswith("skipped: not a git clone")
