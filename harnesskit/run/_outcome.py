"""Private: how a step ends — the one place that maps what stopped it to a finish reason.

`ends_step(run)` wraps the loop's turn: a tripped brake closes the run (one last closing
request), a `StopRun` ends it with its reason, a pause (a fact conflict, R-C6, or a model
unavailable under `on_unavailable="pause"`, R-M5) leaves it resumable, any other model error
ends it with `error`, and a crash or Ctrl-C is recorded before it propagates. The log is
flushed whatever happened.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from harnesskit.errors import BrakeTripped, EventLogError, ModelError, ModelOutputError, StopRun
from harnesskit.tools.executor import exception_text

if TYPE_CHECKING:
    from harnesskit.run.loop import Run

__all__ = ["ends_step", "pauses", "write_failed"]


def pauses(exc: BaseException, on_unavailable: str) -> bool:
    """Whether `exc` pauses the run instead of ending it.

    Args:
        exc: what stopped the turn.
        on_unavailable: the harness's setting, `"error"` or `"pause"`.

    Returns:
        True for `StopRun("paused")` (a conflict) and, under `"pause"`, for a `ModelError`
        that is not a `ModelOutputError`.
    """
    if isinstance(exc, StopRun):
        return exc.finish_reason == "paused"
    unavailable = isinstance(exc, ModelError) and not isinstance(exc, ModelOutputError)
    return unavailable and on_unavailable == "pause"


@contextmanager
def ends_step(run: Run) -> Iterator[None]:
    """Run one step of `run` and record how it ended.

    Args:
        run: the run being stepped.

    Yields:
        Nothing; the body is the loop's turn.

    Raises:
        EventLogError: the log could not be written (disk full); the run is finished with
            `error` in memory first.
        BaseException: anything other than a brake, `StopRun` or `ModelError`, after the run
            is finished with `error` (or `cancelled` for Ctrl-C / `SystemExit`).
    """
    st = run.state
    try:
        try:
            try:
                yield
            except BrakeTripped as brake:  # a limit ends the run normally, after one last ask
                run._close(brake)
        except StopRun as stop:
            run._finish(stop.finish_reason, reason=str(stop))
        except ModelError as exc:
            paused = pauses(exc, run.harness.on_unavailable)
            if not paused:
                run.error = exc
            run._finish("paused" if paused else "error", error=exception_text(exc))
        except BaseException as exc:  # a bug or Ctrl-C: record the end, then let it propagate
            if st.finish_reason is None:
                run.error = exc
                cancelled = isinstance(exc, KeyboardInterrupt | SystemExit)
                run._finish("cancelled" if cancelled else "error", error=exception_text(exc))
            raise
        finally:
            run.log.flush()
    except EventLogError as exc:  # disk full: the run ends with `error`, recorded in memory
        write_failed(run, exc)
        raise


def write_failed(run: Run, exc: EventLogError) -> None:
    """End `run` with `error` after its log could not be written (a `run.finished` in memory).

    Args:
        run: the run.
        exc: the write error (also kept as `run.error`).
    """
    run.error = exc
    if run.state.finish_reason != "error" or run.log.last("run.finished") is None:
        run._finish("error", error=exception_text(exc))
