"""Fake secrets for the recall benchmark: real formats, valid checksums, random bodies.

Nothing here is a secret: every value is drawn at run time from ``random.Random(seed)``, and
where a format carries a checksum or a signature it is computed from the random parts (GitHub
and npm CRC32 in base62, the age key's bech32, the PyPI macaroon's HMAC chain, a JWT's HS256
signature, HTTP Digest and AWS SigV4 and OAuth 1 signatures, RSA keys whose numbers multiply
out). ``FAMILIES`` maps each family name to its kind and generator; ``FORMATS`` holds one
full-match pattern per family, written apart from the generators, that the tests check every
fake against. Prefixes are split in the source (``"gh" + "p_"``) so this file holds no
scanner-shaped literal.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import random
import re
import string
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

ALNUM = string.ascii_letters + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
B62 = string.digits + string.ascii_uppercase + string.ascii_lowercase
URLSAFE = ALNUM + "-_"
BASE32 = string.ascii_uppercase + "234567"
PASSWORD_MARKS = "!&*+-.=?^_~@"
WORDS = ("summer", "dragon", "monkey", "falcon", "harbor", "orchid", "tiger", "winter", "pepper", "silver")
# where leaked credentials point: internal names, not documentation domains (example.com is the
# look-alike every scanner may filter)
HOSTS = ("db.internal", "10.0.3.17", "prod-db.acme-corp.net", "pg-main.svc.cluster.local")
BEGIN, END, PK = "-----BEGIN ", "-----END ", "PRIVATE KEY-----"


@dataclass(frozen=True)
class Fake:
    """One planted secret. ``kind``: ``value`` (assigned to ``name``), ``line`` (a command
    line), ``header`` (an ``Authorization`` value), ``pem`` (a multi-line block) or ``file``
    (lines of a credentials file). ``secret`` is the part a scanner must flag; ``text`` what
    is written (the value, the command, the header value, the block, the file line)."""

    family: str
    kind: str
    text: str
    secret: str
    name: str = ""
    meta: dict[str, Any] = field(default_factory=dict, compare=False)


def pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def b64(data: bytes, *, url: bool = False, pad: bool = True) -> str:
    out = (base64.urlsafe_b64encode if url else base64.b64encode)(data).decode()
    return out if pad else out.rstrip("=")


def base62_crc32(data: str) -> str:
    number, out = zlib.crc32(data.encode()), ""
    while number:
        number, digit = divmod(number, 62)
        out = B62[digit] + out
    return out.rjust(6, "0")


def password(rng: random.Random) -> str:
    """A password as people choose them: a word with digits and a mark, or a random string."""
    if rng.random() < 0.4:
        word = rng.choice(WORDS)
        return (
            word.capitalize() + str(rng.randint(10, 9999)) + rng.choice(PASSWORD_MARKS) + pick(rng, ALNUM, 3)
        )
    body = pick(rng, ALNUM, rng.randint(12, 20))
    cut = rng.randint(1, len(body) - 1)
    return body[:cut] + rng.choice(PASSWORD_MARKS) + body[cut:]


def cli_password(rng: random.Random) -> str:
    """A password safe unquoted on a command line (no glob or quote characters)."""
    body = pick(rng, ALNUM, rng.randint(12, 18))
    cut = rng.randint(2, len(body) - 2)
    return body[:cut] + rng.choice("-_.+=@") + body[cut:]


def url_password(rng: random.Random) -> str:
    body = pick(rng, ALNUM, rng.randint(12, 20))
    cut = rng.randint(2, len(body) - 2)
    return body[:cut] + rng.choice("-_.!~*") + body[cut:]


def uuid(rng: random.Random) -> str:
    h = pick(rng, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{rng.choice('89ab')}{h[17:20]}-{h[20:]}"


def user(rng: random.Random) -> str:
    return rng.choice(("deploy", "ci-bot", "admin", "svc_app", "release", "jenkins")) + str(
        rng.randint(1, 99)
    )


# -- provider tokens ---------------------------------------------------------------------------


def _github(rng: random.Random) -> tuple[str, dict[str, Any]]:
    body = pick(rng, ALNUM, 30)
    prefix = rng.choice(("p", "o", "u", "s", "r"))
    return "gh" + prefix + "_" + body + base62_crc32(body), {}


def _github_pat(rng: random.Random) -> tuple[str, dict[str, Any]]:
    return "github" + "_pat_" + pick(rng, ALNUM, 22) + "_" + pick(rng, ALNUM, 59), {}


def _npm(rng: random.Random) -> tuple[str, dict[str, Any]]:
    body = pick(rng, ALNUM, 30)
    return "np" + "m_" + body + base62_crc32(body), {}


def _aws_id(rng: random.Random) -> tuple[str, dict[str, Any]]:
    return rng.choice(("AK" + "IA", "AS" + "IA")) + pick(rng, BASE32, 16), {}


def _aws_secret(rng: random.Random) -> tuple[str, dict[str, Any]]:
    return b64(rng.randbytes(30)).replace("=", "")[:40], {}


def _slack(rng: random.Random) -> tuple[str, dict[str, Any]]:
    if rng.random() < 0.5:
        return (
            "xo" + f"xb-{rng.randint(10**10, 10**13)}-{rng.randint(10**10, 10**13)}-{pick(rng, ALNUM, 24)}",
            {},
        )
    d = f"{rng.randint(10**10, 10**12)}-{rng.randint(10**10, 10**12)}-{rng.randint(10**10, 10**12)}"
    return "xo" + "xp-" + d + "-" + pick(rng, HEX, 32), {}


def _slack_webhook(rng: random.Random) -> tuple[str, dict[str, Any]]:
    path = f"T{pick(rng, UPPER_ALNUM, 10)}/B{pick(rng, UPPER_ALNUM, 10)}/{pick(rng, ALNUM, 24)}"
    return "https://hooks." + "slack.com/services/" + path, {}


def _stripe(rng: random.Random) -> tuple[str, dict[str, Any]]:
    prefix = rng.choice(("sk", "rk")) + "_live_"
    return prefix + ("51" + pick(rng, ALNUM, 97) if rng.random() < 0.5 else pick(rng, ALNUM, 24)), {}


def _openai(rng: random.Random) -> tuple[str, dict[str, Any]]:
    marker = "T3Blbk" + "FJ"  # base64 of the provider's name, in every key
    if rng.random() < 0.75:
        kind = rng.choice(("proj", "svcacct", "admin"))
        return f"sk-{kind}-" + pick(rng, URLSAFE, 74) + marker + pick(rng, URLSAFE, 74), {}
    return "sk-" + pick(rng, ALNUM, 20) + marker + pick(rng, ALNUM, 20), {}


def _anthropic(rng: random.Random) -> tuple[str, dict[str, Any]]:
    kind = "api03" if rng.random() < 0.8 else "admin01"
    return f"sk-{'ant'}-{kind}-" + pick(rng, URLSAFE, 93) + "AA", {}


def _gitlab(rng: random.Random) -> tuple[str, dict[str, Any]]:
    return rng.choice(("glpat-", "gldt-", "glrt-")) + pick(rng, URLSAFE, 20), {}


def _varint(n: int) -> bytes:
    out = b""
    while True:
        low, n = n & 0x7F, n >> 7
        out += bytes([low | (0x80 if n else 0)])
        if not n:
            return out


def _field(kind: int, data: bytes) -> bytes:
    return _varint(kind) + _varint(len(data)) + data


def macaroon(root_key: bytes, identifier: bytes, caveats: list[bytes]) -> bytes:
    """A libmacaroons v2 binary macaroon located at pypi.org, signed by the HMAC chain."""
    sig = hmac.new(
        hmac.new(b"macaroons-key-generator", root_key, hashlib.sha256).digest(), identifier, "sha256"
    )
    body = b"\x02" + _field(1, b"pypi.org") + _field(2, identifier) + b"\x00"
    digest = sig.digest()
    for cid in caveats:
        digest = hmac.new(digest, cid, hashlib.sha256).digest()
        body += _field(2, cid) + b"\x00"
    return body + b"\x00" + _field(6, digest)


def _pypi(rng: random.Random) -> tuple[str, dict[str, Any]]:
    root = rng.randbytes(32)
    ident = uuid(rng).encode()
    caveats = [b'{"version": 1, "permissions": "user"}']
    if rng.random() < 0.5:
        caveats.append(json.dumps([1, [rng.choice(("requests", "httpx", "fastapi"))]]).encode())
    return "py" + "pi-" + b64(macaroon(root, ident, caveats), url=True, pad=False), {"root_key": root}


def _google(rng: random.Random) -> tuple[str, dict[str, Any]]:
    return "AI" + "za" + pick(rng, URLSAFE, 35), {}


def _hf(rng: random.Random) -> tuple[str, dict[str, Any]]:
    return "h" + "f_" + pick(rng, string.ascii_letters, 34), {}


def _sendgrid(rng: random.Random) -> tuple[str, dict[str, Any]]:
    return "S" + "G." + pick(rng, URLSAFE, 22) + "." + pick(rng, URLSAFE, 43), {}


def _twilio(rng: random.Random) -> tuple[str, dict[str, Any]]:
    return "S" + "K" + pick(rng, HEX, 32), {}


def _mailgun(rng: random.Random) -> tuple[str, dict[str, Any]]:
    return "ke" + "y-" + pick(rng, HEX, 32), {}


def _prefixed(prefix: str, alphabet: str, n: int) -> Callable[[random.Random], tuple[str, dict[str, Any]]]:
    def gen(rng: random.Random) -> tuple[str, dict[str, Any]]:
        return prefix + pick(rng, alphabet, n), {}

    return gen


def _notion(rng: random.Random) -> tuple[str, dict[str, Any]]:
    return "nt" + "n_" + pick(rng, string.digits, 11) + pick(rng, ALNUM, 35), {}


def _vault(rng: random.Random) -> tuple[str, dict[str, Any]]:
    return "hv" + "s.CAESI" + pick(rng, URLSAFE, 90), {}


def _grafana(rng: random.Random) -> tuple[str, dict[str, Any]]:
    if rng.random() < 0.5:
        return "gl" + "sa_" + pick(rng, ALNUM, 32) + "_" + pick(rng, HEX, 8), {}
    doc = {"o": str(rng.randint(10**5, 10**6)), "n": f"stack-{rng.randint(10**5, 10**6)}-hm-read"}
    doc["k"] = pick(rng, ALNUM, 24)
    doc["m"] = {"r": rng.choice(("us", "eu", "prod-us-east-0"))}  # type: ignore[assignment]
    return "gl" + "c_" + b64(json.dumps(doc, separators=(",", ":")).encode()), {}


def _postman(rng: random.Random) -> tuple[str, dict[str, Any]]:
    return "PM" + "AK-" + pick(rng, HEX, 24) + "-" + pick(rng, HEX, 34), {}


def _atlassian(rng: random.Random) -> tuple[str, dict[str, Any]]:
    return "ATA" + "TT3xFfGF0" + pick(rng, URLSAFE, 171) + "=" + pick(rng, HEX.upper(), 8), {}


def _dynatrace(rng: random.Random) -> tuple[str, dict[str, Any]]:
    return "dt0" + "c01." + pick(rng, UPPER_ALNUM, 24) + "." + pick(rng, UPPER_ALNUM, 64), {}


def _telegram(rng: random.Random) -> tuple[str, dict[str, Any]]:
    return f"{rng.randint(10**8, 10**10)}:AA" + pick(rng, URLSAFE, 33), {}


def _discord_webhook(rng: random.Random) -> tuple[str, dict[str, Any]]:
    return "https://discord." + f"com/api/webhooks/{rng.randint(10**17, 10**18)}/" + pick(
        rng, URLSAFE, 68
    ), {}


def _mws(rng: random.Random) -> tuple[str, dict[str, Any]]:
    return "amzn" + ".mws." + uuid(rng), {}


def _bedrock(rng: random.Random) -> tuple[str, dict[str, Any]]:
    ident = f"BedrockAPIKey-{pick(rng, LOWER_ALNUM, 4)}-at-{rng.randint(10**11, 10**12)}"
    return "AB" + "SK" + b64((ident + ":" + b64(rng.randbytes(45))).encode()), {}


def _clojars(rng: random.Random) -> tuple[str, dict[str, Any]]:
    return "CLOJ" + "ARS_" + pick(rng, LOWER_ALNUM, 60), {}


def _azure_storage(rng: random.Random) -> tuple[str, dict[str, Any]]:
    key = b64(rng.randbytes(64))
    account = "st" + pick(rng, LOWER_ALNUM, 10)
    text = (
        f"DefaultEndpointsProtocol=https;AccountName={account};Account"
        + f"Key={key};EndpointSuffix=core.windows.net"
    )
    return text, {"secret": key}


def _azure_sas(rng: random.Random) -> tuple[str, dict[str, Any]]:
    sig = b64(rng.randbytes(32)).replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
    query = f"sv=2022-11-02&ss=bfqt&srt=sco&sp=rwdlacupiytfx&se=2027-0{rng.randint(1, 9)}-01T00:00:00Z"
    account = "st" + pick(rng, LOWER_ALNUM, 10)
    return (
        f"https://{account}.blob.core.windows.net/?{query}&st=2026-01-01T00:00:00Z&spr=https&" + "sig=" + sig,
        {"secret": sig},
    )


def _azure_ad(rng: random.Random) -> tuple[str, dict[str, Any]]:
    return pick(rng, ALNUM, 3) + str(rng.randint(0, 9)) + "Q~" + pick(rng, ALNUM + "_~.-", 34), {}


def _bech32_polymod(values: list[int]) -> int:
    gen = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)
    chk = 1
    for v in values:
        top = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ v
        for i in range(5):
            chk ^= gen[i] if (top >> i) & 1 else 0
    return chk


BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def bech32(hrp: str, data: bytes) -> str:
    """BIP-173 bech32 of ``data`` (bytes regrouped into 5-bit words) under ``hrp``."""
    acc, bits, words = 0, 0, []
    for byte in data:
        acc, bits = (acc << 8) | byte, bits + 8
        while bits >= 5:
            bits -= 5
            words.append((acc >> bits) & 31)
    if bits:
        words.append((acc << (5 - bits)) & 31)
    expanded = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]
    poly = _bech32_polymod(expanded + words + [0] * 6) ^ 1
    check = [(poly >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(BECH32[w] for w in words + check)


def _age(rng: random.Random) -> tuple[str, dict[str, Any]]:
    return bech32("age-secret-" + "key-", rng.randbytes(32)).upper(), {}


def _onepassword(rng: random.Random) -> tuple[str, dict[str, Any]]:
    secret_key = "A3-" + "-".join(pick(rng, UPPER_ALNUM, n) for n in (6, 6, 5, 5, 5, 5))
    doc = {
        "signInAddress": "my.1password.com",
        "userAuth": {
            "method": "SRPg-4096",
            "alg": "PBES2g-HS256",
            "iterations": 650000,
            "salt": b64(rng.randbytes(16)),
        },
        "email": pick(rng, LOWER_ALNUM, 13) + "@1passwordserviceaccounts.com",
        "srpX": pick(rng, HEX, 64),
        "muk": {
            "alg": "A256GCM",
            "ext": True,
            "k": b64(rng.randbytes(32), url=True, pad=False),
            "kty": "oct",
        },
        "secretKey": secret_key,
        "throttleSecret": {"seed": pick(rng, HEX, 64), "uuid": pick(rng, UPPER_ALNUM, 26)},
        "deviceUuid": pick(rng, LOWER_ALNUM, 26),
    }
    return "op" + "s_" + b64(json.dumps(doc, separators=(",", ":")).encode(), pad=False), {}


PROVIDERS: dict[str, tuple[str, Callable[[random.Random], tuple[str, dict[str, Any]]]]] = {
    # family: (the variable people put it in, generator)
    "github-token": ("GITHUB_TOKEN", _github),
    "github-fine-grained-pat": ("GH_PAT", _github_pat),
    "aws-access-key-id": ("AWS_ACCESS_KEY_ID", _aws_id),
    "aws-secret-access-key": ("AWS_SECRET_ACCESS_KEY", _aws_secret),
    "aws-bedrock-api-key": ("AWS_BEARER_TOKEN_BEDROCK", _bedrock),
    "amazon-mws-token": ("MWS_AUTH_TOKEN", _mws),
    "slack-token": ("SLACK_BOT_TOKEN", _slack),
    "slack-webhook": ("SLACK_WEBHOOK_URL", _slack_webhook),
    "stripe-secret-key": ("STRIPE_SECRET_KEY", _stripe),
    "openai-api-key": ("OPENAI_API_KEY", _openai),
    "anthropic-api-key": ("ANTHROPIC_API_KEY", _anthropic),
    "gitlab-token": ("GITLAB_TOKEN", _gitlab),
    "npm-token": ("NPM_TOKEN", _npm),
    "pypi-token": ("TWINE_PASSWORD", _pypi),
    "google-api-key": ("GOOGLE_API_KEY", _google),
    "huggingface-token": ("HF_TOKEN", _hf),
    "sendgrid-api-key": ("SENDGRID_API_KEY", _sendgrid),
    "twilio-api-key": ("TWILIO_API_KEY", _twilio),
    "mailgun-api-key": ("MAILGUN_API_KEY", _mailgun),
    "shopify-token": ("SHOPIFY_ACCESS_TOKEN", _prefixed("shp" + "at_", HEX, 32)),
    "linear-api-key": ("LINEAR_API_KEY", _prefixed("lin" + "_api_", ALNUM, 40)),
    "notion-token": ("NOTION_TOKEN", _notion),
    "figma-token": ("FIGMA_TOKEN", _prefixed("fig" + "d_", URLSAFE, 40)),
    "groq-api-key": ("GROQ_API_KEY", _prefixed("gs" + "k_", ALNUM, 52)),
    "databricks-token": ("DATABRICKS_TOKEN", _prefixed("da" + "pi", HEX, 32)),
    "vault-token": ("VAULT_TOKEN", _vault),
    "grafana-token": ("GRAFANA_TOKEN", _grafana),
    "digitalocean-token": ("DIGITALOCEAN_TOKEN", _prefixed("do" + "p_v1_", HEX, 64)),
    "doppler-token": ("DOPPLER_TOKEN", _prefixed("dp" + ".pt.", ALNUM, 43)),
    "pulumi-token": ("PULUMI_ACCESS_TOKEN", _prefixed("pu" + "l-", HEX, 40)),
    "rubygems-api-key": ("GEM_HOST_API_KEY", _prefixed("ruby" + "gems_", HEX, 48)),
    "postman-api-key": ("POSTMAN_API_KEY", _postman),
    "atlassian-api-token": ("JIRA_API_TOKEN", _atlassian),
    "dynatrace-token": ("DT_API_TOKEN", _dynatrace),
    "telegram-bot-token": ("TELEGRAM_BOT_TOKEN", _telegram),
    "discord-webhook": ("DISCORD_WEBHOOK", _discord_webhook),
    "heroku-api-key": ("HEROKU_API_KEY", _prefixed("HR" + "KU-AA", URLSAFE, 58)),
    "alibaba-access-key-id": ("ALIBABA_ACCESS_KEY_ID", _prefixed("LT" + "AI", ALNUM, 20)),
    "new-relic-key": ("NEW_RELIC_API_KEY", _prefixed("NR" + "AK-", UPPER_ALNUM, 27)),
    "planetscale-token": ("PLANETSCALE_TOKEN", _prefixed("pscale" + "_tkn_", URLSAFE, 43)),
    "supabase-token": ("SUPABASE_ACCESS_TOKEN", _prefixed("sb" + "p_", HEX, 40)),
    "square-token": ("SQUARE_ACCESS_TOKEN", _prefixed("sq0" + "atp-", URLSAFE, 22)),
    "clojars-token": ("CLOJARS_PASSWORD", _clojars),
    "azure-storage-key": ("AZURE_STORAGE_CONNECTION_STRING", _azure_storage),
    "azure-sas-token": ("AZURE_BLOB_SAS_URL", _azure_sas),
    "azure-ad-client-secret": ("AZURE_CLIENT_SECRET", _azure_ad),
    "age-secret-key": ("SOPS_AGE_KEY", _age),
    "1password-service-token": ("OP_SERVICE_ACCOUNT_TOKEN", _onepassword),
}


def _discord_bot(rng: random.Random) -> tuple[str, dict[str, Any]]:
    bot_id = str(rng.randint(10**17, 10**18))
    head = b64(bot_id.encode(), pad=False)
    return head + "." + pick(rng, URLSAFE, 6) + "." + pick(rng, URLSAFE, 38), {}


def _tailscale(rng: random.Random) -> tuple[str, dict[str, Any]]:
    kind = rng.choice(("auth", "api", "client"))
    return "tskey" + f"-{kind}-k{pick(rng, ALNUM, 6)}CNTRL-" + pick(rng, ALNUM, 33), {}


def _teams_webhook(rng: random.Random) -> tuple[str, dict[str, Any]]:
    org = pick(rng, LOWER_ALNUM, 8)
    path = f"{uuid(rng)}@{uuid(rng)}/IncomingWebhook/{pick(rng, HEX, 32)}/{uuid(rng)}"
    return f"https://{org}.webhook." + "office.com/webhookb2/" + path, {}


def _terraform(rng: random.Random) -> tuple[str, dict[str, Any]]:
    return pick(rng, ALNUM, 14) + ".atlas" + "v1." + pick(rng, ALNUM + "_=-", 67), {}


MORE_PROVIDERS: dict[str, tuple[str, Callable[[random.Random], tuple[str, dict[str, Any]]]]] = {
    "gcp-oauth-client-secret": ("GOOGLE_CLIENT_SECRET", _prefixed("GOC" + "SPX-", URLSAFE, 28)),
    "tencent-secret-id": ("TENCENTCLOUD_SECRET_ID", _prefixed("AK" + "ID", ALNUM, 32)),
    "cloudflare-origin-ca-key": (
        "CF_ORIGIN_CA_KEY",
        lambda r: ("v1" + ".0-" + pick(r, HEX, 24) + "-" + pick(r, HEX, 146), {}),
    ),
    "flyio-token": ("FLY_API_TOKEN", _prefixed("fo" + "1_", URLSAFE, 43)),
    "tailscale-key": ("TS_AUTHKEY", _tailscale),
    "docker-hub-token": ("DOCKERHUB_TOKEN", _prefixed("dckr" + "_pat_", URLSAFE, 27)),
    "artifactory-token": ("ARTIFACTORY_API_KEY", _prefixed("AK" + "Cp", ALNUM, 69)),
    "sourcegraph-token": ("SRC_ACCESS_TOKEN", _prefixed("sg" + "p_", HEX, 40)),
    "prefect-api-key": ("PREFECT_API_KEY", _prefixed("pn" + "u_", ALNUM, 36)),
    "readme-api-key": ("README_API_KEY", _prefixed("rd" + "me_", LOWER_ALNUM, 70)),
    "infracost-api-key": ("INFRACOST_API_KEY", _prefixed("ic" + "o-", ALNUM, 32)),
    "octopus-deploy-api-key": ("OCTOPUS_API_KEY", _prefixed("AP" + "I-", UPPER_ALNUM, 26)),
    "frameio-token": ("FRAMEIO_TOKEN", _prefixed("fio" + "-u-", URLSAFE, 64)),
    "sendinblue-api-key": (
        "BREVO_API_KEY",
        lambda r: ("xkey" + "sib-" + pick(r, HEX, 64) + "-" + pick(r, ALNUM, 16), {}),
    ),
    "shippo-api-token": ("SHIPPO_API_KEY", _prefixed("shippo" + "_live_", HEX, 40)),
    "duffel-api-token": ("DUFFEL_ACCESS_TOKEN", _prefixed("duffel" + "_live_", URLSAFE, 43)),
    "easypost-api-token": ("EASYPOST_API_KEY", _prefixed("EZ" + "AK", ALNUM, 54)),
    "flutterwave-secret-key": (
        "FLW_SECRET_KEY",
        lambda r: ("FLWSECK" + "_TEST-" + pick(r, HEX, 32) + "-X", {}),
    ),
    "sentry-token": ("SENTRY_AUTH_TOKEN", _prefixed("sntr" + "yu_", HEX, 64)),
    "perplexity-api-key": ("PERPLEXITY_API_KEY", _prefixed("pp" + "lx-", ALNUM, 48)),
    "facebook-access-token": ("FB_PAGE_ACCESS_TOKEN", _prefixed("EA" + "AC", ALNUM, 150)),
    "airtable-token": (
        "AIRTABLE_TOKEN",
        lambda r: ("pa" + "t" + pick(r, ALNUM, 14) + "." + pick(r, HEX, 64), {}),
    ),
    "microsoft-teams-webhook": ("TEAMS_WEBHOOK_URL", _teams_webhook),
    "mailchimp-api-key": ("MAILCHIMP_API_KEY", lambda r: (pick(r, HEX, 32) + f"-us{r.randint(1, 21)}", {})),
    "maxmind-license-key": (
        "MAXMIND_LICENSE_KEY",
        lambda r: (pick(r, ALNUM, 6) + "_" + pick(r, ALNUM, 29) + "_mmk", {}),
    ),
    "harness-token": (
        "HARNESS_API_KEY",
        lambda r: (
            "pa" + "t." + pick(r, URLSAFE, 22) + "." + pick(r, HEX, 24) + "." + pick(r, ALNUM, 20),
            {},
        ),
    ),
    "defined-networking-token": (
        "DN_API_KEY",
        lambda r: ("dn" + "key-" + pick(r, LOWER_ALNUM, 26) + "-" + pick(r, LOWER_ALNUM, 52), {}),
    ),
    "1password-secret-key": (
        "OP_SECRET_KEY",
        lambda r: ("A" + "3-" + "-".join(pick(r, UPPER_ALNUM, n) for n in (6, 6, 5, 5, 5, 5)), {}),
    ),
    "discord-bot-token": ("DISCORD_BOT_TOKEN", _discord_bot),
    "dropbox-token": ("DROPBOX_ACCESS_TOKEN", _prefixed("s" + "l.", URLSAFE, 135)),
    "terraform-cloud-token": ("TFE_TOKEN", _terraform),
    "sonarqube-token": ("SONAR_TOKEN", _prefixed("sq" + "p_", HEX, 40)),
    "akamai-token": (
        "AKAMAI_CLIENT_TOKEN",
        lambda r: ("aka" + "b-" + pick(r, LOWER_ALNUM, 16) + "-" + pick(r, LOWER_ALNUM, 16), {}),
    ),
}
PROVIDERS.update(MORE_PROVIDERS)

# -- JWT, passwords, key-suffix names, connection strings, URLs ---------------------------------


def jwt(rng: random.Random) -> tuple[str, bytes]:
    key = rng.randbytes(32)
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode(), url=True, pad=False)
    claims = {
        "sub": str(rng.randint(10**6, 10**9)),
        "name": user(rng),
        "iat": rng.randint(1_600_000_000, 1_800_000_000),
    }
    body = b64(json.dumps(claims).encode(), url=True, pad=False)
    sig = hmac.new(key, f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64(sig, url=True, pad=False)}", key


SUFFIX_NAMES = (
    "gi_reo_gi_api",
    "billing_credential",
    "upload_secret",
    "svc_apikey",
    "partner_api",
    "ledger_creds",
    "export_passwd",
    "relay_auth_token",
)
PASSWORD_NAMES = ("DB_PASSWORD", "password", "SMTP_PASSWORD", "admin_pass", "passwd", "MYSQL_ROOT_PASSWORD")


def _conn(scheme: str) -> Callable[[random.Random], tuple[str, str]]:
    def gen(rng: random.Random) -> tuple[str, str]:
        pw, who = url_password(rng), user(rng)
        host = rng.choice(HOSTS)
        if scheme == "mongodb":
            return (
                f"mongodb+srv://{who}:{pw}@cluster0.{pick(rng, LOWER_ALNUM, 5)}.mongodb.net/app?retryWrites=true",
                pw,
            )
        if scheme == "redis":
            return f"redis://{rng.choice(('', 'default'))}:{pw}@{host}:6379/0", pw
        if scheme == "sqlserver":
            return f"Server=tcp:{host},1433;Database=app;User ID={who};Password={pw};Encrypt=True;", pw
        if scheme == "jdbc":
            db = rng.choice(("postgresql", "mysql"))
            return f"jdbc:{db}://{host}:5432/app?user={who}&password={pw}&ssl=true", pw
        ports = {"postgresql": 5432, "mysql": 3306, "amqp": 5672}
        return f"{scheme}://{who}:{pw}@{host}:{ports[scheme]}/app", pw

    return gen


CONNECTIONS = {
    "conn-postgres": ("DATABASE_URL", _conn("postgresql")),
    "conn-mysql": ("MYSQL_URL", _conn("mysql")),
    "conn-mongodb": ("MONGODB_URI", _conn("mongodb")),
    "conn-redis": ("REDIS_URL", _conn("redis")),
    "conn-amqp": ("BROKER_URL", _conn("amqp")),
    "conn-sqlserver": ("SQLSERVER_CONNECTION", _conn("sqlserver")),
    "conn-jdbc": ("JDBC_URL", _conn("jdbc")),
}


def _url_userinfo(rng: random.Random) -> tuple[str, str]:
    pw = url_password(rng)
    host = rng.choice(("artifacts.build.internal", "nexus.acme-corp.net", "pkgs.corp.lan"))
    return f"https://{user(rng)}:{pw}@{host}/repository/pypi/simple/", pw


def _url_percent(rng: random.Random) -> tuple[str, str]:
    raw = (
        pick(rng, ALNUM, 6)
        + rng.choice("@#$%/")
        + pick(rng, ALNUM, 6)
        + rng.choice("!&:?")
        + pick(rng, ALNUM, 4)
    )
    encoded = "".join(c if c.isalnum() else f"%{ord(c):02X}" for c in raw)
    return f"https://{user(rng)}:{encoded}@git.acme-corp.net/team/app.git", encoded


# -- command lines ------------------------------------------------------------------------------


def _cli(family: str, rng: random.Random) -> tuple[str, str]:
    s = cli_password(rng)
    who = user(rng)
    host = rng.choice(HOSTS)
    forms: dict[str, list[str]] = {
        "cli-gpg": [
            f"gpg --batch --pinentry-mode loopback --passphrase '{s}' --decrypt secrets.tar.gpg > secrets.tar",
            f"gpg --batch --yes --passphrase={s} -c release.tar.gz",
            f'echo "$DATA" | gpg --passphrase "{s}" --batch --symmetric -o out.gpg',
        ],
        "cli-mysql": [
            f"mysql -u root -p{s} -h {host} app < schema.sql",
            f"mysql --user={who} --password={s} --host={host} app",
            f"mysqldump -u {who} -p'{s}' app > dump.sql",
        ],
        "cli-psql": [
            f"PGPASSWORD='{s}' psql -h {host} -U {who} -d app -c 'select 1'",
            f'psql "host={host} user={who} password={s} dbname=app" -f migrate.sql',
        ],
        "cli-curl": [
            f"curl -u {who}:{s} https://{host}/api/v1/upload -F file=@dist.tar.gz",
            f"curl --user '{who}:{s}' -X POST https://{host}/hooks/deploy",
            f"curl --oauth2-bearer {s} https://{host}/api/v1/status",
        ],
        "cli-wget": [
            f"wget --user={who} --password={s} https://{host}/artifacts/app.tar.gz",
            f"wget --http-user={who} --http-password='{s}' https://{host}/backup.sql.gz",
        ],
        "cli-powershell": [
            f"$secure = ConvertTo-SecureString '{s}' -AsPlainText -Force",
            f'New-LocalUser -Name "{who}" -Password (ConvertTo-SecureString "{s}" -AsPlainText -Force)',
            f"Invoke-Sqlcmd -ServerInstance {host} -Username {who} -Password '{s}' -Query 'SELECT 1'",
        ],
        "cli-docker-login": [
            f"docker login -u {who} -p {s} {host}",
            f"docker login --username {who} --password '{s}' {host}",
        ],
        "cli-az": [
            f"az login --service-principal -u {uuid(rng)} -p {s} --tenant {uuid(rng)}",
            f"az login -u {who}@acme-corp.net -p '{s}'",
        ],
        "cli-aws": [
            f"aws configure set aws_secret_access_key {_aws_secret(rng)[0]}",
            f"AWS_SECRET_ACCESS_KEY={_aws_secret(rng)[0]} aws s3 sync dist/ s3://releases/",
        ],
        "cli-gh": [
            f"gh auth login --with-token <<< '{pick(rng, HEX, 40)}'",
            f"GH_TOKEN={pick(rng, HEX, 40)} gh release create v1.2.0 dist/*",
        ],
        "cli-npm": [
            f"npm config set //registry.npmjs.org/:_authToken {uuid(rng)}",
            f"npm publish --//registry.npmjs.org/:_authToken={uuid(rng)}",
        ],
        "cli-pip": [
            f"pip install --index-url https://{who}:{s}@pypi.acme-corp.net/simple/ internal-lib",
            f"pip config set global.extra-index-url https://__token__:{s}@pkgs.corp.lan/simple",
        ],
        "cli-git": [
            f"git clone https://oauth2:{s}@gitlab.acme-corp.net/team/app.git",
            f"git remote set-url origin https://x-access-token:{s}@github.com/org/app.git",
            f'git -c http.extraheader="AUTHORIZATION: basic {b64(f"{who}:{s}".encode())}" fetch origin',
        ],
        "cli-generic-flag": [
            f"./bin/deploy --api-secret-token {s} --env prod",
            f"sshpass -p '{s}' ssh {who}@{host} 'systemctl restart app'",
            f"redis-cli -h {host} -a {s} ping",
            f"vault login -method=userpass username={who} password={s}",
            f"terraform apply -var 'db_password={s}' -auto-approve",
            f"java -jar app.jar --client-secret={s}",
        ],
    }
    line = rng.choice(forms[family])
    secret = s if s in line else _secret_in(line)
    return line, secret


def _secret_in(line: str) -> str:
    """The credential of a command whose secret is not the CLI password (aws, gh, npm, git header)."""
    for pattern in (
        r"aws_secret_access_key (\S+)",
        r"AWS_SECRET_ACCESS_KEY=(\S+)",
        r"<<< '(\w+)'",
        r"GH_TOKEN=(\w+)",
    ):
        m = re.search(pattern, line)
        if m:
            return m.group(1)
    m = re.search(r"_authToken[ =](\S+)", line) or re.search(r"basic (\S+)\"", line)
    assert m, line
    return m.group(1)


CLI_FAMILIES = (
    "cli-gpg",
    "cli-mysql",
    "cli-psql",
    "cli-curl",
    "cli-wget",
    "cli-powershell",
    "cli-docker-login",
    "cli-az",
    "cli-aws",
    "cli-gh",
    "cli-npm",
    "cli-pip",
    "cli-git",
    "cli-generic-flag",
)

# -- HTTP authorization headers -----------------------------------------------------------------


def _pct(s: str) -> str:
    return "".join(c if c.isalnum() or c in "-._~" else f"%{ord(c):02X}" for c in s)


def header(family: str, rng: random.Random) -> tuple[str, str, dict[str, Any]]:
    """(the Authorization value, its secret part, what a test needs to check it)."""
    who, pw = user(rng), password(rng)
    if family == "header-basic":
        cred = b64(f"{who}:{pw}".encode())
        return "Basic " + cred, cred, {"user": who, "password": pw}
    if family == "header-bearer":
        token = b64(rng.randbytes(33), url=True, pad=False)
        return "Bearer " + token, token, {}
    if family == "header-digest":
        realm, nonce, uri, cnonce = "api@example.com", pick(rng, HEX, 32), "/v1/items", pick(rng, HEX, 16)
        ha1 = hashlib.md5(f"{who}:{realm}:{pw}".encode()).hexdigest()
        ha2 = hashlib.md5(f"GET:{uri}".encode()).hexdigest()
        resp = hashlib.md5(f"{ha1}:{nonce}:00000001:{cnonce}:auth:{ha2}".encode()).hexdigest()
        value = (
            f'Digest username="{who}", realm="{realm}", nonce="{nonce}", uri="{uri}", qop=auth, '
            f'nc=00000001, cnonce="{cnonce}", response="{resp}"'
        )
        return value, resp, {"user": who, "password": pw, "nonce": nonce, "cnonce": cnonce, "uri": uri}
    if family == "header-ntlm":
        msg = _ntlm_authenticate(rng, who)
        return "NTLM " + b64(msg), b64(msg), {}
    if family == "header-aws4":
        key_id, secret = _aws_id(rng)[0], _aws_secret(rng)[0]
        date, stamp, region = "20260115", "20260115T101500Z", rng.choice(("us-east-1", "eu-west-1"))
        canonical = (
            f"GET\n/\n\nhost:s3.amazonaws.com\nx-amz-date:{stamp}\n\nhost;x-amz-date\n"
            + hashlib.sha256(b"").hexdigest()
        )
        scope = f"{date}/{region}/s3/aws4_request"
        to_sign = f"AWS4-HMAC-SHA256\n{stamp}\n{scope}\n" + hashlib.sha256(canonical.encode()).hexdigest()
        key = ("AWS4" + secret).encode()
        for part in (date, region, "s3", "aws4_request"):
            key = hmac.new(key, part.encode(), hashlib.sha256).digest()
        sig = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
        value = (
            f"AWS4-HMAC-SHA256 Credential={key_id}/{scope}, SignedHeaders=host;x-amz-date, Signature={sig}"
        )
        return value, sig, {"secret": secret, "string_to_sign": to_sign}
    # OAuth 1.0a, HMAC-SHA1 over the signature base string
    consumer, token = pick(rng, ALNUM, 25), f"{rng.randint(10**8, 10**9)}-{pick(rng, ALNUM, 40)}"
    c_secret, t_secret = pick(rng, ALNUM, 50), pick(rng, ALNUM, 45)
    params = {
        "oauth_consumer_key": consumer,
        "oauth_nonce": pick(rng, ALNUM, 32),
        "oauth_signature_method": "HMAC-SHA1",
        "oauth_timestamp": str(rng.randint(1_700_000_000, 1_800_000_000)),
        "oauth_token": token,
        "oauth_version": "1.0",
    }
    query = "&".join(f"{k}={_pct(v)}" for k, v in sorted(params.items()))
    base = "POST&" + _pct("https://api.example.com/1.1/statuses/update.json") + "&" + _pct(query)
    sig = b64(hmac.new(f"{c_secret}&{t_secret}".encode(), base.encode(), hashlib.sha1).digest())
    params["oauth_signature"] = sig
    value = "OAuth " + ", ".join(f'{k}="{_pct(v)}"' for k, v in params.items())
    return value, _pct(sig), {"base": base, "key": f"{c_secret}&{t_secret}"}


def _ntlm_authenticate(rng: random.Random, who: str) -> bytes:
    """An NTLMSSP AUTHENTICATE (type 3) message: signature, six security buffers, flags, payload."""
    domain, name, host = (
        b"CORP".decode().encode("utf-16-le"),
        who.encode("utf-16-le"),
        b"WS01".decode().encode("utf-16-le"),
    )
    lm, nt, session = rng.randbytes(24), rng.randbytes(24), rng.randbytes(16)
    payload, offset, buffers = b"", 64, b""
    for part in (lm, nt, domain, name, host, session):
        buffers += struct.pack("<HHI", len(part), len(part), offset + len(payload))
        payload += part
    return b"NTLMSSP\x00" + struct.pack("<I", 3) + buffers + struct.pack("<I", 0xA2888205) + payload


HEADER_FAMILIES = (
    "header-basic",
    "header-bearer",
    "header-digest",
    "header-ntlm",
    "header-aws4",
    "header-oauth1",
)

# -- private keys -------------------------------------------------------------------------------


def _probable_prime(rng: random.Random, bits: int) -> int:
    small = (3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47)
    while True:
        n = rng.getrandbits(bits) | (3 << (bits - 2)) | 1
        if any(n % p == 0 for p in small):
            continue
        d, r = n - 1, 0
        while d % 2 == 0:
            d, r = d // 2, r + 1
        for _ in range(20):
            x = pow(rng.randrange(2, n - 2), d, n)
            if x in (1, n - 1):
                continue
            for _ in range(r - 1):
                x = pow(x, 2, n)
                if x == n - 1:
                    break
            else:
                break
        else:
            return n


def rsa_numbers(rng: random.Random, bits: int = 1024) -> dict[str, int]:
    e = 65537
    while True:
        p, q = _probable_prime(rng, bits // 2), _probable_prime(rng, bits // 2)
        phi = (p - 1) * (q - 1)
        if p != q and phi % e:
            d = pow(e, -1, phi)
            return {
                "n": p * q,
                "e": e,
                "d": d,
                "p": p,
                "q": q,
                "dp": d % (p - 1),
                "dq": d % (q - 1),
                "qi": pow(q, -1, p),
            }


def _der(tag: int, body: bytes) -> bytes:
    n = len(body)
    size = (
        bytes([n])
        if n < 128
        else bytes([0x80 | ((n.bit_length() + 7) // 8)]) + n.to_bytes((n.bit_length() + 7) // 8, "big")
    )
    return bytes([tag]) + size + body


def der_int(n: int) -> bytes:
    return _der(0x02, n.to_bytes(n.bit_length() // 8 + 1, "big"))


def der_oid(dotted: str) -> bytes:
    parts = [int(x) for x in dotted.split(".")]
    out = bytes([40 * parts[0] + parts[1]])
    for p in parts[2:]:
        chunk = [p & 0x7F]
        while p > 0x7F:
            p >>= 7
            chunk.insert(0, 0x80 | (p & 0x7F))
        out += bytes(chunk)
    return _der(0x06, out)


def _pem(label: str, der: bytes, width: int = 64) -> str:
    body = b64(der)
    lines = [body[i : i + width] for i in range(0, len(body), width)]
    return "\n".join([BEGIN + label + PK, *lines, END + label + PK])


def _ssh_string(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def _mpint(n: int) -> bytes:
    return _ssh_string(n.to_bytes(n.bit_length() // 8 + 1, "big"))


def private_key(rng: random.Random, variant: str) -> tuple[str, dict[str, Any]]:
    """A PEM block: ``rsa`` (PKCS#1), ``pkcs8`` (RSA in PKCS#8), ``ec`` (SEC 1, P-256) or ``openssh``."""
    if variant == "ec":
        scalar = rng.randbytes(32)
        der = _der(0x30, der_int(1) + _der(0x04, scalar) + _der(0xA0, der_oid("1.2.840.10045.3.1.7")))
        return _pem("EC ", der), {"scalar": scalar}
    k = rsa_numbers(rng)
    pkcs1 = _der(
        0x30,
        b"".join(der_int(x) for x in (0, k["n"], k["e"], k["d"], k["p"], k["q"], k["dp"], k["dq"], k["qi"])),
    )
    if variant == "rsa":
        return _pem("RSA ", pkcs1), dict(k)
    if variant == "pkcs8":
        algo = _der(0x30, der_oid("1.2.840.113549.1.1.1") + b"\x05\x00")
        return _pem("", _der(0x30, der_int(0) + algo + _der(0x04, pkcs1))), dict(k)
    pub = _ssh_string(b"ssh-rsa") + _mpint(k["e"]) + _mpint(k["n"])
    check = rng.getrandbits(32)
    private = struct.pack(">II", check, check) + _ssh_string(b"ssh-rsa")
    private += b"".join(_mpint(k[x]) for x in ("n", "e", "d", "qi", "p", "q")) + _ssh_string(
        f"{user(rng)}@build".encode()
    )
    private += bytes(range(1, 1 + (-len(private)) % 8))
    blob = b"openssh-key-v1\x00" + _ssh_string(b"none") * 2 + _ssh_string(b"") + struct.pack(">I", 1)
    blob += _ssh_string(pub) + _ssh_string(private)
    return _pem("OPENSSH ", blob, width=70), dict(k)


PEM_VARIANTS = ("rsa", "pkcs8", "ec", "openssh")

# -- the registry -------------------------------------------------------------------------------

FILE_FAMILIES = ("npmrc", "pypirc", "netrc", "docker-config-auth", "kubernetes-secret")
VALUE_FAMILIES = (
    *PROVIDERS,
    "jwt",
    "password-assignment",
    "key-suffix-assignment",
    *CONNECTIONS,
    "url-userinfo",
    "url-percent-encoded",
)
FAMILIES = (*VALUE_FAMILIES, "private-key", *CLI_FAMILIES, *HEADER_FAMILIES, *FILE_FAMILIES)


def make(family: str, rng: random.Random, index: int = 0) -> Fake:
    """One fresh fake of ``family`` (``index`` picks a variant where the family has several)."""
    if family in PROVIDERS:
        name, gen = PROVIDERS[family]
        text, meta = gen(rng)
        secret = str(meta.pop("secret", text))
        return Fake(family, "value", text, secret, name, meta)
    if family == "jwt":
        token, key = jwt(rng)
        return Fake(
            family, "value", token, token, rng.choice(("ID_TOKEN", "session_jwt", "AUTH_JWT")), {"key": key}
        )
    if family == "password-assignment":
        pw = password(rng)
        return Fake(family, "value", pw, pw, PASSWORD_NAMES[index % len(PASSWORD_NAMES)])
    if family == "key-suffix-assignment":
        value = pick(rng, ALNUM, rng.randint(32, 44))
        return Fake(family, "value", value, value, SUFFIX_NAMES[index % len(SUFFIX_NAMES)])
    if family in CONNECTIONS:
        name, conn = CONNECTIONS[family]
        text, pw = conn(rng)
        return Fake(family, "value", text, pw, name)
    if family in ("url-userinfo", "url-percent-encoded"):
        text, pw = (_url_userinfo if family == "url-userinfo" else _url_percent)(rng)
        return Fake(family, "value", text, pw, rng.choice(("PIP_INDEX_URL", "REPO_URL", "MIRROR_URL")))
    if family == "private-key":
        block, meta = private_key(rng, PEM_VARIANTS[index % len(PEM_VARIANTS)])
        return Fake(
            family, "pem", block, block.splitlines()[1], rng.choice(("private_key", "SIGNING_KEY")), meta
        )
    if family in CLI_FAMILIES:
        line, secret = _cli(family, rng)
        return Fake(family, "line", line, secret)
    if family in HEADER_FAMILIES:
        value, secret, meta = header(family, rng)
        return Fake(family, "header", value, secret, "Authorization", meta)
    if family in FILE_FAMILIES:
        return _file_line(family, rng, index)
    raise KeyError(family)


def _file_line(family: str, rng: random.Random, index: int) -> Fake:
    who, pw = user(rng), password(rng)
    if family == "npmrc":
        forms = [
            ("//registry.npmjs.org/:_authToken=" + _npm(rng)[0], None),
            (f"//npm.acme-corp.net/:_auth={b64(f'{who}:{pw}'.encode())}", None),
            ("//npm.pkg.github.com/:_authToken=" + uuid(rng), None),
            (f"//registry.corp.lan/:_password={b64(pw.encode())}", None),
        ]
        line = forms[index % len(forms)][0]
        return Fake(family, "file", line, line.split("=", 1)[1])
    if family == "pypirc":
        secret = _pypi(rng)[0] if index % 2 == 0 else pw
        return Fake(family, "file", f"password = {secret}", secret)
    if family == "netrc":
        token = pick(rng, HEX, 40) if index % 2 == 0 else pw
        host = rng.choice(("api.github.com", "gitlab.acme-corp.net", "uploads.corp.lan"))
        text = f"machine {host} login {who} password {token}" if index % 3 else f"  password {token}"
        return Fake(family, "file", text, token, meta={"host": host, "login": who})
    if family == "docker-config-auth":
        auth = b64(f"{who}:{pw}".encode())
        return Fake(family, "file", auth, auth, meta={"user": who, "password": pw})
    value = pw if index % 2 else pick(rng, ALNUM, 32)
    return Fake(
        family, "file", b64(value.encode()), b64(value.encode()), rng.choice(("password", "api-key", "token"))
    )


def fakes_of(family: str, count: int, rng: random.Random) -> list[Fake]:
    return [make(family, rng, i) for i in range(count)]


# -- formats (checked by tests/privacy/test_recall_generator.py) --------------------------------

_P = re.escape
FORMATS: dict[str, str] = {
    "github-token": r"gh[pousr]_[A-Za-z0-9]{36}",
    "github-fine-grained-pat": r"github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}",
    "aws-access-key-id": r"(AKIA|ASIA)[A-Z2-7]{16}",
    "aws-secret-access-key": r"[A-Za-z0-9+/]{40}",
    "aws-bedrock-api-key": r"ABSK[A-Za-z0-9+/]{109,269}={0,2}",
    "amazon-mws-token": r"amzn\.mws\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
    "slack-token": r"xoxb-\d{10,13}-\d{10,13}-[A-Za-z0-9]{24}|xoxp-\d{10,12}-\d{10,12}-\d{10,12}-[0-9a-f]{32}",
    "slack-webhook": r"https://hooks\.slack\.com/services/T[A-Z0-9]{10}/B[A-Z0-9]{10}/[A-Za-z0-9]{24}",
    "stripe-secret-key": r"[sr]k_live_(51[A-Za-z0-9]{97}|[A-Za-z0-9]{24})",
    "openai-api-key": r"sk-(proj|svcacct|admin)-[\w-]{74}T3BlbkFJ[\w-]{74}|sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}",
    "anthropic-api-key": r"sk-ant-(api03|admin01)-[\w-]{93}AA",
    "gitlab-token": r"(glpat|gldt|glrt)-[\w-]{20}",
    "npm-token": r"npm_[A-Za-z0-9]{36}",
    "pypi-token": r"pypi-AgEIcHlwaS5vcmc[\w-]{50,}",
    "google-api-key": r"AIza[\w-]{35}",
    "huggingface-token": r"hf_[A-Za-z]{34}",
    "sendgrid-api-key": r"SG\.[\w-]{22}\.[\w-]{43}",
    "twilio-api-key": r"SK[0-9a-f]{32}",
    "mailgun-api-key": r"key-[0-9a-f]{32}",
    "shopify-token": r"shpat_[0-9a-f]{32}",
    "linear-api-key": r"lin_api_[A-Za-z0-9]{40}",
    "notion-token": r"ntn_\d{11}[A-Za-z0-9]{35}",
    "figma-token": r"figd_[\w-]{40}",
    "groq-api-key": r"gsk_[A-Za-z0-9]{52}",
    "databricks-token": r"dapi[0-9a-f]{32}",
    "vault-token": r"hvs\.CAESI[\w-]{90}",
    "grafana-token": r"glsa_[A-Za-z0-9]{32}_[0-9a-f]{8}|glc_eyJ[A-Za-z0-9+/]+={0,2}",
    "digitalocean-token": r"dop_v1_[0-9a-f]{64}",
    "doppler-token": r"dp\.pt\.[A-Za-z0-9]{43}",
    "pulumi-token": r"pul-[0-9a-f]{40}",
    "rubygems-api-key": r"rubygems_[0-9a-f]{48}",
    "postman-api-key": r"PMAK-[0-9a-f]{24}-[0-9a-f]{34}",
    "atlassian-api-token": r"ATATT3[\w=-]{186}",
    "dynatrace-token": r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}",
    "telegram-bot-token": r"\d{9,11}:AA[\w-]{33}",
    "discord-webhook": r"https://discord\.com/api/webhooks/\d{18,19}/[\w-]{68}",
    "heroku-api-key": r"HRKU-AA[\w-]{58}",
    "alibaba-access-key-id": r"LTAI[A-Za-z0-9]{20}",
    "new-relic-key": r"NRAK-[A-Z0-9]{27}",
    "planetscale-token": r"pscale_tkn_[\w-]{43}",
    "supabase-token": r"sbp_[0-9a-f]{40}",
    "square-token": r"sq0atp-[\w-]{22}",
    "clojars-token": r"CLOJARS_[a-z0-9]{60}",
    "azure-storage-key": r"[A-Za-z0-9+/]{86}==",
    "azure-sas-token": r"(?:[A-Za-z0-9]|%2B|%2F)+%3D",
    "azure-ad-client-secret": r"[A-Za-z0-9]{3}\dQ~[\w~.-]{34}",
    "age-secret-key": r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
    "1password-service-token": r"ops_eyJ[A-Za-z0-9+/]{250,}",
    "jwt": r"eyJ[\w-]+\.eyJ[\w-]+\.[\w-]{43}",
    "password-assignment": r"[A-Za-z0-9" + _P(PASSWORD_MARKS) + r"]{12,}",
    "key-suffix-assignment": r"[A-Za-z0-9]{32,44}",
    "conn-postgres": r"[\w.!~*-]{12,}",
    "private-key": r"[A-Za-z0-9+/]{64,70}",
    "gcp-oauth-client-secret": r"GOCSPX-[\w-]{28}",
    "tencent-secret-id": r"AKID[A-Za-z0-9]{32}",
    "cloudflare-origin-ca-key": r"v1\.0-[0-9a-f]{24}-[0-9a-f]{146}",
    "flyio-token": r"fo1_[\w-]{43}",
    "tailscale-key": r"tskey-(auth|api|client)-k[A-Za-z0-9]{6}CNTRL-[A-Za-z0-9]{33}",
    "docker-hub-token": r"dckr_pat_[\w-]{27}",
    "artifactory-token": r"AKCp[A-Za-z0-9]{69}",
    "sourcegraph-token": r"sgp_[0-9a-f]{40}",
    "prefect-api-key": r"pnu_[A-Za-z0-9]{36}",
    "readme-api-key": r"rdme_[a-z0-9]{70}",
    "infracost-api-key": r"ico-[A-Za-z0-9]{32}",
    "octopus-deploy-api-key": r"API-[A-Z0-9]{26}",
    "frameio-token": r"fio-u-[\w-]{64}",
    "sendinblue-api-key": r"xkeysib-[0-9a-f]{64}-[A-Za-z0-9]{16}",
    "shippo-api-token": r"shippo_live_[0-9a-f]{40}",
    "duffel-api-token": r"duffel_live_[\w-]{43}",
    "easypost-api-token": r"EZAK[A-Za-z0-9]{54}",
    "flutterwave-secret-key": r"FLWSECK_TEST-[0-9a-f]{32}-X",
    "sentry-token": r"sntryu_[0-9a-f]{64}",
    "perplexity-api-key": r"pplx-[A-Za-z0-9]{48}",
    "facebook-access-token": r"EAAC[A-Za-z0-9]{150}",
    "airtable-token": r"pat[A-Za-z0-9]{14}\.[0-9a-f]{64}",
    "microsoft-teams-webhook": (
        r"https://[a-z0-9]{8}\.webhook\.office\.com/webhookb2/[0-9a-f-]{36}@[0-9a-f-]{36}"
        r"/IncomingWebhook/[0-9a-f]{32}/[0-9a-f-]{36}"
    ),
    "mailchimp-api-key": r"[0-9a-f]{32}-us\d{1,2}",
    "maxmind-license-key": r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk",
    "harness-token": r"pat\.[\w-]{22}\.[0-9a-f]{24}\.[A-Za-z0-9]{20}",
    "defined-networking-token": r"dnkey-[a-z0-9]{26}-[a-z0-9]{52}",
    "1password-secret-key": r"A3-[A-Z0-9]{6}-[A-Z0-9]{6}-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
    "discord-bot-token": r"[MNO][\w-]{23}\.[\w-]{6}\.[\w-]{38}",
    "dropbox-token": r"sl\.[\w-]{135}",
    "terraform-cloud-token": r"[A-Za-z0-9]{14}\.atlasv1\.[\w=-]{67}",
    "sonarqube-token": r"sqp_[0-9a-f]{40}",
    "akamai-token": r"akab-[a-z0-9]{16}-[a-z0-9]{16}",
}

