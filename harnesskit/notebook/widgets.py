"""Notebook widgets (R-O3): step controls, a trace explorer and an approval prompt.

```python
from harnesskit.notebook.widgets import ApprovalPrompt, StepControls, TraceExplorer

prompt = ApprovalPrompt()                       # the gate asks it for confirm-level calls
h = hk.Harness(tools, model, gate=hk.Gate(confirm=prompt))
run = h.start("Cancel order A1")
controls = StepControls(run)                    # Next step / Run to end / Cancel + the prompt
controls                                        # (the cell shows it)
TraceExplorer(run)                              # step slider, event table, exact request sent
```

How approval works in a notebook. The gate calls its `confirm` callback synchronously, in
the middle of a step, and needs a yes or no before the step can go on. A click on a widget
button, however, is a message that the kernel handles on its main thread *between* cell
executions: if the step ran on the main thread and the callback waited there for the click,
the click could never arrive. So `StepControls` runs every step on a worker thread. When a
confirm-level call comes, `ApprovalPrompt.__call__` (on that worker thread) shows the call's
arguments and dry-run preview, enables Approve / Deny and blocks the worker on a
`threading.Event`; the kernel stays free, the click runs `approve()` / `deny()`, the event is
set and the step resumes with the answer. Cancel denies a waiting call and stops the run.
In code (tests, a notebook run top to bottom), `controls.wait()` returns `"approval"` when a
call is waiting and `prompt.approve()` / `button.click()` answers it.

When the prompt is asked on the main thread (someone called `run.step()` in a cell), no click
can arrive before the step must go on: it answers with its `fallback` (default: deny), warns,
and records why in `history`. The denial reaches the model as a `permission_denied` result.
"""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Callable
from typing import Any

from harnesskit._lazy import frozen_dataclass
from harnesskit.errors import refuse_type
from harnesskit.log.events import Event, EventLog
from harnesskit.notebook import display
from harnesskit.run import Run
from harnesskit.tools.gate import ApprovalRequest, deny_all

__all__ = ["ApprovalDecision", "ApprovalPrompt", "Snapshot", "StepControls", "TraceExplorer"]

_SHOWN_TYPES = ("user.message", "model.response", "tool.result", "brake")


def _widgets() -> Any:
    import ipywidgets

    return ipywidgets


class Snapshot:
    """A static HTML copy of a widget's current view, for readers without a kernel.

    Exported notebooks (nbconvert HTML, GitHub) cannot run widgets; a snapshot cell shows what
    the widget showed when the notebook ran.
    """

    def __init__(self, html: str, text: str) -> None:
        """Wrap `html` (built by `notebook.display`, already escaped) and a plain `text`."""
        self.html = html
        self.text = text

    def _repr_html_(self) -> str | None:
        return self.html if display.get_display() == "html" else None

    def __repr__(self) -> str:
        return self.text


class _WidgetBox:
    """Shared display plumbing: the object shows as its `widget`; `snapshot()` is static."""

    widget: Any

    def _static_html(self) -> str:
        return ""

    def snapshot(self) -> Snapshot:
        """A static HTML copy of the current view (shown where widgets cannot run).

        Returns:
            A `Snapshot` that renders as HTML in a notebook cell.
        """
        return Snapshot(self._static_html(), repr(self))

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        # Only the widget view and a short text: a text/html copy here would risk a frontend
        # preferring it over the live widget. Static copies come from `snapshot()`.
        bundle: dict[str, Any] = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = repr(self)
        return bundle


@frozen_dataclass(kw_only=True)
class ApprovalDecision:
    """One answer given by an `ApprovalPrompt`."""

    request: ApprovalRequest
    """The call that was asked about."""
    approved: bool
    """The answer returned to the gate."""
    by: str
    """How it was decided: `click`, `code` (approve()/deny() called), `cancel`, `timeout` or
    `fallback` (asked on the kernel's main thread, where no click can arrive)."""

    def __repr__(self) -> str:
        verdict = "approved" if self.approved else "denied"
        return f"<ApprovalDecision {self.request.tool} {verdict} by {self.by}>"


