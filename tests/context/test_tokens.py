import pytest

import harnesskit as hk


def test_estimator_rules():
    est = hk.context.TokenEstimator()
    assert est.count("") == 0
    assert est.count("a" * 400) == 100
    assert est.count("你好世界") == 4
    assert est.count("你好" + "a" * 8) == 4


def test_calibration_recovers_rates_and_reports_error():
    samples = [("a" * n, n // 3) for n in (30, 300, 900)] + [("中" * 10 + "a" * 30, 10 * 2 + 10)]
    est, err = hk.context.TokenEstimator.calibrate(samples)
    assert est.chars_per_token == pytest.approx(3.0, rel=0.05)
    assert est.tokens_per_cjk == pytest.approx(2.0, rel=0.05)
    assert err < 0.02


def test_calibration_needs_samples():
    with pytest.raises(hk.UsageError):
        hk.context.TokenEstimator.calibrate([("abc", 1)])