# -- look-alikes: what a reviewer would not accept as a finding ---------------------------------

SERVICES: tuple[str, ...] = (
    "STRIPE",
    "GITHUB",
    "SLACK",
    "SENTRY",
    "MAILGUN",
    "TWILIO",
    "OPENAI",
    "PYPI",
    "NPM",
    "DOCKER",
)
SERVICES += ("AZURE", "GCP", "AWS", "REDIS", "POSTGRES", "SMTP", "VAULT", "JIRA", "CODECOV", "DATADOG")
KINDS = ("TOKEN", "API_KEY", "PASSWORD", "SECRET", "CLIENT_SECRET", "ACCESS_KEY")
CAMEL: tuple[str, ...] = (
    "Session",
    "Client",
    "Context",
    "Factory",
    "Redirect",
    "Transport",
    "Adapter",
    "Cookie",
    "Proxy",
)
CAMEL += ("Handler", "Mixin", "Auth", "Digest", "Stream", "Pool", "Manager", "Resolver", "Dispatch", "TLS")
LOOKALIKES = (
    "env-reference",
    "placeholder",
    "format-placeholder",
    "ssh-public-key",
    "jwt-header-only",
    "base64-json-config",
    "identifier",
    "hash-in-test",
    "uuid",
    "cache-buster",
    "bad-checksum-token",
    "aws-example-key",
    "cli-without-secret",
    "header-variable",
    "conn-without-password",
    "cli-format-placeholder",
    "secret-path",
)


