"""Provider credential formats: keys and tokens whose shape alone names the service.

Each rule is a literal prefix (kept apart from a preceding token character by ``lead``), a
body of bounded length read possessively, and an end that must not continue the token. The
formats are the public ones the providers document (and that public rule lists such as
gitleaks' and CredSweeper's name); the patterns and checks here are our own.

Where a format carries a checksum it is verified (GitHub and npm tokens: CRC32 of the random
part, base62, in the last six characters), so a made-up ``ghp_`` string in a test or a doc is
not reported while every real token is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from toolkit.privacy import filters as f
from toolkit.privacy.filters import base62_crc32, checksum_ok
from toolkit.privacy.providers_base import END_DASH as _END_DASH
from toolkit.privacy.providers_base import S, value_ok
from toolkit.privacy.providers_base import hex_mix as _hex_mix
from toolkit.privacy.providers_base import provider_rule as _rule
from toolkit.privacy.providers_families import FAMILY_RULES
from toolkit.privacy.rules import Rule, Tuning, lazy
from toolkit.privacy.scantext import ScanText


def _digit_or_both_cases(match: re.Match[str]) -> bool:
    """A generated body: not a placeholder, 8+ distinct characters, and a digit or both cases."""
    value = match.group(1)
    if f.is_placeholder(value) or len(set(value)) < 8:
        return False
    return any(c.isdigit() for c in value) or (not value.islower() and not value.isupper())


__all__ = ["PROVIDER_RULES", "base62_crc32", "checksum_ok", "value_ok"]


def _github_check(match: re.Match[str]) -> bool:
    value = match.group(1)
    if value.startswith("github_pat_"):
        return value_ok()(match)
    body = value.split("_", 1)[1]
    if len(body) == 36:
        return checksum_ok(value)  # the current format carries its own checksum
    return value_ok()(match)  # older, longer tokens (ghs_/ghr_ of other lengths): shape only


def _npm_check(match: re.Match[str]) -> bool:
    return checksum_ok(match.group(1))


# A PyPI token is "pypi-" and a base64 macaroon whose first caveat is its location: the bytes
# 02 01, the length, then "pypi.org" or "test.pypi.org" (so the body starts with one of these)
_PYPI_HEADS = ("pypi-AgEIcHlwaS5vcmc", "pypi-AgENdGVzdC5weXBpLm9yZw")


def _pypi_check(match: re.Match[str]) -> bool:
    return match.group(1).startswith(_PYPI_HEADS) and value_ok()(match)


def _discord_check(match: re.Match[str]) -> bool:
    """The first part of a Discord bot token is the bot's numeric id in base64."""
    head = match.group(1).split(".", 1)[0]
    decoded = f.b64decode(head + "=" * (-len(head) % 4), urlsafe=True)
    if decoded is None:
        return False
    return decoded.isdigit() and 15 <= len(decoded) <= 21 and value_ok(need_digit=False)(match)


_DISCORD_MIDDLE = lazy(r"\.[A-Za-z0-9_-]{6}\.")


class _DiscordRule(Rule):
    """Discord bot tokens have no literal prefix; their middle part (a dot, six characters, a
    dot) is rare in other text, so it is found first and the token matched from 24-26 before."""

    def spans(self, view: ScanText) -> Iterator[tuple[int, int]]:
        text = view.text
        compiled = self.pattern.compiled
        last = 0
        for hit_start, hit_end in view.hits(_DISCORD_MIDDLE):
            for back in (24, 25, 26):
                start = hit_start - back
                if start < last or start < 0 or not self.starts_token(text, start):
                    continue
                match = compiled.match(text, start)
                if match is not None and match.end(1) > hit_end and _discord_check(match):
                    last = match.end()
                    yield match.span(1)
                    break


