"""R-S2 in a run: each request's data class comes from the events it carries, and a model's
`max_data_class` is enforced before anything is sent (real loopback servers)."""

from __future__ import annotations

import pytest

import harnesskit as hk
from harnesskit.data.transport import TransportPolicy
from harnesskit.errors import UsageError
from harnesskit.log import ModelRequestEvent
from harnesskit.models import base, get_model
from harnesskit.models._retry import RetryPolicy
from harnesskit.models.fallback import FallbackModel, FallbackNode
from harnesskit.testing import reply
from tests.support.loopback import LoopbackServer, Reply, completion

FAST = RetryPolicy(max_retries=0, initial_backoff_seconds=0.01, max_backoff_seconds=0.02)
PIN = "4711-CANARY"


@pytest.fixture
def servers(monkeypatch):
    monkeypatch.setattr(base, "ALLOW_MODEL_REQUESTS", True)
    with LoopbackServer() as a, LoopbackServer() as b:
        a.script(*[Reply(json=completion("from a"))] * 5)
        b.script(*[Reply(json=completion("from b"))] * 5)
        yield a, b


def _model(srv, name, limit):
    return get_model(f"openai-compat:{name}", base_url=srv.url, retry=FAST, max_data_class=limit)


def _with_restricted(h: hk.Harness) -> hk.Run:
    run = h.start("hello", run_id="dc")
    run.log.append(
        "user.message", {"content": f"My PIN is {PIN}"}, source="user", data_class="restricted"
    )
    return run.run()


def test_restricted_event_in_full_history_is_never_sent_to_an_internal_model(servers):
    srv, _ = servers
    h = hk.Harness([], _model(srv, "hosted", "internal"), policy="full-history")

    run = _with_restricted(h)

    assert srv.requests == []  # nothing reached the server
    assert run.finish_reason == "error"
    assert isinstance(run.error, hk.ModelError)
    assert "approved up to 'internal'" in str(run.error) and "'restricted'" in str(run.error)
    assert "USER-" in str(run.error)  # names the event that carries the class
    finished = run.log.last("run.finished")
    assert finished is not None and "was not sent" in finished.payload["error"]
    assert not any(isinstance(e, ModelRequestEvent) for e in run.log.events)


def test_a_chain_skips_the_node_not_approved_for_what_the_prompt_carries(servers):
    hosted_srv, local_srv = servers
    chain = FallbackModel(
        [_model(hosted_srv, "hosted", "internal"), _model(local_srv, "local", "secret")]
    )
    h = hk.Harness([], chain, policy="full-history")

    run = _with_restricted(h)

    assert run.final_text == "from b"
    assert hosted_srv.requests == []
    assert PIN in str(local_srv.requests[0])
    (request,) = run.log.of_type(ModelRequestEvent)
    assert request.data_class == "restricted"
    assert any(e.type == "model.switch" for e in run.log.events)


def test_the_default_named_policy_leaves_restricted_events_out_so_the_request_is_internal(servers):
    srv, _ = servers
    h = hk.Harness([], _model(srv, "hosted", "internal"), policy="default")
    run = _with_restricted(h)

    assert run.final_text == "from a"
    assert PIN not in str(srv.requests)
    (request,) = run.log.of_type(ModelRequestEvent)
    assert request.data_class == "internal"


def test_the_documented_settings_data_class_sets_the_least_class_of_every_request(servers):
    hosted_srv, local_srv = servers
    chain = FallbackModel(
        [_model(hosted_srv, "hosted", "internal"), _model(local_srv, "local", "secret")]
    )
    h = hk.Harness([], chain, settings={"data_class": "restricted", "temperature": 0})

    run = h.run("x")

    assert run.final_text == "from b"
    assert hosted_srv.requests == []
    sent = local_srv.requests[0].body
    assert "data_class" not in str(sent) and sent["temperature"] == 0  # not sent to providers
    assert run.log.last("model.request").data_class == "restricted"


@pytest.mark.parametrize("value", ["SECRET", "top-secret", 5])
def test_an_unknown_run_data_class_is_a_usage_error_naming_the_classes(value):
    with pytest.raises(UsageError, match="public.*internal.*restricted.*secret"):
        hk.Harness([], hk.ScriptedModel([]), settings={"data_class": value})


def test_public_events_only_make_a_public_request(servers):
    srv, _ = servers
    h = hk.Harness([], _model(srv, "open", "public"), policy="full-history")
    run = h.start(run_id="pub")
    run.log.append("user.message", {"content": "what is 2+2"}, source="user", data_class="public")

    run.run()

    assert run.final_text == "from a"
    assert run.log.last("model.request").data_class == "public"
    # an unmarked (internal) turn is not sent to the public-only model
    run.send("and my account number is 12")
    run.run()
    assert run.finish_reason == "error" and len(srv.requests) == 1


# -- a max_data_class that is not one of the four classes never fails open (R-S2) ----------


