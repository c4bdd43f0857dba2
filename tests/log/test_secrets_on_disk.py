"""Nothing secret on disk in clear (R-S1): 33 planted secrets, every file a run wrote is grepped.

Secrets are planted where a real run meets them — user text, the system prompt, a tool's
description, request settings, tool results, model output, a 401 body echoing the client's own
key, and credentials in `base_url` — and a real loopback server answers the real client.
"""

from __future__ import annotations

import json
from pathlib import Path

import harnesskit as hk
from harnesskit.models._retry import RetryPolicy
from tests.support.loopback import Reply, completion, tool_call

OWN_KEY = "loopback-own-key-7Yq2Zr"  # no known key format: only the client knows it is secret
URL_PASSWORD = "urlPassw0rd99"
PRIVATE_KEY_BODY = "MIIEowIBAAKCAQEAplanted0key0body"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbGFudGVkIn0.c2lnbmF0dXJlcGxhbnRlZDEy"

SECRETS = {
    "user: stripe live": "sk_live_51PlantedUserKey0123",
    "user: hugging face": "hf_PlantedHuggingFaceToken0123456789",
    "user: phrase": "Tr0ub4dorPlanted",
    "user: aws secret": "wJalrXUtnFEMIplantedK7MDENGbPxRfiCY",
    "user: anthropic": "sk-ant-api03-PlantedUserKey0123456789",
    "description: github fine-grained": "github_pat_11PLANTED0_description0123456789abc",
    "description: password": "descPassw0rdPlanted",
    "settings: openai": "sk-proj-PlantedSettingsKey0123456789",
    "settings: stripe test": "sk_test_PlantedSettings0123",
    "system: jwt": JWT,
    "result: jwt": JWT.replace("plantedMTI", "x") + "result",
    "result: double-escaped password": "dblEscapedPlanted",
    "result: private key": PRIVATE_KEY_BODY,
    "result: bearer": "PlantedBearerToken0123456789",
    "result: aws key id": "AKIAPLANTED0KEY01234",
    "result: slack": "xoxb-planted-slack-0123456789",
    "result: github classic": "ghp_PlantedGithubClassicToken0123456789",
    "result: google": "AIzaPlantedGoogleKey0123456789abcdefghi",
    "result: token field": "tokPlanted0123456",
    "result: url credentials": "dbPassPlanted42",
    "model: stripe restricted": "rk_live_PlantedModelKey0123",
    "model: argument password": "argPassPlanted77",
    "model: passphrase": "phrasePlanted55",
    "401 body: own key": OWN_KEY,
    "base_url: password": URL_PASSWORD,
    "user: slack session": "xoxs-planted-slack-session-0123",
    "result: session cookie": "PlantedSessionCookie01",
    "result: gitlab": "glpat-PlantedGitlab0123456789",
    "result: npm": "npm_PlantedNpmToken0123456789abcdefghij",
    "result: stripe webhook": "whsec_PlantedStripeWebhook0123456789",
    "result: google oauth": "ya29.a0PlantedGoogleOauth0123456789",
    "result: bearer on the next line": "PlantedSplitBearer0123",
    "model: curl password": "PlantedCurlPass77",
}
assert len(SECRETS) == 33


@hk.tool(risk="write")  # a write: its calls and results go to the ledger file too
def lookup(query: str, password: str = "") -> dict:
    """Look up the account (service login: password: descPassw0rdPlanted).

    Deploy token github_pat_11PLANTED0_description0123456789abc is used internally.

    Args:
        query: what to look up.
        password: the account password.
    """
    s = SECRETS
    return {
        "jwt": s["result: jwt"],
        "config": json.dumps(json.dumps({"password": s["result: double-escaped password"]})),
        "pem": f"-----BEGIN RSA PRIVATE KEY-----{PRIVATE_KEY_BODY}-----END RSA PRIVATE KEY-----",
        "header": f"Authorization: Bearer {s['result: bearer']}",
        "aws": s["result: aws key id"],
        "slack": s["result: slack"],
        "gh": s["result: github classic"],
        "google": s["result: google"],
        "token": s["result: token field"],
        "dsn": f"postgres://app:{s['result: url credentials']}@db.internal:5432/app",
        "owner": "ann@example.com",
        "session": f"Set-Cookie: sessionid={s['result: session cookie']}; Path=/; HttpOnly",
        "ci": [s["result: gitlab"], s["result: npm"], s["result: stripe webhook"]],
        "oauth": s["result: google oauth"],
        "request": f"Authorization: Bearer\n{s['result: bearer on the next line']}",
    }


