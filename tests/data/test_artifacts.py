import hashlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harnesskit as hk
from harnesskit.data.artifacts import oversize_reason, summarize


def canon(v):
    return hashlib.sha256(
        json.dumps(v, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()
    ).hexdigest()


FLIGHTS = [
    {"flight_number": f"HAT{i:03d}", "origin": "JFK", "destination": "SEA", "price": 100 + i,
     "seats": {"economy": i % 7, "business": i % 3}, "note": "ünïcödé ✈" if i == 17 else None}
    for i in range(30)
]  # fmt: skip


class Clock:
    def __init__(self, t=1_700_000_000.0):
        self.t = t

    def __call__(self):
        return self.t


@pytest.fixture(params=["disk", "memory"])
def store(request, tmp_path):
    return hk.ArtifactStore(tmp_path / "art" if request.param == "disk" else None)


def test_put_records_the_r_a2_metadata(tmp_path):
    clock = Clock()
    store = hk.ArtifactStore(tmp_path, ttl_seconds=3600, clock=clock)
    source = {
        "run_id": "r1",
        "branch_id": "main",
        "step": 2,
        "tool": "search",
        "tool_call_id": "c1",
    }
    ref = store.put({"flights": FLIGHTS}, source=source, data_class="restricted", incomplete=True)
    text = json.dumps({"flights": FLIGHTS}, ensure_ascii=False)
    sha = hashlib.sha256(text.encode()).hexdigest()
    assert (ref.id, ref.sha256, ref.size_chars, ref.size_bytes) == (
        f"art_{sha[:12]}",
        sha,
        len(text),
        len(text.encode()),
    )
    assert ref.kind == "json" and ref.items == 1 and ref.arrays == {"/flights": 30}
    assert ref.shape["keys"]["flights"]["items"] == 30
    item = ref.shape["keys"]["flights"]["item"]
    assert item["keys"]["price"] == {"type": "integer"} and item["keys"]["note"]["type"] == [
        "null",
        "string",
    ]
    assert ref.source == source and ref.data_class == "restricted"
    assert (ref.created_at, ref.expires_at) == (clock.t, clock.t + 3600)
    assert (ref.truncated, ref.summary, ref.incomplete, ref.complete) == (False, False, True, False)
    # content-addressed layout on disk; a second store on the folder sees the same artifact
    assert (tmp_path / "objects" / sha[:2] / f"{sha}.txt").read_text(encoding="utf-8") == text
    assert json.loads((tmp_path / "refs" / f"{ref.id}.json").read_text())["sha256"] == sha
    again = hk.ArtifactStore(tmp_path, clock=clock)
    assert again.read(ref.id) == text and again.ref(ref.id).source == source
    # equal text -> the same artifact, first writer's source kept
    assert store.put(text, source={"run_id": "r2"}).id == ref.id
    assert store.ref(ref.id).source == source and len(store) == 1


def test_slice_in_pieces_reassembles_the_30_item_array_exactly(store):
    ref = store.put({"meta": {"q": "JFK-SEA"}, "flights": FLIGHTS})
    got, parts, start = [], [], 0
    while True:
        ans = store.slice(ref.id, "/flights", start, start + 7)
        parts.append(ans["part"])
        got.extend(ans["items"])
        for (s, e), item in zip(ans["offsets"], ans["items"], strict=True):
            assert json.loads(store.read(ref.id)[s:e]) == item
        if "next" not in ans:
            break
        start = ans["stop"]
    assert canon(got) == canon(FLIGHTS) and got == FLIGHTS
    assert parts == ["items 0–6 of 30", "items 7–13 of 30", "items 14–20 of 30",
                     "items 21–27 of 30", "items 28–29 of 30"]  # fmt: skip
    # the default page is bounded to 10 items and says where to go on
    ans = store.slice(ref.id, "/flights", 10)
    assert ans["part"] == "items 10–19 of 30" and len(ans["items"]) == 10
    assert ans["next"] == f'artifact_slice(ref="{ref.id}", pointer="/flights", start=20)'


def test_slice_respects_the_char_bound_and_flags_items_too_long():
    store = hk.ArtifactStore()
    big = [{"id": i, "blob": "x" * 1500} for i in range(5)] + [{"id": 5, "blob": "y" * 9000}]
    ref = store.put(big)
    ans = store.slice(ref.id, "", 0, 6, max_chars=4000)
    assert [x["id"] for x in ans["items"]] == [0, 1] and ans["part"] == "items 0–1 of 6"
    assert len(json.dumps(ans, ensure_ascii=False)) <= 4000
    ans = store.slice(ref.id, "", 5)
    assert (
        ans["items"] == [] and ans["too_long"]["index"] == 5 and "artifact_context" in ans["hint"]
    )


def test_bad_pointers_name_the_pointer_and_what_exists(store):
    ref = store.put({"flights": FLIGHTS})
    with pytest.raises(hk.ToolArgumentsError) as e:
        store.value(ref.id, "/flights/3/flightnumber")
    msg = str(e.value)
    assert "'/flights/3/flightnumber'" in msg and "no key 'flightnumber'" in msg
    assert "at /flights/3 there is an object with keys [flight_number, origin" in msg
    with pytest.raises(
        hk.ToolArgumentsError, match=r"'30' is not a valid index.*array of 30 items"
    ):
        store.value(ref.id, "/flights/30")
    with pytest.raises(hk.ToolArgumentsError, match=r"slice needs an array"):
        store.slice(ref.id, "/flights/0")
    with pytest.raises(hk.ToolArgumentsError, match=r"a number \(100\)"):
        store.value(ref.id, "/flights/0/price/x")
    assert store.value(ref.id, "/flights/17/note") == "ünïcödé ✈"


def test_every_answer_is_exact_bounded_and_says_which_part(store):
    ref = store.put({"flights": FLIGHTS * 10})  # ~30 kB
    text = store.read(ref.id)
    answers = [
        store.head(ref.id, 50_000),
        store.tail(ref.id, 700),
        store.context(ref.id, offset=12_345, chars=900),
        store.context(ref.id, pointer="/flights/4"),
        store.outline(ref.id),
        store.outline(ref.id, "/flights/0"),
        store.search(ref.id, "hat01"),
    ]
    for ans in answers:
        assert ans["artifact_ref"] == ref.id and ans["form"] == "excerpt" and ans["part"]
        assert len(json.dumps(ans, ensure_ascii=False)) <= 4000
        if "text" in ans:
            assert text[ans["start"] : ans["end"]] == ans["text"]
            assert hk.data.verify_preview(store, ref.id, ans)
    head, tail, ctx, at_ptr, outline, _, search = answers
    assert head["part"] == f"chars 0–{head['end'] - 1} of {len(text)}" and head["end"] > 2500
    assert tail["end"] == len(text) and len(tail["text"]) == 700
    assert ctx["start"] <= 12_345 < ctx["end"] and ctx["end"] - ctx["start"] == 900
    s, e = at_ptr["start"], at_ptr["end"]
    assert json.loads(text[s:e]) == FLIGHTS[4]
    assert (
        outline["arrays"]["/flights"] == 300 and outline["shape"]["keys"]["flights"]["items"] == 300
    )
    assert search["total"] == 100 and search["part"] == "hits 0–9 of 100"
    assert search["hits"][3]["pointer"] == "/flights/13/flight_number"
    assert "HAT013" in search["hits"][3]["text"] and "skip=10" in search["next"]


def test_text_artifacts_read_by_window_not_pointer():
    store = hk.ArtifactStore()
    log = "\n".join(f"line {i}: ok" for i in range(2000))
    ref = store.put(log)
    assert ref.kind == "text" and ref.items == 2000 and ref.preview.text == log[:400]
    assert store.search(ref.id, "line 1999")["hits"][0]["offset"] == log.index("line 1999")
    with pytest.raises(hk.ToolArgumentsError, match="plain text"):
        store.slice(ref.id, "")


@settings(max_examples=60, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
        lambda kids: (
            st.lists(kids, max_size=14) | st.dictionaries(st.text(max_size=8), kids, max_size=6)
        ),
        max_leaves=60,
    ),
    st.sampled_from([None, 0, 2, 1]),
)
def test_every_stored_preview_verifies_and_a_tampered_one_fails(value, indent):
    store = hk.ArtifactStore(preview_chars=120)
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    ref = store.put(text)
    p = ref.preview
    assert store.read(ref.id)[p.start : p.end] == p.text
    assert store.verify_preview(ref.id, p) and hk.data.verify_preview(store, ref, p.to_dict())
    if p.pointer is not None:  # the preview starts exactly at the value it names
        assert store.context(ref.id, pointer=p.pointer)["start"] == p.start
    # a summary carries the same preview, and it verifies too
    summary = summarize(ref, reason="test", max_chars=2000)
    assert len(json.dumps(summary, ensure_ascii=False)) <= 2000
    assert store.verify_preview(ref.id, summary["preview"])
    if p.text:
        tampered = p.text[:-1] + ("X" if p.text[-1] != "X" else "Y")
        assert not store.verify_preview(ref.id, {**p.to_dict(), "text": tampered})
        assert not store.verify_preview(ref.id, {**p.to_dict(), "start": p.start + 1,
                                                 "end": p.end + 1})  # fmt: skip
    assert not store.verify_preview(ref.id, {**p.to_dict(), "text": p.text + " "})


