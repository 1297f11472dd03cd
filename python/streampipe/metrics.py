"""A Prometheus endpoint for pipelines and streams (issue 27), on ``prometheus-client``::

    import streampipe.metrics

    with streampipe.metrics.serve(9100, p) as endpoint:   # or a Stream, a list or a dict
        print(endpoint.url)                               # http://127.0.0.1:9100/metrics
        p.run(x)                                          # scraped while it runs

The families, names and labels are the CLI's ``--metrics`` (tools/streampipe/metrics_text.c):
``streampipe_records_total``, ``streampipe_bytes_total{engine=...}``,
``streampipe_busy_seconds_total{engine=...}`` (the engines whose busy time is measured: the
host staging ones, and the GPU ones in runs with a report, estimated from the sampled chunks
and held at the most served, since the estimate may step down a little as chunks are timed),
``streampipe_wait_seconds_total``, ``streampipe_errors_total`` (counters), and
``streampipe_in_flight_chunks``, ``streampipe_in_flight_batches``,
``streampipe_pinned_bytes``, ``streampipe_device_bytes``, ``streampipe_hidden_transfer_ratio``
(gauges; the last has a sample only while ``Stats.hidden_transfer`` is known). Served a list or a dict,
every sample has a ``pipeline`` label too (the dict's keys, the list's indexes).

Each scrape reads every watched object's ``stats()`` (the library's live counters: no lock
the run waits on). The counters add up over the runs of a pipeline, as the CLI's do over its
command's runs, so they only grow: the totals of the runs seen to end, plus the current
run's counters, keyed on ``Stats.run``. A run is known to have ended when a scrape finds a
later one; so a run that ends and is followed by another between two scrapes counts as far
as the last scrape saw it (one no scrape saw counts nothing). A stream is one run however
many batches it takes, so a served stream is counted exactly.

``prometheus-client`` is optional (``pip install 'streampipe[metrics]'``): it is imported
only here, when ``serve`` is called.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Optional

from .stats import Stats

__all__ = ["serve", "MetricsServer"]

_PIP = "pip install 'streampipe[metrics]' (or: pip install prometheus-client)"
IDLE_TIMEOUT_S = 5.0  # a connection that sends nothing for this long is dropped (as the CLI's)
CLOSE_POLL_S = 0.1  # how often the server's loop looks for close(): its longest wait

# The CLI's families (metrics_text.c), in its order, with its help texts.
_RECORDS = ("streampipe_records_total",
            "Records whose chunks left the ring, output handed on (all the runs).")
_BYTES = ("streampipe_bytes_total", "Bytes each engine moved (copies) or read (stages).")
_BUSY = ("streampipe_busy_seconds_total",
         "Seconds each engine was busy: the host staging engines always; the GPU engines in "
         "runs with a report, estimated from their sampled chunks (not listed when "
         "unmeasured).")
_WAIT = ("streampipe_wait_seconds_total",
         "Seconds the host waited for a ring slot to come free (the device was the limit).")
_ERRORS = ("streampipe_errors_total", "Failed runs and failed stream batches.")
_GAUGES = (
    ("streampipe_in_flight_chunks", "Ring slots holding a chunk now.", "chunks_in_flight"),
    ("streampipe_in_flight_batches", "Stream batches held now.", "batches_in_flight"),
    ("streampipe_pinned_bytes", "Pinned staging memory the pipeline holds.", "pinned_bytes"),
    ("streampipe_device_bytes", "Device memory the pipeline holds.", "device_bytes"),
)
_HIDDEN = ("streampipe_hidden_transfer_ratio",
           "Fraction of copy time hidden under compute so far in the current run, estimated "
           "from its sampled chunks; no sample while unknown (a run without a report).")


@dataclass
class _EngineTotal:
    busy_measured: bool
    bytes: int = 0
    busy_s: float = 0.0


@dataclass
class _Totals:
    """Counts added up over runs, engines by name (the CLI's live_totals)."""

    records: int = 0
    errors: int = 0
    wait_s: float = 0.0
    engines: dict[str, _EngineTotal] = field(default_factory=dict)

    def add(self, s: Stats) -> None:
        self.records += s.records_done
        self.errors += s.errors
        self.wait_s += s.wait_s
        for e in s.engines:
            total = self.engines.setdefault(e.name, _EngineTotal(e.busy_measured))
            total.busy_measured = total.busy_measured or e.busy_measured  # GPU: with a report
            total.bytes += e.bytes
            total.busy_s += e.busy_s

    def plus(self, s: Optional[Stats]) -> "_Totals":
        out = _Totals(self.records, self.errors, self.wait_s,
                      {k: _EngineTotal(v.busy_measured, v.bytes, v.busy_s)
                       for k, v in self.engines.items()})
        if s is not None:
            out.add(s)
        return out


class _Watched:
    """One served pipeline or stream: its finished runs' totals and its current run's stats."""

    def __init__(self, label: Optional[str], obj: Any) -> None:
        self.label = label
        self.obj = obj
        self.done = _Totals()
        self.current: Optional[Stats] = None  # the last stats seen of the run not yet folded
        self.busy_served: dict[str, float] = {}  # each engine's busy total as last served

    def read(self) -> tuple[_Totals, Optional[Stats]]:
        """The totals so far and the stats just read (None when there is no run yet).
        Called under the collector's lock."""
        now: Stats = self.obj.stats()
        if self.current is not None and now.run != self.current.run:
            self.done.add(self.current)  # that run has ended: what was last seen of it
            self.current = None
        if now.run != 0:
            self.current = now
        totals = self.done.plus(self.current)
        for name, e in totals.engines.items():  # a GPU engine's estimate may step down
            e.busy_s = max(e.busy_s, self.busy_served.get(name, 0.0))
            self.busy_served[name] = e.busy_s
        return totals, (now if now.run != 0 else None)


def _watched(pipelines: Any) -> list[_Watched]:
    """A Pipeline or Stream (no label), or a list or dict of them (a `pipeline` label)."""
    if isinstance(pipelines, Mapping):
        items = [(str(k), v) for k, v in pipelines.items()]
    elif isinstance(pipelines, (list, tuple)):
        items = [(str(i), v) for i, v in enumerate(pipelines)]
    else:
        items = [(None, pipelines)]
    if not items:
        raise ValueError("streampipe.metrics.serve: no pipeline to serve")
    for label, obj in items:
        stats = getattr(obj, "stats", None)
        if not callable(stats) or not isinstance(stats(), Stats):
            raise TypeError(f"streampipe.metrics.serve: {obj!r} is not a Pipeline or Stream "
                            "(it has no stats() returning streampipe.Stats)")
    return [_Watched(label, obj) for label, obj in items]


def _collector(watched: list[_Watched]) -> Any:
    """A prometheus_client collector whose collect() reads every watched object's stats."""
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

    lock = threading.Lock()  # scrapes come on several threads; _Watched keeps state
    extra = ["pipeline"] if watched[0].label is not None else []

    def labels(w: _Watched, *more: str) -> list[str]:
        return ([w.label] if w.label is not None else []) + list(more)

    class Collector:  # what a registry takes: an object with collect()
        def collect(self) -> Iterator[Any]:
            with lock:
                seen = [(w, *w.read()) for w in watched]
            records = CounterMetricFamily(*_RECORDS, labels=extra)
            nbytes = CounterMetricFamily(*_BYTES, labels=extra + ["engine"])
            busy = CounterMetricFamily(*_BUSY, labels=extra + ["engine"])
            wait = CounterMetricFamily(*_WAIT, labels=extra)
            errors = CounterMetricFamily(*_ERRORS, labels=extra)
            gauges = [GaugeMetricFamily(name, text, labels=extra) for name, text, _ in _GAUGES]
            hidden = GaugeMetricFamily(*_HIDDEN, labels=extra)
            for w, total, now in seen:
                records.add_metric(labels(w), total.records)
                for name, e in total.engines.items():
                    nbytes.add_metric(labels(w, name), e.bytes)
                    if e.busy_measured:
                        busy.add_metric(labels(w, name), e.busy_s)
                wait.add_metric(labels(w), total.wait_s)
                errors.add_metric(labels(w), total.errors)
                for g, (_, _, attr) in zip(gauges, _GAUGES):
                    g.add_metric(labels(w), getattr(now, attr) if now is not None else 0)
                if now is not None and now.hidden_transfer is not None:
                    hidden.add_metric(labels(w), now.hidden_transfer)
            yield from (records, nbytes, busy, wait, errors, *gauges, hidden)

    return Collector()


def _listen_addresses(host: str, port: int, allow_any_address: bool) -> list[tuple[int, str]]:
    """The address families and numeric addresses HOST names, in getaddrinfo's order; refuses
    a HOST with one that is not loopback."""
    if not isinstance(port, int) or not 0 <= port <= 65535:
        raise ValueError(f"streampipe.metrics.serve: port {port!r} is not in [0, 65535]")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ValueError(f"streampipe.metrics.serve: host {host!r}: {exc}") from exc
    found = [(family, str(sockaddr[0])) for family, _, _, _, sockaddr in infos]
    for _, address in found:
        if not allow_any_address and not ipaddress.ip_address(address.split("%")[0]).is_loopback:
            raise ValueError(
                f"streampipe.metrics.serve: {host!r} ({address}) is not a loopback address: "
                "the counters would be served to the network; pass allow_any_address=True to "
                "mean it")
    return found


class MetricsServer:
    """The endpoint ``serve`` started: ``port`` (the one bound, also for port 0), ``url``,
    ``close()`` (stops serving and frees the port; again: nothing). A context manager."""

    def __init__(self, server: Any, thread: threading.Thread, host: str) -> None:
        self._server = server
        self._thread = thread
        self.host = host
        self.port: int = int(server.server_address[1])
        self.url = f"http://{_shown(host, self.port)}/metrics"

    def close(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()  # serve_forever returns within CLOSE_POLL_S
        self._server.server_close()
        self._thread.join()
        self._server = None

    @property
    def closed(self) -> bool:
        return self._server is None

    def __enter__(self) -> "MetricsServer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"MetricsServer({self.url!r}{', closed' if self.closed else ''})"


def _shown(address: str, port: int) -> str:
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


def _make_server(addresses: list[tuple[int, str]], port: int, app: Any) -> Any:
    """A threading WSGI server on the first of the addresses it can listen on ("localhost"
    may name ::1 where IPv6 is off); an OSError naming each address when none."""
    from socketserver import ThreadingMixIn
    from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

    class Handler(WSGIRequestHandler):
        timeout = IDLE_TIMEOUT_S

        def log_message(self, format: str, *args: Any) -> None:
            pass  # a library does not print

    failed: list[tuple[str, OSError]] = []
    for family, address in addresses:

        class Server(ThreadingMixIn, WSGIServer):
            address_family = family
            daemon_threads = True  # a client that never reads holds its thread, not close()

        try:
            return make_server(address, port, app, Server, handler_class=Handler)
        except OSError as exc:
            failed.append((_shown(address, port), exc))
    why = "; ".join(f"{where}: {exc.strerror or exc}" for where, exc in failed)
    raise OSError(failed[-1][1].errno, f"streampipe.metrics.serve: cannot listen on {why}")


def serve(port: int, pipelines: Any, host: str = "127.0.0.1",
          allow_any_address: bool = False) -> MetricsServer:
    """Serves the live counters of `pipelines` (a Pipeline, a Stream, or a list or dict of
    them) at ``http://HOST:PORT/metrics`` in the Prometheus text format, from a thread of
    its own, until ``close()``. Port 0 picks a free port (``.port`` says which). `host`
    must be loopback (``127.0.0.1``, ``::1``, ``localhost``) unless `allow_any_address`:
    ValueError otherwise. A port in use raises OSError naming the address. The served
    objects are kept alive until the endpoint closes."""
    try:
        import prometheus_client as prom
    except ImportError as exc:
        raise ImportError(f"streampipe.metrics needs prometheus-client: {_PIP}") from exc
    addresses = _listen_addresses(host, port, allow_any_address)
    watched = _watched(pipelines)
    registry = prom.CollectorRegistry(auto_describe=False)
    registry.register(_collector(watched))
    server = _make_server(addresses, port, prom.make_wsgi_app(registry))
    thread = threading.Thread(target=server.serve_forever, args=(CLOSE_POLL_S,),
                              name="streampipe-metrics", daemon=True)
    thread.start()
    return MetricsServer(server, thread, str(server.server_address[0]))
