#!/usr/bin/env node
// Replays a trace through a real Node breaker library under @sinonjs/fake-timers.
//
//   node drive.mjs opossum|cockatiel-consecutive|cockatiel-count|cockatiel-sampling TRACE --calls OUT --transitions OUT [options]
//   node drive.mjs opossum|cockatiel TRACE --config FILE --calls OUT --transitions OUT
//
// Events run in breakerlab's order: at one millisecond, the library's own timers due by then
// fire first (call timeouts, opossum's reset and bucket timers), then results (in the order the
// calls started), then arrivals in trace order; promise handlers run between events. A call
// starts when the library invokes it (cockatiel's half-open waiters start when the test
// settles) and returns `latency_ms` later. Writes `calls` (`t_ms,admitted,at_ms`: when the call
// started, or when the library refused it, e.g. a half-open waiter once its test failed) and
// `transitions` (`t_ms,from,to`, from the library's own state events). Packages are loaded from
// $BREAKERLAB_CONFORMANCE_NODE (an npm prefix outside the repository).
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const require = createRequire(`${process.env.BREAKERLAB_CONFORMANCE_NODE}/package.json`);
const FakeTimers = require('@sinonjs/fake-timers');
// A realistic epoch: cockatiel's SamplingBreaker starts its windows at 0 and rotates when
// `Date.now() - 0 >= windowSize`, which a real clock always satisfies.
const EPOCH = 1_700_000_000_000;
const clock = FakeTimers.install({
  now: EPOCH,
  toFake: ['Date', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance', 'hrtime'],
});
const now = () => clock.now - EPOCH;

const { values: o, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    calls: { type: 'string' },
    transitions: { type: 'string' },
    timeout: { type: 'string', default: '10000' },
    'reset-timeout': { type: 'string', default: '30000' },
    'error-threshold-percentage': { type: 'string', default: '50' },
    'rolling-count-timeout': { type: 'string', default: '10000' },
    'rolling-count-buckets': { type: 'string', default: '10' },
    'volume-threshold': { type: 'string', default: '0' },
    threshold: { type: 'string' },
    'half-open-after': { type: 'string', default: '10000' },
    duration: { type: 'string', default: '30000' },
    size: { type: 'string', default: '100' },
    'minimum-number-of-calls': { type: 'string' },
    'minimum-rps': { type: 'string', default: '0' },
    // A file `breakerlab export` wrote, instead of the flags: `--as opossum` (recommended.js),
    // run with the real opossum as its `require('opossum')`, or `--as cockatiel`
    // (recommended.ts), run against the real cockatiel exports; its code gives the breaker.
    config: { type: 'string' },
  },
});
const [impl, tracePath] = positionals;
const rows = readFileSync(tracePath, 'utf8').trim().split('\n').slice(1).map((l) => {
  const [t, lat, ok] = l.split(',');
  return { t: Number(t), lat: Number(lat), ok: ok === '1' };
});

const calls = rows.map(() => [0, null]);
const transitions = [];
let last = 'closed';
const enter = (state) => {
  if (state !== last) transitions.push([now(), last, state]);
  last = state;
};

// Completions: a min-heap on (time, start order).
const heap = [];
let seq = 0;
const less = (a, b) => a.at < b.at || (a.at === b.at && a.seq < b.seq);
function push(e) {
  heap.push(e);
  for (let i = heap.length - 1; i > 0; ) {
    const p = (i - 1) >> 1;
    if (!less(heap[i], heap[p])) break;
    [heap[i], heap[p]] = [heap[p], heap[i]];
    i = p;
  }
}
function pop() {
  const top = heap[0];
  const end = heap.pop();
  if (heap.length) {
    heap[0] = end;
    for (let i = 0; ; ) {
      const l = 2 * i + 1, r = l + 1;
      let m = i;
      if (l < heap.length && less(heap[l], heap[m])) m = l;
      if (r < heap.length && less(heap[r], heap[m])) m = r;
      if (m === i) break;
      [heap[i], heap[m]] = [heap[m], heap[i]];
      i = m;
    }
  }
  return top;
}

// The guarded call of row i: marks it started and schedules its answer (none when the
// library's own timeout answers first; opossum's timeout is set below, from its options).
let callTimeout = 0;
function action(i) {
  return () => new Promise((resolve, reject) => {
    calls[i] = [1, now()];
    const { lat, ok } = rows[i];
    if (callTimeout > 0 && lat >= callTimeout) return;
    push({ at: now() + lat, seq: seq++, settle: ok ? resolve : () => reject(new Error('dependency failed')) });
  });
}

// A call that never started was refused: its answer came now.
const refused = (i) => () => {
  if (!calls[i][0]) calls[i][1] = now();
};