def test_tampered_bytes_on_disk_fail_the_integrity_check(tmp_path):
    ref = hk.ArtifactStore(tmp_path).put({"flights": FLIGHTS})
    blob = next((tmp_path / "objects").rglob("*.txt"))
    blob.write_text(blob.read_text().replace("HAT007", "HAT070"), encoding="utf-8")
    with pytest.raises(hk.errors.ArtifactIntegrityError, match="do not match sha256"):
        hk.ArtifactStore(tmp_path).read(ref.id)


def test_lifecycle_expiry_archive_restore_delete(tmp_path):
    clock = Clock()
    store = hk.ArtifactStore(tmp_path, ttl_seconds=60, clock=clock)
    a = store.put({"flights": FLIGHTS})
    b = store.put({"other": FLIGHTS[:12]}, ttl_seconds=600)
    clock.t += 61
    with pytest.raises(hk.errors.ArtifactNotFoundError) as e:
        store.read(a.id)
    assert "is expired: expired at 2023-11-14T22:14:20+00:00 (lifetime 60 s)" in str(e.value)
    assert store.sweep() == [] and store.status(a.id) == "expired"
    assert not list((tmp_path / "objects").rglob(f"{a.sha256}.txt"))  # the bytes are gone
    assert store.status(b.id) == "active"
    store.archive(b.id)
    with pytest.raises(
        hk.errors.ArtifactNotFoundError, match=r"archived: archived at .*restore\(\)"
    ):
        store.slice(b.id, "/other")
    assert store.verify_preview(b.id, b.preview)  # audits still read the archive
    assert store.restore(b.id).status == "active" and store.value(b.id, "/other/11") == FLIGHTS[11]
    store.delete(b.id, reason="user asked")
    with pytest.raises(hk.errors.ArtifactNotFoundError, match="deleted: user asked at"):
        store.read(b.id, include_archived=True)
    assert not list(tmp_path.rglob(f"{b.sha256}*"))
    # storing the same text again brings the expired artifact back, fresh
    again = store.put({"flights": FLIGHTS})
    assert again.id == a.id and again.status == "active" and again.expires_at == clock.t + 60
    assert [r.id for r in store.refs(status="active")] == [a.id]
    with pytest.raises(hk.errors.ArtifactNotFoundError, match="no artifact 'art_000000000000'"):
        store.read("art_000000000000")