def _ssh_public(rng: random.Random) -> str:
    if rng.random() < 0.5:
        blob = _ssh_string(b"ssh-ed25519") + _ssh_string(rng.randbytes(32))
        return f"ssh-ed25519 {b64(blob)} {user(rng)}@laptop"
    n = rng.getrandbits(2048) | (1 << 2047) | 1
    blob = _ssh_string(b"ssh-rsa") + _mpint(65537) + _mpint(n)
    return f"ssh-rsa {b64(blob)} {user(rng)}@build"


def lookalike(cls: str, rng: random.Random, index: int) -> Fake:
    """A value no scanner should report; ``index`` (unique in a run) keeps needles unique."""
    svc, kind = SERVICES[index % len(SERVICES)], KINDS[(index // len(SERVICES)) % len(KINDS)]
    name = f"{svc}_{kind}" + (f"_{index // 120 + 1}" if index >= 120 else "")
    if cls == "env-reference":
        text = rng.choice((f"${{{name}}}", f"${{{{ secrets.{name} }}}}", f"%{name}%"))
        return Fake(cls, "value", text, text, name)
    if cls == "placeholder":
        text = rng.choice((f"<your-{svc.lower()}-{kind.lower()}>", f"your_{svc.lower()}_{kind.lower()}_here"))
        return Fake(cls, "value", text, text, name)
    if cls == "format-placeholder":
        text = rng.choice((f"%({svc.lower()}_{kind.lower()})s", f"{{{svc.lower()}_{kind.lower()}}}"))
        return Fake(cls, "value", text, text, name)
    if cls == "ssh-public-key":
        text = _ssh_public(rng)
        return Fake(cls, "value", text, text.split()[1][:60], "SSH_PUBLIC_KEY")
    if cls == "jwt-header-only":
        head = {
            "alg": rng.choice(("HS256", "RS256", "ES256", "PS256")),
            "typ": "JWT",
            "kid": pick(rng, HEX, 8),
        }
        text = b64(json.dumps(head, separators=(",", ":")).encode(), url=True, pad=False)
        return Fake(cls, "value", text, text, "JWT_HEADER")
    if cls == "base64-json-config":
        doc = {"theme": rng.choice(("dark", "light")), "pageSize": rng.randint(10, 99), "locale": "en-US"}
        doc["features"] = rng.sample(["search", "export", "beta-ui", "sso", "audit"], 3)  # type: ignore[assignment]
        text = b64(json.dumps(doc).encode())
        return Fake(cls, "value", text, text, "UI_CONFIG")
    if cls == "identifier":
        text = "_" + "".join(rng.sample(CAMEL, 4))
        return Fake(cls, "value", text, text, "transport_class")
    if cls == "hash-in-test":
        digest = hashlib.sha256(rng.randbytes(16)).hexdigest()
        text = rng.choice((digest, digest[:40], digest[:32]))
        return Fake(cls, "value", text, text, rng.choice(("expected_etag", "content_hash", "sha256")))
    if cls == "uuid":
        text = uuid(rng)
        return Fake(cls, "value", text, text, rng.choice(("request_id", "TENANT_ID", "correlation_id")))
    if cls == "cache-buster":
        text = f"/static/app.js?v={b64(rng.randbytes(16), url=True, pad=False)}"
        return Fake(cls, "value", text, text, "asset_url")
    if cls == "bad-checksum-token":
        body = pick(rng, ALNUM, 30)
        check = base62_crc32(body)
        text = "gh" + "p_" + body + check[::-1] if check != check[::-1] else "gh" + "p_" + body + "zzzzzz"
        return Fake(cls, "value", text, text, "GITHUB_TOKEN")
    if cls == "aws-example-key":
        text = "AK" + "IA" + pick(rng, BASE32, 9) + "EXAMPLE"
        return Fake(cls, "value", text, text, "AWS_ACCESS_KEY_ID")
    if cls == "cli-without-secret":
        forms = (
            f"mysql -u {user(rng)} -p -h db.internal app_{index}",
            f'echo "${name}" | docker login -u {user(rng)} --password-stdin registry-{index}.corp.lan',
            f'curl -u "$DEPLOY_USER:${name}" https://api.corp.lan/v{index}/upload',
            f"gpg --batch --passphrase-file /run/secrets/{name.lower()} --decrypt build-{index}.gpg",
            f"az login --identity --username {uuid(rng)}",
        )
        text = forms[index % len(forms)]
        return Fake(cls, "line", text, text.split()[-1])
    if cls == "header-variable":
        text = rng.choice(
            (f"Bearer ${{{name}}}", f"Bearer $({svc.lower()}-cli auth print-token)", f"Basic ${name}")
        )
        return Fake(cls, "header", text, text.split(" ", 1)[1], "Authorization")
    if cls == "cli-format-placeholder":  # a template in code: the values are filled in at run time
        hosts = (
            f"db-{index}.internal",
            f"api-{index}.corp.lan",
            f"registry-{index}.corp.lan",
            f"pg-{index}.internal",
        )
        templates = (
            f"mysql --user={{user}} --password={{password}} --host={hosts[0]} app",
            f"curl -u {{user}}:{{password}} https://{hosts[1]}/upload",
            f"docker login --username {{user}} --password '{{password}}' {hosts[2]}",
            f'psql "host={hosts[3]} user={{user}} password={{password}} dbname=app"',
        )
        return Fake(cls, "line", templates[index % len(templates)], hosts[index % len(templates)])
    if cls == "secret-path":
        text = rng.choice(
            (f"deploy/k8s/secret-{index}.yaml", f"/run/secrets/app{index}", f"/etc/app/passwd-{index}")
        )
        return Fake(
            cls, "value", text, text, rng.choice(("secret_file", "PASSWORD_FILE", "kubernetes_secret"))
        )
    host = rng.choice(HOSTS)
    text = rng.choice(
        (
            f"postgresql://app_{index}@{host}:5432/app",
            f"postgresql://app_{index}:${{{name}}}@{host}:5432/app",
            f"redis://{host}:6379/{index}",
        )
    )
    return Fake(cls, "value", text, text, "DATABASE_URL")
