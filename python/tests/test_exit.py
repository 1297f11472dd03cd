"""Interpreter exit with the package's threads busy: a stream left open with Python-stage
batches in flight, a dropped stream still closing, a ``run`` going on in a daemon thread. The
process must exit with 0, neither aborting ("terminate called without an active exception")
nor failing in the GIL state ("Fatal Python error: PyGILState_Release"), which it did in most
runs before streampipe._exit.

Each case is a ``python -c`` script that imports once and then exits 20 interpreters: forked
children, each of which sets the case up and leaves the script with it still running.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

RUNS = 20

_PRELUDE = """
import os, sys, threading, time
import numpy as np
import streampipe as sp

def slow(inp, out):
    time.sleep(0.0005)
    out[:] = inp

def pipeline():
    stage = sp.Stage("slow", np.float32, host=slow)
    return sp.Context("host").pipeline(stage, np.float32, chunk_records=32, depth=4)

def done(future):
    os.write(1, b"d" if future.exception() is None else b"x")
"""

_LOOP = """
failed = 0
for i in range({runs}):
    pid = os.fork()
    if pid == 0:
        case()
        break  # this child's interpreter exits now, with the case still going
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    if code != 0:
        print(f"run {{i}} exited with {{code}}", file=sys.stderr)
        failed += 1
else:
    sys.exit(1 if failed else 0)
"""

# Four batches of eight chunks in flight (half a millisecond a chunk) when the script ends.
_OPEN = """
def case():
    global stream, futures
    stream = pipeline().stream(max_in_flight=4)
    futures = [stream.submit(np.arange(256, dtype=np.float32)) for _ in range(4)]
    for f in futures:
        f.add_done_callback(done)
"""

_DROPPED = """
def case():
    stream = pipeline().stream(max_in_flight=4)
    for _ in range(4):
        stream.submit(np.arange(256, dtype=np.float32)).add_done_callback(done)
    del stream  # closed in the background, still draining at exit
"""

# The script ends while the daemon thread's run is inside its Python stage.
_DAEMON = """
def case():
    inside = threading.Event()

    def stage(inp, out):
        inside.set()
        slow(inp, out)

    p = sp.Context("host").pipeline(sp.Stage("s", np.float32, host=stage), np.float32,
                                    chunk_records=32)

    def work():
        while True:
            p.run(np.zeros(4096, np.float32))

    threading.Thread(target=work, daemon=True).start()
    inside.wait(30)
"""


def _exits(case: str) -> subprocess.CompletedProcess[str]:
    script = _PRELUDE + textwrap.dedent(case) + _LOOP.format(runs=RUNS)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, env=env)


def _check(result: subprocess.CompletedProcess[str]) -> None:
    for bad in ("Fatal Python error", "terminate called", "Traceback"):
        assert bad not in result.stderr, result.stderr[-3000:]
    assert result.returncode == 0, result.stderr[-3000:]


needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


@needs_fork
def test_exit_with_a_stream_open() -> None:
    result = _exits(_OPEN)
    _check(result)
    # Closed at exit as close() closes: every batch completed, its callback run.
    assert result.stdout == "d" * (4 * RUNS)


@needs_fork
def test_exit_with_a_dropped_stream_closing() -> None:
    result = _exits(_DROPPED)
    _check(result)
    assert result.stdout == "d" * (4 * RUNS)


@needs_fork
def test_exit_with_a_run_in_a_daemon_thread() -> None:
    _check(_exits(_DAEMON))