def _custom(limit):
    model = hk.ScriptedModel([reply.text("ok")])
    model.max_data_class = limit  # a custom model object carries its own attribute
    return model


@pytest.mark.parametrize("limit", ["Public", "confidential", "", 3])
def test_a_misspelt_model_limit_is_refused_when_the_harness_is_made(limit):
    with pytest.raises(UsageError, match="public.*internal.*restricted.*secret") as info:
        hk.Harness([], _custom(limit), settings={"data_class": "secret"})
    assert repr(limit) in str(info.value) and "'scripted'" in str(info.value)


@pytest.mark.parametrize("make", [lambda m: FallbackNode(model=m), lambda m: FallbackModel([m])])
def test_a_misspelt_model_limit_in_a_chain_is_a_usage_error_not_a_value_error(make):
    with pytest.raises(UsageError, match="'Public'"):
        make(_custom("Public"))


def test_a_limit_misspelt_after_the_harness_was_made_stops_the_run_before_sending():
    single, inner = _custom(None), _custom(None)
    for model, ask in ((single, single), (FallbackModel([inner]), inner)):
        h = hk.Harness([], model, settings={"data_class": "secret"})
        ask.max_data_class = "Public"
        with pytest.raises(UsageError, match="'Public'"):
            h.start("x").run()
        assert ask.requests == []  # nothing was sent


@pytest.mark.parametrize("value", ["nope", "Restricted", None])
def test_an_unknown_transport_data_class_is_a_usage_error_naming_the_classes(value):
    with pytest.raises(UsageError, match="data_class.*public.*internal.*restricted.*secret"):
        TransportPolicy(data_class=value)


# -- an event carrying an artifact's summary or an answer read from it has its class --------

ROWS = [{"i": i, "ssn": f"CANARY-{i:03d}-SSN"} for i in range(30)]


@hk.tool
def get_records(rid: str) -> dict:
    """Get the records of one account.

    Use this to read records. Do not use it to change them.

    Args:
        rid: the account id.

    Returns:
        The records.
    """
    return {"rows": ROWS}


def _transport_run(tmp_path, limit, turns, policy="full-history", tools=None):
    model = hk.ScriptedModel(turns)
    model.max_data_class = limit
    h = hk.Harness(
        tools or [get_records],
        model,
        policy=policy,
        log_dir=tmp_path,
        transport=TransportPolicy(data_class="restricted"),
    )
    return h.start("fetch r1", run_id="t").run(), model


def test_a_restricted_artifacts_summary_is_a_restricted_event_and_is_not_sent(tmp_path):
    run, model = _transport_run(
        tmp_path, "internal", [reply.tool_call("get_records", rid="r1"), reply.text("ok")]
    )

    result = run.log.last("tool.result")
    created = run.log.last("artifact.created")
    assert result.payload.get("artifact") and "CANARY-000-SSN" in result.content
    assert (result.data_class, created.data_class) == ("restricted", "restricted")
    assert "data_class" not in result.payload  # the event's class, not a payload key
    assert run.finish_reason == "error" and "'restricted'" in str(run.error)
    assert len(model.requests) == 1  # the request carrying the summary was never sent
    assert "CANARY" not in str(model.requests[0].messages)
    reread = hk.EventLog.read(tmp_path / "t.jsonl")
    assert reread.last("tool.result").data_class == "restricted"


def test_the_default_policy_withholds_the_restricted_summary_so_the_run_goes_on(tmp_path):
    run, model = _transport_run(
        tmp_path,
        "internal",
        [reply.tool_call("get_records", rid="r1"), reply.text("done")],
        policy="default",
    )

    assert run.final_text == "done"
    assert "CANARY" not in str([r.messages for r in model.requests])
    assert run.log.last("model.request").data_class == "internal"


def test_an_inspection_answer_read_from_a_restricted_artifact_is_restricted(tmp_path):
    first, _ = _transport_run(
        tmp_path / "a", "secret", [reply.tool_call("get_records", rid="r1"), "x"]
    )
    ref = first.log.last("tool.result").payload["artifact"]
    run, model = _transport_run(
        tmp_path / "b",
        "secret",
        [
            reply.tool_call("get_records", rid="r1"),
            reply.tool_call("artifact_head", ref=ref, chars=200),
            reply.text("done"),
        ],
    )

    head = run.log.last("tool.result")
    assert head.payload["tool"] == "artifact_head" and head.ok and "CANARY" in head.content
    assert head.data_class == "restricted"
    assert run.log.last("model.request").data_class == "restricted"


def test_a_small_inline_result_keeps_the_default_class(tmp_path):
    @hk.tool
    def ping(x: str) -> dict:
        """Echo a value.

        Use this to test. Do not use it for data.

        Args:
            x: a value.

        Returns:
            The value.
        """
        return {"x": x}

    model = hk.ScriptedModel([reply.tool_call("ping", x="1"), reply.text("ok")])
    model.max_data_class = "internal"
    h = hk.Harness([ping], model, transport=TransportPolicy(data_class="restricted"))

    run = h.run("go")

    assert run.final_text == "ok" and run.log.last("tool.result").data_class == "internal"


