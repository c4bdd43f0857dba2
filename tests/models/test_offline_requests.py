"""The requests a fake model keeps (`requests`) read back as received, with flat memory."""

from __future__ import annotations

import harnesskit as hk
from harnesskit.messages import grown_tuple
from harnesskit.models.offline import Requests


def M(i: int) -> hk.Message:
    return hk.Message(role="user", content=f"m{i}")


def _request(messages, step):
    return hk.ModelRequest(messages=messages, step=step, settings={"temperature": 0})


def test_requests_read_back_equal_to_the_ones_received():
    # growing prompts share one list; a closing note, a new list, plain tuples and a shorter
    # prompt are no extension and are kept as they came
    spine = [M(0), M(1)]
    note = (hk.Message(role="system", content="closing"),)
    sent = [_request(grown_tuple(spine), 1)]
    for step in range(2, 9):
        spine.append(M(step))
        sent.append(_request(grown_tuple(spine, note if step == 5 else ()), step))
    other = [M(0), M(99)]
    sent.append(_request(grown_tuple(other), 9))
    other.append(M(100))
    sent.append(_request(grown_tuple(other), 10))
    sent.append(_request(tuple(spine), 11))  # plain: kept as given
    sent.append(_request(grown_tuple(spine[:2]), 12))  # a new, shorter list
    spine.append(M(13))
    sent.append(_request(grown_tuple(spine), 13))  # extends request 8's list, not the last
    kept = Requests()
    for request in sent:
        kept._keep(request)
    assert len(kept) == len(sent) and kept == sent and list(kept) == sent
    for i, request in enumerate(sent):
        assert kept[i] == request and isinstance(kept[i].messages, tuple)
        assert kept[i].messages == tuple(request.messages)
    assert kept[-1] == sent[-1] and kept[3:7] == sent[3:7] and kept[::-2] == sent[::-2]
    assert repr(kept) == repr(sent)
    assert Requests() == [] and kept != sent[:-1]


def test_a_function_model_keeps_each_request_of_a_run():
    seen = []

    def policy(messages, info):
        seen.append(info)
        if info.step > 6:
            return "Done."
        return hk.ToolCall(id=f"c{info.step}", name="echo", arguments={"x": info.step})

    @hk.tool
    def echo(x: int) -> int:
        """Echo.

        Args:
            x: a number.
        """
        return x

    model = hk.FunctionModel(policy)
    run = hk.Harness([echo], model, policy="full-history").run("go")
    assert run.finish_reason == "stop"
    assert model.requests == seen and [r.step for r in model.requests] == list(range(1, 8))


def test_the_newest_request_is_the_object_received():
    kept = Requests()
    first, second = _request((M(0),), 1), _request((M(0), M(1)), 2)
    kept._keep(first)
    assert kept[-1] is first and kept[0] is first
    kept._keep(second)
    assert kept[-1] is second and kept[1] is second and list(kept)[-1] is second
    assert kept[0] == first and kept[-2] == first


def test_clear_empties_the_requests_as_a_list_would_and_keeping_goes_on():
    # the peer benchmark (and a notebook re-running cells) empties `model.requests` between runs
    seen = []

    def policy(messages, info):
        seen.append(info)
        return "Done."

    model = hk.FunctionModel(policy)
    h = hk.Harness([], model)
    h.run("first")
    assert len(model.requests) == 1
    model.requests.clear()
    assert model.requests == [] and len(model.requests) == 0
    h.run("second")
    assert model.requests == seen[1:] and model.requests[-1] is seen[-1]
