import json
import pathlib

import pytest

import harnesskit as hk
from harnesskit.testing import reply
from tests.support.hand_edit import with_parents

FIXTURES = pathlib.Path(__file__).parents[1] / "fixtures"


@hk.tool
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@hk.tool
def read_config() -> str:
    """Read the service configuration (it holds a credential)."""
    return "config: SECRET-TOKEN-123"


@hk.tool
def save(text: str) -> str:
    """Save a note."""
    return "saved"


def clock():
    t = [1_700_000_000.0]

    def tick():
        t[0] += 1.0
        return t[0]

    return tick


def harness(turns, **kw):
    return hk.Harness([echo], hk.ScriptedModel(turns), clock=clock(), **kw)


# -- statuses: folded from later events, bytes never rewritten (R-V2, R-V3) ----------------------


def test_statuses_are_folded_from_later_events_and_earlier_bytes_never_change(tmp_path):
    run = harness(
        [
            reply.tool_call("echo", text="v1"),
            reply.tool_call("echo", text="v2"),
            reply.text("plan"),
        ],
        log_dir=tmp_path,
    )
    run = run.start("go", run_id="r").run()
    path = tmp_path / "r.jsonl"
    before = path.read_bytes()
    tr = hk.Trajectory(run.log)
    old, new = [e.event_id for e in run.log.of_type("tool.result")]
    plan = run.log.last("model.response").event_id
    tr.supersede(old, by=new, reason="v2 replaces v1")
    tr.reject(plan, reason="the human vetoed this plan")
    contract = run.log.of_type("task.contract")[0].event_id
    tr.expire(contract, reason="lease over")
    run.log.close()
    after = path.read_bytes()
    assert after.startswith(before) and len(after) > len(before)
    back = hk.Trajectory(hk.EventLog.read(path))
    assert [back.status(i) for i in (old, new, plan, contract)] == [
        "superseded",
        "active",
        "rejected",
        "expired",
    ]
    # the written status of every earlier line is untouched: only the fold differs
    assert {e.status for e in hk.EventLog.read(path)} == {"active"}


def test_an_interpretation_never_overrides_a_fact():
    run = harness(
        [reply.tool_call("echo", text="local assertion failed"), reply.text("it was the network")]
    )
    run = run.start("why did it fail?").run()
    tr = hk.Trajectory(run.log)
    fact = run.log.of_type("tool.result")[0].event_id
    guess = run.log.last("model.response").event_id
    assert (tr.kind(fact), tr.kind(guess)) == ("fact", "interpretation")
    ev = tr.supersede(fact, by=guess, reason="the model thinks it was the network")
    assert (
        ev.type == "alert.conflict"
        and ev.payload["rule"] == "an interpretation never overrides a fact"
    )
    assert tr.supersede(fact, reason="model says so", source="model").type == "alert.conflict"
    # a status event written by hand with a model source is refused by the fold too
    run.log.append("status.supersede", {"target": fact, "reason": "sneaky"}, source="model")
    assert tr.status(fact) == "active"
    assert [r["reason"] for r in tr.refused] == ["an interpretation never overrides a fact"]
    # the other way round is fine: a fact may supersede an interpretation
    tr.supersede(guess, by=fact, reason="the tool shows a local failure")
    assert tr.status(guess) == "superseded"


def test_expires_at_in_a_payload_expires_at_read_time():
    import datetime as dt

    log = hk.EventLog(None, clock=clock())
    lease = log.append(
        "human.decision", {"grant": "write", "expires_at": "2030-01-01T00:00:00+00:00"}
    )
    tr = hk.Trajectory(log)
    assert tr.statuses(now=dt.datetime(2029, 12, 31, tzinfo=dt.UTC))[lease.event_id] == "active"
    assert tr.statuses(now=dt.datetime(2030, 1, 2, tzinfo=dt.UTC))[lease.event_id] == "expired"


# -- causality (R-V4) ----------------------------------------------------------------------------


