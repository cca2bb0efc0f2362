"""Recall: every credential family and password shape of issue 13, each with positives and
look-alikes. Values are synthetic (random characters from a fixed seed, shaped like the real
format), built at import time so no literal key sits in this file.
"""

from __future__ import annotations

import base64
import random
import string

import pytest

from toolkit.privacy import Context, scan_text
from toolkit.privacy.providers import base62_crc32, checksum_ok

R = random.Random(13)
B62 = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
UPPER_DIGITS = string.ascii_uppercase + string.digits
AGE = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


def rnd(n: int, alphabet: str = B62) -> str:
    while True:
        value = "".join(R.choice(alphabet) for _ in range(n))
        if alphabet != B62 or (any(c.isdigit() for c in value) and any(c.isupper() for c in value)):
            return value


def checksummed(prefix: str) -> str:
    body = rnd(30)
    return prefix + body + base62_crc32(body)


def discord_bot() -> str:
    bot_id = base64.urlsafe_b64encode(b"812345678901234567").decode().rstrip("=")
    return f"{bot_id}.{rnd(6)}.{rnd(30, B62 + '_-')}"


GH = checksummed("ghp_")
GH_BAD = GH[:-6] + ("000000" if not GH.endswith("000000") else "111111")
NPM = checksummed("npm_")

# (rule, text): the rule must fire on the text in source context
POSITIVES: list[tuple[str, str]] = [
    ("github-token", f'token = "{GH}"'),  # checksum-valid classic token
    ("github-token", f"GH_TOKEN={checksummed('ghs_')}"),
    ("github-token", "github_pat_" + rnd(22) + "_" + rnd(59)),  # fine-grained: no checksum
    ("npm-token", f"//registry.npmjs.org/:_authToken={NPM}"),
    ("huggingface-token", "HF_TOKEN=hf_" + rnd(34, string.ascii_letters)),  # letters only
    ("twilio-api-key", "TWILIO_KEY=SK" + rnd(32, HEX)),
    ("sendgrid-api-key", f"SG.{rnd(22)}.{rnd(43)}"),
    ("mailgun-api-key", "api: key-" + rnd(32, HEX)),
    ("new-relic-key", "NRAK-" + rnd(27, UPPER_DIGITS)),
    ("new-relic-key", "license NRJS-" + rnd(19, HEX)),
    ("supabase-token", "sbp_" + rnd(40, HEX)),
    ("supabase-token", "key sb_secret_" + rnd(32)),
    ("planetscale-token", "pscale_tkn_" + rnd(43)),
    ("planetscale-token", "pscale_pw_" + rnd(43)),
    ("doppler-token", "DOPPLER_TOKEN=dp.st." + rnd(43)),
    ("databricks-token", "DATABRICKS_TOKEN=dapi" + rnd(32, HEX)),
    ("discord-bot-token", f"bot.run('{discord_bot()}')"),
    (
        "discord-webhook",
        "https://discord.com/api/webhooks/" + rnd(19, "0123456789") + "/" + rnd(68, B62 + "_-"),
    ),
    ("dropbox-token", "sl." + rnd(138, B62 + "_-")),
    ("dropbox-token", rnd(11, string.ascii_lowercase + string.digits) + "AAAAAAAAAA" + rnd(43)),
    ("digitalocean-token", "dop_v1_" + rnd(64, HEX)),
    ("atlassian-api-token", "ATATT3" + rnd(186, B62 + "_-=")),
    ("grafana-token", "glc_" + rnd(80)),
    ("grafana-token", "glsa_" + rnd(32) + "_" + rnd(8, HEX)),
    ("heroku-api-key", "HRKU-AA" + rnd(58, B62 + "_-")),
    ("age-secret-key", "AGE-SECRET-KEY-1" + rnd(58, AGE)),
    ("1password-token", "ops_eyJ" + rnd(300, B62 + "+/")),
    ("1password-secret-key", "A3-" + "-".join(rnd(n, UPPER_DIGITS) for n in (6, 6, 5, 5, 5, 5))),
    ("postman-api-key", f"PMAK-{rnd(24, HEX)}-{rnd(34, HEX)}"),
    ("sonarqube-token", "SONAR_TOKEN=sqp_" + rnd(40, HEX)),
    ("vault-token", "VAULT_TOKEN=hvs." + rnd(95, B62 + "_-")),
    ("terraform-cloud-token", f"token = {rnd(14)}.atlasv1.{rnd(67)}"),
    ("alibaba-access-key-id", "LTAI" + rnd(20)),
    ("alibaba-access-key-id", "LTAIKNRGZQjAERkOxNTzwMqk"),  # no digit: both cases (gitleaks' format)
    (
        "akamai-token",
        f"client_token = akab-{rnd(16, string.ascii_lowercase + string.digits)}-"
        f"{rnd(16, string.ascii_lowercase + string.digits)}",
    ),
    # password shapes
    ("sql-password", "CREATE USER 'app'@'%' IDENTIFIED BY 'Wq7!zrT2pL';"),
    ("sql-password", 'ALTER USER app IDENTIFIED BY "kq3Zr8vB"'),
    ("sql-password", "CREATE USER reporting WITH PASSWORD 'n0tTh4tS3cret';"),
    ("sql-password", "ALTER ROLE admin PASSWORD 'Zx81spectrum'"),
    ("command-line-password", "mysql -u root -pT0pS3cr3tPw -h db.internal app"),
    ("command-line-password", "mysqldump --user=backup -pq9w8e7r6 shop > dump.sql"),
    ("command-line-password", "sshpass -p 'Rm42xQ!pl' ssh deploy@10.0.0.5"),
    ("password-assignment", "pg_dump --password kT9vLm2qXz -h db app"),
    ("password-assignment", "Server=db;Database=app;User Id=sa;Password=Yz7pQ2rW9k;"),
    ("credential-pair", "login: admin / password: bluebird"),
    ("credential-pair", "Use username=ops, pass=riverstone to sign in."),
    ("url-credentials", "postgresql://app:Kx82mPqz4R@db.internal:5432/app"),
    ("url-credentials", "postgres://app:p^ss|Kx82m@db.internal/app"),  # odd but accepted by URL parsers
    (
        "authorization-header",
        'headers = {"Authorization": "Basic YWRtaW46czNjcjN0UGFzcw=="}',
    ),  # admin:s3cr3tPass
    ("authorization-header", 'headers = {"Authorization": "Token notabase64token"}'),  # not Basic: a token
]

