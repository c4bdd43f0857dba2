"""Typed events: one class per type, a registry, a codec that writes the same JSON (issue 13)."""

import dataclasses
import json
import pathlib
import typing

import pytest

import harnesskit as hk
from harnesskit.log import (
    EVENT_CLASSES,
    EVENT_TYPES,
    AnyEvent,
    BranchMergeEvent,
    Event,
    ModelRequestEvent,
    ToolCallEvent,
    ToolResultEvent,
    UserMessageEvent,
    make_event,
)
from harnesskit.log._codec import decode, encode

FIXTURES = pathlib.Path(__file__).parent.parent / "fixtures"


def test_every_type_has_one_frozen_class_named_for_it_in_the_union():
    assert set(EVENT_CLASSES) == EVENT_TYPES and len(EVENT_TYPES) == 25
    assert set(typing.get_args(AnyEvent)) == set(EVENT_CLASSES.values())
    for tag, cls in EVENT_CLASSES.items():
        assert cls.type == tag and issubclass(cls, Event)
        assert cls.__name__.endswith("Event")
        params = cls.__dataclass_params__
        assert params.frozen and cls.__slots__ is not None
        with pytest.raises(dataclasses.FrozenInstanceError):
            cls(event_id=1).summary = "x"


@pytest.mark.parametrize("tag", sorted(EVENT_TYPES))
def test_every_type_round_trips_through_the_codec(tag):
    cls = EVENT_CLASSES[tag]
    keys = [k for k, _ in cls._KEYS]
    payload = {k: f"v-{k}" for k in reversed(keys)} | {"not_declared": [1, {"a": None}]}
    payload["step"] = None  # an explicit null survives too
    e = make_event(tag, payload, event_id=3, parent_id=2, branch_id="b", source="tool")
    assert type(e) is cls and e.extra == {"not_declared": [1, {"a": None}]}
    line = encode(e)
    again = decode(json.loads(line))
    assert type(again) is cls and again == e and encode(again) == line
    assert list(json.loads(line)["payload"]) == list(payload)  # key order kept
    for key, attr in cls._KEYS:
        assert getattr(again, attr) == payload[key]


def test_an_event_built_from_fields_writes_only_what_is_set():
    e = ToolResultEvent(event_id=1, tool="lookup", tool_call_id="c1", ok=False, step=2)
    assert e.payload == {"step": 2, "tool": "lookup", "tool_call_id": "c1", "ok": False}
    assert e.payload is e.payload  # built once
    assert decode(json.loads(encode(e))) == e
    merge = BranchMergeEvent(event_id=4, branch="b", replaces=[1])
    assert merge.payload == {"branch": "b", "supersedes": [1]} and merge.supersedes is None


def test_append_builds_the_class_its_type_names_and_keeps_the_payload():
    log = hk.EventLog()
    payload = {"step": 1, "tool": "t", "tool_call_id": "c1", "content": "x", "meta": 1}
    e = log.append("tool.result", payload)
    assert isinstance(e, ToolResultEvent) and e.content == "x" and e.step == 1
    assert e.payload is payload and e.extra == {"meta": 1}
    with pytest.raises(hk.UsageError, match="unknown event type 'tool.reslt'"):
        log.append("tool.reslt", {})


def test_of_type_and_last_take_classes_or_tags_and_refuse_typos():
    log = hk.EventLog()
    log.append("user.message", {"content": "hi"})
    log.append("tool.call", {"tool": "t", "tool_call_id": "c"})
    log.append("tool.result", {"tool_call_id": "c", "content": "r"})
    log.append("tool.result", {"tool_call_id": "d", "content": "s"}, branch_id="b")
    assert log.of_type(ToolResultEvent) == log.of_type("tool.result") == [log[3], log[4]]
    assert log.of_type(ToolCallEvent, UserMessageEvent) == [log[1], log[2]]
    assert log.of_type(Event) == log.of_type() == log.events
    assert log.of_type(ToolResultEvent, branch_id="b") == [log[4]]
    assert log.last(ToolResultEvent, branch_id="main") is log[3]
    assert log.last("model.request") is None
    with pytest.raises(hk.UsageError, match="unknown event type 'tool.reslt'") as err:
        log.of_type("tool.reslt")
    assert "'tool.result'" in str(err.value) and "'user.message'" in str(err.value)
    with pytest.raises(hk.UsageError, match="tool.result"):
        log.last("tool.reslt")
    with pytest.raises(hk.UsageError, match="tag string or an Event class"):
        log.of_type(int)


def test_readers_match_on_the_class():
    log = hk.EventLog()
    log.append("user.message", {"content": "hi"}, source="user")
    log.append("tool.result", {"tool_call_id": "c", "content": "r", "ok": False})
    seen = []
    for e in log:
        match e:
            case ToolResultEvent(ok=False, content=content):
                seen.append(("failed", content))
            case UserMessageEvent(content=content):
                seen.append(("user", content))
    assert seen == [("user", "hi"), ("failed", "r")]


@pytest.mark.parametrize("name", ["log_v1.jsonl", "log_v2.jsonl"])
def test_the_fixtures_read_into_classes_and_write_back_the_same_json(name, tmp_path):
    log = hk.EventLog.read(FIXTURES / name)
    assert log.events and all(type(e) is EVENT_CLASSES[e.type] for e in log)
    lines = (FIXTURES / name).read_text(encoding="utf-8").splitlines()
    for e, raw in zip(log.events, lines, strict=True):
        original = json.loads(raw)
        assert json.loads(encode(e))["payload"] == original["payload"]
        if name == "log_v2.jsonl":  # v2 → v3 changed no field, only the version number
            assert json.loads(encode(e)) == {**original, "v": 3}
    requests = log.of_type(ModelRequestEvent)
    assert requests and log.request_messages(requests[-1].event_id)


def test_an_unknown_type_on_disk_is_a_corrupt_line(tmp_path):
    path = tmp_path / "x.jsonl"
    line = json.loads(encode(make_event("brake", {}, event_id=1)))
    line["type"] = "brake.typo"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    with pytest.raises(hk.errors.CorruptLogError, match="brake.typo"):
        hk.EventLog.read(path)
