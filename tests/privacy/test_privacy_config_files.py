"""Credentials in configuration files (issue 27): Kubernetes Secret manifests, ``.npmrc``,
``.pypirc``, ``.netrc`` and Docker ``config.json`` auths, each with positives (in the file itself
and quoted in other text) and look-alikes that must stay quiet. Values are synthetic, drawn from
a fixed seed at import time, so no literal credential sits in this file.
"""

from __future__ import annotations

import base64
import json
import random
import string
import subprocess
import sys
from pathlib import Path

import pytest
from support.privacy_cases import BUDGET_S_PER_MB, repeated, scan_seconds

from toolkit.privacy import Context, scan_text
from toolkit.privacy.files import scan_paths

R = random.Random(27)
B62 = string.ascii_letters + string.digits


def rnd(n: int, alphabet: str = B62) -> str:
    while True:
        value = "".join(R.choice(alphabet) for _ in range(n))
        if alphabet != B62 or (any(c.isdigit() for c in value) and any(c.isupper() for c in value)):
            return value


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


PW = rnd(18)  # a password
PW2 = rnd(14)
TOKEN = rnd(36)
UUID_TOKEN = f"{rnd(8, '0123456789abcdef')}-{rnd(4, '0123456789abcdef')}-4{rnd(3, '0123456789abcdef')}-a{rnd(3, '0123456789abcdef')}-{rnd(12, '0123456789abcdef')}"


def rules(text: str, context: Context = Context.SOURCE) -> list[str]:
    return [f.rule for f in scan_text(text, context)]


def spans(text: str, rule: str) -> list[str]:
    """The reported values of ``rule`` (line/column back to the text)."""
    lines = text.split("\n")
    return [lines[f.line - 1][f.start : f.end] for f in scan_text(text, Context.SOURCE) if f.rule == rule]


K8S_SECRET = f"""apiVersion: v1
kind: Secret
metadata:
  name: db-credentials
  namespace: prod
type: Opaque
data:
  username: {b64("app_user")}
  password: {b64(PW)}
  # a comment between entries
  api-key: "{b64(TOKEN)}"
stringData:
  DATABASE_PASSWORD: {PW2}
  config.yaml: |
    retries: 3
    region: eu-west-1
  placeholder: "{{{{ .Values.password }}}}"
"""

K8S_CONFIGMAP = f"""apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  password: {b64(PW)}
  token: {PW2}
"""

K8S_JSON = json.dumps(
    {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "x"},
        "data": {"username": b64("admin"), "token": b64(TOKEN)},
        "stringData": {"password": PW2},
    },
    indent=2,
)


def test_kubernetes_secret_data_is_decoded_and_string_data_reported() -> None:
    found = spans(K8S_SECRET, "kubernetes-secret")
    assert found == [b64(PW), f'"{b64(TOKEN)}"', PW2]  # not the username, the block value, the template


def test_kubernetes_secret_in_json_and_in_a_multi_document_file() -> None:
    assert spans(K8S_JSON, "kubernetes-secret") == [b64(TOKEN), PW2]
    both = K8S_CONFIGMAP + "---\n" + K8S_SECRET
    assert len(spans(both, "kubernetes-secret")) == 3  # the ConfigMap's entries are not a Secret's


def test_kubernetes_lookalikes_stay_quiet() -> None:
    assert "kubernetes-secret" not in rules(K8S_CONFIGMAP)  # a ConfigMap is configuration
    placeholders = (
        "kind: Secret\ndata:\n"
        f"  password: {b64('changeme')}\n"  # an example value, encoded
        f"  tls.crt: {b64('-----BEGIN CERTIFICATE-----' + rnd(40))}\n"  # a public certificate
        "  token: {{ .Values.token | b64enc }}\n"  # a Helm template
        f"  username: {b64('deploy_user')}\n"  # who, not the secret
        "  secret: notbase64!!\n"  # not base64: not what a Secret's data holds
    )
    assert "kubernetes-secret" not in rules(placeholders)
    sealed = f"kind: SealedSecret\nspec:\n  encryptedData:\n    password: {b64(PW)}\n"
    assert "kubernetes-secret" not in rules(sealed)


