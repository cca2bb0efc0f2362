"""More provider credential formats: the families with a documented prefix, shape or checksum
that the public rule lists of gitleaks, secretlint and detect-secrets name (their lists were read
as facts: prefixes, lengths, alphabets; the patterns and checks here are our own).

Built like the rules of ``providers.py`` (a literal prefix kept apart from a preceding token
character, a bounded possessive body, an end that must not continue the token). Formats without
a literal prefix are found from a rare literal inside or after them (``Q~``, ``:A``, ``-us``,
``_mmk``, ``==``, ``sig=``): the rule's seed, with the exact distance back to the token's start.
Where a format carries something checkable it is checked: the JSON inside a Sentry org token or
a legacy Grafana key, the 32-byte HMAC of an Azure SAS signature, the 64 bytes of an Azure
storage account key, the numeric bot id of a Telegram token.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from urllib.parse import unquote

from toolkit.privacy import filters as f
from toolkit.privacy.providers_base import END, END_DASH, S, hex_mix, provider_rule, value_ok
from toolkit.privacy.rules import WORD, Check, LazyPattern, Rule, Tuning, lazy, lead
from toolkit.privacy.scantext import ScanText

_B64_END = r"(?![A-Za-z0-9+/=])"
_B64_BEFORE = "A-Za-z0-9_+/"  # not "=": it ends base64, and it is how a value is assigned


def _seeded(
    rule_id: str,
    pattern: str,
    seeds: tuple[str, ...],
    near: tuple[int, int],
    check: Check,
    *,
    boundary: frozenset[str] = WORD,
    priority: int = 90,
) -> Rule:
    """A rule whose token has no literal prefix: tried ``near`` characters before each seed."""
    return Rule(
        id=rule_id,
        category=S,
        pattern=lazy(pattern),
        group=1,
        check=check,
        priority=priority,
        boundary=boundary,
        tuning=Tuning(literals=seeds, seeds=seeds, seed_case=True, near=near),
    )


class _BackRule(Rule):
    """A token found from a literal inside or after it: ``middle`` (a bytes pattern led by that
    literal, so ``re`` jumps to it, with a look-behind for the characters before) finds the
    candidates in one pass; the start is at most ``reach`` characters of ``walk`` back, and the
    pattern is matched there once. Linear: one pass, then bounded work per candidate.

    The three are set by ``_back`` (not dataclass fields: generating a dataclass costs the
    import some milliseconds, and the hooks start with this module)."""

    middle: LazyPattern
    walk: frozenset[str]
    reach: int

    def spans(self, view: ScanText) -> Iterator[tuple[int, int]]:
        text = view.text
        compiled = self.pattern.compiled
        last = 0
        for at, _ in view.hits(self.middle):
            start = at
            stop = max(at - self.reach, last)
            while start > stop and text[start - 1] in self.walk:
                start -= 1
            if start < last:
                continue
            match = compiled.match(text, start)
            if match is None or not self.starts_token(text, start):
                continue
            if self.check is not None and not self.check(match):
                continue
            last = match.end()
            yield match.span(1)


def _back(
    rule_id: str,
    pattern: str,
    middle: str,
    walk: str,
    reach: int,
    check: Check,
    *,
    literals: tuple[str, ...],
    boundary: frozenset[str] = WORD,
    priority: int = 90,
) -> Rule:
    rule = _BackRule(
        id=rule_id,
        category=S,
        pattern=lazy(pattern),
        group=1,
        check=check,
        priority=priority,
        boundary=boundary,
        tuning=Tuning(literals=literals),
    )
    object.__setattr__(rule, "middle", lazy(middle))  # a frozen dataclass's instance
    object.__setattr__(rule, "walk", frozenset(walk))
    object.__setattr__(rule, "reach", reach)
    return rule


_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"  # not the string module:
_B64_CHARS = _ALNUM + "+/"  # importing it compiles a regex (string.Template), a cost at start-up


def _b64_json(text: str) -> dict[str, object] | None:
    """The JSON object that ``text`` (base64, standard or URL-safe, padding optional) encodes."""
    raw = f.b64decode(text.replace("-", "+").replace("_", "/") + "=" * (-len(text) % 4))
    if raw is None:
        return None
    try:
        value = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


def _sentry_org_check(match: re.Match[str]) -> bool:
    """``sntrys_`` + base64 JSON (``iat``, ``url``, ``region_url``, ``org``) + ``_`` + a secret."""
    payload, _, secret = match.group(1)[len("sntrys_") :].rpartition("_")
    claims = _b64_json(payload)
    return claims is not None and "iat" in claims and not f.is_placeholder(secret) and len(set(secret)) >= 12


def _grafana_legacy_check(match: re.Match[str]) -> bool:
    """A legacy Grafana API key is base64 JSON ``{"k": secret, "n": name, "id": org}``."""
    claims = _b64_json(match.group(1))
    return claims is not None and isinstance(claims.get("k"), str) and not f.is_placeholder(str(claims["k"]))


def _line_around(match: re.Match[str], before: int, after: int) -> str:
    """The text of the match's line up to ``before``/``after`` characters either side of it."""
    text = match.string
    start, end = match.start(), match.end()
    head = max(text.rfind("\n", max(0, start - before), start) + 1, start - before, 0)
    tail = text.find("\n", end, end + after)
    return text[head : tail if tail != -1 else min(len(text), end + after)]


