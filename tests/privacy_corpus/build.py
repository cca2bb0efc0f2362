"""Regenerate the labelled privacy corpus (``python tests/privacy_corpus/build.py``).

Every value is synthetic and non-working: random characters from a fixed seed, most carrying a
visible ``FAKE``/``fake`` marker, shaped like the real thing so the detectors are exercised.
No value was ever issued by a provider. Each case is one JSON line::

    {"expect": "<rule id>", "text": "..."}           positive: that rule must fire
    {"expect": null, "near": "<rule id>", "text": "..."}   look-alike: nothing may fire

``text`` may span lines (PEM blocks, chat dumps). The folder is excluded from our own hooks.
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
R = random.Random(20261202)
B62 = string.ascii_letters + string.digits
HEXD = "0123456789abcdef"


def rnd(n: int, alphabet: str = B62) -> str:
    while True:
        value = "".join(R.choice(alphabet) for _ in range(n))
        if alphabet != B62 or (
            any(c.isdigit() for c in value)
            and any(c.isupper() for c in value)
            and any(c.islower() for c in value)
        ):
            return value


def checksummed(prefix: str, random32: str) -> str:
    """A GitHub/npm-format token: 26 random characters + ``FAKE``, then the base62 CRC32 of
    those 30 (the format's own checksum), so the detectors' checksum validation accepts it."""
    import zlib

    body = random32[:26] + "FAKE"
    number, check = zlib.crc32(body.encode("ascii")), ""
    alphabet = string.digits + string.ascii_uppercase + string.ascii_lowercase
    while number:
        number, digit = divmod(number, 62)
        check = alphabet[digit] + check
    return prefix + body + check.rjust(6, "0")


def hexs(n: int) -> str:
    return "".join(R.choice(HEXD) for _ in range(n))


def fid() -> str:
    return str(uuid.UUID(int=R.getrandbits(128), version=4))


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


WRAP = [
    "{v}",
    'key = "{v}"',
    "export TOKEN_VALUE={v}",
    '  "value": "{v}",',
    "value: {v}",
    "Use {v} for the staging call.",
    "cfg.set('{v}')",
]


def wrap(value: str) -> str:
    return R.choice(WRAP).format(v=value)


def positives() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []

    def add(rule: str, texts: list[str]) -> None:
        out.extend((rule, t) for t in texts)

    add(
        "openai-api-key",
        [wrap("sk-proj-" + rnd(20) + "FAKE" + rnd(24)) for _ in range(4)]
        + [wrap("sk-" + rnd(20) + "T3BlbkFJ" + rnd(20)) for _ in range(3)]
        + [wrap("sk-svcacct-" + rnd(40) + "fake") for _ in range(2)],
    )
    add(
        "anthropic-api-key",
        [wrap("sk-ant-api03-" + rnd(40) + "FAKE" + rnd(40) + "-" + rnd(6) + "AA") for _ in range(5)]
        + [wrap("sk-ant-admin01-" + rnd(60) + "fake") for _ in range(2)],
    )
    add(
        "stripe-secret-key",
        [
            wrap(p + rnd(24) + "FAKE")
            for p in ("sk_live_", "rk_live_", "sk_test_", "rk_test_", "sk_live_", "rk_live_")
        ]
        + [wrap("whsec_" + rnd(32)) for _ in range(2)],
    )
    add("google-api-key", [wrap("AIza" + rnd(31, B62 + "-_") + "FAKE") for _ in range(6)])
    add(
        "aws-access-key-id",
        [wrap("AKIA" + rnd(12, string.ascii_uppercase + string.digits) + "FAKE") for _ in range(4)]
        + [wrap("ASIA" + rnd(16, string.ascii_uppercase + "234567")) for _ in range(2)],
    )
    add(
        "aws-secret-access-key",
        [
            f"aws_secret_access_key = {rnd(36, B62 + '/+')}FAKE",
            f'AWS_SECRET_ACCESS_KEY="{rnd(36, B62 + "/+")}fake"',
            f'"SecretAccessKey": "{rnd(36, B62 + "/+")}FAKE"',
            f"aws_secret_key: {rnd(36, B62 + '/+')}Fake",
            f"secret_access_key={rnd(40, B62 + '/+')}",
        ],
    )
    add(
        "github-token",
        [wrap(checksummed(p, rnd(32))) for p in ("ghp_", "gho_", "ghs_", "ghu_", "ghp_", "ghr_")]
        + [wrap("github_pat_" + rnd(22) + "_" + rnd(55) + "FAKE") for _ in range(2)],
    )
    add("gitlab-token", [wrap("glpat-" + rnd(16) + "FAKE") for _ in range(4)] + [wrap("gldt-" + rnd(20))])
    add(
        "slack-token",
        [
            wrap(
                p
                + "-"
                + "".join(R.choice(string.digits) for _ in range(11))
                + "-"
                + "".join(R.choice(string.digits) for _ in range(12))
                + "-"
                + rnd(20)
                + "FAKE"
            )
            for p in ("xoxb", "xoxp", "xoxa", "xoxs", "xoxe")
        ],
    )
    add(
        "slack-webhook",
        [
            f"SLACK_URL=https://hooks.slack.com/services/T{rnd(8, string.ascii_uppercase + string.digits)}"
            f"/B{rnd(8, string.ascii_uppercase + string.digits)}/{rnd(20)}FAKE"
            for _ in range(3)
        ],
    )
    add(
        "npm-token",
        [wrap(checksummed("npm_", rnd(32))) for _ in range(4)]
        + ["//registry.npmjs.org/:_authToken=" + checksummed("npm_", rnd(32))],
    )
    add("pypi-token", [wrap("pypi-AgEIcHlwaS5vcmc" + rnd(60, B62 + "-_") + "FAKE") for _ in range(4)])
    add(
        "huggingface-token",
        [wrap("hf_" + rnd(30, string.ascii_letters) + "FAKE") for _ in range(4)]
        + [wrap("hf_" + rnd(34)) for _ in range(2)],
    )
    add(
        "azure-connection-string",
        [
            f"DefaultEndpointsProtocol=https;AccountName=fakeacct{i};AccountKey={rnd(84, B62 + '+/')}==;"
            f"EndpointSuffix=core.windows.net"
            for i in range(3)
        ]
        + [
            f"Endpoint=sb://fake-ns{i}.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
            f"SharedAccessKey={rnd(43, B62 + '+/')}="
            for i in range(3)
        ],
    )
    for kind in ("", "RSA ", "EC ", "OPENSSH ", "ENCRYPTED "):
        body = rnd(64, B62 + "+/")
        add(
            "private-key",
            [
                f"-----BEGIN {kind}PRIVATE KEY-----\n{body}\n{rnd(64, B62 + '+/')}\n"
                f"-----END {kind}PRIVATE KEY-----"
            ],
        )
    add(
        "private-key",
        ['"key": "-----BEGIN PRIVATE KEY-----\\n' + rnd(64, B62 + "+/") + '\\n-----END PRIVATE KEY-----"'],
    )
    for alg in ("HS256", "RS256", "ES256", "HS512", "EdDSA"):
        head = b64(json.dumps({"alg": alg, "typ": "JWT"}).encode())
        body = b64(
            json.dumps({"sub": "fake-" + hexs(8), "iat": R.randint(1_600_000_000, 1_800_000_000)}).encode()
        )
        add("jwt", [wrap(f"{head}.{body}.{rnd(43, B62 + '-_')}")])
    add(
        "bearer-token",
        [f"Authorization: Bearer {rnd(40, B62 + '._-')}fake" for _ in range(3)]
        + [f"curl -H 'Authorization: Bearer {rnd(32)}' https://api.fake.dev/v1" for _ in range(2)]
        + [f'headers = {{"Authorization": "Bearer {rnd(36)}FAKE"}}'],
    )
    add(
        "authorization-header",
        [
            "Authorization: Basic " + base64.b64encode(f"fakeuser{i}:{rnd(12)}".encode()).decode()
            for i in range(3)
        ]
        + [f"Authorization: Token {rnd(40)}", f'"authorization": "ApiKey {rnd(32)}FAKE"'],
    )
    add(
        "url-credentials",
        [
            f"DATABASE_URL=postgres://app_user:{rnd(16)}@db.fake-corp.internal:5432/app",
            f"git clone https://deploy:{rnd(20)}@git.fake-corp.dev/team/repo.git",
            f"redis://default:{rnd(24)}@cache.fake.dev:6379/0",
            f"amqp://svc:{rnd(12)}!x@mq.fake.dev/vhost",
            f"mongodb+srv://admin:{rnd(18)}@cluster0.fake.mongodb.net/db",
            f"https://bot:{rnd(10)}9@ci.fake-corp.dev/api",
        ],
    )
    add(
        "basic-auth-credentials",
        [f"curl -u fakeadmin:{rnd(14)} https://api.fake.dev/" for _ in range(2)]
        + [f"curl --user deploy:{rnd(12)} https://x.fake.dev/"],
    )
    add(
        "password-assignment",
        [
            f'password = "{rnd(12)}"',
            f"DB_PASSWORD={rnd(14)}",
            f"password: {rnd(10)}!",
            f'"password": "{rnd(16)}"',
            f"db_pass = '{rnd(12)}'",
            f"jdbc:mysql://db.fake/app?user=svc&password={rnd(12)}",
            f'client_secret: "{rnd(32)}"',
            f"SECRET_KEY = '{rnd(40, B62 + '!@#%^&*')}'",
            f'api_key = "{hexs(32)}"',
            f"mysql --password={rnd(12)} -h db.fake",
            f"passphrase={rnd(10)}#9",
            f'refresh_token: "{rnd(48)}"',
            f"smtp.password = {rnd(12)}",
            f'"apiKey": "{rnd(32)}"',
            'password = "correct-horse-battery-staple"',
        ],
    )
    add(
        "high-entropy-string",
        [
            f'signing_seed = "{rnd(44, B62 + "+/")}"',
            f"FAKE_SIGNING_BLOB={rnd(40)}",
            f"  material: {rnd(48, B62 + '+/')}==",
            f'const blob = "{rnd(32)}";',
            f"paste this: {rnd(36)}",
            f'"x-fake-header": "{rnd(40)}"',
        ],
    )
    # identifiers
    add(
        "provider-session-id",
        [
            f'"sessionId": "{fid()}"',
            f"session_id: {fid()}",
            f"claude_session_id={fid()}",
            f"Codex thread id: {fid()}",
            f'"thread_id": "{fid()}"',
            f"agent_id = {hexs(16)}",
            f'"conversation_id": "{fid()}"',
            f"codex_run_id: {fid()}",
            f"platform_handle: {fid()}",
            f"resume with Claude session {fid()}",
            f"openai thread id {rnd(24)}",
            f'"agentId": "a{hexs(7)}"',
            f"provider_handle = {rnd(20)}",
            f"claude-code-session-id={fid()}",
        ],
    )
    add(
        "provider-id",
        [
            f"thread_{rnd(24)}",
            f"run_{rnd(24)}",
            f"asst_{rnd(24)}",
            f"msg_01{rnd(22)}",
            f"toolu_01{rnd(22)}",
            f"req_011C{rnd(20)}",
            f"resp_{hexs(48)}",
            f"chatcmpl-{rnd(29)}",
            f"sess_{rnd(24)}",
            f"see agent-{hexs(8)}.jsonl",
            f"conv_{rnd(24)}",
        ],
    )
    add("codex-rollout-id", [f"rollout-2026-0{m}-1{m}T10-2{m}-0{m}-{fid()}.jsonl" for m in range(1, 5)])
    # transcripts
    add(
        "claude-code-transcript",
        [
            json.dumps(
                {
                    "parentUuid": fid(),
                    "isSidechain": False,
                    "userType": "external",
                    "cwd": "src",
                    "sessionId": fid(),
                    "type": "user",
                    "message": {"role": "user", "content": "fix the bug"},
                }
            ),
            json.dumps(
                {
                    "parentUuid": None,
                    "isSidechain": True,
                    "type": "assistant",
                    "message": {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
                }
            ),
            json.dumps({"type": "summary", "summary": "Refactor session", "leafUuid": fid()}),
            json.dumps({"type": "user", "toolUseResult": {"stdout": "ok"}, "uuid": fid()}),
            json.dumps({"isMeta": True, "type": "user", "uuid": fid()}),
        ],
    )
    add(
        "codex-transcript",
        [
            json.dumps(
                {
                    "timestamp": "2026-01-01T00:00:00Z",
                    "type": "session_meta",
                    "payload": {"cli_version": "0.1"},
                }
            ),
            json.dumps(
                {
                    "type": "response_item",
                    "payload": {
                        "type": "message",
                        "role": "user",
                        "content": [{"type": "input_text", "text": "hi"}],
                    },
                }
            ),
            json.dumps({"type": "event_msg", "payload": {"type": "agent_message", "message": "ok"}}),
            json.dumps({"type": "turn_context", "payload": {"model": "gpt-5"}}),
            json.dumps(
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "x"}]}
            ),
        ],
    )
    add(
        "chat-message-record",
        [
            '{"role": "user", "content": "please fix the login bug"}',
            '{"role":"assistant","content":"I changed auth.py"}',
            "messages = [{'role': 'system', 'content': 'You are a reviewer'}]",
            '  {"content": "run tests", "role": "user"},',
            '{"role": "model", "parts": [{"text": "ok"}]}',
        ],
    )
    add(
        "chat-role-dump",
        [
            "User: the login page crashes\nAssistant: I will look at auth.py",
            "Human: summarize the diff\n\nAssistant: The diff renames two functions.",
            "**User:** why does it fail?\n**Claude:** the fixture is stale",
            "> user: add a test\n> assistant: added test_login",
            "Human: hi there Assistant: hello, how can I help?",
            "### User\nUser: deploy it\n### Assistant\nCodex: deployed to staging",
        ],
    )
    add(
        "raw-transcript",
        [
            "Raw transcript: User asked to delete the cache",
            'full conversation: {"role": ...',
            "Verbatim chat log: [10:02] me> can you fix",
            "complete session log: started agent",
            "unredacted prompt: You are a senior engineer",
        ],
    )
    # paths
    add(
        "home-path",
        [
            "/home/alice/projects/api/src/main.py",
            "opened /Users/bob.smith/Desktop/notes.txt",
            '"cwd": "/home/dev42/work/repo"',
            "file:///Users/carol/Library/foo",
            "PATH=/usr/bin:/home/erin/bin",
            "log at /root/.cache/tool/run.log",
            "cd /home/fake-user/code && make",
            "see (/Users/dave/tmp/x)",
            "--config=/home/frank/.config/app.yml",
        ],
    )
    add(
        "windows-user-path",
        [
            r"C:\Users\alice\AppData\Roaming\app",
            r'"path": "C:\\Users\\bob\\repo\\src"',
            "D:/Users/carol/code",
            r"C:\Documents and Settings\dave\Desktop",
            r"open C:\Users\erin.fake\notes.md",
        ],
    )
    add(
        "email-address",
        [
            "contact alice.smith@fake-corp.io for access",
            "Co-authored-by: Bob <bob@fakemail.dev>",
            '"email": "carol+ci@fake-company.co.uk"',
            "12345678+dave@users.noreply.github.com",
            "reach erin@fake.org.au",
            "mailto:frank.jones@fakeuniversity.edu",
            "owner: grace_h@fake-startup.ai",
            "from: heidi@fake.de",
        ],
    )
    return out


def negatives() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []

    def add(near: str, texts: list[str]) -> None:
        out.extend((near, t) for t in texts)

    add(
        "openai-api-key",
        [
            "OPENAI_API_KEY=sk-XXXXXXXXXXXXXXXXXXXXXXXX",
            'api_key = "<your-openai-key>"',
            "sk-proj-... (your key here)",
            "task-list-component-for-the-sidebar",
            "risk-assessment-checklist-2026",
            "sk-learn-style estimators",
            "desk-booking-service-v2",
        ],
    )
    add(
        "anthropic-api-key",
        [
            "ANTHROPIC_API_KEY=${ANTHROPIC_API_KEY}",
            "sk-ant-xxxxxxxxxxxxxxxxxxxxxxxx",
            "export ANTHROPIC_API_KEY=sk-ant-...",
        ],
    )
    add(
        "stripe-secret-key",
        [
            "pk_live_ publishable keys are public by design",
            "sk_live_XXXXXXXXXXXXXXXXXXXX",
            "rk_live_<restricted>",
            "STRIPE_KEY = os.environ['STRIPE_SECRET_KEY']",
        ],
    )
    add(
        "google-api-key",
        ["AIzaSy...your-key...", "GOOGLE_API_KEY=$GOOGLE_API_KEY", "AIzaXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"],
    )
    add(
        "aws-access-key-id",
        [
            "AKIAIOSFODNN7EXAMPLE",
            "aws_access_key_id = ${AWS_ACCESS_KEY_ID}",
            "AKIAXXXXXXXXXXXXXXXX",
            "the ASIA region rollout",
        ],
    )
    add(
        "aws-secret-access-key",
        [
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "aws_secret_access_key = os.environ['AWS_SECRET']",
            "SecretAccessKey: <secret>",
        ],
    )
    add(
        "github-token",
        [
            "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
            "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            "token = os.getenv('GH_TOKEN')",
            "github_pat_<redacted>",
        ],
    )
    add("gitlab-token", ["glpat-xxxxxxxxxxxxxxxxxxxx", "CI_JOB_TOKEN=$CI_JOB_TOKEN"])
    add("slack-token", ["xoxb-your-bot-token", "SLACK_BOT_TOKEN=${SLACK_BOT_TOKEN}"])
    add(
        "slack-webhook",
        ["https://hooks.slack.com/services/XXX/YYY/ZZZ", "post to the #deploys slack channel"],
    )
    add("npm-token", ["npm_config_cache=/tmp/npm-cache", "//registry.npmjs.org/:_authToken=${NPM_TOKEN}"])
    add("pypi-token", ["TWINE_PASSWORD=${{ secrets.PYPI_TOKEN }}", "pypi-release-workflow-for-packages"])
    add(
        "huggingface-token",
        [
            "from huggingface_hub import hf_hub_download",
            "HF_TOKEN=$HF_TOKEN",
            "hf_transfer_enabled_for_large_files",
        ],
    )
    add(
        "azure-connection-string",
        ["AccountKey=<storage-account-key>", "AZURE_STORAGE_CONNECTION_STRING=$CONN"],
    )
    add(
        "private-key",
        [
            "-----BEGIN PRIVATE KEY-----",
            "Never commit a file that starts with BEGIN RSA PRIVATE KEY.",
            "-----BEGIN PUBLIC KEY-----\n" + rnd(64, B62 + "+/"),
            "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----",
        ],
    )
    add(
        "jwt",
        [
            "eyJhbGciOi...",
            "a JWT looks like eyJ<header>.eyJ<payload>.<signature>",
            "eyJ" + rnd(20) + "." + "eyJ" + rnd(20) + "." + rnd(20),
        ],
    )
    add(
        "bearer-token",
        [
            "Authorization: Bearer <token>",
            "Authorization: Bearer $API_TOKEN",
            "bearer token authentication is required",
            'headers["Authorization"] = f"Bearer {token}"',
            "Authorization: Bearer ${{ secrets.TOKEN }}",
        ],
    )
    add(
        "authorization-header",
        ["Authorization: Basic <base64 user:pass>", "Authorization: Token {{ api_token }}"],
    )
    add(
        "url-credentials",
        [
            "postgres://user:password@localhost:5432/app",
            "https://user:${PASSWORD}@host.fake/",
            "redis://:@localhost:6379",
            "postgres://postgres:postgres@db:5432/test",
            "https://admin:****@example.com",
            "ssh://git@github.com/org/repo.git",
        ],
    )
    add(
        "basic-auth-credentials",
        ["curl -u $USER:$TOKEN https://api.fake.dev", "curl -u user:password http://x"],
    )
    add(
        "password-assignment",
        [
            "password = get_password()",
            "password: str",
            "password=None",
            "password = args.password",
            "DB_PASSWORD=${DB_PASSWORD}",
            'password = os.environ["DB_PASSWORD"]',
            "secret_name: db-credentials",
            "token = tokenizer.next_token()",
            "max_tokens: 4096",
            "token_count: 1834",
            "password: ********",
            '"password": "<password>"',
            "password_hash = hash_password(raw)",
            "api_key: null",
            "secret: true",
            "PASSWORD_MIN_LENGTH = 12",
            "Enter your password: ",
            "pwd = os.getcwd()",
            "passphrase: changeme",
            "api_key = settings.API_KEY",
            "password = 'password'",
            "--password $DB_PASSWORD",
            # found on this repository's own code while tuning: env-var names and word slugs
            'ENV_API_KEY = "CM_OPENAI_COMPATIBLE_API_KEY"',
            '"OPENAI_API_KEY": "demo-key-not-a-secret"',
        ],
    )
    add(
        "high-entropy-string",
        [
            "commit 9f2c4e1a7b3d5f6e8a0b1c2d3e4f5a6b7c8d9e0f",
            "capsule_hash: sha256:" + hexs(64),
            "integrity sha512-" + rnd(86, B62 + "+/") + "==",
            '"id": "' + fid() + '"',
            "task_id: " + fid(),
            "getUserAuthenticationTokenFromSessionStorage",
            "src/components/NavigationBar/DropdownMenuItem.tsx",
            "image: registry.fake/app@sha256:" + hexs(64),
            "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB",
            "checksum: " + hexs(40),
            "ThisIsAVeryLongCamelCaseIdentifierName",
            "test_user_can_reset_password_via_email",
            '"resolved": "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz"',
            "revision: " + hexs(40),
            "node_modules/.pnpm/react-dom@18.2.0_react@18.2.0/node_modules/react-dom",
            'etag: "' + hexs(32) + '"',
            "x-request-nonce: " + hexs(32),
        ],
    )
    add(
        "provider-session-id",
        [
            "session timeout: 30 minutes",
            "session_id: <session-id>",
            "thread_id: null",
            "agent_id = ${AGENT_ID}",
            "run_id: cm-ai-20260806-0001",
            '"call_id": "planner-20260806-0001"',
            "the Codex agent handles retries",
            "claude session handling is documented below",
            "platform_handle: null",
            "platform_handle: anon-" + hexs(16),
            "session-id header is optional",
            "Thread id: see the issue tracker",
            "measurement_run_id: measurement-" + hexs(16),
        ],
    )
    add(
        "provider-id",
        [
            "thread-safe-queue",
            "run-integration-tests",
            "run_integration_tests_nightly",
            "msg_queue_consumer_started",
            "req_timeout_seconds",
            "agent-handbook.md",
            "thread_pool_executor_max_workers",
            "sess_timeout_ms",
            "resp_body_max_bytes",
        ],
    )
    add("codex-rollout-id", ["rollout-2026-plan.md", "the rollout advances from canary 10 to 25"])
    add(
        "claude-code-transcript",
        [
            '{"type": "user", "name": "alice-role"}',
            '"uuid": "' + fid() + '"',
            "userTypes are listed in the schema docs",
        ],
    )
    add(
        "codex-transcript",
        [
            '{"type": "message", "text": "hello"}',
            '"type": "event"',
            "response items are summarized, not stored",
        ],
    )
    add(
        "chat-message-record",
        [
            '{"role": "admin", "permissions": ["read"]}',
            '"role": "reviewer"',
            "the role of the user content team",
            '"messages": [{"role": "system", "content": system_prompt}]',
        ],
    )
    add(
        "chat-role-dump",
        [
            "User: stories are tracked in the backlog",
            "Assistant: see the role table above",
            "As a user: I want to log in",
            "System: Linux x86_64",
            "Model: gpt-5 (configured)",
        ],
    )
    add(
        "raw-transcript",
        [
            "Run the full test suite and attach the log",
            "Raw transcripts are never stored.",
            "the full conversation is summarized in the capsule",
            "do not paste the raw prompt",
            "full test log: see knowzcode/artifacts/sha256-" + hexs(64) + ".json",
            "labels such as `Raw transcript:` are reported",
        ],
    )
    add(
        "home-path",
        [
            "/usr/local/bin/python3",
            "https://example.com/home/users/list",
            "src/home/page.tsx",
            "~/projects/app",
            "/home/<user>/project",
            "/home/$USER/.config",
            "api/Users/list.ts",
            "/var/lib/app/data",
            "the /home page",
            "/Users/{username}/Library",
            "app/routes/home/index.tsx",
            '# "/root/..." is the root home',
        ],
    )
    add(
        "windows-user-path",
        [
            r"C:\Program Files\App\app.exe",
            r"%USERPROFILE%\AppData",
            r"C:\Users\<name>\x",
            r"C:\Users\Public\Documents",
            "Users: 42 active",
        ],
    )
    add(
        "email-address",
        [
            "author@example.com",
            "ci@example.invalid",
            "bob@test.example",
            "noreply@fake-corp.io",
            "git@github.com:org/repo.git",
            "logo@2x.png",
            "lodash@4.17.21",
            "@pytest.fixture",
            "user@localhost",
            "npm install @scope/pkg@1.2.3",
            "support at example dot com",
            "no-reply@company.dev",
            "pkg@1.0.0.tgz",
        ],
    )
    # the reference's false positives and general prose
    add(
        "provider-session-id",
        [
            "Resume the agent session only when the lineage is HOT.",
            "Each run records its reason codes.",
            "The thread pool has 8 workers.",
        ],
    )
    return out


def main() -> None:
    rows: list[dict[str, str | None]] = [{"expect": rule, "text": text} for rule, text in positives()]
    rows += [{"expect": None, "near": near, "text": text} for near, text in negatives()]
    with open(HERE / "cases.jsonl", "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(
        f"{sum(1 for r in rows if r['expect'])} positive, {sum(1 for r in rows if not r['expect'])} negative"
    )


if __name__ == "__main__":
    main()
