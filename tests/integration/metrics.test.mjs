// metrics.test.mjs -- GET /metrics on the gateway, for real:
//   - it needs the bearer token when auth_token is set (401 without, 200
//     with), and /healthz stays open
//   - the text parses as the Prometheus text format 0.0.4 (HELP/TYPE before
//     each family, label syntax, histograms cumulative with +Inf == _count)
//   - calls move the counters: talkback_calls_total by tool and outcome and
//     talkback_call_seconds_count by exactly the calls made, the sum by at
//     least their time
//   - the sandbox manager shows up under its host_name in talkback_workers
//     and talkback_sandboxes, and a call in flight shows in
//     talkback_hub_queue_depth

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { Talkback, withLogs, connect, run, call, post, tid, waitFor } from './harness.mjs';

const TOKEN = 'metrics-test-token-0123456789';
const HOST = `it-metrics-${process.pid}`;
const tb = new Talkback({
  name: 'metrics',
  gatewayEnv: { TALKBACK_AUTH_TOKEN: TOKEN },
  sandboxEnv: { TALKBACK_HOST_NAME: HOST },
});
const AUTH = { Authorization: `Bearer ${TOKEN}` };

before(async () => { await tb.start(); });
after(async () => { await tb.cleanup(); });

const metricsUrl = () => `http://127.0.0.1:${tb.port}/metrics`;

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = '([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\\\\n]|\\\\[\\\\"n])*)"';

/** Parse the text format 0.0.4 strictly; throws on any line it does not
 *  allow.  Returns {samples: [{name, labels, value}], types: Map}. */
function parseExposition(text) {
  assert.ok(text.endsWith('\n'), 'the text ends with a newline');
  const types = new Map();
  const helps = new Set();
  const seen = new Set();
  const samples = [];
  const familyOf = (name) => {
    for (const suffix of ['_bucket', '_sum', '_count']) {
      const base = name.slice(0, -suffix.length);
      if (name.endsWith(suffix) && types.get(base) === 'histogram') return base;
    }
    return name;
  };
  for (const line of text.slice(0, -1).split('\n')) {
    let m;
    if ((m = line.match(new RegExp(`^# HELP (${NAME}) (.*)$`)))) {
      assert.ok(!helps.has(m[1]), `HELP of ${m[1]} twice`);
      helps.add(m[1]);
    } else if ((m = line.match(new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`)))) {
      assert.ok(!types.has(m[1]), `TYPE of ${m[1]} twice`);
      assert.ok(!seen.has(m[1]), `TYPE of ${m[1]} after its samples`);
      types.set(m[1], m[2]);
    } else if (line.startsWith('#')) {
      assert.fail(`a comment that is neither HELP nor TYPE: ${line}`);
    } else {
      m = line.match(new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)$`));
      assert.ok(m, `not a sample line: ${JSON.stringify(line)}`);
      const labels = {};
      if (m[2] !== undefined) {
        const re = new RegExp(`^${LABEL}(?:,|$)`);
        let rest = m[2];
        while (rest.length) {
          const l = rest.match(re);
          assert.ok(l, `bad labels in ${JSON.stringify(line)}`);
          assert.ok(!(l[1] in labels), `label ${l[1]} twice in ${line}`);
          labels[l[1]] = l[2];
          rest = rest.slice(l[0].length);
        }
      }
      assert.match(m[3], /^([-+]?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?|[-+]Inf|NaN)$/, `value in ${line}`);
      const family = familyOf(m[1]);
      assert.ok(types.has(family), `sample ${m[1]} without a TYPE line for ${family}`);
      seen.add(family);
      samples.push({ name: m[1], labels, value: Number(m[3].replace('Inf', 'Infinity')) });
    }
  }
  checkHistograms(samples, types);
  return { samples, types };
}

/** Every histogram series: buckets non-decreasing in le, +Inf == _count. */
function checkHistograms(samples, types) {
  for (const [family, type] of types) {
    if (type !== 'histogram') continue;
    const series = new Map();
    for (const s of samples.filter((x) => x.name === `${family}_bucket`)) {
      const { le, ...rest } = s.labels;
      assert.ok(le !== undefined, `${family}_bucket without le`);
      const key = JSON.stringify(rest);
      if (!series.has(key)) series.set(key, []);
      series.get(key).push([le === '+Inf' ? Infinity : Number(le), s.value]);
    }
    assert.ok(series.size > 0, `histogram ${family} has no buckets`);
    for (const [key, buckets] of series) {
      buckets.sort((a, b) => a[0] - b[0]);
      for (let i = 1; i < buckets.length; i++) {
        assert.ok(buckets[i][1] >= buckets[i - 1][1], `${family}${key}: buckets not cumulative`);
      }
      assert.equal(buckets.at(-1)[0], Infinity, `${family}${key}: no +Inf bucket`);
      const count = samples.find((x) => x.name === `${family}_count` && JSON.stringify(x.labels) === key);
      assert.ok(count, `${family}${key}: no _count`);
      assert.equal(count.value, buckets.at(-1)[1], `${family}${key}: +Inf bucket != _count`);
    }
  }
}