_DIGEST_WORDS = ("sha512", "sha-512", "integrity", "digest", "hash", "checksum", "signature")


def _azure_key_check(match: re.Match[str]) -> bool:
    """An Azure storage account key is 64 random bytes in base64 (86 characters and ``==``),
    named as a key where it is written (``AccountKey=``, ``AZURE_STORAGE_KEY``, ``--account-key``);
    a SHA-512 digest has the same length, so a line that names a digest is not a key."""
    value = match.group(1)
    line = _line_around(match, 120, 0).lower()
    if "key" not in line and "azure" not in line and "storage" not in line:
        return False
    if any(word in line for word in _DIGEST_WORDS):
        return False
    raw = f.b64decode(value)
    if raw is None or sum(32 <= byte < 127 for byte in raw) > 56:
        return False  # text in base64 (a JSON config, a legacy Grafana key), not 64 random bytes
    return f.looks_random(value, min_entropy=4.5) and not f.is_placeholder(value)


_SAS_FIELDS = ("sv=", "se=", "sp=", "sr=", "ss=")


def _azure_sas_check(match: re.Match[str]) -> bool:
    """A shared access signature: ``sig=`` in a query that also has the version (``sv=``) and
    an expiry or permissions; the signature is an HMAC-SHA256, 32 bytes once decoded."""
    line = _line_around(match, 600, 300)
    if "sv=" not in line or sum(field in line for field in _SAS_FIELDS) < 2:
        return False
    value = unquote(match.group(1))
    raw = f.b64decode(value, validate=True)
    if raw is None:
        return False
    return len(raw) == 32 and not f.is_placeholder(value) and len(set(value)) >= 16


def _telegram_check(match: re.Match[str]) -> bool:
    """``<bot id>:<35 characters>``: glued only to ``bot`` (the API URL, ``/bot123:AA...``)."""
    text, start = match.string, match.start()
    if start and text[start - 1] in WORD and text[max(0, start - 3) : start].lower() != "bot":
        return False
    bot_id, _, secret = match.group(1).partition(":")
    if len(set(bot_id)) < 4:
        return False
    return not f.is_placeholder(secret) and len(set(secret)) >= 12


def _clickhouse_check(match: re.Match[str]) -> bool:
    value = match.group(1)
    return value_ok()(match) and any(c.isupper() for c in value[4:])


def _letters_ok(min_distinct: int = 12) -> Check:
    return value_ok(need_digit=False, min_distinct=min_distinct)


