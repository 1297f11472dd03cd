"""The GIL is released while the library works: another Python thread makes progress during
a long run, and two pipelines of one context run from two threads at once."""

from __future__ import annotations

import threading
import time

import numpy as np

import streampipe as sp
from helpers import assert_sinmix


def test_other_threads_run_during_a_run(host_ctx: sp.Context, rng: np.random.Generator) -> None:
    x = rng.uniform(-1, 1, 1 << 15).astype(np.float32)
    iters = 1500
    p = host_ctx.pipeline(sp.sinmix(iters), np.float32, chunk_records=1 << 12)
    ticks = [0]
    stop = threading.Event()

    def count() -> None:
        while not stop.is_set():
            ticks[0] += 1

    counter = threading.Thread(target=count)
    counter.start()
    try:
        time.sleep(0.01)
        before = ticks[0]
        started = time.perf_counter()
        y = p.run(x)
        took = time.perf_counter() - started
        during = ticks[0] - before
    finally:
        stop.set()
        counter.join()
    assert_sinmix(y, x, iters)
    # Holding the GIL for the whole run would have let the counter run only between the
    # interpreter's switch intervals (5 ms) at best.
    assert took > 0.05, f"the run took {took:.3f} s: too short to tell"
    assert during > 1000, f"the counter ticked {during} times in {took:.3f} s"


def test_two_pipelines_on_two_threads(host_ctx: sp.Context, rng: np.random.Generator) -> None:
    pipes = [host_ctx.pipeline(sp.sinmix(k), np.float32, chunk_records=333) for k in (3, 5)]
    xs = [rng.uniform(-9, 9, 20_000).astype(np.float32) for _ in pipes]
    results: dict[int, np.ndarray] = {}
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for _ in range(5):
                results[i] = pipes[i].run(xs[i])
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert_sinmix(results[0], xs[0], 3)
    assert_sinmix(results[1], xs[1], 5)
