"""Run a blocking call in a worker thread and iterate over the progress it reports.

A Gradio generator handler cannot yield from inside a runner's callback; this turns
`run(on_progress=..., stop=...)` into an iterator of progress items followed by the result, so the
handler can refresh the table each time a task finishes. Each run gets its own queue: sessions never
see each other's progress.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")

_DONE = object()


@dataclass
class Finished(Generic[T]):
    """The worker's return value (the last item an iteration yields)."""

    value: T


class BatchControl:
    """One session's batch run: its stop flag and the output folder Resume continues in.

    Lives in `gr.State`; deep copies (gradio copies a State's initial value per session) start fresh,
    because a threading.Event cannot be copied and a new session must not share another's stop flag.
    """

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.output_dir: str | None = None
        self.running = False
        self.unwatched = False
        """True when the last run was stopped because nobody read its progress."""

    def __deepcopy__(self, memo: dict[int, Any]) -> BatchControl:
        return BatchControl()


class Tick:
    """Yielded by `iterate_in_thread` when `tick_s` passed without a report (time to look around)."""


TICK = Tick()


def iterate_in_thread(run: Callable[[Callable[[Any], None]], T], tick_s: float | None = None) -> Iterator[Any]:
    """Call `run(report)` in a daemon thread; yield each reported item, then `Finished(result)`.

    With `tick_s`, `TICK` is yielded whenever that long passes without a report. The worker's
    exception is re-raised here, in the consumer's thread.
    """
    items: queue.Queue[Any] = queue.Queue()
    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            outcome["value"] = run(items.put)
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            outcome["error"] = exc
        finally:
            items.put(_DONE)

    thread = threading.Thread(target=work, name="batch-run", daemon=True)
    thread.start()
    while True:
        try:
            item = items.get(timeout=tick_s)
        except queue.Empty:
            yield TICK
            continue
        if item is _DONE:
            break
        yield item
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    yield Finished(outcome.get("value"))



class AskControl:
    """One session's Debug question: the stop flag of the question that is running (a fresh one per question).

    Lives in `gr.State` like BatchControl; Stop sets the flag instead of cancelling the handler, so the
    handler can still show a "stopped" note and offer the partial trace.
    """

    def __init__(self) -> None:
        self.stop = threading.Event()

    def begin(self) -> threading.Event:
        """A new stop flag for the question that starts now."""
        self.stop = threading.Event()
        return self.stop

    def __deepcopy__(self, memo: dict[int, Any]) -> AskControl:
        return AskControl()


def iterate_until_stopped(make: Callable[[], Iterator[T]], stop: threading.Event, poll_s: float = 0.2,
                          ticks: bool = False) -> Iterator[Any]:
    """Iterate `make()` in a worker thread; return early once `stop` is set, without waiting for the item in flight.

    The worker closes the iterator at its next item after a stop (the pipeline's generator ends there),
    so an abandoned question does not go on spending. The worker's exception is re-raised here.
    With `ticks`, `TICK` is yielded every `poll_s` without an item: a gradio handler that yields then
    notices a cancel (Chat's Stop) within `poll_s`, and can say what it is waiting for.
    """
    items: queue.Queue[tuple[str, Any]] = queue.Queue()

    def work() -> None:
        iterator = make()
        try:
            for item in iterator:
                items.put(("item", item))
                if stop.is_set():
                    break
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            items.put(("error", exc))
            return
        finally:
            close = getattr(iterator, "close", None)
            if close is not None:
                close()
        items.put(("done", None))

    threading.Thread(target=work, name="ask-stream", daemon=True).start()
    while not stop.is_set():
        try:
            kind, value = items.get(timeout=poll_s)
        except queue.Empty:
            if ticks:
                yield TICK
            continue
        if kind == "done":
            return
        if kind == "error":
            raise value
        yield value
