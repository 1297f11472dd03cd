"""streampipe.metrics.serve (issue 27): scraped with urllib while a HOST run goes on another
thread, parsed with prometheus-client's own parser; the families are the CLI's --metrics
(read from tools/streampipe/metrics_text.c, so the two cannot drift apart), the counters only
grow, and after the run they are the run's records and the report's bytes per engine. Bad
input: an address that is not loopback, a port in use, clients that never send; close()
frees the port.

prometheus-client is a test requirement (tools/setup.sh, .ci/run install it): without it
these tests fail saying what to install, never skip."""

from __future__ import annotations

import re
import socket
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import streampipe as sp
import streampipe.metrics

CLI_EXPOSITION = Path(__file__).resolve().parents[2] / "tools/streampipe/metrics_text.c"
Scrape = dict[str, dict[tuple[tuple[str, str], ...], float]]  # family -> labels -> value


@pytest.fixture
def parser() -> Any:
    try:
        from prometheus_client.parser import text_string_to_metric_families
    except ImportError as exc:
        pytest.fail(f"prometheus-client is needed ({exc}): run `{sys.executable} -m pip "
                    "install prometheus-client`", pytrace=False)
    return text_string_to_metric_families


def cli_families() -> dict[str, str]:
    """The CLI's families and types: family(&o, "streampipe_x", "counter", ...)."""
    text = CLI_EXPOSITION.read_text()
    found = dict(re.findall(r'family\(&o, "(streampipe_\w+)", "(\w+)"', text))
    assert len(found) >= 9, f"no families found in {CLI_EXPOSITION}"
    return found


def scrape(url: str, parser: Any, families: list[tuple[str, str]] | None = None) -> Scrape:
    """One scrape, every line parsed; the families' names and types noted in `families`."""
    with urllib.request.urlopen(url, timeout=10) as response:
        assert response.status == 200
        text = response.read().decode()
    out: Scrape = {}
    for family in parser(text):
        # a counter's family name loses its _total in the parser; the exposed name has it
        name = family.name + ("_total" if family.type == "counter" else "")
        if families is not None:
            families.append((name, family.type))
        values = out.setdefault(name, {})
        for sample in family.samples:
            assert sample.name == name, f"sample {sample.name} in family {name}"
            values[tuple(sorted(sample.labels.items()))] = sample.value
    return out


def assert_grows(scrapes: list[Scrape], kinds: dict[str, str]) -> None:
    for was, now in zip(scrapes, scrapes[1:]):
        for name, kind in kinds.items():
            if kind != "counter":
                continue
            for labels, value in was[name].items():
                assert now[name].get(labels, -1.0) >= value, f"{name}{labels} went down"


def slow_pipeline(ctx: sp.Context, chunk: int) -> sp.Pipeline:
    """A host stage that doubles and sleeps 10 ms a chunk: the run lasts long enough for
    scrapes to see it under way on any machine."""

    def double(inp: np.ndarray, out: np.ndarray) -> None:
        time.sleep(0.01)
        np.multiply(inp, 2.0, out=out)

    return ctx.pipeline(sp.Stage("double", np.float32, host=double), np.float32,
                        chunk_records=chunk, depth=4)


def scrape_while(target: Callable[[], Any], url: str, parser: Any) -> tuple[Any, list[Scrape]]:
    """Scrapes in a loop while target() runs on another thread; then once more."""
    result: list[Any] = []
    t = threading.Thread(target=lambda: result.append(target()))
    scrapes: list[Scrape] = []
    t.start()
    try:
        while t.is_alive():
            scrapes.append(scrape(url, parser))
            time.sleep(0.02)
    finally:
        t.join()
    scrapes.append(scrape(url, parser))
    assert result, "the run raised"
    return result[0], scrapes


