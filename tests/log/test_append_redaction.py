"""`EventLog.append` redacts every credential form wherever a payload holds it (R-S1, R-S2).

The pre-check that decides whether a line is scanned was rebuilt for speed (each trigger looked
for from its rarest character); these tests append one event per secret and placement to a real
file and read the bytes back: the clear text is never there, its marker is, and e-mail
addresses are kept and marked.
"""

from __future__ import annotations

import json

import pytest

import harnesskit as hk
from harnesskit.log import redact

JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbGFudGVkIn0.c2lnbmF0dXJlcGxhbnRlZDEy"
#: `(text holding a secret, the secret part that must not reach the file, its kind)`.
SECRETS = [
    ("sk-proj-PlantedKey0123456789abcd", "PlantedKey0123456789abcd", "api_key"),
    ("sk_live_51PlantedKey0123", "51PlantedKey0123", "api_key"),
    ("rk_test_PlantedKey0123", "PlantedKey0123", "api_key"),
    ("github_pat_11PLANTED0_abcdefghij0123456789", "11PLANTED0_abcdefghij0123456789", "api_key"),
    ("ghs_PlantedGithubServerToken0123456789", "PlantedGithubServerToken0123456789", "api_key"),
    ("hf_PlantedHuggingFaceToken0123456789", "PlantedHuggingFaceToken0123456789", "api_key"),
    ("xoxb-planted-slack-0123456789", "planted-slack-0123456789", "api_key"),
    ("AKIAPLANTED0KEY01234", "PLANTED0KEY01234", "api_key"),
    ("ASIAPLANTED0KEY01234", "PLANTED0KEY01234", "api_key"),
    ("AIzaPlantedGoogleKey0123456789abcdefghi", "PlantedGoogleKey0123456789abcdefghi", "api_key"),
    ("Authorization: Bearer PlantedBearer0123456", "PlantedBearer0123456", "bearer"),
    ("authorization: basic dXNlcjpQbGFudGVk", "dXNlcjpQbGFudGVk", "bearer"),
    (JWT, JWT, "jwt"),
    ("password=PlantedPassw0rd", "PlantedPassw0rd", "password"),
    ("PASSWD: PlantedPasswd1", "PlantedPasswd1", "password"),
    ("pwd=PlantedPwd123", "PlantedPwd123", "password"),
    ("client_secret=PlantedSecret99", "PlantedSecret99", "password"),
    ("X-Api-Key: PlantedApiKey99", "PlantedApiKey99", "password"),
    ("aws_access_key=PlantedAccess99", "PlantedAccess99", "password"),
    ("private_key=PlantedPrivate99", "PlantedPrivate99", "password"),
    ("token: PlantedTokenValue1", "PlantedTokenValue1", "password"),
    ("credentials=PlantedCreds123", "PlantedCreds123", "password"),
    ("SecretAccessKey: PlantedAwsSecret99", "PlantedAwsSecret99", "password"),
    ("privateKey=PlantedPrivate98", "PlantedPrivate98", "password"),
    ("private-key: PlantedPrivate97", "PlantedPrivate97", "password"),
    ("the passcode was: PlantedCode42", "PlantedCode42", "password_phrase"),
    ("my passphrase is PlantedPhrase7", "PlantedPhrase7", "password_phrase"),
    (
        "-----BEGIN RSA PRIVATE KEY-----MIIEplanted0body-----END RSA PRIVATE KEY-----",
        "MIIEplanted0body",
        "private_key",
    ),
    ("postgres://app:PlantedDbPass42@db.internal:5432/app", "PlantedDbPass42", "url_credentials"),
    # session cookies, whole header values
    ("Cookie: sessionid=PlantedSession01; csrftoken=abc", "PlantedSession01", "cookie"),
    ("Set-Cookie: sessionid=PlantedSession02; Path=/; HttpOnly", "PlantedSession02", "cookie"),
    ("set-cookie: __Host-SID=PlantedSession03; Secure", "PlantedSession03", "cookie"),
    # user:password on a command line
    ("curl -u admin:PlantedCurlPass1 https://api.example.com", "PlantedCurlPass1", "basic_auth"),
    ("curl --user=admin:PlantedCurlPass2 https://x", "PlantedCurlPass2", "basic_auth"),
    ("curl -U 'proxy:PlantedProxyPass3' https://x", "PlantedProxyPass3", "basic_auth"),
    ("http --auth ann:PlantedHttpiePass4 GET https://x", "PlantedHttpiePass4", "basic_auth"),
    # token prefixes of the same families as the ones already known
    ("glpat-PlantedGitlab0123456789", "PlantedGitlab0123456789", "api_key"),
    ("gldt-PlantedGitlabDeploy012345", "PlantedGitlabDeploy012345", "api_key"),
    ("npm_PlantedNpmToken0123456789abcdefghij", "PlantedNpmToken0123456789abcdefghij", "api_key"),
    ("pypi-AgEIcHlwaS5vcmcCJDPlanted" + "0" * 40, "AgEIcHlwaS5vcmcCJDPlanted", "api_key"),
    ("whsec_PlantedStripeWebhook0123456789", "PlantedStripeWebhook0123456789", "api_key"),
    ("ya29.a0PlantedGoogleOauth0123456789", "a0PlantedGoogleOauth0123456789", "api_key"),
    ("1//0gPlantedGoogleRefresh0123456789abc", "PlantedGoogleRefresh0123456789abc", "api_key"),
    ("xoxs-planted-slack-session-0123", "planted-slack-session-0123", "api_key"),
    ("xoxe.xoxp-1-PlantedSlackRotating01", "PlantedSlackRotating01", "api_key"),
    ("xapp-1-A0PLANTED-0123456789", "A0PLANTED-0123456789", "api_key"),
    # a credential on the line after its scheme or name (raw here, JSON-escaped in the log)
    ("Authorization: Bearer\nPlantedSplitBearer01", "PlantedSplitBearer01", "bearer"),
    ("Authorization: Basic\r\n  dXNlcjpQbGFudGVkU3BsaXQ=", "dXNlcjpQbGFudGVkU3BsaXQ=", "bearer"),
    ("X-Api-Key:\nPlantedNextLineKey1", "PlantedNextLineKey1", "password"),
    # URL userinfo: an empty user, a password holding `/` or `@` (ends at the last `@`)
    ("redis://:PlantedRedisPw1@cache.local:6379/0", "PlantedRedisPw1", "url_credentials"),
    ("postgres://app:Planted/Slash9@db.local/app", "Planted/Slash9", "url_credentials"),
    ("https://bob:Pl@ntedAt99@host.example/x", "Pl@ntedAt99", "url_credentials"),
    # the password-like key names, one grammar for JSON keys, env names and YAML
    ('{"passcode": "PlantedCode77"}', "PlantedCode77", "password"),
    ('{"user": "bob", "pass": "PlantedPass77"}', "PlantedPass77", "password"),
    ("DB_PASS=PlantedDbPass1", "PlantedDbPass1", "password"),
    ("MYSQL_ROOT_PASSWD=PlantedPasswd2", "PlantedPasswd2", "password"),
    ("APP_SECRET=PlantedAppSecret3", "PlantedAppSecret3", "password"),
    ('{"accessKey": "PlantedAccessKey6"}', "PlantedAccessKey6", "password"),
    ("access-key: PlantedAccessKey7", "PlantedAccessKey7", "password"),
    ("mysql -u root -pPlantedMysql4 shop", "PlantedMysql4", "basic_auth"),
    ("sshpass -p 'PlantedSshpass5' ssh host", "PlantedSshpass5", "basic_auth"),
    # config and CLI forms (a fresh-user test's list): more credential names, name/value
    # pairs, a value to the end of its YAML line, long options after a space, client options
    ("db:\n  password: correct horse PlantedLine4\n  host: x", "PlantedLine4", "password"),
    ("env:\n- name: DB_PASSWORD\n  value: PlantedK8s1", "PlantedK8s1", "password"),
    ('[{"name": "DB_PASSWORD", "value": "PlantedEcs2"}]', "PlantedEcs2", "password"),
    ('<add key="ApiKey" value="PlantedDotnet3"/>', "PlantedDotnet3", "password"),
    ("AccountName=a;AccountKey=PlantedAzure4==;EndpointSuffix=x", "PlantedAzure4", "password"),
    ("ENCRYPTION_KEY=PlantedEnc5", "PlantedEnc5", "password"),
    ("RAILS_MASTER_KEY=PlantedMaster6", "PlantedMaster6", "password"),
    ("X-Auth-Key: PlantedCfKey7", "PlantedCfKey7", "password"),
    ('{"auths": {"r.io": {"auth": "PlantedDockerAuth8"}}}', "PlantedDockerAuth8", "password"),
    ('{"identitytoken": "PlantedIdTok9"}', "PlantedIdTok9", "password"),
    ("authtoken: PlantedNgrok10", "PlantedNgrok10", "password"),
    ("client-key-data: PlantedKubeKey11", "PlantedKubeKey11", "password"),
    ("GITHUB_PAT=PlantedPat12", "PlantedPat12", "password"),
    ("SSHPASS=PlantedSshEnv13 sshpass -e ssh h", "PlantedSshEnv13", "password"),
    ("wget --user=bob --password PlantedWget1 https://x", "PlantedWget1", "basic_auth"),
    ("docker login -u bob -p PlantedDocker2 r.io", "PlantedDocker2", "basic_auth"),
    ("redis-cli -h cache -a PlantedRedis3 ping", "PlantedRedis3", "basic_auth"),
    ("ldapsearch -D cn=admin -w PlantedLdap4 -b dc=x", "PlantedLdap4", "basic_auth"),
    ("sqlcmd -S srv -U sa -P PlantedSqlcmd5", "PlantedSqlcmd5", "basic_auth"),
    ("requests.get(u, auth=('bob', 'PlantedTuple6'))", "PlantedTuple6", "basic_auth"),
    ("curl -u :PlantedEmptyUser7 https://api", "PlantedEmptyUser7", "basic_auth"),
    ("mytool --token PlantedTokOpt8 run", "PlantedTokOpt8", "basic_auth"),
    ("gh auth login --with-token PlantedGhTok9", "PlantedGhTok9", "basic_auth"),
    ("machine api.x.com login bob password PlantedNetrc1", "PlantedNetrc1", "password_phrase"),
    ("The password for the admin account is PlantedFor2", "PlantedFor2", "password_phrase"),
    ("my pw is PlantedPw3", "PlantedPw3", "password_phrase"),
    ("ConvertTo-SecureString 'PlantedPs4' -AsPlainText", "PlantedPs4", "password_phrase"),
    (
        "https://a.blob.core.windows.net/c/b?sv=2020&sig=PlantedSasSig0123%3D",
        "PlantedSasSig",
        "api_key",
    ),
    ("https://s3.x/b/k?X-Amz-Signature=PlantedS3Sig0123456", "PlantedS3Sig", "api_key"),
    ("https://p.firebaseio.com/u.json?auth=PlantedFbAuth0123456", "PlantedFbAuth", "api_key"),
    # a cookie jar: a mapping's values, a browser's list of cookie objects' values
    ('{"cookies": {"sessionid": "PlantedJarSid1", "theme": "dark"}}', "PlantedJarSid1", "cookie"),
    ("requests.get(u, cookies={'sid': 'PlantedJarSid2'})", "PlantedJarSid2", "cookie"),
    (
        '{"cookies": [{"name": "sid", "value": "PlantedJarSid3", "domain": ".example.com"}]}',
        "PlantedJarSid3",
        "cookie",
    ),
    ("http -a alice:PlantedHttpie6 example.org", "PlantedHttpie6", "basic_auth"),
    ("https --verify=no -a 'bob:PlantedHttpie7' api.example.org/x", "PlantedHttpie7", "basic_auth"),
    # sensitive headers: one list of names, every form (a pair in a list of headers too)
    ('[["Set-Cookie", "sid=PlantedPairCookie1; HttpOnly"]]', "PlantedPairCookie1", "header"),
    ('[["x-api-key", "PlantedPairKey2"]]', "PlantedPairKey2", "header"),
    ("Ocp-Apim-Subscription-Key: PlantedApim3", "PlantedApim3", "password"),
    ("X-Auth: PlantedXAuth4", "PlantedXAuth4", "password"),
    ("X-Auth-Token: PlantedXAuthToken5", "PlantedXAuthToken5", "password"),
    ("Proxy-Authorization: Basic PlantedProxyAuth6", "PlantedProxyAuth6", "bearer"),
    # split across lines: a YAML block scalar, a JWT broken after its dots
    ("password: |\n  PlantedBlock1\n", "PlantedBlock1", "password"),
    ("client_secret: >-\n  PlantedFolded2\n", "PlantedFolded2", "password"),
    # every line of a block scalar, spaces and quotes included, up to the next key
    (
        "db:\n  password: |\n    Planted horse\n\n    PlantedLine2 x\n  host: h",
        "PlantedLine2",
        "password",
    ),
    ('password: >-\n  correct "PlantedQuoted3" staple\nuser: bob', "PlantedQuoted3", "password"),
    (JWT.replace(".", ".\n"), JWT.split(".")[2], "jwt"),
    # markup
    ("<password>PlantedMarkup1</password>", "PlantedMarkup1", "password"),
    ("<db_token kind='x'>Planted Markup2</db_token>", "Planted Markup2", "password"),
    # token prefixes, webhook URLs, a `key` query parameter
    ("GOCSPX-PlantedGoogleSecret012345", "PlantedGoogleSecret012345", "api_key"),
    ("rubygems_" + "Planted0" * 6, "Planted0" * 6, "api_key"),
    ("dckr_pat_PlantedDocker0123456789ab", "PlantedDocker0123456789ab", "api_key"),
    ("hvs.CAESIPlantedVault0123456789", "CAESIPlantedVault0123456789", "api_key"),
    ("SG." + "PlantedSendGrid0123456" + "." + "x" * 43, "PlantedSendGrid0123456", "api_key"),
    ("shpat_" + "Planted0" * 4, "Planted0" * 4, "api_key"),
    ("shpss_" + "Planted1" * 4, "Planted1" * 4, "api_key"),
    ("dop_v1_" + "Planted2" * 8, "Planted2" * 8, "api_key"),
    ("glsa_" + "Planted3" * 4 + "_0123abcd", "Planted3" * 4, "api_key"),
    (
        "https://hooks.slack.com/services/T0PLANTED/B0PLANTED/PlantedSlackHook0123",
        "PlantedSlackHook0123",
        "api_key",
    ),
    (
        "https://discord.com/api/webhooks/123456789012345678/PlantedDiscordHook0123456789",
        "PlantedDiscordHook0123456789",
        "api_key",
    ),
    (
        "https://maps.example.com/api?key=PlantedQueryKey0123456789&x=1",
        "PlantedQueryKey0123456789",
        "api_key",
    ),
]
LONG = "flight HAT136 on 2024-05-20, reservation 4WQ150, seat 12C; " * 20  # > 512 chars