class ApprovalPrompt(_WidgetBox):
    """Approve / Deny buttons for confirm-level tool calls; use it as `Gate(confirm=prompt)`.

    See the module docstring for the threading mechanism.

    Args:
        timeout_seconds: seconds to wait for a click before denying; `None` waits until a
            click, `deny()` or the step controls' Cancel.
        fallback: the answer used when asked on the kernel's main thread (no click can come);
            default `deny_all`.
    """

    def __init__(
        self,
        *,
        timeout_seconds: float | None = None,
        fallback: Callable[[ApprovalRequest], bool] = deny_all,
    ) -> None:
        w = _widgets()
        self.timeout_seconds = timeout_seconds
        self.fallback = fallback
        self.pending: ApprovalRequest | None = None
        self.history: list[ApprovalDecision] = []
        self.approve_button = w.Button(
            description="Approve", button_style="success", icon="check", disabled=True
        )
        self.deny_button = w.Button(
            description="Deny", button_style="danger", icon="times", disabled=True
        )
        self.detail = w.HTML(value="")
        self.status = w.HTML(value="<i>no call waiting for approval</i>")
        self.widget = w.VBox(
            [self.status, self.detail, w.HBox([self.approve_button, self.deny_button])]
        )
        self.approve_button.on_click(lambda _: self._answer(True, "click"))
        self.deny_button.on_click(lambda _: self._answer(False, "click"))
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._answer_value: tuple[bool, str] | None = None
        self._listeners: list[Callable[[ApprovalRequest | None], None]] = []
        self.__name__ = "ApprovalPrompt"  # the gate records its confirm callback by name

    def __call__(self, request: ApprovalRequest) -> bool:
        """Ask for approval of `request` and return the answer (the gate calls this).

        On a worker thread it blocks until Approve / Deny (or `approve()` / `deny()`, Cancel,
        the timeout); on the main thread it answers with `fallback` at once.

        Args:
            request: the confirm-level call, with its arguments and dry-run preview.

        Returns:
            True when approved.
        """
        if threading.current_thread() is threading.main_thread():
            approved = bool(self.fallback(request))
            self.history.append(ApprovalDecision(request=request, approved=approved, by="fallback"))
            verdict = "approved" if approved else "denied"
            self.status.value = (
                f"<b>{display.escape_bounded(request.tool, 80)}</b> {verdict} by the fallback: "
                "asked on the kernel's main thread, where no click can arrive. Step the run "
                "with <code>StepControls(run)</code> to answer by click."
            )
            warnings.warn(
                f"ApprovalPrompt asked about {request.tool} on the kernel's main thread, where "
                f"no click can arrive; the fallback {verdict} it. Step the run with "
                "harnesskit.notebook.widgets.StepControls(run) to approve by click.",
                RuntimeWarning,
                stacklevel=2,
            )
            return approved
        with self._lock:
            self._event.clear()
            self._answer_value = None
            self.pending = request
        self.detail.value = display.render_html(request) or display.escape_bounded(repr(request))
        self.status.value = "<b>waiting for your approval</b>"
        self.approve_button.disabled = self.deny_button.disabled = False
        self._notify(request)
        self._event.wait(self.timeout_seconds)
        with self._lock:
            approved, by = self._answer_value or (False, "timeout")  # a click may race it
            self.pending = None
        self.approve_button.disabled = self.deny_button.disabled = True
        self.history.append(ApprovalDecision(request=request, approved=approved, by=by))
        verdict = "approved" if approved else "denied"
        self.status.value = (
            f"<i>last: <b>{display.escape_bounded(request.tool, 80)}</b> {verdict} ({by})</i>"
        )
        self._notify(None)
        return approved

    def _answer(self, approved: bool, by: str) -> bool:
        with self._lock:
            if self.pending is None or self._event.is_set():
                return False
            self._answer_value = (approved, by)
            self.pending = None  # answered: `StepControls.wait()` now waits for the step
            self._event.set()
            return True

    def approve(self) -> bool:
        """Approve the waiting call (what the Approve button does).

        Returns:
            True when a call was waiting.
        """
        return self._answer(True, "code")

    def deny(self, *, by: str = "code") -> bool:
        """Deny the waiting call (what the Deny button does).

        Args:
            by: recorded in `history` as how it was decided.

        Returns:
            True when a call was waiting.
        """
        return self._answer(False, by)

    def subscribe(self, listener: Callable[[ApprovalRequest | None], None]) -> None:
        """Call `listener(request)` when a call starts waiting and `listener(None)` when answered.

        Args:
            listener: called on the thread that asks (the step's worker thread).
        """
        self._listeners.append(listener)

    def _notify(self, request: ApprovalRequest | None) -> None:
        for listener in self._listeners:
            listener(request)

    def _static_html(self) -> str:
        if self.pending is not None:
            return display.render_html(self.pending) or ""
        return f"<i>{display.escape_bounded(repr(self))}</i>"

    def __repr__(self) -> str:
        waiting = f" waiting: {self.pending.tool}" if self.pending else ""
        return f"<ApprovalPrompt {len(self.history)} decisions{waiting}>"