# Gates: words one of which a text must hold for a family whose own literal shares no character
# with the other provider literals (``==``, ``:A``, ``-us``, ``ntn_``...). The combined prefilter
# finds every literal in a few passes, one per trigger character (``needles.py``); such a literal
# would need a pass of its own over every text (about 0.3 ms per MB each, 1.5% of a scan). The
# gate words are the names these credentials are written under (the public rule lists gitleaks'
# keyword rules use the same), and each holds a character the other literals already use.
_AZURE_KEY_GATE = (
    "AccountKey",
    "ACCOUNT_KEY",
    "account_key",
    "account-key",
    "STORAGE_KEY",
    "storage_key",
    "StorageKey",
    "ACCESS_KEY",
    "access_key",
)
_TELEGRAM_GATE = ("telegram", "Telegram", "TELEGRAM", "bot_token", "botToken")
_MAILCHIMP_GATE = (
    "MAILCHIMP",
    "api.mailchimp.com",
    "mailchimp_",
    "MailchimpSDK",
    "MailchimpMarketing",
    "mailchimpApiKey",
    "MC_API_KEY",
    "mc_api_key",
)
_DYNATRACE_GATE = ("dynatrace", "Dynatrace", "DYNATRACE", "DT_API_TOKEN", "dt_api_token", "Api-Token")
_GITLAB_GATE = ("gitlab", "GITLAB", "registration", "REGISTRATION")
_NOTION_GATE = (
    "Notion",
    "NOTION_",
    "notion_token",
    "notion_api_key",
    "notion_key",
    "notionApiKey",
    "notionToken",
)
_CLIENT_SECRET_GATE = ("client_secret", "CLIENT_SECRET", "clientSecret", "ClientSecret", "client-secret")

_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"

