"""Request fields the runtime sets cannot be replaced through `settings` or `extra_body`.

`settings={"messages": [...]}` or `extra_body={"messages": [...]}` replaced the whole prompt
sent while the `model.request` event logged the prompt the runtime built: what went out was
neither logged, redacted nor checked for its data class. Each such key is now a `UsageError`
naming it and where it belongs; the event logs what is sent.
"""

from __future__ import annotations

import pytest

import harnesskit as hk
from harnesskit.errors import UsageError
from harnesskit.messages import Message, ModelRequest
from tests.support.edge_client import lookup_order, make
from tests.support.loopback import Reply, completion


@pytest.mark.parametrize(
    ("key", "where"),
    [
        ("messages", "run.send"),
        ("tools", "Harness"),
        ("functions", "Harness"),
        ("model", "get_model"),
        ("n", "first choice"),
    ],
)
def test_settings_naming_a_runtime_field_are_refused_by_the_harness(server, tmp_path, key, where):
    with pytest.raises(UsageError, match=rf"settings\['{key}'\] is a request field .*{where}"):
        hk.Harness([lookup_order], make(server), log_dir=tmp_path, settings={key: []})
    with pytest.raises(UsageError, match=rf"settings\['{key}'\]"):
        ModelRequest(messages=(Message(role="user", content="hi"),), settings={key: 1})
    assert server.requests == []


@pytest.mark.parametrize("key", ["messages", "tools", "functions", "model", "n", "stream"])
def test_extra_body_naming_a_runtime_field_is_refused_at_construction(server, key):
    with pytest.raises(UsageError, match=rf"extra_body=\.\.\.\) holds '{key}'"):
        make(server, extra_body={key: [{"role": "user", "content": "INJECTED"}]})


def test_the_logged_prompt_is_the_prompt_sent(server, tmp_path):
    server.script(Reply(json=completion("hi")))
    model = make(server, extra_body={"top_k": 20})
    model.extra_body["messages"] = [{"role": "user", "content": "INJECTED"}]  # edited later
    model.extra_body["model"] = "other"
    run = hk.Harness([lookup_order], model, log_dir=tmp_path).run("real question")

    sent = server.requests[0].body
    assert sent["top_k"] == 20 and sent["model"] == "edge"
    assert "INJECTED" not in str(sent)
    (request,) = run.log.of_type("model.request")
    assert sent["messages"] == run.log.request_messages(request.event_id)


@pytest.mark.parametrize("key", ["Messages", "TOOLS", "Model", "N", "Stream"])
def test_a_case_variant_of_a_runtime_field_in_extra_body_is_refused(server, key):
    # servers that read field names without regard to case (Go's encoding/json) take
    # "Messages" for "messages": the variant would replace the prompt the runtime built
    with pytest.raises(UsageError, match=rf"holds '{key}'.*read as '{key.lower()}'"):
        make(server, extra_body={key: [{"role": "user", "content": "INJECTED"}]})
    assert server.requests == []


@pytest.mark.parametrize("key", ["Messages", "TOOLS", "Model"])
def test_a_case_variant_of_a_runtime_field_in_settings_is_refused(server, tmp_path, key):
    said = rf"settings\['{key}'\] is a request field the runtime sets.*'{key.lower()}'"
    with pytest.raises(UsageError, match=said):
        hk.Harness([lookup_order], make(server), log_dir=tmp_path, settings={key: []})
    with pytest.raises(UsageError, match=r"settings\['Stream'\] is not a setting.*'stream'"):
        ModelRequest(messages=(Message(role="user", content="hi"),), settings={"Stream": True})
    assert server.requests == []


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ({"extra_body": {"messages": []}}, "holds 'extra_body': extra_body's own fields"),
        ({"Extra_Body": {"model": "other"}}, "holds 'Extra_Body'"),
        ({"timeout_seconds": 5}, r"an option of the client.*OpenAICompatModel\(timeout_seconds"),
    ],
    ids=["nested", "nested-case", "client-option"],
)
def test_a_nested_extra_body_or_a_client_option_in_extra_body_is_refused(server, extra, said):
    with pytest.raises(UsageError, match=said):
        make(server, extra_body=extra)


def test_a_case_variant_added_to_extra_body_later_is_not_sent(server, tmp_path):
    server.script(Reply(json=completion("hi")))
    model = make(server, extra_body={"top_k": 20})
    model.extra_body["Messages"] = [{"role": "user", "content": "INJECTED"}]  # edited later
    hk.Harness([lookup_order], model, log_dir=tmp_path).run("real question")

    sent = server.requests[0].body
    assert sent["top_k"] == 20 and "Messages" not in sent