class StepControls(_WidgetBox):
    """Next step / Run to end / Cancel for a run, with a live progress bar and the last event.

    Steps run on a worker thread, so the kernel stays free for clicks (Cancel, and Approve /
    Deny of the run's `ApprovalPrompt`, which is shown here when the run's gate uses one).

    Args:
        run: the run to drive.
        approval: the prompt to show; default the run gate's `confirm` callback when it is an
            `ApprovalPrompt`.
    """

    def __init__(self, run: Run, *, approval: ApprovalPrompt | None = None) -> None:
        refuse_type(run, Run, "StepControls(run)", "a Run, e.g. StepControls(h.start('...'))")
        w = _widgets()
        self.run = run
        confirm = run.harness.gate.confirm
        self.approval = approval or (confirm if isinstance(confirm, ApprovalPrompt) else None)
        self.error: BaseException | None = None
        self.next_button = w.Button(description="Next step", icon="step-forward")
        self.run_button = w.Button(description="Run to end", icon="fast-forward")
        self.cancel_button = w.Button(description="Cancel", icon="stop", button_style="warning")
        max_steps = run.harness.limits.max_steps
        self.progress = w.IntProgress(
            value=run.state.step, min=0, max=max_steps or max(10, run.state.step + 1)
        )
        self.status = w.HTML()
        self.last_event = w.HTML()
        children = [
            w.HBox([self.next_button, self.run_button, self.cancel_button, self.progress]),
            self.status,
            self.last_event,
        ]
        if self.approval is not None:
            children.append(self.approval.widget)
            self.approval.subscribe(self._on_approval)
        self.widget = w.VBox(children)
        self.next_button.on_click(lambda _: self.next_step())
        self.run_button.on_click(lambda _: self.run_to_end())
        self.cancel_button.on_click(lambda _: self.cancel())
        self._cond = threading.Condition()
        self._busy = False
        self._thread: threading.Thread | None = None
        run.log.subscribe(self._on_event)
        self._refresh()
        last = self._last_shown()
        if last is not None:
            self.last_event.value = display.event_card(last)

    # -- actions -----------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """True while a worker thread is stepping the run."""
        return self._busy

    def next_step(self) -> bool:
        """Run one step on a worker thread (the Next step button).

        Returns:
            False when the run is busy or finished (nothing started).
        """
        return self._start(lambda: self.run.step())

    def run_to_end(self) -> bool:
        """Step on a worker thread until the run finishes or is cancelled (Run to end).

        Returns:
            False when the run is busy or finished (nothing started).
        """

        def loop() -> None:
            while self.run.finish_reason is None:
                self.run.step()

        return self._start(loop)

    def cancel(self) -> None:
        """Cancel the run (the Cancel button): deny a waiting call and stop at the next step.

        When no step is running, one is started at once: it ends the run as `cancelled`
        without asking the model.
        """
        self.run.cancel()
        if self.approval is not None:
            self.approval.deny(by="cancel")
        if not self._busy and self.run.finish_reason is None:
            self._start(lambda: self.run.step())
        self._refresh()

    def wait(self, timeout_seconds: float | None = None) -> str:
        """Block until the worker is idle or a call waits for approval.

        Args:
            timeout_seconds: give up after this many seconds; `None` waits as long as needed.

        Returns:
            `"idle"` (no step running), `"approval"` (a call waits: answer it with the prompt)
            or `"timeout"`.

        Raises:
            Exception: whatever the step raised on the worker thread (e.g. a `UsageError`
                when a scripted model runs out of turns), re-raised once here.
        """
        deadline = None if timeout_seconds is None else time.monotonic() + timeout_seconds
        with self._cond:
            while True:
                if self.approval is not None and self.approval.pending is not None:
                    return "approval"
                if not self._busy:
                    break
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return "timeout"
                self._cond.wait(remaining)
        if self.error is not None:
            error, self.error = self.error, None
            raise error
        return "idle"

    # -- internals ---------------------------------------------------------------------------

    def _start(self, work: Callable[[], Any]) -> bool:
        with self._cond:
            if self._busy or self.run.finish_reason is not None:
                return False
            self._busy = True
            self.error = None
        self._refresh()

        def target() -> None:
            try:
                work()
                if self.run.state.cancelled and self.run.finish_reason is None:
                    self.run.step()  # Cancel during a step: end the run now, as `cancelled`
            except BaseException as exc:  # shown in the widget and re-raised by wait()
                self.error = exc
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()
                self._refresh()

        self._thread = threading.Thread(target=target, name="hk-step", daemon=True)
        self._thread.start()
        return True

    def _on_approval(self, request: ApprovalRequest | None) -> None:
        with self._cond:
            self._cond.notify_all()
        self._refresh()

    def _last_shown(self) -> Event | None:
        for e in reversed(self.run.log.events):
            if e.type in _SHOWN_TYPES:
                return e
        return None

    def _on_event(self, event: Event) -> None:
        try:  # a display problem must never break the run
            if event.type in _SHOWN_TYPES:
                self.last_event.value = display.event_card(event)
            if event.type in ("model.request", "run.finished", "tool.result"):
                self._refresh()
        except Exception as exc:  # pragma: no cover - defensive
            self.last_event.value = display.escape_bounded(f"display error: {exc}")

    def _refresh(self) -> None:
        st = self.run.state
        finished = st.finish_reason is not None
        if self.progress.max < st.step:
            self.progress.max = st.step * 2
        self.progress.value = st.step
        self.progress.bar_style = (
            "" if not finished else "success" if st.finish_reason == "stop" else "warning"
        )
        self.next_button.disabled = self.run_button.disabled = self._busy or finished
        self.cancel_button.disabled = finished
        note = ""
        if self.approval is not None and self.approval.pending is not None:
            note = " · <b>waiting for approval</b>"
        elif self._busy:
            note = " · stepping…"
        if self.error is not None:
            note += " · " + str(
                display.badge(f"{type(self.error).__name__}: {self.error}", "error")
            )
        self.status.value = display.run_summary(self.run) + note

    def _static_html(self) -> str:
        return display.render_html(self.run) or ""

    def __repr__(self) -> str:
        state = "busy" if self._busy else "idle"
        return f"<StepControls {self.run.state.run_id} step={self.run.state.step} {state}>"