def test_serve_during_a_run(host_ctx: sp.Context, parser: Any) -> None:
    n, chunk = 64 * 1024, 1024
    p = slow_pipeline(host_ctx, chunk)
    x = np.arange(n, dtype=np.float32)
    y = np.full(n, np.nan, dtype=np.float32)
    with streampipe.metrics.serve(0, p) as endpoint:
        assert endpoint.port > 0 and endpoint.url.endswith(f":{endpoint.port}/metrics")
        seen: list[tuple[str, str]] = []
        before = scrape(endpoint.url, parser, seen)
        assert dict(seen) == cli_families(), "not the CLI's families and types"
        assert before["streampipe_records_total"] == {(): 0.0}
        (_, report), scrapes = scrape_while(lambda: p.run(x, out=y, report=True),
                                            endpoint.url, parser)
    np.testing.assert_array_equal(y, 2 * x)
    kinds = cli_families()
    assert_grows([before, *scrapes], kinds)
    records = [s["streampipe_records_total"][()] for s in scrapes]
    assert any(0 < r < n for r in records), f"no scrape saw the run under way: {records}"
    assert max(s["streampipe_in_flight_chunks"][()] for s in scrapes) >= 1
    last = scrapes[-1]
    assert last["streampipe_records_total"][()] == n == report.records
    engines = {dict(k)["engine"]: v for k, v in last["streampipe_bytes_total"].items()}
    assert [e.name for e in report.engines] == list(engines), "engines differ"
    for e in report.engines:
        assert engines[e.name] == e.bytes, f"{e.name}: {engines[e.name]} != report's {e.bytes}"
    busy = {dict(k)["engine"]: v for k, v in last["streampipe_busy_seconds_total"].items()}
    # a run with a report: its GPU engines are timed (sampled) and served too
    assert set(busy) == {e.name for e in report.engines} and busy["stage-in"] > 0
    stats = p.stats()  # the one run's counters: what the endpoint serves after it
    for e in stats.engines:
        if e.kind in ("stage-in", "stage-out"):
            assert busy.get(e.name, 0.0) == pytest.approx(e.busy_s, rel=1e-9, abs=0)
        else:  # held at the most served: at least the final estimate, the report's
            assert e.busy_measured and busy[e.name] >= e.busy_s * (1 - 1e-9) > 0
    hidden = [s["streampipe_hidden_transfer_ratio"].get((), None) for s in scrapes]
    assert hidden[-1] == pytest.approx(report.hidden_transfer, abs=1e-6)
    assert all(h is None or 0.0 <= h <= 1.0 for h in hidden)
    assert before["streampipe_hidden_transfer_ratio"] == {}  # no run yet: no sample
    assert last["streampipe_wait_seconds_total"][()] == pytest.approx(stats.wait_s, rel=1e-9)
    assert last["streampipe_errors_total"][()] == 0
    assert last["streampipe_in_flight_chunks"][()] == 0
    assert last["streampipe_pinned_bytes"][()] == report.pinned_bytes > 0


def test_counters_add_up_over_runs_and_pipelines(host_ctx: sp.Context, parser: Any) -> None:
    """Served as a dict: a `pipeline` label; a's runs add up, b's counts stay its own."""
    a, b = slow_pipeline(host_ctx, 512), host_ctx.pipeline(sp.sinmix(2), np.float32)
    x = np.ones(8 * 1024, dtype=np.float32)
    with streampipe.metrics.serve(0, {"a": a, "b": b}) as endpoint:
        scrapes = [scrape(endpoint.url, parser)]
        for _ in range(2):
            _, during = scrape_while(lambda: a.run(x), endpoint.url, parser)
            scrapes += during
        b.run(x[:100])
        scrapes.append(scrape(endpoint.url, parser))
    assert_grows(scrapes, cli_families())
    records = scrapes[-1]["streampipe_records_total"]
    assert records == {(("pipeline", "a"),): 2 * x.size, (("pipeline", "b"),): 100}
    h2d = scrapes[-1]["streampipe_bytes_total"][(("engine", "h2d"), ("pipeline", "a"))]
    assert h2d == 2 * x.nbytes
    wait = scrapes[-1]["streampipe_wait_seconds_total"]
    assert set(wait) == {(("pipeline", "a"),), (("pipeline", "b"),)}