let fire;
if (impl === 'opossum') {
  const CircuitBreaker = require('opossum');
  // The exported file is CommonJS that calls `require('opossum')` and builds
  // `new CircuitBreaker(action, options)`: run as it is, with the real opossum and an action
  // that runs the function each fire() is given.
  const exported = () => {
    const code = readFileSync(o.config, 'utf8');
    const load = (name) => {
      if (name !== 'opossum') throw new Error(`${o.config} requires ${name}, not opossum`);
      return CircuitBreaker;
    };
    return new Function('require', 'action', `${code}\nreturn breaker;`)(load, (fn) => fn());
  };
  const flagTimeout = Number(o.timeout);
  const breaker = o.config ? exported() : new CircuitBreaker((fn) => fn(), {
    timeout: flagTimeout > 0 ? flagTimeout : false,
    resetTimeout: Number(o['reset-timeout']),
    errorThresholdPercentage: Number(o['error-threshold-percentage']),
    rollingCountTimeout: Number(o['rolling-count-timeout']),
    rollingCountBuckets: Number(o['rolling-count-buckets']),
    volumeThreshold: Number(o['volume-threshold']),
    // Statistics only (latency percentiles, snapshot events): off, they do not change the state.
    rollingPercentilesEnabled: false,
    enableSnapshots: false,
  });
  // opossum keeps its options; `timeout: false` (or 0) is no call timeout.
  callTimeout = Number(breaker.options.timeout) || 0;
  breaker.on('open', () => enter('open'));
  breaker.on('halfOpen', () => enter('half_open'));
  breaker.on('close', () => enter('closed'));
  fire = (i) => breaker.fire(action(i)).catch(refused(i));
} else {
  const c = require('cockatiel');
  const breakers = {
    'cockatiel-consecutive': () => new c.ConsecutiveBreaker(Number(o.threshold ?? 5)),
    'cockatiel-count': () => new c.CountBreaker({
      threshold: Number(o.threshold ?? 0.2),
      size: Number(o.size),
      ...(o['minimum-number-of-calls'] ? { minimumNumberOfCalls: Number(o['minimum-number-of-calls']) } : {}),
    }),
    'cockatiel-sampling': () => new c.SamplingBreaker({
      threshold: Number(o.threshold ?? 0.2),
      duration: Number(o.duration),
      ...(Number(o['minimum-rps']) > 0 ? { minimumRps: Number(o['minimum-rps']) } : {}),
    }),
  };
  const exported = () => {
    // The TypeScript the exporter writes is plain JavaScript once its import line and its
    // `export` keyword are dropped.
    const code = readFileSync(o.config, 'utf8')
      .replace(/^import .* from 'cockatiel';$/m, '')
      .replace(/^export const breaker =/m, 'const breaker =');
    return new Function(...Object.keys(c), `${code}\nreturn breaker;`)(...Object.values(c));
  };
  const policy = o.config
    ? exported()
    : c.circuitBreaker(c.handleAll, { halfOpenAfter: Number(o['half-open-after']), breaker: breakers[impl]() });
  const names = { [c.CircuitState.Closed]: 'closed', [c.CircuitState.Open]: 'open', [c.CircuitState.HalfOpen]: 'half_open' };
  policy.onStateChange((s) => enter(names[s]));
  fire = (i) => policy.execute(action(i)).catch(refused(i));
}

const flush = () => clock.tickAsync(0);
let next = 0;
while (next < rows.length || heap.length) {
  const arrival = next < rows.length ? rows[next].t : Infinity;
  const t = heap.length && heap[0].at <= arrival ? heap[0].at : arrival;
  await clock.tickAsync(t - now());
  while (heap.length && heap[0].at === t) {
    pop().settle();
    await flush();
  }
  while (next < rows.length && rows[next].t === t) {
    fire(next++);
    await flush();
  }
}
// The library's own timers (call timeouts, opossum's reset timer) run until breakerlab's run ends:
// a scripted run spans the whole seconds past the last call's end (t_ms + latency_ms), and a
// timer due at or after that end never fires there.
const lastEnd = rows.reduce((m, r) => Math.max(m, r.t + r.lat), 0);
const runEnd = (Math.floor(lastEnd / 1000) + 1) * 1000;
await clock.tickAsync(Math.max(0, runEnd - 1 - now()));

writeFileSync(o.calls, 't_ms,admitted,at_ms\n' + rows.map((r, i) => `${r.t},${calls[i][0]},${calls[i][1] ?? r.t}\n`).join(''));
writeFileSync(o.transitions, 't_ms,from,to\n' + transitions.map((x) => x.join(',') + '\n').join(''));