# -- values moved by `$bind` carry their source's class (R-S2) ----------------------------


@hk.tool
def echo(value: str) -> dict:
    """Echo a value back.

    Use this to show one value. Do not use it to look anything up.

    Args:
        value: the value.

    Returns:
        The value, with an attachment note.
    """
    return {"echo": value}


def _bind_run(tmp_path, turns, limit="secret", policy="full-history"):
    return _transport_run(tmp_path, limit, turns, policy, tools=[get_records, echo])


def test_a_value_bound_from_a_restricted_artifact_makes_the_result_restricted(tmp_path):
    # the first result is externalized (restricted artifact); echo gets one of its values by
    # `$bind`, returns it inline, and then binds from that result again: both are restricted
    run, model = _bind_run(
        tmp_path,
        [
            reply.tool_call("get_records", rid="r1", id="c1"),
            reply.tool_call("echo", value={"$bind": "c1#/rows/7/ssn"}, id="c2"),
            reply.tool_call("echo", value={"$bind": "c2#/echo"}, id="c3"),
            reply.text("done"),
        ],
    )

    results = {e.payload["tool_call_id"]: e for e in run.log.events if e.type == "tool.result"}
    assert "CANARY-007-SSN" in results["c2"].content and "CANARY-007-SSN" in results["c3"].content
    assert (results["c2"].data_class, results["c3"].data_class) == ("restricted", "restricted")
    assert run.log.last("model.request").data_class == "restricted"
    reread = hk.EventLog.read(tmp_path / "t.jsonl")
    assert [e.data_class for e in reread.events if e.type == "tool.result"][1:] == [
        "restricted",
        "restricted",
    ]


def test_an_internal_only_model_never_gets_a_value_bound_from_a_restricted_artifact(tmp_path):
    # the default policy withholds restricted events from an internal-only model: the scripted
    # model binds to the artifact it never saw; the echoed value must be withheld too
    run, model = _bind_run(
        tmp_path,
        [
            reply.tool_call("get_records", rid="r1", id="c1"),
            reply.tool_call("echo", value={"$bind": "c1#/rows/7/ssn"}, id="c2"),
            reply.text("done"),
        ],
        limit="internal",
        policy="default",
    )

    assert run.final_text == "done"
    assert "CANARY-007-SSN" in run.log.last("tool.result").content  # the tool did get it
    assert "CANARY" not in str([r.messages for r in model.requests])
    assert run.log.last("model.request").data_class == "internal"


# -- an answer to a restricted request is restricted (R-S2) ---------------------------------


def test_an_answer_to_a_restricted_request_and_its_calls_are_restricted(tmp_path):
    # the model saw the restricted summary; its answer restates a value from it, so a later
    # internal-only model on the same log (resumed under the default policy) never gets it
    run, _ = _bind_run(
        tmp_path,
        [
            reply.tool_call("get_records", rid="r1", id="c1"),
            reply.tool_call("echo", value="CANARY-007-SSN", id="c2"),
            reply.text("The SSN is CANARY-007-SSN."),
        ],
    )
    events = run.log.events
    responses = [e for e in events if e.type == "model.response"]
    calls = {e.payload["tool_call_id"]: e for e in events if e.type == "tool.call"}
    assert [e.data_class for e in responses] == ["internal", "restricted", "restricted"]
    assert (calls["c1"].data_class, calls["c2"].data_class) == ("internal", "restricted")
    # what the tool made of the restricted arguments the model typed is restricted too
    assert run.log.last("tool.result").data_class == "restricted"

    later = hk.ScriptedModel([reply.text("ok")])
    later.max_data_class = "internal"
    h = hk.Harness([get_records, echo], later, policy="default", log_dir=tmp_path)
    branch = run.fork(-1, "internal-model", harness=h).send("and now?").run()
    assert branch.final_text == "ok" and len(later.requests) == 1
    assert "CANARY" not in str(later.requests[0].messages)


def test_the_runs_least_class_is_kept_on_resume_by_a_harness_without_one(tmp_path):
    # started as restricted (settings), resumed by a harness with no least class and an
    # internal-only model: the task is still restricted, so nothing is sent
    first = hk.ScriptedModel([reply.text("never asked")])
    first.max_data_class = "restricted"
    h1 = hk.Harness([], first, settings={"data_class": "restricted"}, log_dir=tmp_path)
    h1.start("summarise patient p1's diagnosis", run_id="r").log.close()

    later = hk.ScriptedModel([reply.text("summary")])
    later.max_data_class = "internal"
    run = hk.Harness([], later, log_dir=tmp_path).resume(tmp_path / "r.jsonl").run()

    assert run.finish_reason == "error" and "'restricted'" in str(run.error)
    assert later.requests == []
    assert hk.EventLog.read(tmp_path / "r.jsonl").events[0].payload["data_class"] == "restricted"