def test_serve_a_stream(host_ctx: sp.Context, parser: Any) -> None:
    p = slow_pipeline(host_ctx, 256)
    x = np.arange(4096, dtype=np.float32)
    with p.stream(max_in_flight=2) as s, streampipe.metrics.serve(0, [s]) as endpoint:
        outs, scrapes = scrape_while(lambda: [f.result() for f in [s.submit(x)
                                                                   for _ in range(4)]],
                                     endpoint.url, parser)
        for y in outs:
            np.testing.assert_array_equal(y, 2 * x)
    assert_grows(scrapes, cli_families())
    key = (("pipeline", "0"),)
    assert scrapes[-1]["streampipe_records_total"][key] == 4 * x.size
    assert max(sc["streampipe_in_flight_batches"][key] for sc in scrapes) >= 1


def test_refuses_other_addresses(host_ctx: sp.Context) -> None:
    p = host_ctx.pipeline(sp.sinmix(1), np.float32)
    for host in ("0.0.0.0", "192.0.2.1"):
        with pytest.raises(ValueError, match="not a loopback address.*allow_any_address"):
            streampipe.metrics.serve(0, p, host=host)
    with streampipe.metrics.serve(0, p, host="localhost") as endpoint:  # loopback by name
        assert endpoint.port > 0
    with streampipe.metrics.serve(0, p, host="0.0.0.0", allow_any_address=True) as endpoint:
        assert endpoint.url == f"http://0.0.0.0:{endpoint.port}/metrics"
    with pytest.raises(ValueError, match="port"):
        streampipe.metrics.serve(70000, p)
    with pytest.raises(TypeError, match="not a Pipeline or Stream"):
        streampipe.metrics.serve(0, [p, object()])


def test_port_in_use_and_close_frees_it(host_ctx: sp.Context, parser: Any) -> None:
    p = host_ctx.pipeline(sp.sinmix(1), np.float32)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(OSError, match=f"cannot listen on 127.0.0.1:{port}"):
            streampipe.metrics.serve(port, p)
    endpoint = streampipe.metrics.serve(0, p)
    port, url = endpoint.port, endpoint.url
    scrape(url, parser)
    endpoint.close()
    endpoint.close()  # again: nothing
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url, timeout=5)
    with streampipe.metrics.serve(port, p) as again:  # the same port, free again
        assert scrape(again.url, parser)["streampipe_records_total"] == {(): 0.0}


def test_idle_clients_block_no_scrape(host_ctx: sp.Context, parser: Any) -> None:
    """Clients that connect and send nothing, or half a request, hold a thread each (dropped
    after IDLE_TIMEOUT_S), not the endpoint: scrapes meanwhile are answered at once."""
    p = host_ctx.pipeline(sp.sinmix(1), np.float32)
    with streampipe.metrics.serve(0, p) as endpoint:
        idle = [socket.create_connection(("127.0.0.1", endpoint.port)) for _ in range(4)]
        idle[0].sendall(b"GET /metrics HTTP/1.1\r\n")  # never finished
        try:
            start = time.monotonic()
            for _ in range(5):
                assert scrape(endpoint.url, parser)["streampipe_records_total"] == {(): 0.0}
            assert time.monotonic() - start < streampipe.metrics.IDLE_TIMEOUT_S
        finally:
            for c in idle:
                c.close()


def test_without_prometheus_client(host_ctx: sp.Context, monkeypatch: Any) -> None:
    monkeypatch.setitem(sys.modules, "prometheus_client", None)  # import fails
    p = host_ctx.pipeline(sp.sinmix(1), np.float32)
    with pytest.raises(ImportError, match=r"pip install 'streampipe\[metrics\]'"):
        streampipe.metrics.serve(0, p)
