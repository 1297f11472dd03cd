"""The Loader's feeder thread (streampipe._torch_feed), without torch: order, the bound on
batches submitted ahead, errors raised at their batch's turn, the source's exceptions, and an
early stop that cancels what was submitted and takes no more of the source. Delays are
injected on the feeder's side and the consumer's, so each interleaving is forced."""

from __future__ import annotations

import threading
import time
from typing import Any, Iterator

import pytest

from streampipe._torch_feed import READY_AHEAD, Feeder


class Rig:
    """A fake stream: submit returns the batch, take_output checks the bound, cancel notes."""

    def __init__(self, max_in_flight: int, take_delay: float = 0.0,
                 fail_at: int = -1) -> None:
        self.max_in_flight = max_in_flight
        self.take_delay, self.fail_at = take_delay, fail_at
        self.submitted: list[int] = []
        self.taken: list[int] = []
        self.cancelled: list[int] = []
        self.lock = threading.Lock()
        self.threads: set[str] = set()

    def submit(self, batch: int) -> int:
        with self.lock:
            self.threads.add(threading.current_thread().name)
            self.submitted.append(batch)
            ahead = len(self.submitted) - len(self.taken) - len(self.cancelled)
            assert ahead <= self.max_in_flight, f"{ahead} submitted ahead"
        return batch

    def take_output(self, item: int) -> tuple[str, int]:
        time.sleep(self.take_delay)
        if item == self.fail_at:
            raise ValueError(f"batch {item} failed")
        with self.lock:
            self.taken.append(item)
        return ("out", item)

    def cancel(self, item: int) -> None:
        with self.lock:
            self.cancelled.append(item)

    def feeder(self, source: Iterator[int]) -> Feeder:
        first = next(source)
        return Feeder(first, source, self.max_in_flight, self.submit, self.take_output,
                      self.cancel)


def drain(f: Feeder, consume_delay: float = 0.0) -> list[int]:
    got = []
    try:
        while (item := f.take()) is not None:
            time.sleep(consume_delay)
            got.append(item[1])
    finally:
        f.stop()
    return got


@pytest.mark.parametrize("take_delay,consume_delay", [(0.0, 0.0), (0.002, 0.0), (0.0, 0.002)])
def test_every_batch_in_order_on_the_feeders_thread(take_delay: float,
                                                   consume_delay: float) -> None:
    rig = Rig(max_in_flight=3, take_delay=take_delay)
    assert drain(rig.feeder(iter(range(40))), consume_delay) == list(range(40))
    assert rig.threads == {"streampipe-loader"}  # never the consumer's thread
    assert rig.cancelled == []


def test_a_slow_consumer_holds_the_feeder_back() -> None:
    rig = Rig(max_in_flight=2)
    f = rig.feeder(iter(range(100)))
    time.sleep(0.2)  # the consumer takes nothing
    ahead = len(rig.submitted)
    assert ahead <= 2 + READY_AHEAD + 1, rig.submitted
    assert drain(f) == list(range(100))


def test_a_failed_batch_raises_at_its_turn_and_cancels_the_rest() -> None:
    rig = Rig(max_in_flight=3, fail_at=5)
    got = []
    f = rig.feeder(iter(range(40)))
    with pytest.raises(ValueError, match="batch 5 failed"):
        try:
            while (item := f.take()) is not None:
                got.append(item[1])
        finally:
            f.stop()
    assert got == [0, 1, 2, 3, 4]
    assert rig.cancelled and all(b > 5 for b in rig.cancelled)
    assert len(rig.submitted) < 40  # nothing more taken from the source


def test_the_sources_exception_reaches_the_consumer() -> None:
    def source() -> Iterator[int]:
        yield 0
        yield 1
        raise KeyError("the source broke")

    rig = Rig(max_in_flight=4)
    with pytest.raises(KeyError, match="the source broke"):
        drain(rig.feeder(source()))
    assert sorted(rig.cancelled + rig.taken) == [0, 1]  # each batch taken or cancelled


def test_stopping_early_cancels_what_was_submitted_and_reads_no_more() -> None:
    read = []

    def source() -> Iterator[int]:
        for i in range(1000):
            read.append(i)
            yield i

    rig = Rig(max_in_flight=3, take_delay=0.001)
    f = rig.feeder(source())
    assert f.take() == ("out", 0)
    f.stop()
    assert not f._thread.is_alive()
    n = len(read)
    time.sleep(0.05)
    assert len(read) == n < 20
    assert sorted(rig.taken + rig.cancelled) == sorted(rig.submitted)
