"""Where trials run: threads here (the default), one after another, or a Dask cluster.

One loop for every backend keeps at most `capacity` trials in flight and hands each finished
row to `on_done`. Ctrl-C (SIGINT, when the loop runs on the main thread) first stops the
scheduling of new trials and lets the running ones finish; a second Ctrl-C cancels those too.
The loop then returns; the caller writes what finished.
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import importlib
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

__all__ = ["Dask", "Inline", "Stop", "Threads", "run_trials"]

Row = dict[str, Any]


class Stop:
    """The interruption state shared by the loop, the SIGINT handler and running trials."""

    def __init__(self) -> None:
        self.presses = 0
        self.scheduling = threading.Event()  # set: no new trials
        self.cancel = threading.Event()  # set: cancel the running trials
        self._hooks: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    def press(self) -> None:
        """One Ctrl-C: the first stops scheduling, the second cancels the running trials."""
        self.presses += 1
        self.scheduling.set()
        if self.presses >= 2:
            self.cancel.set()
            with self._lock:
                hooks = list(self._hooks)
            for hook in hooks:
                hook()

    def on_cancel(self, hook: Callable[[], None]) -> Callable[[], None]:
        """Call `hook` on a second Ctrl-C (at once if it came already); returns the remover."""
        with self._lock:
            self._hooks.append(hook)
        if self.cancel.is_set():
            hook()

        def remove() -> None:
            with self._lock:
                if hook in self._hooks:
                    self._hooks.remove(hook)

        return remove


class Inline:
    """Runs each trial at submit time, on this thread: `fn(trial, path) -> row`."""

    capacity = 1

    def __init__(self, fn: Callable[[Any, Path], Row], path: Path) -> None:
        self._fn = fn
        self._path = path

    def submit(self, trial: Any) -> cf.Future[Row]:
        """Run `trial` now; its row (or exception) is in the returned future."""
        fut: cf.Future[Row] = cf.Future()
        try:
            fut.set_result(self._fn(trial, self._path))
        except Exception as exc:  # reported by result(), as for the other backends
            fut.set_exception(exc)
        return fut

    def wait(self, handles: Iterable[Any], timeout: float) -> list[Any]:
        """The handles that are done (all of them: they ran at submit)."""
        return list(handles)

    def result(self, handle: Any) -> Row:
        """The row of a done handle (raises what the trial raised)."""
        row: Row = handle.result()
        return row

    def cancel(self, handles: Iterable[Any]) -> None:
        """Nothing to cancel: trials that ran inline are done."""
        return

    def close(self) -> None:
        """Nothing to release."""
        return


class Threads(Inline):
    """A thread pool of `workers` threads."""

    def __init__(self, fn: Callable[[Any, Path], Row], workers: int, path: Path) -> None:
        super().__init__(fn, path)
        self.capacity = workers
        self._pool = cf.ThreadPoolExecutor(workers, thread_name_prefix="hk-eval")

    def submit(self, trial: Any) -> cf.Future[Row]:
        """Queue `trial` on the pool."""
        return self._pool.submit(self._fn, trial, self._path)

    def wait(self, handles: Iterable[Any], timeout: float) -> list[Any]:
        """The handles done within `timeout` seconds (at least one, or none on timeout)."""
        done, _ = cf.wait(list(handles), timeout=timeout, return_when=cf.FIRST_COMPLETED)
        return list(done)

    def close(self) -> None:
        """Drop the queued trials; running ones end on their own (or by their cancel hook)."""
        self._pool.shutdown(wait=False, cancel_futures=True)


class Dask:
    """A `distributed.Client`: one task per trial, as many in flight as the workers' threads.

    The task is `task(payload, trial, path_str) -> row`; `payload` (the experiment) is sent to
    every worker once.
    """

    def __init__(self, client: Any, task: Callable[..., Row], payload: Any, path: Path) -> None:
        self._client = client
        self._task = task
        self._path = str(path)
        self._payload = client.scatter(payload, broadcast=True, hash=False)
        self.capacity = max(1, sum(client.nthreads().values()))
        self._tag = f"{id(self):x}-{time.time_ns():x}"

    def submit(self, trial: Any) -> Any:
        """Submit `trial` as one task."""
        return self._client.submit(
            self._task,
            self._payload,
            trial,
            self._path,
            key=f"hk-trial-{trial.index:05d}-{self._tag}",
            pure=False,
        )

    def wait(self, handles: Iterable[Any], timeout: float) -> list[Any]:
        """The futures done within `timeout` seconds."""
        dd: Any = importlib.import_module("distributed")
        try:
            done, _ = dd.wait(list(handles), timeout=timeout, return_when="FIRST_COMPLETED")
        except (dd.TimeoutError, TimeoutError):
            return []
        return list(done)

    def result(self, handle: Any) -> Row:
        """The row a finished task returned (raises what the task raised)."""
        row: Row = handle.result()
        return row

    def cancel(self, handles: Iterable[Any]) -> None:
        """Cancel these tasks on the cluster."""
        self._client.cancel(list(handles))

    def close(self) -> None:
        """Release the experiment copy held by the workers."""
        self._client.cancel(self._payload)


def run_trials(
    trials: Iterable[Any],
    on_done: Callable[[Any, Row], None],
    on_failure: Callable[[Any, BaseException], Row],
    *,
    backend: Any,
    stop: Stop,
    say: Callable[[str], None] | None = None,
) -> None:
    """Run `trials` on `backend`, calling `on_done(trial, row)` as each finishes.

    Args:
        trials: the trials, in the order they are started.
        on_done: called on this thread with each finished trial and its row.
        on_failure: the row of a trial whose task raised (e.g. a lost Dask worker).
        backend: `Inline`, `Threads` or `Dask`.
        stop: the interruption state; SIGINT presses it when this runs on the main thread.
        say: where the Ctrl-C notices go (default stderr).
    """
    tell = say or (lambda text: print(text, file=sys.stderr, flush=True))
    pending = collections.deque(trials)
    inflight: dict[Any, Any] = {}
    told = 0

    def on_sigint(signum: int, frame: Any) -> None:
        stop.press()

    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        while inflight or (pending and not stop.scheduling.is_set()):
            while pending and len(inflight) < backend.capacity and not stop.scheduling.is_set():
                trial = pending.popleft()
                inflight[backend.submit(trial)] = trial
            if stop.presses > told:
                told = stop.presses
                if stop.cancel.is_set():
                    tell(f"harnesskit: cancelling {len(inflight)} running trials")
                    backend.cancel(inflight)
                    inflight.clear()
                    break
                tell(
                    f"harnesskit: interrupted; no new trials, waiting for {len(inflight)} "
                    "running ones (Ctrl-C again to cancel them)"
                )
            for handle in backend.wait(inflight, 0.2):
                trial = inflight.pop(handle)
                try:
                    row = backend.result(handle)
                except Exception as exc:  # the trial's own errors are rows already
                    row = on_failure(trial, exc)
                on_done(trial, row)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
        backend.close()
