"""Recall: assignments whose name only ends in a secret word (issue 27), in code, YAML, JSON,
TOML and .env, with the value filters of every assignment (placeholders, environment reads,
identifiers) and look-alikes whose name ends in a word that is not a secret.

Values are synthetic (random characters from a fixed seed). A positive must be reported as a
``password-assignment`` with exactly the planted value as its span; a look-alike must produce
no finding at all.
"""

from __future__ import annotations

import base64
import random
import string

import pytest
from support.privacy_cases import BUDGET_S_PER_MB, found, repeated, scan_seconds

R = random.Random(2703)
B62 = string.ascii_letters + string.digits


def rnd(n: int, alphabet: str = B62) -> str:
    while True:
        value = "".join(R.choice(alphabet) for _ in range(n))
        if alphabet != B62 or (any(c.isdigit() for c in value) and any(c.isupper() for c in value)):
            return value


TOK, PW = rnd(32), rnd(14)
SHORT = rnd(20)  # under the high-entropy rule's 24 characters: only an assignment rule could report it
APP_KEY = "base64:" + base64.b64encode(R.randbytes(32)).decode()

# (format, text, secret)
POSITIVES: list[tuple[str, str, str]] = [
    ("python", f'gi_reo_gi_api = "{TOK}"', TOK),
    ("python", f'db_credential = "{TOK}"', TOK),
    ("json", f'{{"service_credential": "{TOK}"}}', TOK),
    ("python", f'aws_creds = "{TOK}"', TOK),
    ("yaml", f"smtp_pass: '{PW}'", PW),
    ("yaml", f'slackToken: "{TOK}"', TOK),
    ("js", f'const adminPassword = "{PW}";', PW),
    ("yaml", f"x-auth-key: {TOK}", TOK),
    ("env", f"MASTER_KEY={TOK}", TOK),
    ("toml", f'[client]\nclient_key = "{TOK}"', TOK),
    ("env", f"APP_KEY={APP_KEY}", APP_KEY),
    ("env", f"PGPASSWORD={PW}", PW),
    ("shell", f"SSHPASS={PW} sshpass -e ssh deploy@host", PW),
    ("yaml", f"Ocp-Apim-Subscription-Key: {TOK}", TOK),
    ("python", f'self.oauth_token = "{TOK}"', TOK),
    ("env", f"STRIPE_WEBHOOK_SECRET={TOK}", TOK),
]

LOOK_ALIKES: list[tuple[str, str]] = [
    ("url", 'base_api = "https://api.internal/v2"'),
    ("cursor", f'next_token = "{SHORT}"'),
    ("cursor", f'pageToken: "{SHORT}"'),
    ("limit", "max_tokens = 4096"),
    ("name", 'sort_key = "created_at"'),
    ("hash", 'cache_key = "5d41402abc4b2a76b9719d911017c592"'),  # a digest used as a key
    ("public", f'public_key = "{SHORT}"'),
    ("bare", f'api = "{SHORT}"'),  # "api" alone names an endpoint as often as a key
    ("bare", f'"key": "{SHORT}"'),
    ("placeholder", 'gi_reo_gi_api = "${API}"'),
    ("placeholder", 'credentials: "<credentials>"'),
    ("placeholder", 'db_credential = "changeme"'),
    ("placeholder", "smtp_pass: '*****'"),
    ("env-read", 'service_credential = os.environ["SERVICE_CREDENTIAL"]'),
    ("env-read", "$apiCredential = $env:API_CREDENTIAL"),
    ("identifier", "db_credential = load_credential(path)"),
    ("identifier", "slackToken: slackTokenFromVault"),
    ("path", 'credentials = "~/.aws/credentials"'),
    ("path", 'google_credentials = "secrets/service-account.json"'),
    ("glued", f'compass = "{PW}"'),
    ("glued", f'MYPASSWORD = "{PW}"'),  # upper case glued: only known client variables count
    ("hash", 'password_hash = "$2b$12$Kix8Pq0c9fQe1yZ3Lm7nUeJ0aBcDeFgHiJkLmNoPqRsTuVwXyZ012"'),
    ("word", 'first_pass = "warmup"'),
    ("slug", 'deploy_api = "api-v2-prod-eu-west-1"'),
]


@pytest.mark.parametrize(
    ("fmt", "text", "secret"), POSITIVES, ids=[f"{f}-{i}" for i, (f, _, _) in enumerate(POSITIVES)]
)
def test_a_key_suffix_assignment_is_found(fmt: str, text: str, secret: str) -> None:
    assert ("password-assignment", secret) in found(text), found(text)


@pytest.mark.parametrize(
    ("why", "text"), LOOK_ALIKES, ids=[f"{w}-{i}" for i, (w, _) in enumerate(LOOK_ALIKES)]
)
def test_a_key_suffix_look_alike_is_clean(why: str, text: str) -> None:
    assert found(text) == []


TRIGGERS = [
    "_api=",
    "a_api=a",
    "key=",
    "a_key: ",
    "credential=",
    "aCredential=x1",
    "aToken=",
    "PGPASSWORD=",
    "_pass=",
]


@pytest.mark.parametrize("unit", TRIGGERS)
def test_a_megabyte_of_one_trigger_scans_in_linear_time(unit: str) -> None:
    assert scan_seconds(repeated(unit)) < 2 * BUDGET_S_PER_MB, unit
