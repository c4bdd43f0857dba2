import pathlib

import pytest
from hypothesis import HealthCheck, settings

from harnesskit.models import block_real_models

block_real_models()

# Property tests assert what holds, never how fast: on a shared or loaded machine (CI, two
# cores) Hypothesis's timing checks (per-example deadline, slow input generation) fail
# tests that are correct. A test's own @settings still applies on top of this profile.
settings.register_profile("harnesskit", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("harnesskit")

SHARED = pathlib.Path(__file__).resolve().parents[1].parent / "shared"


@pytest.fixture
def shared_datasets() -> pathlib.Path:
    """The read-only public datasets beside the checkout; skip when absent (a plain clone)."""
    path = SHARED / "datasets"
    if not path.is_dir():
        pytest.skip(f"../shared/datasets not found at {path}: these tests need the shared data")
    return path


@pytest.fixture
def server(monkeypatch):
    """A real OpenAI-compatible HTTP server on loopback (`tests.support.loopback`), with model
    requests allowed for the test's duration (they are blocked for the suite otherwise)."""
    from harnesskit.models import base
    from tests.support.loopback import LoopbackServer

    monkeypatch.setattr(base, "ALLOW_MODEL_REQUESTS", True)
    with LoopbackServer() as srv:
        yield srv


def pytest_sessionfinish(session, exitstatus):
    """Under `make test-extras` (HK_REQUIRE_EXTRAS=1) a test skipped for a missing extra fails."""
    import os

    if not os.environ.get("HK_REQUIRE_EXTRAS"):
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter else []
    missing = [r for r in skipped if "extra" in str(r.longrepr)]
    if missing:
        reporter.write_line(f"HK_REQUIRE_EXTRAS: {len(missing)} skipped for a missing extra")
        session.exitstatus = 1