def test_missing_parents_are_listed_and_left_out_of_the_causal_order(tmp_path):
    log = hk.EventLog(None, clock=clock())
    a = log.append("user.message", {"content": "a"})
    b = log.append("tool.result", {"content": "b"}, parent_id=a.event_id)
    orphan = log.append("tool.result", {"content": "result of a lost call"}, parent_id=None)
    child = log.append(
        "model.response",
        {"message": {"role": "assistant", "content": "x"}},
        parent_id=orphan.event_id,
    )
    later_root_child = log.append("user.message", {"content": "c"}, parent_id=a.event_id)
    log.append("status.reject", {"target": 500, "reason": "?"})
    log = with_parents(tmp_path, log, {orphan.event_id: 99})  # the parent is lost
    tr = hk.Trajectory(log)
    assert not tr.complete
    assert [(g.event_id, g.missing) for g in tr.gaps] == [(orphan.event_id, 99), (6, 500)]
    order = [e.event_id for e in tr.causal_order()]
    assert orphan.event_id not in order and child.event_id not in order
    assert (
        order.index(a.event_id) < order.index(b.event_id) < order.index(later_root_child.event_id)
    )


def test_causal_order_follows_parents_not_append_order(tmp_path):
    log = hk.EventLog(None, clock=clock())
    root = log.append("user.message", {"content": "root"})
    late = log.append("tool.result", {"content": "second"})
    log.append("tool.call", {"tool": "echo"}, parent_id=root.event_id)
    log = with_parents(tmp_path, log, {late.event_id: 3})  # parent appended later (a copy)
    tr = hk.Trajectory(log)
    assert tr.complete
    assert [e.event_id for e in tr.causal_order()] == [1, 3, late.event_id]


def test_a_parent_on_a_branch_the_event_cannot_see_is_a_gap():
    log = hk.EventLog(None, clock=clock())
    log.append("user.message", {"content": "root"})
    tr = hk.Trajectory(log)
    tr.fork(1, "a")
    tr.fork(1, "b")
    on_a = log.append("tool.result", {"content": "a"}, branch_id="a")
    log.append("human.decision", {"approved": True}, branch_id="b", parent_id=on_a.event_id)
    gaps = hk.Trajectory(log).gaps
    assert len(gaps) == 1 and "cannot see" in gaps[0].reason


# -- branches: frozen start, visibility on the bytes sent (R-V5) -------------------------------------


def test_a_branch_sees_its_ancestors_and_never_a_sibling_on_the_bytes_sent(tmp_path):
    main_model = hk.ScriptedModel(
        [reply.tool_call("echo", text="MAIN-BEFORE-FORK")]
        + [reply.tool_call("echo", text=f"MAIN-AFTER-FORK-{i}") for i in range(3)]
        + [reply.text("main done")]
    )
    h = hk.Harness([echo], main_model, log_dir=tmp_path, workspace_revision="rev-1", clock=clock())
    main = h.start("task ROOT-TASK", run_id="r")
    main.step()
    fork_point = main.log.last("tool.result").event_id
    hb = {}
    for name in ("b1", "b2"):
        canary = f"CANARY-{name.upper()}"
        model = hk.ScriptedModel(
            [
                reply.tool_call("echo", text=canary),
                reply.tool_call("echo", text=canary + "-2"),
                reply.text("ok"),
            ]
        )
        hb[name] = hk.Harness([echo], model, workspace_revision="rev-2", clock=clock())
    b1 = main.fork(fork_point, "b1", harness=hb["b1"], reason="hypothesis A")
    b2 = main.fork(fork_point, "b2", harness=hb["b2"], reason="hypothesis B")
    for _ in range(3):  # interleave the three branches in one log
        b1.step()
        main.step()
        b2.step()
    b1.run(), b2.run(), main.run()
    log = hk.EventLog.read(tmp_path / "r.jsonl")
    forked = log.of_type("branch.fork")[-1].event_id
    texts = {
        branch: [
            log.request_text(e.event_id)
            for e in log.of_type("model.request", branch_id=branch)
            if e.event_id > forked
        ]
        for branch in ("main", "b1", "b2")
    }
    assert all(len(t) >= 3 for t in texts.values())
    for branch, requests in texts.items():
        for text in requests:
            assert "ROOT-TASK" in text and "MAIN-BEFORE-FORK" in text  # ancestors are seen
            for sibling in {"main", "b1", "b2"} - {branch}:
                marker = "MAIN-AFTER-FORK" if sibling == "main" else f"CANARY-{sibling.upper()}"
                assert marker not in text, (branch, sibling)
    assert any("CANARY-B1-2" in t for t in texts["b1"])  # a branch sees itself
    fork = log.of_type("branch.fork")[0]
    assert fork.parent_id == fork_point and fork.payload["frozen"]["workspace_revision"] == "rev-2"
    assert set(fork.payload["frozen"]) == {"workspace_revision", "tools", "permissions", "policy"}
    assert [e.event_id for e in hk.log.visible_events(log, "b2")] == [
        e.event_id
        for e in log
        if (e.branch_id == "main" and e.event_id <= fork_point) or e.branch_id == "b2"
    ]