def test_sweep_expires_everything_past_due():
    clock = Clock()
    store = hk.ArtifactStore(ttl_seconds=10, clock=clock)
    ids = sorted(store.put([i] * 20).id for i in range(3))
    keep = store.put([9] * 20, ttl_seconds=100).id
    clock.t += 11
    assert store.sweep() == ids and store.status(keep) == "active"


def test_oversize_thresholds_are_parameters():
    value = {"a": list(range(11))}
    text = json.dumps(value)
    assert oversize_reason(text, value, max_chars=8000, max_items=10) == (
        "it holds an array of 11 items at /a (inline limit 10)"
    )
    assert oversize_reason(text, value, max_chars=8000, max_items=11) is None
    assert "(inline limit 20)" in oversize_reason(text, value, max_chars=20, max_items=99)
    deep = {"x": [{"y": [{"z": list(range(12))}]}]}
    assert "at /x/0/y/0/z" in oversize_reason(json.dumps(deep), deep, max_chars=8000, max_items=10)
    assert oversize_reason("x" * 8000, "x" * 8000, max_chars=8000, max_items=10) is None
    assert oversize_reason("x" * 8001, None, max_chars=8000, max_items=10) is not None


def test_summary_stays_bounded_for_wide_and_deep_results():
    store = hk.ArtifactStore(preview_chars=1500)
    wide = [{f"key_{k}_{'z' * 30}": {"n": [k] * 3, "deep": {"a": {"b": {"c": k}}}} for k in range(80)}
            for _ in range(12)]  # fmt: skip
    ref = store.put(wide)
    for bound in (2000, 1200):
        summary = summarize(ref, reason="because", max_chars=bound)
        assert len(json.dumps(summary, ensure_ascii=False)) <= bound
        assert summary["complete"] is False and summary["artifact_ref"] == ref.id
        assert store.verify_preview(ref.id, summary["preview"])