class TraceExplorer(_WidgetBox):
    """A step slider, the step's event table, an event picker and a detail pane.

    The detail pane shows the selected event; for a `model.request` it shows the exact
    request sent (every message and the tool list, rebuilt by `EventLog.request_messages`).
    Events without a step number (user messages, the task contract) belong to the step before
    them; step 0 holds what came before the first model turn.

    Args:
        run: a `Run` or an `EventLog` (e.g. `hk.EventLog.read(path)`).
        branch_id: the branch to explore.
    """

    def __init__(self, run: Run | EventLog, *, branch_id: str = "main") -> None:
        refuse_type(run, (Run, EventLog), "TraceExplorer(run)", "a Run or an hk.EventLog")
        w = _widgets()
        self.log = run if isinstance(run, EventLog) else run.log
        self.branch_id = branch_id
        self.slider = w.IntSlider(
            value=0, min=0, max=0, description="step", continuous_update=False
        )
        self.events = w.Dropdown(options=[], description="event")
        self.table = w.HTML()
        self.detail = w.HTML()
        self.widget = w.VBox(
            [w.HBox([self.slider, self.events]), self.table, self.detail],
        )
        self._steps: dict[int, list[Event]] = {}
        self.slider.observe(lambda change: self.show_step(change["new"]), names="value")
        self.events.observe(lambda change: self._show_event(change["new"]), names="value")
        self.refresh()
        self.slider.value = max(self._steps) if self._steps else 0
        self.show_step(self.slider.value)
        if isinstance(run, Run):  # follow a live run: new steps extend the slider
            run.log.subscribe(self._on_event)

    def _on_event(self, event: Event) -> None:
        if event.type in ("model.request", "run.finished"):
            try:  # a display problem must never break the run
                self.refresh()
            except Exception as exc:  # pragma: no cover - defensive
                self.detail.value = display.escape_bounded(f"display error: {exc}")

    def refresh(self) -> None:
        """Re-read the log (after more steps ran): extend the slider, update the shown step."""
        shown = len(self._steps.get(self.slider.value, []))
        steps: dict[int, list[Event]] = {}
        current = 0
        for e in self.log.events:
            if e.branch_id != self.branch_id:
                continue
            if isinstance(e.step, int):
                current = e.step
            steps.setdefault(current, []).append(e)
        self._steps = steps
        self.slider.max = max(steps) if steps else 0
        if len(steps.get(self.slider.value, [])) != shown:
            self.show_step(self.slider.value)

    @property
    def steps(self) -> list[int]:
        """The step numbers present, ascending."""
        return sorted(self._steps)

    def show_step(self, step: int) -> None:
        """Show the events of `step` and select its model request (or its first event).

        Args:
            step: the step number (0 = before the first model turn).
        """
        if self.slider.value != step:
            self.slider.value = step  # the observer calls back here
            return
        events = self._steps.get(step, [])
        self.table.value = display.events_table(
            events, caption=f"step {step}: {len(events)} events"
        )
        options = [(f"{e.label} {e.type}", e.event_id) for e in events]
        request = next((e.event_id for e in events if e.type == "model.request"), None)
        chosen = request if request is not None else (events[0].event_id if events else None)
        self.events.options = options
        self.events.value = chosen
        self._show_event(chosen)

    def select(self, event_id: int) -> None:
        """Show the event `event_id` in the detail pane (moving the slider to its step).

        Args:
            event_id: a 1-based event id of the log.
        """
        for step, events in self._steps.items():
            if any(e.event_id == event_id for e in events):
                if self.slider.value != step:
                    self.show_step(step)
                self.events.value = event_id
                return
        self._show_event(event_id)

    def _show_event(self, event_id: int | None) -> None:
        if event_id is None:
            self.detail.value = "<i>no event</i>"
            return
        event = self.log[event_id]
        if event.type == "model.request":
            messages = self.log.request_messages(event_id)
            tools = self.log.request_tools(event_id)
            self.detail.value = display.request_view(messages, tools, event)
        else:
            self.detail.value = display.render_html(event) or display.escape_bounded(repr(event))

    def _static_html(self) -> str:
        return str(self.table.value) + str(self.detail.value)

    def __repr__(self) -> str:
        return f"<TraceExplorer {len(self.log)} events, steps 0..{self.slider.max}>"
