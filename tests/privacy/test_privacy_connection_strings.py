"""Recall: connection strings of the common databases and brokers (issue 27), with look-alikes.

Passwords are synthetic (random characters from a fixed seed). A positive must be reported by
the named rule with exactly the planted password as its span; a look-alike must produce no
finding at all.
"""

from __future__ import annotations

import base64
import random
import string

import pytest
from support.privacy_cases import BUDGET_S_PER_MB, found, repeated, scan_seconds

R = random.Random(2704)
B62 = string.ascii_letters + string.digits


def rnd(n: int) -> str:
    while True:
        value = "".join(R.choice(B62) for _ in range(n))
        if (
            any(c.isdigit() for c in value)
            and any(c.isupper() for c in value)
            and any(c.islower() for c in value)
        ):
            return value


PW = rnd(16)
ACCOUNT_KEY = base64.b64encode(R.randbytes(64)).decode()  # 88 characters, as Azure Storage's
SAS_KEY = base64.b64encode(R.randbytes(32)).decode()

# (rule, text, secret)
POSITIVES: list[tuple[str, str, str]] = [
    ("url-credentials", f"postgres://app:{PW}@db.internal:5432/app", PW),
    ("url-credentials", f"postgresql://app:{PW}@db.internal/app?sslmode=require", PW),
    ("url-credentials", f"mysql://app:{PW}@db.internal:3306/app", PW),
    ("url-credentials", f"mongodb://app:{PW}@m1.internal:27017,m2.internal:27017/app?replicaSet=rs0", PW),
    ("url-credentials", f"mongodb+srv://app:{PW}@cluster0.abcde.mongodb.net/app", PW),
    ("url-credentials", f"redis://:{PW}@cache.internal:6379/0", PW),  # a password alone
    ("url-credentials", f"rediss://default:{PW}@cache.internal:6380", PW),
    ("url-credentials", f"amqp://app:{PW}@mq.internal:5672/vhost", PW),
    ("url-credentials", f"amqps://app:{PW}@mq.internal/vhost", PW),
    ("url-credentials", f"mssql://sa:{PW}@sql.internal:1433/app", PW),
    ("url-credentials", f"jdbc:mysql://app:{PW}@db.internal:3306/app", PW),
    ("password-assignment", f"jdbc:postgresql://db.internal:5432/app?user=app&password={PW}", PW),
    (
        "password-assignment",
        f"Server=tcp:sql.internal,1433;Database=app;User ID=sa;Password={PW};Encrypt=True;",
        PW,
    ),
    ("password-assignment", f"Driver={{ODBC Driver 18 for SQL Server}};Server=sql;UID=sa;PWD={PW};", PW),
    ("connection-string", f"jdbc:oracle:thin:scott/{PW}@db.internal:1521:ORCL", PW),
    ("connection-string", f"sqlplus -s system/{PW}@XE", PW),
    (
        "azure-connection-string",
        f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={ACCOUNT_KEY};EndpointSuffix=core.windows.net",
        ACCOUNT_KEY,
    ),
    (
        "azure-connection-string",
        f"Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey={SAS_KEY}",
        SAS_KEY,
    ),
]

# (near, text): the rule a look-alike is nearest to; nothing may be reported
LOOK_ALIKES: list[tuple[str, str]] = [
    ("url-credentials", "postgres://user:password@localhost/db"),
    ("url-credentials", "postgresql://app:${DB_PASSWORD}@db.internal/app"),
    ("url-credentials", "mongodb+srv://app:<password>@cluster0.abcde.mongodb.net/app"),
    ("url-credentials", "redis://localhost:6379/0"),
    ("url-credentials", "redis://:changeme@cache.internal:6379"),
    ("url-credentials", "redis://:pw@cache.internal:6379"),  # too short to stand alone
    ("url-credentials", "mysql://root:*****@db.internal/app"),
    ("password-assignment", "Server=db;Database=app;User Id=sa;Password=<password>;"),
    ("password-assignment", "Server=db;Database=app;Integrated Security=true;"),
    ("connection-string", "jdbc:oracle:thin:@db.internal:1521:ORCL"),  # no credentials in the URL
    ("connection-string", "jdbc:oracle:thin:scott/tiger@db.internal:1521:ORCL"),  # the classic example
    ("connection-string", "sqlplus / as sysdba"),
    ("connection-string", "sqlplus system/$ORACLE_PASSWORD@XE"),
    ("password-assignment", "Driver={ODBC Driver 18};Server=sql;UID=sa;PWD=%DB_PWD%;"),
    (
        "azure-connection-string",
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=<your-account-key>",
    ),
    ("azure-connection-string", "AccountKey=" + "x" * 88),
]


@pytest.mark.parametrize(
    ("rule", "text", "secret"), POSITIVES, ids=[f"{r}-{i}" for i, (r, _, _) in enumerate(POSITIVES)]
)
def test_a_connection_string_password_is_found(rule: str, text: str, secret: str) -> None:
    assert (rule, secret) in found(text), found(text)


@pytest.mark.parametrize(
    ("near", "text"), LOOK_ALIKES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(LOOK_ALIKES)]
)
def test_a_connection_string_look_alike_is_clean(near: str, text: str) -> None:
    assert found(text) == []


TRIGGERS = ["jdbc:oracle:thin:a/", "sqlplus a/b", "sqlplus -s ", "redis://:", "://:a@", "Password=a;"]


@pytest.mark.parametrize("unit", TRIGGERS)
def test_a_megabyte_of_one_trigger_scans_in_linear_time(unit: str) -> None:
    assert scan_seconds(repeated(unit)) < 2 * BUDGET_S_PER_MB, unit