def _placements(text: str) -> dict[str, tuple[str, dict, str]]:
    """`{where: (type, payload, summary)}` putting `text` in one place of an event each."""
    return {
        "summary": ("checkpoint", {"stage": "plan"}, text),
        "arguments": ("tool.call", {"tool": "t", "arguments": {"q": {"deep": [1, text]}}}, ""),
        "raw arguments": ("tool.call", {"tool": "t", "raw_arguments": json.dumps({"q": text})}, ""),
        "long result": ("tool.result", {"tool": "t", "content": LONG + text + LONG}, ""),
        "key": ("tool.result", {"tool": "t", "content": "{}", "seen": {text: 1}}, ""),
        "model text": ("model.response", {"message": {"role": "assistant", "content": text}}, ""),
    }


CASES = [
    pytest.param(text, secret, where, id=f"{where}: {text[:24]}")
    for text, secret, _ in SECRETS
    for where in _placements(text)
]


@pytest.mark.parametrize(("text", "secret", "where"), CASES)
def test_a_secret_anywhere_in_an_event_never_reaches_the_file(tmp_path, text, secret, where):
    type_, payload, summary = _placements(text)[where]
    log = hk.EventLog(tmp_path / "r.jsonl")
    log.append("user.message", {"content": "hello"}, source="user")
    log.append(type_, payload, summary=summary)
    log.close()
    data = (tmp_path / "r.jsonl").read_text(encoding="utf-8")
    assert secret not in data and json.dumps(secret)[1:-1] not in data
    assert "[REDACTED:" in data.splitlines()[1]
    assert secret not in json.dumps(log.events[-1].to_dict())  # what the log shows, too


