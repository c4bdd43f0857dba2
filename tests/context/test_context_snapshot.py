"""Context snapshots beside the log: used when they fit, ignored otherwise, never a different prompt.

Every build here is compared with a builder that never reads nor writes a snapshot
(`snapshots=False`): the snapshot may only change how fast a cold build is.
"""

from __future__ import annotations

import json
import shutil
import zlib

import pytest
from test_context_incremental import POLICIES, _same, _Script

import harnesskit as hk
from harnesskit.context import ContextBuilder, _snapshot

STRUCTURED = [p for p in POLICIES if p not in ("full-history", "naive")]


@pytest.fixture(autouse=True)
def small_logs_qualify(monkeypatch):
    monkeypatch.setattr(_snapshot, "MIN_EVENTS", 20)


@pytest.fixture
def loads(monkeypatch):
    """How many snapshots were loaded (fitting ones only)."""
    used = []
    real = _snapshot.load

    def spy(log, path):
        state = real(log, path)
        used.append(state is not None)
        return state

    monkeypatch.setattr(_snapshot, "load", spy)
    return used


def _write(path, seed=1, steps=120, secret=None, tombstones=True):
    """A random log on disk (closed); with `secret`, a last tool result on main holds it.

    Without `tombstones`, the script's tombstones are written as `context.injected` events
    (then two logs differ in more than their tombstone counts).
    """
    script = _Script(seed)
    for _ in range(steps):
        script.step()
    log = hk.EventLog(path, run_id="r", clock=lambda: 0.0, redactor=None)
    for e in script.log.events:
        tomb = e.type == "tombstone" and not tombstones
        log.append(
            "context.injected" if tomb else e.type,
            {} if tomb else e.payload,
            parent_id=e.parent_id,
            branch_id=e.branch_id,
            source=e.source,
            status=e.status,
            supersedes=e.supersedes,
            data_class=e.data_class,
        )
    if secret is None:
        log.close()
        return script.branches
    calls = [{"id": "cs", "type": "function", "function": {"name": "get", "arguments": "{}"}}]
    log.append("model.response", {"message": {"role": "assistant", "tool_calls": calls}})
    log.append("tool.call", {"tool": "get", "tool_call_id": "cs", "arguments": {}})
    result = log.append(
        "tool.result",
        {"tool": "get", "tool_call_id": "cs", "content": json.dumps({"pnr": secret}), "ok": True},
        source="tool",
    )
    for k in range(3):  # the result leaves the window: a fact of the memory, and in its index
        log.append("user.message", {"content": f"next {k}"}, source="user")
        log.append("model.response", {"message": {"role": "assistant", "content": "ok"}})
    log.close()
    return script.branches, result.event_id


def _check(log, branches, policies=STRUCTURED):
    for policy in policies:
        for branch in branches:
            got = ContextBuilder(policy).build(log, branch_id=branch)
            want = ContextBuilder(policy, snapshots=False).build(log, branch_id=branch)
            _same(got, want)


def test_a_snapshot_is_written_then_used_and_builds_the_same(tmp_path, loads):
    path = tmp_path / "run.jsonl"
    branches = _write(path)
    log = hk.EventLog.read(path)
    _check(log, branches)  # writes them
    files = sorted(p.name for p in tmp_path.iterdir() if ".ctx-" in p.name)
    assert len(files) == len(STRUCTURED) * len(branches)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left
    loads.clear()
    _check(hk.EventLog.read(path), branches)
    assert loads and all(loads)
    # a live builder carries on from a snapshot like from its own first build
    live = hk.EventLog.open_existing(path, clock=lambda: 0.0, redactor=None)
    builders = {p: ContextBuilder(p) for p in STRUCTURED}
    for k in range(30):
        live.append("user.message", {"content": f"more {k}"}, source="user")
        if k % 7 == 3:
            live.append("status.reject", {"target": 5 + k, "reason": "r"}, source="human")
        for policy, builder in builders.items():
            _same(builder.build(live), ContextBuilder(policy, snapshots=False).build(live))
    live.close()


def test_full_history_writes_no_snapshot(tmp_path):
    path = tmp_path / "run.jsonl"
    branches = _write(path)
    _check(hk.EventLog.read(path), branches, policies=["full-history", "naive"])
    assert not [p for p in tmp_path.iterdir() if ".ctx-" in p.name]


def test_a_grown_log_uses_the_snapshot_for_its_start(tmp_path, loads):
    path = tmp_path / "run.jsonl"
    branches = _write(path)
    _check(hk.EventLog.read(path), branches)
    log = hk.EventLog.open_existing(path, clock=lambda: 0.0, redactor=None)
    log.append("user.message", {"content": "and one more thing"}, source="user")
    log.append("status.supersede", {"target": 12, "reason": "newer"}, source="system")
    log.close()
    loads.clear()
    _check(hk.EventLog.read(path), branches)
    assert loads and all(loads)