PROVIDER_RULES: tuple[Rule, ...] = (
    _rule(
        "anthropic-api-key",
        ("sk-ant-",),
        r"(?:api|admin|oat|sid)\d{2}-[A-Za-z0-9_-]{20,200}+",
        end=_END_DASH,
        before="A-Za-z0-9_-",
    ),
    _rule(
        "openai-api-key",
        ("sk-",),
        r"(?!ant-)(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,200}+",
        end=_END_DASH,
        before="A-Za-z0-9_-",
        priority=85,
    ),
    _rule(
        "stripe-secret-key",
        ("sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_"),
        r"[A-Za-z0-9]{16,120}+",
    ),
    _rule("stripe-secret-key", ("whsec_",), r"[A-Za-z0-9]{24,80}+"),
    _rule(
        "google-api-key",
        ("AIza",),
        r"[0-9A-Za-z_-]{35}+",
        end=_END_DASH,
        check=value_ok(need_digit=False),
    ),
    _rule(
        "aws-access-key-id",
        ("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "APKA"),
        r"[0-9A-Z]{16}+",
        end=r"(?![A-Za-z0-9])",
        before="A-Z0-9",
        check=lambda m: not m.group(1).endswith("EXAMPLE") and not f.is_placeholder(m.group(1)[4:]),
    ),
    _rule(
        "github-token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        r"[A-Za-z0-9]{36,255}+",
        check=_github_check,
    ),
    _rule("github-token", ("github_pat_",), r"[A-Za-z0-9]{22}_[A-Za-z0-9]{40,80}+", check=_github_check),
    _rule(
        "gitlab-token",
        ("glpat-", "gldt-", "glptt-", "glrt-", "glsoat-"),
        # routable tokens (2024) are longer and end in "." + two base36 + seven base36 characters
        r"[A-Za-z0-9_-]{20,300}+(?:\.[0-9a-z]{9}+)?",
        end=_END_DASH,
    ),
    _rule(
        "slack-token",
        ("xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xoxe-"),
        r"[A-Za-z0-9-]{10,250}+",
    ),
    _rule("slack-webhook", ("hooks.slack.com/",), r"(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,200}+"),
    _rule("npm-token", ("npm_",), r"[A-Za-z0-9]{36}+", check=_npm_check),
    _rule("pypi-token", ("pypi-AgE",), r"[A-Za-z0-9_-]{50,2000}+", end=_END_DASH, check=_pypi_check),
    # Hugging Face user tokens are 34 letters after hf_: no digit required
    _rule(
        "huggingface-token",
        ("hf_", "api_org_"),
        r"[A-Za-z0-9]{30,40}+",
        check=value_ok(need_digit=False, min_distinct=12),
    ),
    _rule("twilio-api-key", ("SK",), r"[0-9a-f]{32}+", check=_hex_mix, before="A-Za-z0-9_"),
    _rule("sendgrid-api-key", ("SG.",), r"[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}+", end=_END_DASH),
    _rule("mailgun-api-key", ("key-",), r"[0-9a-f]{32}+", check=_hex_mix, before="A-Za-z0-9_-"),
    _rule("new-relic-key", ("NRAK-",), r"[A-Z0-9]{27}+"),
    _rule("new-relic-key", ("NRII-",), r"[A-Za-z0-9_-]{32}+", end=_END_DASH),
    _rule("new-relic-key", ("NRJS-",), r"[a-f0-9]{19}+", check=_hex_mix),
    _rule("supabase-token", ("sbp_",), r"[a-f0-9]{40}+", check=_hex_mix),
    _rule("supabase-token", ("sb_secret_",), r"[A-Za-z0-9_-]{31,64}+", end=_END_DASH),
    _rule(
        "planetscale-token",
        ("pscale_tkn_", "pscale_pw_", "pscale_oauth_"),
        r"[A-Za-z0-9_.=-]{32,64}+",
        end=r"(?![A-Za-z0-9_.=-])",
    ),
    _rule(
        "doppler-token",
        ("dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."),
        r"[A-Za-z0-9_-]{40,44}+",
        end=_END_DASH,
    ),
    _rule("databricks-token", ("dapi",), r"[a-f0-9]{32}+(?:-\d)?", check=_hex_mix),
    _rule(
        "discord-webhook",
        ("discord.com/api/webhooks/", "discordapp.com/api/webhooks/"),
        r"\d{17,20}+/[A-Za-z0-9_-]{60,70}+",
        end=_END_DASH,
        before="A-Za-z0-9_.-",
    ),
    _rule(
        "dropbox-token", ("sl.",), r"(?:u\.)?[A-Za-z0-9_-]{130,1400}+", end=_END_DASH, before="A-Za-z0-9_.-"
    ),
    _rule("digitalocean-token", ("dop_v1_", "doo_v1_", "dor_v1_"), r"[a-f0-9]{64}+", check=_hex_mix),
    _rule(
        "atlassian-api-token", ("ATATT3", "ATCTT3"), r"[A-Za-z0-9_=-]{150,300}+", end=r"(?![A-Za-z0-9_=-])"
    ),
    _rule("grafana-token", ("glc_",), r"[A-Za-z0-9+/]{32,400}+={0,2}+", end=r"(?![A-Za-z0-9+/=_])"),
    _rule("grafana-token", ("glsa_",), r"[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}+"),
    _rule("heroku-api-key", ("HRKU-AA",), r"[0-9A-Za-z_-]{58}+", end=_END_DASH),
    _rule(
        "age-secret-key",
        ("AGE-SECRET-KEY-1",),
        r"[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}+",
        check=value_ok(need_digit=False),
        end=r"(?![A-Za-z0-9])",
    ),
    _rule("1password-token", ("ops_eyJ",), r"[A-Za-z0-9+/_-]{200,}+={0,3}+", end=r"(?![A-Za-z0-9+/=_-])"),
    _rule(
        "1password-secret-key",
        ("A3-",),
        r"[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}+",
        before="A-Za-z0-9_-",
        end=r"(?![A-Za-z0-9-])",
    ),
    _rule("postman-api-key", ("PMAK-",), r"[a-f0-9]{24}-[a-f0-9]{34}+", check=_hex_mix),
    _rule("sonarqube-token", ("sqp_", "sqa_", "squ_"), r"[a-f0-9]{40}+", check=_hex_mix),
    _rule("vault-token", ("hvs.",), r"[A-Za-z0-9_-]{90,120}+", end=_END_DASH, before="A-Za-z0-9_.-"),
    _rule("vault-token", ("hvb.",), r"[A-Za-z0-9_-]{130,300}+", end=_END_DASH, before="A-Za-z0-9_.-"),
    # gitleaks' and Alibaba's format: LTAI + 12-20 alphanumerics, digits not required (both cases then)
    _rule(
        "alibaba-access-key-id",
        ("LTAI",),
        r"[A-Za-z0-9]{12,20}+",
        before="A-Za-z0-9",
        check=_digit_or_both_cases,
    ),
    _rule("akamai-token", ("akab-",), r"[a-z0-9]{16}-[a-z0-9]{16}+", before="A-Za-z0-9_-"),
    Rule(
        id="terraform-cloud-token",
        category=S,
        pattern=lazy(r"(?<![A-Za-z0-9])([A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}+)(?![A-Za-z0-9_=-])"),
        group=1,
        check=value_ok(),
        priority=90,
        tuning=Tuning(literals=(".atlasv1.",)),
    ),
    _DiscordRule(
        id="discord-bot-token",
        category=S,
        pattern=lazy(
            r"([MNO][A-Za-z0-9_-]{23,25}+\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}+)(?![A-Za-z0-9_-])"
        ),
        group=1,
        check=_discord_check,
        priority=88,
        boundary=frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-."),
    ),
    Rule(
        id="dropbox-token",
        category=S,
        pattern=lazy(r"(?<![A-Za-z0-9])([A-Za-z0-9]{11}AAAAAAAAAA[A-Za-z0-9_=-]{43}+)(?![A-Za-z0-9_=-])"),
        group=1,
        check=value_ok(need_digit=False),
        priority=85,
        tuning=Tuning(
            literals=("AAAAAAAAAA",),
            seeds=("AAAAAAAAAA",),
            seed_case=True,
            near=(11, 11),  # eleven characters, then the ten A's
        ),
    ),
) + FAMILY_RULES