# (near, text): nothing may fire (in source context)
LOOK_ALIKES: list[tuple[str, str]] = [
    ("github-token", f'token = "{GH_BAD}"'),  # right shape, wrong checksum: made up
    ("github-token", "ghp_" + "x" * 36),
    ("npm-token", "npm_" + rnd(36)),  # no valid checksum
    ("huggingface-token", "hf_hub_download(repo_id, filename)"),
    ("twilio-api-key", "SKIP" + rnd(32, HEX)),
    ("sendgrid-api-key", "SG.setApiKey(process.env.SENDGRID_API_KEY)"),
    ("mailgun-api-key", "key-value-store-implementation-details"),
    ("new-relic-key", "NRAK-XXXXXXXXXXXXXXXXXXXXXXXXXXX"),
    ("supabase-token", "sbp_" + "0" * 40),
    ("planetscale-token", "pscale_tkn_<your-service-token>"),
    ("doppler-token", "dp.st.dev"),
    ("databricks-token", "dapi" + "0123456789abcdef" * 2),
    ("discord-bot-token", "Mod.objects.filter(name=value).first().values_list"),
    ("discord-webhook", "https://discord.com/api/webhooks/<id>/<token>"),
    ("dropbox-token", "sl.no"),
    ("digitalocean-token", "dop_v1_" + "f" * 64),
    ("atlassian-api-token", "ATATT3xFfGF0"),
    ("grafana-token", "glc_eyJvIjoiIn0="),
    ("heroku-api-key", "HRKU-AA" + "x" * 58),
    ("age-secret-key", "AGE-SECRET-KEY-1QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ"),
    ("1password-secret-key", "A3-XXXXXX-XXXXXX-XXXXX-XXXXX-XXXXX-XXXXX"),
    ("postman-api-key", "PMAK-<your-key>"),
    ("sonarqube-token", "sqp_" + "a" * 40),
    ("vault-token", "hvs.example"),
    ("alibaba-access-key-id", "LTAIxxxxxxxxxxxxxxxx"),
    ("alibaba-access-key-id", "LTAIABCDEFGHIJKLMNOP"),  # one case and no digit: a word, not a key
    (
        "terraform-cloud-token",
        "token = xxxxxxxxxxxxxx.atlasv1.xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    ),
    ("1password-token", "ops_eyJ...truncated"),
    ("github-token", f"tokens = ['{GH_BAD}']"),
    ("akamai-token", "akab-xxxxxxxxxxxxxxxx-xxxxxxxxxxxxxxxx"),
    ("sql-password", "CREATE USER app IDENTIFIED BY :password"),
    ("sql-password", "ALTER USER app IDENTIFIED BY '${DB_PASSWORD}'"),
    ("sql-password", "cursor.execute('SELECT password FROM users')"),
    ("sql-password", "UPDATE users SET password 'x' WHERE id = 1"),
    ("command-line-password", "mysql -u root -p app  # prompts for the password"),
    ("command-line-password", "mkdir -p build/output"),
    ("command-line-password", 'sshpass -p "$SSHPASS" ssh host'),
    ("password-assignment", "--password-file ~/.pgpass"),
    ("password-assignment", "--password=changeme"),
    ("credential-pair", "login: admin / password: <password>"),
    ("credential-pair", "user: alice, password: hunter2"),  # the classic example value
    ("url-credentials", "postgres://user:password@localhost/db"),
    # basic-not-credentials: fastapi's test of a malformed Basic header
    ("authorization-header", 'client.get("/users/me", headers={"Authorization": "Basic notabase64token"})'),
    # invalid-userinfo: WHATWG URL-parser test vectors (brackets, quotes, control characters)
    ("url-credentials", '"input": "http://&a:foo(b]c@d:2/",'),
    ("url-credentials", '"input": "https://user:pass[\\u007F@foo/bar",'),
    ("url-credentials", "http://user:pa\tss1word@host/"),
]

# Issue 13's examples of code that handles a secret without containing one.
REFERENCES = [
    'password = request.form["password"]',
    'secret_key = ConfigAttribute("SECRET_KEY")',
    "self._cv_token: contextvars.Token[t.Any] | None = None",
    "api_key: str = Field(default=None)",
    "token = os.environ.get('GITHUB_TOKEN')",
    "password = getpass.getpass()",
    "auth_token = self.session.headers['Authorization']",
    'SECRET_KEY = "dev"',
    "app.config['SECRET_KEY'] = 'super secret key'",
    'password = "changeme"',
    "Password: `secret2`",  # a stand-in, numbered
    '"hashed_password": "fakehashedsecret"',  # a hash field, and a fake value
    '"hashed_password": "$argon2id$v=19$m=65536,t=3,p=4$wagCPXjifgvUFBzq4hqe3w$CYaIb8sB+wtD+Vu/P4uod1+Qof8h3ZqPsc"',
    'pw_hash = "$2b$12$Kix8Pq0c9fQe1yZ3Lm7nUeJ0aBcDeFgHiJkLmNoPqRsTuVwXyZ012"',
]


@pytest.mark.parametrize(("rule", "text"), POSITIVES, ids=[f"{r}-{i}" for i, (r, _) in enumerate(POSITIVES)])
def test_family_positive_is_found(rule: str, text: str) -> None:
    found = scan_text(text, Context.SOURCE)
    assert rule in {f.rule for f in found}, [(f.rule, f.masked) for f in found]


@pytest.mark.parametrize(
    ("near", "text"), LOOK_ALIKES, ids=[f"{r}-{i}" for i, (r, _) in enumerate(LOOK_ALIKES)]
)
def test_family_look_alike_is_clean(near: str, text: str) -> None:
    assert [f.rule for f in scan_text(text, Context.SOURCE)] == []


@pytest.mark.parametrize("text", REFERENCES)
def test_code_that_handles_a_secret_is_clean(text: str) -> None:
    assert scan_text(text, Context.SOURCE) == []


def test_github_checksum_is_the_base62_crc32_of_the_random_part() -> None:
    assert checksum_ok(GH) and checksum_ok(NPM)
    assert not checksum_ok(GH_BAD)
    flipped = GH[:10] + ("A" if GH[10] != "A" else "B") + GH[11:]
    assert not checksum_ok(flipped)  # one changed character breaks it
    assert base62_crc32("") == "000000"  # CRC32 of nothing is 0, padded to six digits


def test_every_family_rule_has_positives_and_look_alikes() -> None:
    from toolkit.privacy.providers import PROVIDER_RULES
    from toolkit.privacy.providers_families import FAMILY_RULES

    # the families of issue 27 have their own positives and look-alikes (test_provider_families.py)
    families = (
        {r.id for r in PROVIDER_RULES}
        - {r.id for r in FAMILY_RULES}
        - {
            "anthropic-api-key",
            "openai-api-key",
            "stripe-secret-key",
            "google-api-key",
            "aws-access-key-id",
            "gitlab-token",
            "slack-token",
            "slack-webhook",
            "pypi-token",
        }
    )  # these older families are covered by the labelled corpus
    shapes = {"sql-password", "command-line-password", "credential-pair"}
    assert families | shapes <= {r for r, _ in POSITIVES}
    assert families | shapes <= {n for n, _ in LOOK_ALIKES}


def test_a_malformed_basic_header_is_still_refused_in_workflow_artifacts() -> None:
    # basic-not-credentials applies to source and docs only: a capsule or a handoff holds no
    # authorization value at all, real or made up
    text = 'headers={"Authorization": "Basic notabase64token"}'
    assert scan_text(text, Context.SOURCE) == []
    for context in (Context.GENERIC, Context.CAPSULE, Context.HANDOFF):
        assert [f.rule for f in scan_text(text, context)] == ["authorization-header"]