/** GET /metrics, parsed; value(name, labels) finds one sample (0 when absent). */
async function scrape() {
  const r = await fetch(metricsUrl(), { headers: AUTH });
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  const text = await r.text();
  const parsed = parseExposition(text);
  parsed.text = text;
  parsed.value = (name, labels = {}) => {
    const s = parsed.samples.find((x) => x.name === name
      && Object.entries(labels).every(([k, v]) => x.labels[k] === v)
      && Object.keys(x.labels).length === Object.keys(labels).length);
    return s ? s.value : 0;
  };
  return parsed;
}

test('/metrics needs the bearer token; /healthz does not', withLogs(tb, async () => {
  let r = await fetch(metricsUrl());
  assert.equal(r.status, 401);
  assert.equal(r.headers.get('www-authenticate'), 'Bearer');
  await r.arrayBuffer();
  r = await fetch(metricsUrl(), { headers: { Authorization: 'Bearer not-the-token-at-all' } });
  assert.equal(r.status, 401);
  await r.arrayBuffer();
  r = await fetch(metricsUrl(), { headers: AUTH });
  assert.equal(r.status, 200);
  await r.arrayBuffer();
  r = await fetch(metricsUrl(), { method: 'POST', headers: AUTH });
  assert.equal(r.status, 405);
  await r.arrayBuffer();
  assert.equal(await tb.health(), 200);
}));

test('calls move the counters and the latency histogram, by tool and outcome', withLogs(tb, async () => {
  const before = await scrape();
  for (const fam of ['talkback_calls_total', 'talkback_call_seconds', 'talkback_workers',
    'talkback_sandboxes', 'talkback_hub_queue_depth', 'talkback_hosts_draining']) {
    assert.ok(before.types.has(fam), `family ${fam} is missing`);
  }
  const conv = tb.chat('m');
  const c = await connect(tb, { conv, user: 'user-metrics', headers: AUTH });
  let ok = 0, err = 0, ms = 0;
  try {
    for (const cmd of ['true', 'echo hi', 'exit 3']) {   // answered as SSE
      const r = await run(c, cmd);
      ms += r.ms;
      if (r.isError) err++; else ok++;
    }
    const w = await call(c, 'write_file', { path: 'm.txt', content: 'x' });
    assert.equal(w.isError, false, w.text);
  } finally {
    await c.close();
  }
  // One more run answered as plain JSON (the other way a call ends).
  const t0 = Date.now();
  const j = await post(tb, { jsonrpc: '2.0', id: tid(), method: 'tools/call',
    params: { name: 'run', arguments: { command: 'true' } } },
  { headers: { ...AUTH, 'X-Conversation-Id': conv, 'X-User-Id': 'user-metrics' }, accept: 'application/json' });
  ms += Date.now() - t0;
  assert.equal(j.status, 200, j.body);
  assert.equal(j.json.result.isError, false, j.body);
  ok++;
  assert.ok(ok >= 2 && err >= 1, `ok ${ok}, error ${err}`);
  const after = await scrape();
  const d = (name, labels) => after.value(name, labels) - before.value(name, labels);
  assert.equal(d('talkback_calls_total', { tool: 'run', outcome: 'ok' }), ok);
  assert.equal(d('talkback_calls_total', { tool: 'run', outcome: 'error' }), err);
  assert.equal(d('talkback_calls_total', { tool: 'write_file', outcome: 'ok' }), 1);
  assert.equal(d('talkback_calls_total', { tool: 'run_code', outcome: 'ok' }), 0);
  assert.equal(d('talkback_call_seconds_count', { tool: 'run' }), ok + err);
  // The gateway's own time is within what the client measured around it.
  const sum = d('talkback_call_seconds_sum', { tool: 'run' });
  assert.ok(sum > 0 && sum <= ms / 1000 + 0.001, `sum ${sum} s, client saw ${ms} ms`);
}));

test('the manager shows under its host_name; a call in flight is in the queue depth', withLogs(tb, async () => {
  const m = await waitFor(async () => {
    const s = await scrape();
    return s.value('talkback_workers', { kind: 'sandbox', host: HOST }) === 1 ? s : null;
  }, { what: `talkback_workers{kind="sandbox",host="${HOST}"} 1` });
  assert.ok(m.samples.some((s) => s.name === 'talkback_sandboxes' && s.labels.host === HOST
    && s.labels.state === 'running'), m.text);
  assert.equal(m.value('talkback_hosts_draining'), 0);

  const c = await connect(tb, { conv: tb.chat('q'), user: 'user-metrics', headers: AUTH });
  try {
    await run(c, 'true');                       // its sandbox is up
    const slow = run(c, 'sleep 6');
    await waitFor(async () => (await scrape()).value('talkback_hub_queue_depth') >= 1,
      { what: 'talkback_hub_queue_depth >= 1 while a call runs' });
    await slow;
    // The manager measures its load once a heartbeat: the chat's sandbox shows on the next one.
    await waitFor(async () => (await scrape()).value('talkback_sandboxes',
      { state: 'running', host: HOST }) >= 1, { what: `talkback_sandboxes running on ${HOST} >= 1` });
    await waitFor(async () => (await scrape()).value('talkback_hub_queue_depth') === 0,
      { what: 'talkback_hub_queue_depth back to 0' });
  } finally {
    await c.close();
  }
}));