def test_repr():
    ref = hk.ArtifactStore().put([{"x": 1}] * 11)
    assert repr(ref) == f"<ArtifactRef {ref.id} json {ref.size_chars} chars, 11 items>"


def test_html_renderers_escape_and_bound():
    store = hk.ArtifactStore()
    ref = store.put([{"x": "<script>alert(1)</script>" * 50}] * 11)
    html = ref._repr_html_()
    assert ref.id in html and "<script>" not in html and "&lt;script&gt;" in html
    assert len(html) < 6000
    with hk.set_display("plain"):
        assert ref._repr_html_() is None


def test_store_is_a_context_manager(tmp_path):
    with hk.ArtifactStore(tmp_path) as store:
        ref = store.put(list(range(20)))
    assert hk.ArtifactStore(tmp_path).value(ref.id, "/19") == 19


def test_slice_projects_fields_of_each_item():
    store = hk.ArtifactStore()
    ref = store.put({"flights": FLIGHTS})
    ans = store.slice(ref.id, "/flights", 15, fields=["/flight_number", "/seats/economy"])
    assert ans["items"] == [
        {"/flight_number": f["flight_number"], "/seats/economy": f["seats"]["economy"]}
        for f in FLIGHTS[15:25]
    ]
    assert ans["fields"] == ["/flight_number", "/seats/economy"] and "fields=" in ans["next"]
    with pytest.raises(hk.ToolArgumentsError, match=r"item /flights/15 has no field '/seat'"):
        store.slice(ref.id, "/flights", 15, fields=["/seat"])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"root": 5}, r"ArtifactStore\(root\) takes a folder path .*got int 5"),
        ({"ttl_seconds": "1h"}, "ttl_seconds must be positive seconds or None, got '1h'"),
        ({"preview_chars": 0}, "preview_chars must be an int >= 1"),
        ({"clock": 5}, "clock must be a function"),
    ],
)
def test_a_wrong_argument_is_a_usage_error_saying_what_to_pass(kwargs, match):
    with pytest.raises(hk.UsageError, match=match):
        hk.ArtifactStore(**kwargs)
