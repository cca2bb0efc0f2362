"""Recall: credentials on command lines (issue 27), each client with positives and look-alikes.

Values are synthetic (random characters from a fixed seed), built at import time so no literal
credential sits in this file. A positive must be reported by the named rule with exactly the
planted value as its span; a look-alike must produce no finding at all.
"""

from __future__ import annotations

import base64
import random
import string

import pytest
from support.privacy_cases import BUDGET_S_PER_MB, found, repeated, scan_seconds

from toolkit.privacy import Context
from toolkit.privacy.engine import scan_text_with_values

R = random.Random(2701)
B62 = string.ascii_letters + string.digits


def rnd(n: int, alphabet: str = B62) -> str:
    while True:
        value = "".join(R.choice(alphabet) for _ in range(n))
        if (
            any(c.isdigit() for c in value)
            and any(c.isupper() for c in value)
            and any(c.islower() for c in value)
        ):
            return value


PW, PW2, TOK = rnd(14), rnd(12), rnd(32)
AWS = rnd(40, B62 + "/+")
BASIC = base64.b64encode(f"ci:{PW}".encode()).decode()

# (rule, text, secret): the rule reports exactly the secret in the text (source context)
POSITIVES: list[tuple[str, str, str]] = [
    ("password-assignment", f"gpg --batch --yes --passphrase {PW} --decrypt backup.tar.gpg", PW),
    ("password-assignment", f"gpg --passphrase={PW} -c notes.txt", PW),
    ("command-line-password", f"mysql -uroot -p{PW} shop", PW),
    ("command-line-password", f"mysql -u root -p'{PW}' shop", PW),
    ("command-line-password", f"mysqldump -u backup -p {PW} shop > shop.sql", PW),  # random-looking
    ("password-assignment", f"mysql --password={PW} shop", PW),
    ("password-assignment", f"PGPASSWORD={PW} psql -h db.internal -U app", PW),
    ("url-credentials", f"psql postgresql://app:{PW}@db.internal:5432/app", PW),
    ("basic-auth-credentials", f"curl -u deploy:{PW} https://ci.internal/api", PW),
    ("basic-auth-credentials", f"curl --user=deploy:{PW} https://ci.internal/api", PW),
    ("bearer-token", f"curl --oauth2-bearer {TOK} https://api.internal/v1", TOK),
    ("bearer-token", f"curl -H 'Authorization: Bearer {TOK}' https://api.internal/v1", TOK),
    ("password-assignment", f"wget --http-password={PW} https://files.internal/a.tgz", PW),
    ("password-assignment", f"wget --ftp-user=ci --ftp-password {PW} ftp://files.internal/a.tgz", PW),
    (
        "command-line-password",
        f"$c = New-Object PSCredential('svc', (ConvertTo-SecureString '{PW}' -AsPlainText -Force))",
        PW,
    ),
    ("command-line-password", f"$s = ConvertTo-SecureString -String {PW} -AsPlainText -Force", PW),
    ("command-line-password", f"Connect-Thing -Username svc -Password '{PW}'", PW),
    ("command-line-password", f"Publish-Module -Name Tools -NuGetApiKey {TOK}", TOK),
    ("command-line-password", f"keytool -importkeystore -srcstorepass {PW} -deststorepass {PW2}", PW),
    ("command-line-password", f"openssl pkcs12 -export -in c.pem -passout pass:{PW}", PW),
    ("command-line-password", f"docker login -u ci -p {PW} registry.internal", PW),
    ("password-assignment", f"docker login --username ci --password {PW} registry.internal", PW),
    ("command-line-password", f"echo '{TOK}' | docker login registry.internal -u ci --password-stdin", TOK),
    ("command-line-password", f"az login --service-principal -u http://ci -p {PW} --tenant t1", PW),
    ("password-assignment", f"az ad sp credential reset --id app --client-secret {PW}", PW),
    ("password-assignment", f"az storage blob upload --account-name a --account-key {TOK}", TOK),
    ("aws-secret-access-key", f"aws configure set aws_secret_access_key {AWS}", AWS),
    ("password-assignment", f"gh auth login --with-token <<< {TOK}", TOK),
    ("password-assignment", f"docker login -u ci --password-stdin <<< '{PW}' registry.internal", PW),
    ("password-assignment", f"GH_TOKEN={TOK} gh release create v1", TOK),
    ("command-line-password", f"npm config set //npm.internal/:_authToken {TOK}", TOK),
    ("url-credentials", f"pip install --index-url https://ci:{PW}@pypi.internal/simple app", PW),
    ("url-credentials", f"git clone https://ci:{PW}@git.internal/team/app.git", PW),
    ("authorization-header", f"git -c http.extraheader='Authorization: Basic {BASIC}' clone x", BASIC),
    ("password-assignment", f"tool --some-secret-token {TOK}", TOK),
    ("password-assignment", f"deploy --verbose --db-password {PW} --dry-run", PW),
    ("password-assignment", f"run --api-key={TOK}", TOK),
    ("command-line-password", f"sshpass -p '{PW}' ssh deploy@10.0.0.5", PW),
    ("basic-auth-credentials", f"curl -u ':{PW}' https://es.internal:9200", PW),  # an empty user
    ("command-line-password", f"Connect-Thing -Password:{PW}", PW),
    ("command-line-password", f"Connect-AzAccount -AccessToken {TOK}", TOK),
    ("command-line-password", f"yarn config set npmAuthToken {TOK}", TOK),
    ("command-line-password", f"helm registry login r.internal -u ci -p {PW}", PW),
    ("command-line-password", f"podman login -p={PW} r.internal", PW),
    ("command-line-password", f"mariadb -u root -p{PW}", PW),
]