def test_fork_refuses_a_point_with_calls_still_waiting_for_results_and_taken_names():
    run = harness([reply.tool_call("echo", text="x"), reply.text("done")]).start("go").run()
    response = run.log.of_type("model.response")[0].event_id
    tr = hk.Trajectory(run.log)
    with pytest.raises(hk.UsageError, match="no result there yet"):
        tr.fork(response, "early")
    tr.fork(response - 1, "before-response")
    with pytest.raises(hk.UsageError, match="already exists"):
        tr.fork(1, "before-response")
    with pytest.raises(hk.UsageError, match="must match"):
        tr.fork(1, "bad name")


def test_a_nested_branch_sees_its_whole_ancestry():
    log = hk.EventLog(None, clock=clock())
    log.append("user.message", {"content": "root"})
    tr = hk.Trajectory(log)
    tr.fork(1, "a")
    a_msg = log.append("user.message", {"content": "on a"}, branch_id="a")
    log.append("user.message", {"content": "main after fork"})
    tr.fork(a_msg.event_id, "a.x")
    log.append("user.message", {"content": "a after nested fork"}, branch_id="a")
    seen = [
        e.payload.get("content")
        for e in hk.log.visible_events(log, "a.x")
        if e.type == "user.message"
    ]
    assert seen == ["root", "on a"]


# -- merge with an evidence package (R-V5) -----------------------------------------------------------


def _branch_with_evidence():
    run = (
        harness(
            [
                reply.tool_call("echo", text="queue redelivers"),
                reply.tool_call("echo", text="idempotency key differs"),
                reply.text("b: reproduced"),
            ]
        )
        .start("duplicate charges on order 42")
        .run()
    )
    tr = hk.Trajectory(run.log)
    main_fact = run.log.of_type("tool.result")[0].event_id
    tr.fork(main_fact, "b")
    check = run.log.append(
        "tool.result", {"tool": "pytest", "ok": True, "content": "1 passed"}, branch_id="b"
    )
    decision = run.log.append(
        "human.decision", {"approved": True, "by": "alice"}, branch_id="b", source="human"
    )
    return run, tr, main_fact, check, decision


def test_a_merge_with_complete_evidence_is_a_fact_and_supersedes():
    run, tr, main_fact, check, decision = _branch_with_evidence()
    ev = tr.merge(
        "b",
        evidence=hk.log.Evidence(
            sample=check.event_id,
            check=check.event_id,
            revision="git:7d31a9c",
            decision=decision.event_id,
        ),
        conclusion="old clients send a different idempotency key",
        supersedes=[main_fact],
    )
    assert ev.branch_id == "main" and not ev.payload["reference_only"]
    assert tr.kind(ev) == "fact" and tr.status(main_fact) == "superseded"
    # main sees the merge, not the branch's history
    main_view = [e.event_id for e in hk.log.visible_events(run.log, "main")]
    assert ev.event_id in main_view and check.event_id not in main_view


@pytest.mark.parametrize(
    ("change", "missing", "invalid"),
    [
        ({"decision": None}, ["decision"], {}),
        ({"revision": "", "sample": None}, ["sample", "revision"], {}),
        (
            {"check": "model"},
            [],
            {"check": "is a model.response (interpretation), not a deterministic fact"},
        ),
        (
            {"decision": {"by": "bob", "approved": False}},
            [],
            {"decision": "a decision needs 'by' and approved=true"},
        ),
    ],
)
def test_a_merge_missing_evidence_is_reference_only_and_changes_no_fact(change, missing, invalid):
    run, tr, main_fact, check, decision = _branch_with_evidence()
    package = {
        "sample": {"hash": "ab12"},
        "check": check.event_id,
        "revision": "git:7d31a9c",
        "decision": decision.event_id,
    }
    package.update(change)
    if package["check"] == "model":
        package["check"] = run.log.of_type("model.response")[0].event_id
    ev = tr.merge("b", evidence=package, conclusion="maybe", supersedes=[main_fact])
    assert ev.payload["reference_only"] and ev.payload["missing"] == missing
    assert {
        k: v.split(" ", 1)[1] if k == "check" else v for k, v in ev.payload["invalid"].items()
    } == invalid
    assert tr.kind(ev) == "reference" and tr.status(main_fact) == "active"
    assert tr.refused[-1]["reason"] == "a reference-only merge changes no fact"