def test_no_planted_secret_reaches_any_file_the_run_wrote(server, tmp_path):
    s = SECRETS
    model_says = (
        f"Using {s['model: stripe restricted']}; the passphrase is {s['model: passphrase']}; "
        f"then curl -u admin:{s['model: curl password']} https://api.example.com"
    )
    args = {"query": "acct", "password": s["model: argument password"]}
    server.script(
        Reply(json=completion(model_says, tool_calls=[tool_call("lookup", args)])),
        Reply(json=completion("done")),
        Reply(status=401, json={"error": {"message": f"Incorrect API key provided: {OWN_KEY}."}}),
    )
    url = server.url.replace("http://", f"http://hk:{URL_PASSWORD}@")
    model = hk.get_model(
        "openai-compat:m", base_url=url, api_key=OWN_KEY, retry=RetryPolicy(max_retries=0)
    )
    settings = {
        "metadata": {"api_key": s["settings: openai"], "billing": s["settings: stripe test"]}
    }
    h = hk.Harness(
        [lookup],
        model,
        log_dir=tmp_path,
        system_prompt=f"Service JWT: {JWT}",
        settings=settings,
        gate=hk.Gate(workspace=tmp_path),
    )
    user = (
        f"key {s['user: stripe live']} and {s['user: hugging face']}; my password is "
        f"{s['user: phrase']}; aws_secret_access_key={s['user: aws secret']}; "
        f"also {s['user: anthropic']} and {s['user: slack session']}"
    )
    first = h.start(user, run_id="planted").run()
    second = h.start("again", run_id="echoed").run()

    assert first.finish_reason == "stop" and second.finish_reason == "error"
    assert len(server.requests) == 3  # the secrets really went through the client
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {p.suffix for p in files} >= {".jsonl", ".idem"}
    on_disk = "\n".join(p.read_bytes().decode(errors="replace") for p in files)
    found = {name for name, secret in SECRETS.items() if secret in on_disk}
    assert found == set()
    # what is shown and raised is clean too; personal data stays exact and is marked
    shown = f"{model!r} {second.error} {second.error.body} {model._hint(404)}"
    assert OWN_KEY not in shown and URL_PASSWORD not in shown
    assert "ann@example.com" in on_disk
    assert first.log.of_type("tool.result")[0].payload["personal_data"] == ["email"]


def test_bind_hands_a_tool_the_exact_values_the_log_shows_redacted(tmp_path):
    from harnesskit.testing import reply

    sent = []

    @hk.tool
    def get_contact() -> dict:
        """The contact."""
        return {"email": "ann@example.com", "token": "sk-proj-ExactForTheTool0123456789"}

    @hk.tool(risk="write")
    def send_mail(to: str, token: str) -> str:
        """Send a mail."""
        sent.append((to, token))
        return "sent"

    model = hk.ScriptedModel([
        reply.tool_call("get_contact", id="c1"),
        reply.tool_call("send_mail", to={"$bind": "c1#/email"}, token={"$bind": "c1#/token"}),
        reply.text("done"),
    ])  # fmt: skip
    run = hk.Harness([get_contact, send_mail], model, log_dir=tmp_path).run("mail ann")
    assert sent == [("ann@example.com", "sk-proj-ExactForTheTool0123456789")]
    on_disk = Path(run.log.path).read_text()
    assert "sk-proj-ExactForTheTool" not in on_disk and "[REDACTED:api_key]" in on_disk