# (client, text): nothing may be reported
LOOK_ALIKES: list[tuple[str, str]] = [
    ("gpg", "gpg --passphrase-fd 0 --decrypt f.gpg"),  # where the passphrase comes from
    ("gpg", "gpg --passphrase-file ~/.gnupg/pass.txt -d f.gpg"),
    ("gpg", 'gpg --batch --passphrase "$GPG_PASSPHRASE" -d f.gpg'),
    ("mysql", "mysql -u root -p shop"),  # prompts; "shop" is the database
    ("mysql", "mysql -u root -p app_db2"),
    ("mysql", "mysql -u root -p${MYSQL_PASSWORD} shop"),
    ("mysql", "mysql -u root --password"),  # the flag without a value
    ("mysql", "mkdir -p build/out && cp -p a b"),
    ("psql", "PGPASSWORD=$DB_PASSWORD psql -h db.internal"),
    ("psql", "psql postgresql://app:<password>@db.internal/app"),
    ("curl", "curl -u user:password https://x.internal"),
    ("curl", 'curl -u "$USER:$TOKEN" https://x.internal'),
    ("curl", "curl -u admin https://x.internal"),
    ("curl", "curl --user neo4j:[PASSWORD] http://x.internal:7474/"),
    ("curl", "curl --oauth2-bearer $TOKEN https://x.internal"),
    ("curl", "curl -H 'Authorization: Bearer ${API_TOKEN}' https://x.internal"),
    ("wget", "wget --http-password=changeme https://x.internal/f"),
    ("powershell", "ConvertTo-SecureString $env:SVC_PASSWORD -AsPlainText -Force"),
    ("powershell", "ConvertTo-SecureString '<password>' -AsPlainText -Force"),
    ("powershell", "$s = ConvertTo-SecureString -String $encrypted"),  # no -AsPlainText: not the password
    ("powershell", "Connect-Thing -Password $cred.Password"),
    ("powershell", "Connect-Thing -Password (Read-Host -AsSecureString)"),
    ("powershell", "Publish-Module -Name Tools -NuGetApiKey $env:NUGET_API_KEY"),
    ("openssl", "openssl pkcs12 -export -passout env:P12_PASS -passin file:pass.txt"),
    ("keytool", "keytool -list -keystore cacerts -storepass changeit"),  # Java's documented default
    ("docker", "docker login -u ci -p $REGISTRY_PASSWORD registry.internal"),
    ("docker", "docker login --password-stdin < token.txt"),
    ("docker", "echo $TOKEN | docker login -u ci --password-stdin registry.internal"),
    ("docker", "docker run -p 8080:80 nginx"),
    ("az", "az login -u ci@corp.internal -p ********"),
    ("gh", "gh auth login --with-token < token.txt"),
    ("gh", "gh auth login --with-token <<< $GH_TOKEN"),
    ("npm", "npm config set //npm.internal/:_authToken ${NPM_TOKEN}"),
    ("npm", "npm config set registry https://npm.internal/"),
    ("pip", "pip install --index-url https://pypi.internal/simple app"),
    ("git", "git clone https://github.com/org/app.git"),
    ("flags", "generate --max-tokens 4096 --temperature 0.2"),
    ("flags", "tool --token-file ./token.txt --password-stdin"),
    ("flags", "tool --no-password --force"),
    ("flags", "kubectl get secret --secret-name prod-db"),
    ("flags", "tool --api-key <your-api-key>"),
    ("flags", "tool --password-hash '$2b$12$Kix8Pq0c9fQe1yZ3Lm7nUeJ0aBcDeFgHiJkLmNoPqRsTuVwXyZ012'"),
    ("flags", "tool --reset-password alice"),
]


@pytest.mark.parametrize(
    ("rule", "text", "secret"), POSITIVES, ids=[f"{r}-{i}" for i, (r, _, _) in enumerate(POSITIVES)]
)
def test_a_credential_on_a_command_line_is_found(rule: str, text: str, secret: str) -> None:
    assert (rule, secret) in found(text), found(text)


@pytest.mark.parametrize(
    ("client", "text"), LOOK_ALIKES, ids=[f"{c}-{i}" for i, (c, _) in enumerate(LOOK_ALIKES)]
)
def test_a_command_line_look_alike_is_clean(client: str, text: str) -> None:
    assert found(text) == []


def test_a_flag_that_takes_no_value_does_not_hide_the_next_one() -> None:
    # "--batch" is followed by "--passphrase": the long-flag rule reads values by lookahead
    text = f"gpg --batch --passphrase {PW} --yes -d f.gpg"
    assert [v for _, v in scan_text_with_values(text, Context.SOURCE)] == [PW]


def test_a_client_named_on_another_line_does_not_make_a_dash_p_a_password() -> None:
    text = f"mysql -u root shop\nmkdir -p{PW}\n"
    assert scan_text_with_values(text, Context.SOURCE) == []


TRIGGERS = [
    "--a ",
    "--a-password ",
    "--passphrase=",
    "-Password ",
    "-storepass ",
    "-pass pass:",
    "ConvertTo-SecureString ",
    "mysql -p",
    "mysql -p ",
    "docker login -p ",
    "echo x | ",
    "--password-stdin <<<",
    "<<< ",
    "npm config set ",
    "-u a:",
    "a-",
    "-",
]


@pytest.mark.parametrize("unit", TRIGGERS)
def test_a_megabyte_of_one_trigger_scans_in_linear_time(unit: str) -> None:
    assert scan_seconds(repeated(unit)) < 2 * BUDGET_S_PER_MB, unit