# -- checkpoints ------------------------------------------------------------------------------------


def test_checkpoints_carry_a_known_stage():
    log = hk.EventLog(None, clock=clock())
    tr = hk.Trajectory(log)
    ev = tr.checkpoint("patch-prepared", note="diff ready", workspace_revision="r1", step=3)
    assert ev.payload == {
        "stage": "patch-prepared",
        "note": "diff ready",
        "step": 3,
        "workspace_revision": "r1",
    }
    with pytest.raises(hk.UsageError, match="unknown checkpoint stage"):
        tr.checkpoint("almost-done")


# -- search (R-V8) -------------------------------------------------------------------------------------


def test_search_filters_by_text_type_branch_status_and_time():
    run = (
        harness(
            [
                reply.tool_call("echo", text="Needle in a haystack"),
                reply.tool_call("echo", text="hay"),
                reply.text("done"),
            ]
        )
        .start("find it")
        .run()
    )
    tr = hk.Trajectory(run.log)
    first, second = [e.event_id for e in run.log.of_type("tool.result")]
    tr.fork(second, "side")
    run.log.append("user.message", {"content": "needle on the side"}, branch_id="side")
    tr.supersede(first, by=second, reason="newer")
    df = tr.search("NEEDLE")
    assert list(df.columns) == [
        "event_id", "parent_id", "branch_id", "type", "source", "created_at", "step", "status", "kind", "summary",
    ]  # fmt: skip
    assert set(df["type"]) == {
        "tool.call",
        "tool.result",
        "model.response",
        "model.request",
        "user.message",
    }
    assert tr.search("needle", type="tool.result")["event_id"].tolist() == [first]
    assert tr.search("needle", type="tool.result", status="active").empty
    assert tr.search("needle", branch="side")["type"].tolist() == ["user.message"]
    assert tr.search(kind="fact", type="tool.result")["status"].tolist() == ["superseded", "active"]
    t_first = run.log[first].created_at
    assert tr.search(type="tool.result", since=t_first)["event_id"].tolist() == [first, second]
    assert tr.search(type="tool.result", until=t_first).empty
    assert len(tr.frame()) == len(run.log)


@pytest.mark.parametrize(
    ("param", "value", "said"),
    [
        ("since", "yesterday", "ISO 8601"),
        ("until", "2026-13-45", "ISO 8601"),
        ("since", float("nan"), "epoch seconds"),
        ("until", 1e300, "epoch seconds"),
        ("since", True, "not a time"),
        ("since", [2026], "not a time"),
    ],
)
def test_search_refuses_a_time_it_cannot_read_naming_the_parameter(param, value, said):
    run = (
        hk.Harness([echo], hk.ScriptedModel([reply.tool_call("echo", text="a"), reply.text("ok")]))
        .start("go")
        .run()
    )
    with pytest.raises(hk.UsageError) as info:
        hk.Trajectory(run.log).search(**{param: value})
    message = str(info.value)
    assert f"search({param}=...)" in message and said in message
    assert "timezone-aware datetime" in message and "epoch seconds" in message


# -- tombstones (R-S3) ---------------------------------------------------------------------------------


class FileStore:
    """A tiny artifact store on disk with the `delete(id)` method tombstones call."""

    def __init__(self, root):
        self.root = root

    def put(self, artifact_id, text):
        (self.root / artifact_id).write_text(text)

    def get(self, artifact_id):
        path = self.root / artifact_id
        if not path.exists():
            raise hk.errors.ArtifactNotFoundError(f"{artifact_id} was deleted")
        return path.read_text()

    def delete(self, artifact_id):
        (self.root / artifact_id).unlink()


