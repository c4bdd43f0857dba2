"""Token calibration (R-M4) on usage that real providers reported in the recorded exchanges.

The pairs are (prompt text as sent, prompt_tokens the provider reported) from the chat-completions
requests in ../shared's cassettes. Figures are printed (`pytest -s`), not asserted as thresholds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from harnesskit.context.tokens import TokenEstimator

CASSETTES = (
    Path(__file__).resolve().parents[2].parent
    / "shared/datasets/pydantic__pydantic-ai/tests/models/cassettes"
)


def prompt_pairs() -> dict[str, list[tuple[str, int]]]:
    """(text, reported prompt tokens) per model, from every recorded chat-completions request."""
    if not CASSETTES.exists():
        pytest.skip(f"recorded exchanges absent at {CASSETTES}")
    groups: dict[str, list[tuple[str, int]]] = {}
    for path in sorted(CASSETTES.glob("*/*.yaml")):
        for item in yaml.safe_load(path.read_text())["interactions"]:
            body, answer = item["request"]["parsed_body"], item["response"]["parsed_body"]
            if "messages" not in body or "usage" not in answer:
                continue
            parts = []
            for m in body["messages"]:
                parts.append(m.get("content") or "")
                parts += [
                    c["function"]["name"] + c["function"]["arguments"]
                    for c in m.get("tool_calls") or ()
                ]
            parts.append(json.dumps(body.get("tools", []), separators=(",", ":")))
            groups.setdefault(body["model"], []).append(
                ("".join(parts), answer["usage"]["prompt_tokens"])
            )
    return groups


def error(est: TokenEstimator, pairs: list[tuple[str, int]]) -> float:
    return sum(abs(est.count(t) - n) / n for t, n in pairs) / len(pairs)


def test_calibration_on_one_models_recorded_usage_fits_better_than_the_default():
    pairs = prompt_pairs()["gpt-4o-mini"]
    est, fitted_error = TokenEstimator.calibrate(pairs)
    default_error = error(TokenEstimator(), pairs)
    print(
        f"\ngpt-4o-mini prompts (n={len(pairs)}): default 4.00 chars/token -> {default_error:.1%} "
        f"mean abs error; calibrated {est.chars_per_token:.2f} chars/token -> {fitted_error:.1%}"
    )
    assert fitted_error == pytest.approx(error(est, pairs), abs=0.02)  # counts are rounded
    assert fitted_error < default_error


def test_calibration_error_across_mixed_providers_is_reported():
    groups = prompt_pairs()
    pairs = [p for g in groups.values() for p in g]
    est, fitted_error = TokenEstimator.calibrate(pairs)
    held_out = []
    for i, (text, tokens) in enumerate(pairs):
        fold, _ = TokenEstimator.calibrate(pairs[:i] + pairs[i + 1 :])
        held_out.append(abs(fold.count(text) - tokens) / tokens)
    print(
        f"\nall chat-completions prompts (n={len(pairs)}, models={sorted(groups)}): default "
        f"{error(TokenEstimator(), pairs):.1%}; calibrated {est.chars_per_token:.2f} chars/token "
        f"{fitted_error:.1%} in-sample, {sum(held_out) / len(held_out):.1%} leave-one-out"
    )
    assert 1.0 < est.chars_per_token < 10.0


def test_calibration_recovers_known_rates():
    english = ["The flight HAT136 leaves JFK at 11:00." * k for k in (1, 3, 7)]
    chinese = ["取消预订4WQ150并退款到原支付方式 " * k for k in (1, 2, 5)]
    pairs = [(t, round(len(t) / 3)) for t in english]
    pairs += [
        (t, round(sum(1.5 if "\u4e00" <= ch <= "\u9fff" else 1 / 3 for ch in t))) for t in chinese
    ]
    est, err = TokenEstimator.calibrate(pairs)
    assert est.chars_per_token == pytest.approx(3.0, rel=0.05)
    assert est.tokens_per_cjk == pytest.approx(1.5, rel=0.05)
    assert err < 0.03
