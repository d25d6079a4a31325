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

    def __deepcopy__(self, memo: dict[int, Any]) -> BatchControl:
        return BatchControl()


def iterate_in_thread(run: Callable[[Callable[[Any], None]], T]) -> Iterator[Any]:
    """Call `run(report)` in a daemon thread; yield each reported item, then `Finished(result)`.

    The worker's exception is re-raised here, in the consumer's thread.
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
        item = items.get()
        if item is _DONE:
            break
        yield item
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    yield Finished(outcome.get("value"))