FAMILY_RULES: tuple[Rule, ...] = (
    # -- cloud providers
    provider_rule(
        "amazon-mws-token", ("amzn.mws.",), _UUID, end=END_DASH, check=hex_mix, before="A-Za-z0-9_."
    ),
    provider_rule(
        "aws-bedrock-api-key",
        ("ABSK",),
        r"[A-Za-z0-9+/]{109,269}+={0,2}+",
        end=_B64_END,
        before=_B64_BEFORE,
        check=value_ok(min_distinct=20),
    ),
    provider_rule(
        "aws-bedrock-api-key",
        ("bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t",),  # base64 of "bedrock.amazonaws.com"
        r"[A-Za-z0-9+/]{40,4000}+={0,2}+",
        end=_B64_END,
        before="A-Za-z0-9_-",
    ),
    _back(
        "azure-storage-account-key",
        r"([A-Za-z0-9+/]{86}==)(?![A-Za-z0-9+/=])",
        r"==(?<=[A-Za-z0-9+/]{86}==)(?![A-Za-z0-9+/=])",
        _B64_CHARS,
        86,
        _azure_key_check,
        literals=_AZURE_KEY_GATE,
        boundary=frozenset(_B64_CHARS),
        priority=88,
    ),
    _seeded(
        "azure-sas-token",
        r"sig=([A-Za-z0-9%+/=]{40,160}+)(?![A-Za-z0-9%+/=])",
        ("sig=",),
        (0, 0),
        _azure_sas_check,
    ),
    _back(
        "azure-ad-client-secret",
        r"([A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}+)(?![A-Za-z0-9_~.-])",
        r"Q~(?<=[A-Za-z0-9_~.]{3}[0-9]Q~)",
        _ALNUM + "_~.",
        4,
        _letters_ok(),
        literals=_CLIENT_SECRET_GATE,
        boundary=WORD | frozenset("~.-"),
    ),
    provider_rule(
        "google-oauth-client-secret", ("GOCSPX-",), r"[A-Za-z0-9_-]{28}+", end=END_DASH, check=_letters_ok()
    ),
    provider_rule("tencent-secret-id", ("AKID",), r"[A-Za-z0-9]{32}+", before="A-Za-z0-9"),
    provider_rule("cloudflare-api-token", ("cfk_", "cfut_", "cfat_"), r"[A-Za-z0-9]{40}[0-9a-f]{8}+"),
    provider_rule("cloudflare-origin-ca-key", ("v1.0-",), r"[a-f0-9]{24}-[a-f0-9]{146}+", check=hex_mix),
    provider_rule(
        "dynatrace-token", ("dt0c01.",), r"[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}+", gate=_DYNATRACE_GATE
    ),
    provider_rule(
        "flyio-token",
        ("fm1a_", "fm1r_", "fm2_"),
        r"[A-Za-z0-9+/]{100,4000}+={0,3}+",
        end=_B64_END,
        check=value_ok(min_distinct=20),
    ),
    provider_rule("flyio-token", ("fo1_",), r"[A-Za-z0-9_-]{43}+", end=END_DASH),
    provider_rule("openshift-token", ("sha256~",), r"[A-Za-z0-9_-]{43}+", end=END_DASH, check=_letters_ok()),
    provider_rule("scalingo-token", ("tk-us-",), r"[A-Za-z0-9_-]{48}+", end=END_DASH, before="A-Za-z0-9_-"),
    provider_rule("tailscale-key", ("tskey-",), r"[a-z]{2,20}+-[A-Za-z0-9_]{8,40}+-[A-Za-z0-9_]{16,60}+"),
    provider_rule("vercel-token", ("vcp_", "vci_", "vca_", "vcr_", "vck_"), r"[A-Za-z0-9]{20,60}+"),
    # -- source hosting, packages, CI
    provider_rule(
        "gitlab-token",
        ("glcbt-", "glffct-", "glft-", "glimt-", "glagent-", "gloas-"),
        r"[A-Za-z0-9_-]{20,1024}+",
        end=END_DASH,
        before="A-Za-z0-9_-",
    ),
    provider_rule(
        "gitlab-token",
        ("GR1348941",),  # runner registration tokens
        r"[A-Za-z0-9_-]{20,1024}+",
        end=END_DASH,
        before="A-Za-z0-9_-",
        gate=_GITLAB_GATE,
    ),
    Rule(
        id="gitlab-session-cookie",
        category=S,
        pattern=lazy(lead(("_gitlab_session=",), "A-Za-z0-9") + r"([0-9a-z]{32}+)" + END),
        group=1,
        check=value_ok(),
        priority=90,
        tuning=Tuning(literals=("_gitlab_session=",), seeds=("_gitlab_session=",), seed_case=True),
    ),
    provider_rule("clojars-api-token", ("CLOJARS_",), r"[A-Za-z0-9]{60}+"),
    provider_rule("docker-hub-token", ("dckr_pat_",), r"[A-Za-z0-9_-]{27}+", end=END_DASH),
    provider_rule("rubygems-api-key", ("rubygems_",), r"[a-f0-9]{48}+", check=hex_mix),
    provider_rule("artifactory-token", ("AKCp",), r"[A-Za-z0-9]{69}+", before="A-Za-z0-9+/", end=_B64_END),
    provider_rule(
        "artifactory-token",
        ("cmVmd",),
        r"[A-Za-z0-9]{59}+",
        before="A-Za-z0-9+/",
        end=_B64_END,
        gate=("artifactory", "ARTIFACTORY", "Artifactory", "jfrog"),
    ),
    provider_rule("pulumi-token", ("pul-",), r"[a-f0-9]{40}+", check=hex_mix, before="A-Za-z0-9_-"),
    provider_rule(
        "sourcegraph-token", ("sgp_",), r"(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}+", check=hex_mix
    ),
    provider_rule("prefect-api-key", ("pnu_",), r"[A-Za-z0-9]{36}+"),
    provider_rule(
        "readme-api-key",
        ("rdme_",),
        r"[a-z0-9]{70}+",
        gate=("README_API_KEY", "readme_api_key", "readmeApiKey", "readme-api-key"),
    ),
    provider_rule(
        "infracost-api-key",
        ("ico-",),
        r"[A-Za-z0-9]{32}+",
        before="A-Za-z0-9_-",
        gate=("infracost", "INFRACOST", "Infracost"),
    ),
    provider_rule(
        "octopus-deploy-api-key",
        ("API-",),
        r"[A-Z0-9]{26}+",
        end=r"(?![A-Za-z0-9])",
        gate=("octopus", "Octopus", "OCTOPUS_", "X-Octopus-ApiKey"),  # "API-" is in every API doc
    ),
    provider_rule("frameio-token", ("fio-u-",), r"[A-Za-z0-9_=-]{64}+", end=r"(?![A-Za-z0-9_=-])"),
    _back(
        "harness-token",
        r"([ps]at\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}+)" + END,
        r"at\.(?<=[ps]at\.)(?=[A-Za-z0-9_-]{22}\.)",
        "ps",
        1,
        value_ok(),
        literals=("pat.", "sat."),
    ),
    # -- messaging, mail, payments
    provider_rule("slack-token", ("xapp-",), r"\d-[A-Za-z0-9]{6,40}+-\d{6,20}+-[A-Za-z0-9]{20,100}+"),
    provider_rule(
        "slack-token", ("xoxe.xoxb-", "xoxe.xoxp-"), r"\d-[A-Za-z0-9]{100,250}+", before="A-Za-z0-9_."
    ),
    _back(
        "telegram-bot-token",
        r"(\d{5,16}+:A[A-Za-z0-9_-]{34}+)(?![A-Za-z0-9_-])",
        r":A(?<=[0-9]:A)(?=[A-Za-z0-9_-]{34}(?![A-Za-z0-9_-]))",
        "0123456789",
        16,
        _telegram_check,
        literals=_TELEGRAM_GATE,
        boundary=frozenset(),
    ),
    Rule(
        id="microsoft-teams-webhook",
        category=S,
        pattern=lazy(
            r"(\.webhook\.office\.com/webhookb2/[0-9a-f-]{36}+@[0-9a-f-]{36}+/IncomingWebhook/"
            r"[A-Za-z0-9]{32}+/[0-9a-f-]{36}+(?:/[A-Za-z0-9_-]{1,100}+)?)(?![A-Za-z0-9_-])"
        ),
        group=1,
        check=value_ok(),
        priority=90,
        tuning=Tuning(literals=(".webhook.office.com/webhookb2/",)),
    ),
    _back(
        "mailchimp-api-key",
        r"([0-9a-f]{32}-us\d{1,2}+)(?![A-Za-z0-9_-])",
        r"-us(?<=[0-9a-f]{32}-us)[0-9]",
        "0123456789abcdef",
        32,
        hex_mix,
        literals=_MAILCHIMP_GATE,
        boundary=WORD | {"-"},
    ),
    provider_rule("sendinblue-api-key", ("xkeysib-",), r"[a-f0-9]{64}-[A-Za-z0-9]{16}+"),
    provider_rule("shopify-token", ("shpat_", "shpca_", "shppa_", "shpss_"), r"[A-Za-z0-9]{32,64}+"),
    provider_rule("square-token", ("sq0atp-", "sq0csp-"), r"[A-Za-z0-9_-]{22,60}+", end=END_DASH),
    provider_rule(
        "square-token",
        ("EAAA",),
        r"[A-Za-z0-9_-]{22,60}+",
        end=r"(?![A-Za-z0-9_+/=-])",
        before="A-Za-z0-9_+/-",
        check=value_ok(min_distinct=16),
        gate=("square", "Square", "SQUARE"),  # "EAAA" is in base64 blobs
    ),
    provider_rule("shippo-api-token", ("shippo_live_", "shippo_test_"), r"[a-fA-F0-9]{40}+", check=hex_mix),
    provider_rule(
        "duffel-api-token",
        ("duffel_test_", "duffel_live_"),
        r"[A-Za-z0-9_=-]{43}+",
        end=r"(?![A-Za-z0-9_=-])",
    ),
    provider_rule("easypost-api-token", ("EZAK",), r"[A-Za-z0-9]{54}+", before="A-Za-z0-9"),
    provider_rule(
        "easypost-api-token",
        ("EZTK",),  # test mode
        r"[A-Za-z0-9]{54}+",
        before="A-Za-z0-9",
        gate=("easypost", "EASYPOST", "EasyPost"),
    ),
    provider_rule(
        "flutterwave-secret-key",
        ("FLWSECK_TEST-", "FLWSECK-"),
        r"[a-hA-H0-9]{12}(?:[a-hA-H0-9]{20}-X)?",
        check=value_ok(min_distinct=6),
    ),
    provider_rule(
        "facebook-access-token",
        ("EAAM", "EAAC"),
        r"[A-Za-z0-9]{100,400}+",
        end=_B64_END,
        before=_B64_BEFORE,
        check=value_ok(min_distinct=20),
    ),
    # -- developer tools, observability, AI
    provider_rule("linear-api-key", ("lin_api_",), r"[A-Za-z0-9_]{32,128}+"),
    provider_rule("sentry-token", ("sntryu_",), r"[a-f0-9]{64}+", check=hex_mix),
    provider_rule(
        "sentry-token",
        ("sntrys_",),
        r"eyJ[A-Za-z0-9+/]{20,600}+={0,2}+_[A-Za-z0-9+/]{43}+",
        end=r"(?![A-Za-z0-9+/=_])",
        check=_sentry_org_check,
    ),
    provider_rule(
        "grafana-token",
        ("eyJrIjoi",),  # base64 of '{"k":"'
        r"[A-Za-z0-9+/]{60,400}+={0,3}+",
        end=_B64_END,
        before="A-Za-z0-9_+/.",
        check=_grafana_legacy_check,
    ),
    provider_rule("vault-token", ("hvr.",), r"[A-Za-z0-9_-]{90,120}+", end=END_DASH, before="A-Za-z0-9_.-"),
    provider_rule("groq-api-key", ("gsk_",), r"[A-Za-z0-9]{52}+"),
    provider_rule("perplexity-api-key", ("pplx-",), r"[A-Za-z0-9]{48}+"),
    provider_rule("figma-token", ("figd_",), r"[A-Za-z0-9_-]{40,200}+", end=END_DASH),
    provider_rule("notion-token", ("ntn_",), r"\d{11}[A-Za-z0-9]{35}+", gate=_NOTION_GATE),
    provider_rule("adobe-client-secret", ("p8e-",), r"[A-Za-z0-9]{32}+", before="A-Za-z0-9_-"),
    provider_rule(
        "clickhouse-api-secret",
        ("4b1d",),
        r"[A-Za-z0-9]{38}+",
        before="A-Za-z0-9",
        check=_clickhouse_check,
        gate=("clickhouse", "ClickHouse", "CLICKHOUSE"),
    ),
    provider_rule("typeform-token", ("tfp_",), r"[A-Za-z0-9_.=-]{59}+", end=r"(?![A-Za-z0-9_.=-])"),
    provider_rule("settlemint-token", ("sm_aat_", "sm_pat_", "sm_sat_"), r"[A-Za-z0-9]{16}+"),
    provider_rule("intra42-client-secret", ("s-s4t2ud-", "s-s4t2af-"), r"[a-f0-9]{64}+", check=hex_mix),
    provider_rule(
        "defined-networking-token",
        ("dnkey-",),
        r"[A-Za-z0-9=_-]{26}-[A-Za-z0-9=_-]{52}+",
        end=r"(?![A-Za-z0-9=_-])",
    ),
    _back(
        "maxmind-license-key",
        r"([A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk)(?![A-Za-z0-9_])",
        r"_mmk(?<=[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk)(?![A-Za-z0-9_])",
        _ALNUM + "_",
        36,
        value_ok(),
        literals=("maxmind", "MAXMIND", "MaxMind", "license_key", "LICENSE_KEY"),
    ),
    provider_rule(
        "airtable-token",
        ("pat",),
        r"[A-Za-z0-9]{14}\.[a-f0-9]{64}+",
        gate=("Airtable", "AIRTABLE", "pyairtable"),  # "pat" alone is in every "path"
    ),
)