def test_kubernetes_secret_scoped_by_batch_separator(tmp_path: Path) -> None:
    # files scanned together in one batch: a ConfigMap file after a Secret file is not a Secret
    (tmp_path / "a-secret.yaml").write_text("kind: Secret\nmetadata:\n  name: s\n")
    (tmp_path / "b-configmap.yaml").write_text(f"data:\n  password: {b64(PW)}\n")
    report = scan_paths([tmp_path], tmp_path)
    assert "kubernetes-secret" not in [f.finding.rule for f in report.findings]
    (tmp_path / "c-secret.yaml").write_text(K8S_SECRET)
    report = scan_paths([tmp_path], tmp_path)
    assert {f.path for f in report.findings if f.finding.rule == "kubernetes-secret"} == {"c-secret.yaml"}


NPMRC = (
    "registry=https://registry.npmjs.org/\n"
    f"//npm.pkg.github.com/:_authToken={UUID_TOKEN}\n"
    f"//registry.example.org/:_auth={b64('ci-bot:' + PW)}\n"
    f"_password={b64(PW2)}\n"
    "always-auth=true\n"
)


def test_npmrc_tokens_auth_and_password() -> None:
    assert spans(NPMRC, "npmrc-auth") == [UUID_TOKEN, b64("ci-bot:" + PW), b64(PW2)]
    quoted = f"Put this in ~/.npmrc:\n\n    //registry.npmjs.org/:_authToken={rnd(40)}\n"
    assert rules(quoted) == ["npmrc-auth"]


def test_npmrc_lookalikes_stay_quiet() -> None:
    quiet = (
        "//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n"  # an environment read
        "_authToken=NPM_TOKEN\n"  # the name of where it lives
        f"_auth={b64('user:password')}\n"  # a documented stand-in
        f"_auth={b64('nocolonhere')}\n"  # not user:password
        "    self._auth = auth_handler\n"  # code, not a line of an .npmrc
        f"    self._password = {PW!r}\n"  # code (the assignment rule's business, not this one's)
        "_password=notb64!\n"
    )
    assert "npmrc-auth" not in rules(quiet)


PYPIRC = f"""[distutils]
index-servers =
    pypi
    private

[pypi]
username = __token__
password = {PW}

[private]
repository = https://pypi.internal.test/simple/
username = ci
password = correcthorsebatterystaple
"""


def test_pypirc_passwords_under_index_sections() -> None:
    # a bare word is a password here (the generic assignment rule wants digits or symbols)
    assert spans(PYPIRC, "pypirc-password") == [PW, "correcthorsebatterystaple"]


def test_pypirc_lookalikes_stay_quiet() -> None:
    other = "[database]\nhost = db\npassword = correcthorsebatterystaple\n"  # not an index section
    assert "pypirc-password" not in rules(other)
    templated = (
        "[pypi]\nusername = __token__\npassword = %(PYPI_TOKEN)s\n[testpypi]\npassword = <your token>\n"
    )
    assert rules(templated) == []
    assert "pypirc-password" not in rules(f"[pypi]\n    x = password = {PW}\n")  # not a key of its own


NETRC = f"machine api.internal.test login deploy password {PW}\n\nmachine git.internal.test\n  login ci\n  password {PW2}\n"


def test_netrc_entries_on_one_line_and_across_lines() -> None:
    assert spans(NETRC, "netrc-credentials") == [PW, PW2]
    default = f"default login anonymous password {PW2}\n"
    assert spans(default, "netrc-credentials") == [PW2]
    readme = f"Create `~/.netrc` with:\n\n```\nmachine ftp.internal.test password {PW} login bob\n```\n"
    assert spans(readme, "netrc-credentials") == [PW]


def test_netrc_lookalikes_stay_quiet() -> None:
    quiet = (
        "The default password policy is strict.\n"  # prose: no login
        "machine learning password reset flows\n"  # prose
        "machine example.com login USERNAME password PASSWORD\n"  # the label words
        "machine example.com login me password $NETRC_PASSWORD\n"  # an environment read
        "machine example.com login me password <token>\n"
    )
    assert "netrc-credentials" not in rules(quiet)


DOCKER = json.dumps(
    {
        "auths": {
            "registry.internal.test": {"auth": b64("robot$ci:" + PW)},
            "ghcr.io": {"identitytoken": TOKEN},
        },
        "credsStore": "desktop",
    },
    indent=2,
)


def test_docker_config_auths_are_decoded() -> None:
    assert spans(DOCKER, "docker-config-auth") == [b64("robot$ci:" + PW), TOKEN]
    escaped = 'DOCKER_CONFIG_JSON: "{\\"auths\\":{\\"r.test\\":{\\"auth\\":\\"' + b64("u:" + PW2) + '\\"}}}"'
    assert spans(escaped, "docker-config-auth") == [b64("u:" + PW2)]