@pytest.mark.parametrize(("text", "secret", "kind"), SECRETS, ids=[s[0][:24] for s in SECRETS])
def test_every_credential_form_wakes_the_pre_check_and_is_rewritten(text, secret, kind):
    r = redact.Redactor()
    for form in (text, json.dumps(text), json.dumps(json.dumps(text)), text.upper()):
        assert r.needs(form), form  # raw, escaped once and twice, any case
    out, counts = r.redact(text)
    assert secret not in out and counts.get(kind)


def test_a_trigger_in_the_summary_with_the_value_in_the_payload_is_scanned_as_one_line(tmp_path):
    # the pre-check reads the summary and the payload as one text: a line whose only trigger is
    # in one field still has every field redacted
    log = hk.EventLog(tmp_path / "r.jsonl")
    log.append(
        "tool.result",
        {"tool": "t", "content": "ok", "note": "sk-proj-PlantedKey0123456789abcd"},
        summary="password=PlantedPassw0rd",
    )
    log.close()
    data = (tmp_path / "r.jsonl").read_text(encoding="utf-8")
    assert "PlantedPassw0rd" not in data and "PlantedKey0123456789abcd" not in data


def test_an_email_anywhere_is_kept_and_marked_personal(tmp_path):
    log = hk.EventLog(tmp_path / "r.jsonl")
    for where, (type_, payload, summary) in _placements("reach me at ann.lee@example.com").items():
        log.append(type_, payload, summary=summary)
        assert log.events[-1].payload.get("personal_data") == ["email"], where
    log.close()
    lines = (tmp_path / "r.jsonl").read_text(encoding="utf-8").splitlines()
    assert all(
        "ann.lee@example.com" in line and '"personal_data":["email"]' in line for line in lines
    )


def test_a_clean_line_is_written_unchanged(tmp_path):
    log = hk.EventLog(tmp_path / "r.jsonl")
    payload = {"tool": "get_user", "content": LONG, "usage": {"prompt_tokens": 3}}
    log.append("tool.result", payload, summary="token_estimate 12, prompt_tokens 3")
    log.close()
    line = (tmp_path / "r.jsonl").read_text(encoding="utf-8").splitlines()[0]
    assert json.loads(line)["payload"] == payload and "REDACTED" not in line