def test_a_tombstone_removes_the_artifact_bytes_and_no_reader_returns_the_content(tmp_path):
    secret = "SECRET-TOKEN-123"
    store = FileStore(tmp_path)
    store.put("art-1", f"full output with {secret}")
    model = hk.ScriptedModel(
        [reply.tool_call("read_config"), reply.tool_call("echo", text="next"), reply.text("done")]
    )
    h = hk.Harness([echo, read_config], model, log_dir=tmp_path / "logs", clock=clock())
    run = h.start("look", run_id="r")
    run.step()
    run.step()
    leaked = run.log.of_type("tool.result")[0]
    run.log.append(
        "artifact.created",
        {"id": "art-1", "preview": f"... {secret} ..."},
        parent_id=leaked.event_id,
    )
    assert secret in run.log.request_text(run.log.last("model.request").event_id)
    hk.Trajectory(run.log).tombstone(
        leaked.event_id, reason="credential leaked", store=store, artifacts=["art-1"]
    )
    run.run()
    with pytest.raises(hk.errors.ArtifactNotFoundError):
        store.get("art-1")

    def readers(log):
        tr = hk.Trajectory(log)
        yield json.dumps([e.to_dict() for e in log])
        yield log.frame().to_json()
        yield from (log.request_text(e.event_id) for e in log.of_type("model.request"))
        yield tr.search().to_json()
        yield tr.search(secret).to_json()

    for log in (run.log, hk.EventLog.read(tmp_path / "logs" / "r.jsonl")):
        for text in readers(log):
            assert secret not in text
        assert hk.Trajectory(log).search(secret).empty
    # the request the model received after the tombstone did not carry it (context rebuilt)
    assert secret in json.dumps([m.to_openai() for m in model.requests[1].messages])
    assert secret not in json.dumps([m.to_openai() for m in model.requests[2].messages])
    # the file itself is append-only: the original line is still there, redacted on every read
    assert secret in (tmp_path / "logs" / "r.jsonl").read_text()
    tomb = run.log.of_type("tombstone")[0]
    assert tomb.payload["deleted"] == ["art-1"] and tomb.parent_id == leaked.event_id


def test_a_tombstone_of_a_model_response_redacts_its_calls_too():
    model = hk.ScriptedModel([reply.tool_call("save", text="password=hunter2"), reply.text("done")])
    run = hk.Harness([save], model).start("go").run()
    response = run.log.of_type("model.response")[0]
    hk.Trajectory(run.log).tombstone(response.event_id, reason="secret in arguments")
    assert "hunter2" not in json.dumps([e.to_dict() for e in run.log])


# -- schema versions (R-V9) ------------------------------------------------------------------------------


def test_the_v1_fixture_reads_as_the_same_events_as_its_v2_twin():
    v1 = hk.EventLog.read(FIXTURES / "log_v1.jsonl")
    v2 = hk.EventLog.read(FIXTURES / "log_v2.jsonl")
    assert v1.source_versions == {1: len(v1)} and v2.source_versions == {2: len(v2)}
    assert len(v1) > 20 and v1.events == v2.events
    first = json.loads((FIXTURES / "log_v1.jsonl").read_text().splitlines()[0])
    assert first["v"] == 1 and {"id", "kind", "ts"} <= set(first)
    # every request rebuilds identically from the migrated lines
    for e in v1.of_type("model.request"):
        assert v1.request_text(e.event_id) == v2.request_text(e.event_id)


def test_search_stays_right_as_the_log_grows_and_after_a_tombstone():
    log = hk.EventLog(None, clock=clock())
    tr = hk.Trajectory(log)
    assert tr.search("x").empty and tr.search().empty
    first = log.append("tool.result", {"content": "alpha one"})
    assert tr.search("alpha")["status"].tolist() == ["active"]
    second = log.append("tool.result", {"content": "alpha two"})
    tr.supersede(first.event_id, by=second.event_id, reason="newer")
    assert tr.search("alpha")[["event_id", "status"]].values.tolist() == [
        [1, "superseded"],
        [2, "active"],
    ]
    tr.tombstone(second.event_id, reason="revoked")
    assert tr.search("alpha")["event_id"].tolist() == [1]
    assert tr.search(type="tool.result")["status"].tolist() == ["superseded", "active"]


def test_trajectory_reports_render_escaped_html():
    log = hk.EventLog(None, clock=clock())
    log.append("user.message", {"content": "x"}, summary="<script>alert(1)</script>")
    html = hk.Trajectory(log)._repr_html_()
    assert "&lt;script&gt;" in html and "<script>" not in html
    with hk.set_display("plain"):
        assert hk.Trajectory(log)._repr_html_() is None