@pytest.mark.parametrize(
    "change", ["replaced", "truncated", "corrupt", "foreign", "garbage", "byteorder"]
)
def test_a_stale_corrupt_or_foreign_snapshot_is_ignored(tmp_path, loads, change):
    path = tmp_path / "run.jsonl"
    branches = _write(path, seed=1, tombstones=False)
    _check(hk.EventLog.read(path), branches)
    snaps = sorted(p for p in tmp_path.iterdir() if ".ctx-" in p.name)
    if change == "replaced":  # another run at the same path, the snapshots left behind
        keep = {p: p.read_bytes() for p in snaps}
        path.unlink()
        branches = _write(path, seed=2, tombstones=False)
        for p, data in keep.items():
            p.write_bytes(data)
    elif change == "truncated":  # the file shortened to fewer events
        lines = path.read_bytes().splitlines(keepends=True)
        path.write_bytes(b"".join(lines[: len(lines) // 2]))
        branches = ["main"]
    elif change == "corrupt":  # a snapshot cut off mid-write, or with ids that do not exist
        snaps[0].write_bytes(snaps[0].read_bytes()[:1000])
        header, state, ints = _read_snapshot(snaps[-1])
        state["seq"] = [10**9, 1]
        _write_snapshot(snaps[-1], header, state, ints)
    elif change == "foreign":  # the snapshots of another log copied beside this one
        other = tmp_path / "other" / "run.jsonl"
        other.parent.mkdir()
        branches = _write(other, seed=3, tombstones=False)
        _check(hk.EventLog.read(other), branches)
        for p in other.parent.iterdir():
            if ".ctx-" in p.name:
                shutil.copy(p, tmp_path / p.name)
    elif change == "byteorder":  # made on a machine whose ints are stored the other way round
        for p in snaps:
            body = p.read_bytes().partition(b"\n")[2]
            header, state, ints = _read_snapshot(p)
            header["ints"] = header["ints"].replace("little", "?").replace("big", "little")
            _write_snapshot(p, header, state, ints)
            assert p.read_bytes().partition(b"\n")[2] == body  # (its CRC-32 still matches)
    else:
        for p in snaps:
            p.write_bytes(b"\x00\xff not json")
    loads.clear()
    _check(hk.EventLog.read(path), branches)
    if change in ("replaced", "truncated", "foreign", "garbage", "byteorder"):
        assert loads and not any(loads)
    else:  # the cut one is not read; the one with bad ids is read, fails, and is ignored
        assert False in loads


def _read_snapshot(path):
    """A snapshot file's header, state and block of ints (a header line, the state's JSON
    line, then the ints)."""
    header, _, body = path.read_bytes().partition(b"\n")
    state, _, ints = body.partition(b"\n")
    return json.loads(header), json.loads(state), ints


def _write_snapshot(path, header, state, ints):
    """Write `state` back under the old `header`: its CRC-32 no longer matches an edit."""
    body = json.dumps(state, separators=(",", ":")).encode() + b"\n" + ints
    path.write_bytes(json.dumps(header).encode() + b"\n" + body)


@pytest.mark.parametrize("edit", ["contract", "core", "statuses", "byte"])
def test_a_snapshot_edited_on_disk_is_refused_not_trusted(tmp_path, loads, edit):
    path = tmp_path / "run.jsonl"
    branches = _write(path, seed=4, tombstones=False)
    _check(hk.EventLog.read(path), branches)
    for snap in (p for p in tmp_path.iterdir() if ".ctx-" in p.name):
        header, state, ints = _read_snapshot(snap)
        if edit == "contract":  # found by a fuzz: a raw AttributeError in the build
            state["contract"] = (state["contract"] or 0) + 1
        elif edit == "core":  # found by a fuzz: a different prompt, silently
            state["core"] = state["core"][:-1]
        elif edit == "statuses":
            state["statuses"] = state["statuses"][1:]
        if edit == "byte":  # one byte of the saved state flipped
            data = bytearray(snap.read_bytes())
            data[-10] ^= 0x01
            snap.write_bytes(bytes(data))
        else:
            _write_snapshot(snap, header, state, ints)
    loads.clear()
    _check(hk.EventLog.read(path), branches)  # every build equals one with snapshots off
    assert loads and not any(loads)


def test_a_tombstone_after_the_snapshot_does_not_resurrect_content(tmp_path, loads):
    """R-S3: a snapshot made before a tombstone is not used after it (nor its facts index)."""
    path = tmp_path / "run.jsonl"
    branches, secret_id = _write(path, secret="ZX81QQ")
    log = hk.EventLog.read(path)
    before = ContextBuilder("default").build(log)
    assert "ZX81QQ" in "\n".join(m.text for m in before.messages)
    _check(log, branches)
    live = hk.EventLog.open_existing(path, clock=lambda: 0.0, redactor=None)
    live.append("tombstone", {"target": secret_id, "reason": "revoked"})
    live.close()
    loads.clear()
    after = hk.EventLog.read(path)
    for policy in STRUCTURED:
        for branch in branches:
            prompt = ContextBuilder(policy).build(after, branch_id=branch)
            assert "ZX81QQ" not in "\n".join(m.text for m in prompt.messages)
            _same(prompt, ContextBuilder(policy, snapshots=False).build(after, branch_id=branch))
    assert loads and not any(loads)


def test_packed_ints_read_back_and_refuse_garbage():
    packed = _snapshot.Ints()
    lists = ([], [0], [1, 2, 3], [2**31 - 1, 0, 7] * 100, [-5])
    refs = [packed.add(values) for values in lists]
    again = _snapshot.Ints(packed.tobytes())  # as `load` reads the block back
    for ref, values in zip(refs, lists, strict=True):
        assert again.get(ref).tolist() == values
    with pytest.raises(OverflowError):
        packed.add([2**31])
    with pytest.raises(ValueError, match="4-byte"):
        _snapshot.Ints(b"AAA")  # not whole 4-byte ints
    for ref in ([0, 10**6], [-1, 1], [0, -1], ["0", 1], [0.0, 1]):
        with pytest.raises(ValueError, match="reference"):
            again.get(ref)


def test_a_snapshot_far_behind_its_log_is_written_again(tmp_path, loads):
    path = tmp_path / "run.jsonl"
    branches = _write(path, steps=60, tombstones=False)
    log = hk.EventLog.read(path)
    _check(log, branches, policies=["default"])
    snap = ContextBuilder("default")._snapshot_path(log, "main")
    first = _read_snapshot(snap)[1]["index"]
    log = hk.EventLog.open_existing(path, clock=lambda: 0.0, redactor=None)
    for k in range(_snapshot.MIN_EVENTS):
        log.append("user.message", {"content": f"more {k}"}, source="user")
    log.close()
    _check(hk.EventLog.read(path), branches, policies=["default"])
    assert loads[0] is True  # the old one was used for the start of the log
    assert _read_snapshot(snap)[1]["index"] == first + _snapshot.MIN_EVENTS
    loads.clear()
    _check(hk.EventLog.read(path), branches, policies=["default"])
    assert loads[0] is True


def test_parts_left_packed_are_restored_when_a_later_build_needs_them(tmp_path, loads):
    """A view from a snapshot unpacks the parts a first build does not read only when a later
    build reads them (new calls and results, an old fact superseded, an old response rejected,
    a human decision); every build still equals one with snapshots off."""
    path = tmp_path / "run.jsonl"
    branches = _write(path, tombstones=False)
    _check(hk.EventLog.read(path), branches)  # writes them
    loads.clear()
    live = hk.EventLog.open_existing(path, clock=lambda: 0.0, redactor=None)
    builders = {p: ContextBuilder(p) for p in STRUCTURED}

    def check():
        for policy, builder in builders.items():
            _same(builder.build(live), ContextBuilder(policy, snapshots=False).build(live))

    check()
    assert loads and all(loads)
    assert all(b._views["main"]._pending for b in builders.values())  # some still packed
    main = [e for e in live.events if e.branch_id == "main"]
    facts = [e.event_id for e in main if e.type == "tool.result" and e.status == "active"]
    responses = [e.event_id for e in main if e.type == "model.response"]
    live.append("status.supersede", {"target": facts[0], "reason": "newer"}, source="system")
    check()
    assert not any(b._views["main"]._pending for b in builders.values())  # all unpacked now
    live.append("status.reject", {"target": responses[1], "reason": "wrong"}, source="human")
    check()
    for k in range(3):
        calls = [{"id": f"late{k}", "type": "function", "function": {"name": "get"}}]
        live.append("model.response", {"message": {"role": "assistant", "tool_calls": calls}})
        live.append("tool.call", {"tool": "get", "tool_call_id": f"late{k}", "arguments": {}})
        content = json.dumps({"k": k, "pnr": f"LATE{k}"})
        live.append(
            "tool.result",
            {"tool": "get", "tool_call_id": f"late{k}", "content": content, "ok": k != 1},
            source="tool",
        )
        live.append("human.decision", {"decision": "approve", "note": f"n{k}"}, source="human")
        live.append("user.message", {"content": f"go on {k}"}, source="user")
        check()
    live.append("status.supersede", {"target": facts[-1], "reason": "newer"}, source="system")
    check()
    live.close()


def _forge_snapshot(path, header, state, ints):
    """Write `state` back with its length and CRC-32 made to match, as a forger would."""
    body = json.dumps(state, separators=(",", ":")).encode() + b"\n" + ints
    header = {**header, "state_bytes": len(body), "state_crc32": zlib.crc32(body)}
    path.write_bytes(json.dumps(header, separators=(",", ":")).encode() + b"\n" + body)


def _set(key, value, *at):
    """An edit of the saved state: `state[key][at...] = value` (when that part exists)."""

    def edit(state):
        target = state[key] if at else state
        for i in at[:-1]:
            if not target:
                return  # that part is empty in this snapshot
            target = target[i]
        if at and not target:
            return
        target[at[-1] if at else key] = value

    return edit


@pytest.mark.parametrize(
    "edit",
    [
        _set("contract", None),  # a prompt without the task contract, silently
        _set("index", "218"),
        _set("statuses", None),
        _set("statuses", "x", 0, 0),  # raw TypeError: '<' between 'int' and 'str'
        _set("statuses", 1.5, 0, 0),
        _set("mem_pos", "1"),  # raw TypeError: slice indices must be integers
        _set("mem_pos", True),
        _set("assembled", 1.5),
        _set("calls", [], 0, 0),  # raw TypeError: unhashable type: 'list'
        _set("occ", None, 0, 0),  # raw TypeError: 'in <string>' requires string
        _set("strings", 7, 0),
        _set("last_chat", 5),
        _set("branch", ["main", {"main": "9"}]),
        _set("refused", [None]),
        _set("seq", {"0": 1}),
        _set("task_id", "another task"),
    ],
)
def test_a_forged_snapshot_of_the_wrong_shape_is_ignored_and_rebuilt(tmp_path, edit):
    """A snapshot edited by hand with its CRC-32 made to match: never a raw error, never
    another prompt; it is ignored, the log is read, and a sound snapshot written again."""
    path = tmp_path / "run.jsonl"
    branches = _write(path, seed=4, tombstones=False)
    _check(hk.EventLog.read(path), branches)
    sound = {p: p.read_bytes() for p in tmp_path.iterdir() if ".ctx-" in p.name}
    for snap in sound:
        header, state, ints = _read_snapshot(snap)
        edit(state)
        _forge_snapshot(snap, header, state, ints)
    _check(hk.EventLog.read(path), branches)  # every build equals one with snapshots off
    assert {p: p.read_bytes() for p in sound} == sound  # rebuilt from the log and written


def test_a_snapshot_whose_packed_indexes_are_out_of_range_is_ignored(tmp_path):
    """Ids and string indexes live in the block of ints: a negative one must not count
    from the end of a list (another reason, another event), a large one must not fail."""
    path = tmp_path / "run.jsonl"
    branches = _write(path, seed=4, tombstones=False)
    _check(hk.EventLog.read(path), branches)
    for value in (-1, 2**31 - 1):
        for snap in (p for p in tmp_path.iterdir() if ".ctx-" in p.name):
            header, state, ints = _read_snapshot(snap)
            block = _snapshot.Ints(ints)
            for key in ("paired", "bucket", "mem_excluded", "hidden", "withheld"):
                start, count = state[key][1]
                for j in range(start, start + count):
                    block.array[j] = value
            _forge_snapshot(snap, header, state, block.tobytes())
        live = hk.EventLog.read(path)
        builders = {p: ContextBuilder(p) for p in STRUCTURED}
        for _ in range(2):  # the second build unpacks what the first left packed
            for policy, builder in builders.items():
                for branch in branches:
                    _same(
                        builder.build(live, branch_id=branch),
                        ContextBuilder(policy, snapshots=False).build(live, branch_id=branch),
                    )


@pytest.mark.parametrize("line", ["header", "state"])
def test_a_snapshot_nested_too_deep_to_decode_is_ignored(tmp_path, loads, line):
    path = tmp_path / "run.jsonl"
    branches = _write(path, seed=4, tombstones=False)
    _check(hk.EventLog.read(path), branches)
    deep = "[" * 100_000 + "]" * 100_000
    for snap in (p for p in tmp_path.iterdir() if ".ctx-" in p.name):
        header, _, ints = _read_snapshot(snap)
        if line == "header":
            snap.write_bytes(deep.encode() + b"\n" + snap.read_bytes().partition(b"\n")[2])
        else:
            body = deep.encode() + b"\n" + ints
            header = {**header, "state_bytes": len(body), "state_crc32": zlib.crc32(body)}
            snap.write_bytes(json.dumps(header).encode() + b"\n" + body)
    loads.clear()
    _check(hk.EventLog.read(path), branches)  # no RecursionError; built from the log
    assert loads and not any(loads)