def test_docker_lookalikes_stay_quiet() -> None:
    quiet = json.dumps(
        {
            "auths": {
                "a.test": {"auth": b64("username:password")},  # the documented stand-in
                "b.test": {"auth": b64("no-colon-at-all")},
                "c.test": {"auth": ""},
            }
        }
    )
    assert "docker-config-auth" not in rules(quiet)
    not_docker = json.dumps({"auth": b64("user:" + PW)})  # an "auth" field of something else
    assert "docker-config-auth" not in rules(not_docker)


def test_families_in_workflow_artifacts_too() -> None:
    for text, rule in (
        (K8S_SECRET, "kubernetes-secret"),
        (NPMRC, "npmrc-auth"),
        (NETRC, "netrc-credentials"),
    ):
        assert rule in rules(text, Context.GENERIC)


TRIGGERS = [
    "kind: Secret\n",
    "kind: Secret\ndata:\n",
    "Secret",
    "  a: " + b64(PW) + "\n",
    "_authToken=",
    "//r/:_auth=",
    "_password=",
    "[pypi]\npassword = ",
    "password = x\n",
    "machine ",
    "machine h login u ",
    "default login u password ",
    '"auths": {"auth": "',
    '"auth":"dXNlcjpwYXNz",',
]


@pytest.mark.parametrize("unit", TRIGGERS)
def test_each_trigger_repeated_scans_in_linear_time(unit: str) -> None:
    assert scan_seconds(repeated(unit), (Context.GENERIC,)) < BUDGET_S_PER_MB, unit


def test_the_cli_reports_a_committed_netrc(tmp_path: Path) -> None:
    # end to end: a real repository, the file staged, the scan as users run it
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".netrc").write_text(NETRC)
    subprocess.run(["git", "-C", str(tmp_path), "add", ".netrc"], check=True)
    done = subprocess.run(
        [sys.executable, "-m", "toolkit.entry", "privacy", "scan", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout.count("netrc-credentials") == 2
    assert PW not in done.stdout + done.stderr and PW2 not in done.stdout + done.stderr


# The tables the corpus coverage test reads (rule, text, reported value) / (rule, look-alike):
# one row per family at least, in the shape of tests/privacy/test_privacy_auth_headers.py.
POSITIVES: list[tuple[str, str, str]] = [
    ("kubernetes-secret", K8S_SECRET, b64(PW)),
    ("kubernetes-secret", K8S_JSON, b64(TOKEN)),
    ("npmrc-auth", NPMRC, UUID_TOKEN),
    ("npmrc-auth", f"//registry.npmjs.org/:_auth={b64('bot:' + PW2)}\n", b64("bot:" + PW2)),
    ("pypirc-password", PYPIRC, PW),
    ("netrc-credentials", NETRC, PW),
    ("netrc-credentials", f"_netrc: machine h.test login me password {PW2}", PW2),
    ("docker-config-auth", DOCKER, b64("robot$ci:" + PW)),
]
LOOK_ALIKES: list[tuple[str, str]] = [
    ("kubernetes-secret", K8S_CONFIGMAP),
    ("kubernetes-secret", "kind: Secret\ndata:\n  password: {{ .Values.password | b64enc }}\n"),
    ("npmrc-auth", "//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n"),
    ("npmrc-auth", "    self._auth = auth\n"),
    ("pypirc-password", "[database]\npassword = correcthorsebatterystaple\n"),
    ("pypirc-password", "[pypi]\npassword = <your token>\n"),
    ("netrc-credentials", "The default password policy is strict; machine learning password reset.\n"),
    ("netrc-credentials", "machine example.com login me password $NETRC_PASSWORD\n"),
    ("docker-config-auth", json.dumps({"auths": {"a.test": {"auth": b64("username:password")}}})),
    ("docker-config-auth", json.dumps({"auth": b64("user:" + PW)})),
]


@pytest.mark.parametrize("rule,text,value", POSITIVES, ids=[r for r, _, _ in POSITIVES])
def test_positive_table(rule: str, text: str, value: str) -> None:
    assert value in [v.strip('"') for v in spans(text, rule)]


@pytest.mark.parametrize("rule,text", LOOK_ALIKES, ids=[r for r, _ in LOOK_ALIKES])
def test_look_alike_table(rule: str, text: str) -> None:
    assert rule not in rules(text)
