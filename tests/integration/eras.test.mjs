// eras.test.mjs -- both MCP eras on one endpoint: 2026-07-28 (stateless,
// _meta on every request) beside the legacy era (initialize, 2025-11-25 and
// earlier), from one tool table, over the same sandboxes.
//
//   1. The v2 SDK client (@modelcontextprotocol/client) pinned to
//      2026-07-28 with no fallback: discover, the four tools, run,
//      write_file, run_code, reset; a second modern client of the chat sees
//      the same files; a file written over 2026-07-28 is read over
//      2025-11-25 (the v1 client, as LibreChat) in the same chat, and back;
//      closing the response stream kills the command.
//   2. The wire: resultType, ttlMs/cacheScope, serverInfo in _meta,
//      -32020 (Mcp-Method, Mcp-Name, MCP-Protocol-Version disagreeing or
//      missing: 400, nothing runs), -32022 with data.supported and
//      data.requested, -32602 for a missing required _meta field, 404 for a
//      method the revision does not have.
//   3. The other clients: the v2 client in its dual-era and default modes,
//      and legacy answers that carry nothing of the modern era.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import {
  Talkback, withLogs, connect, connectV2, call, runOk, post, postModern, sseMessages, joinText,
  waitFor, rawPs, rawRun, tid, modernMeta,
} from './harness.mjs';

const tb = new Talkback({ name: 'eras', judges: 1 });
const clients = [];
const USER = 'user-eras';

before(async () => {
  await tb.start();
});

after(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await tb.cleanup();
});

async function modern(conv, opts = {}) {
  const c = await connectV2(tb, { conv, user: USER, ...opts });
  clients.push(c);
  return c;
}

async function legacy(conv) {
  const c = await connect(tb, { conv, user: USER });
  clients.push(c);
  return c;
}

/** The one JSON-RPC message of an answer, JSON or SSE. */
function message(r) {
  if ((r.headers.get('content-type') || '').startsWith('text/event-stream')) return sseMessages(r.body).at(-1);
  return r.json;
}

const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';

// ---- 1. the v2 client, pinned to 2026-07-28 -----------------------------------------------

test('a v2 client pinned to 2026-07-28 connects without initialize and lists the same four tools', withLogs(tb, async () => {
  const conv = tb.chat('pinned');
  const c = await modern(conv);
  assert.equal(c.getProtocolEra(), 'modern');
  const { tools } = await c.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), ['reset', 'run', 'run_code', 'write_file']);
  // One table: the legacy era lists the very same tools.
  const old = await legacy(conv);
  const { tools: oldTools } = await old.listTools();
  assert.deepEqual(tools, oldTools);
  // Its discover result, as the client kept it.
  const info = c.getServerVersion?.();
  if (info) assert.equal(info.name, 'talkback');
}));

test('run, write_file, run_code and reset over 2026-07-28 say what they say over 2025-11-25', withLogs(tb, async () => {
  const c = await modern(tb.chat('tools'));
  const w = await call(c, 'write_file', { path: 'hello.py', content: 'print(int(input()) * 2)\n' });
  assert.equal(w.isError, false, w.text);
  assert.match(w.text, /^Wrote 24 bytes to \/work\/hello\.py\./);
  assert.equal(await runOk(c, 'python3 hello.py <<< 21'), '42\n');
  const bad = await call(c, 'run', { command: 'ls /nope' });
  assert.equal(bad.isError, true);
  assert.match(bad.text, /\[exit code 2\]/);
  const pass = await call(c, 'run_code', { language: 'python', code: 'print(int(input()) + 1)', input: '1\n', expected: '2\n' },
    { timeout: 180000 });
  assert.match(pass.text, /^PASS/m, pass.text);
  const fail = await call(c, 'run_code', { language: 'python', code: 'print(1)', input: '', expected: '2\n' },
    { timeout: 180000 });
  assert.match(fail.text, /FAIL/, fail.text);
  const refused = await call(c, 'run', { cmd: 'ls' });
  assert.match(refused.text, /it is called `command`\. Nothing ran/);
  const reset = await call(c, 'reset');
  assert.match(reset.text, /^\[Reset: /, reset.text);
  assert.match(await runOk(c, 'ls /work/hello.py 2>&1 || true'), /No such file/);
}));

test('a second 2026-07-28 client of the same chat sees the same files', withLogs(tb, async () => {
  const conv = tb.chat('two');
  const a = await modern(conv);
  const b = await modern(conv);
  await call(a, 'write_file', { path: 'shared.txt', content: 'from a\n' });
  assert.equal(await runOk(b, 'cat shared.txt'), 'from a\n');
}));

test('one chat, both eras: written over 2026-07-28, read over 2025-11-25, and back', withLogs(tb, async () => {
  const conv = tb.chat('both');
  const m = await modern(conv);
  const l = await legacy(conv);
  await call(m, 'write_file', { path: 'era.txt', content: 'modern wrote this\n' });
  assert.equal(await runOk(l, 'cat era.txt'), 'modern wrote this\n');
  await call(l, 'write_file', { path: 'era2.txt', content: 'legacy wrote this\n' });
  assert.equal(await runOk(m, 'cat era2.txt'), 'legacy wrote this\n');
  assert.equal((await runOk(m, 'hostname')).trim(), (await runOk(l, 'hostname')).trim());
}));

test('closing the response stream of a 2026-07-28 call kills its command', withLogs(tb, async () => {
  const conv = tb.chat('close');
  const c = await modern(conv);
  await runOk(c, 'true');
  const ps = () => rawPs(tb, conv, USER);
  const log = path.join(tb.dir, 'gateway.log');
  const cancelsBefore = (fs.readFileSync(log, 'utf8').match(/\bcancel conv=/g) || []).length;

  // The SDK client: aborting the call closes its stream.
  const ac = new AbortController();
  const pending = call(c, 'run', { command: 'sleep 771', timeout: 500 }, { timeout: 600000, signal: ac.signal });
  pending.catch(() => {});
  await waitFor(async () => (await ps()).includes('sleep 771'),
    { timeoutMs: 20000, intervalMs: 300, what: 'sleep 771 to be running' });
  ac.abort('no longer needed');
  await assert.rejects(pending);
  await waitFor(async () => !(await ps()).includes('sleep 771'),
    { timeoutMs: 10000, intervalMs: 300, what: 'sleep 771 to be gone after the stream closed' });

  // A raw request: the stream is closed and nothing else is sent.
  const raw = new AbortController();
  const open = postModern(tb, 'tools/call', { name: 'run', arguments: { command: 'sleep 772', timeout: 500 } },
    { headers: { 'X-Conversation-Id': conv, 'X-User-Id': USER }, signal: raw.signal });
  open.catch(() => {});
  await waitFor(async () => (await ps()).includes('sleep 772'),
    { timeoutMs: 20000, intervalMs: 300, what: 'sleep 772 to be running' });
  raw.abort();
  await waitFor(async () => !(await ps()).includes('sleep 772'),
    { timeoutMs: 10000, intervalMs: 300, what: 'sleep 772 to be gone after the stream closed' });

  // Neither went through notifications/cancelled: the closed stream was the cancel.
  const text = fs.readFileSync(log, 'utf8');
  assert.equal((text.match(/\bcancel conv=/g) || []).length, cancelsBefore, 'no notifications/cancelled arrived');
  assert.match(text, /call run conv=\S+ id=\S+: client gone, cancelled/);
}));

// ---- 2. the wire ---------------------------------------------------------------------------

test('server/discover: versions, capabilities, instructions, caching hints, serverInfo', withLogs(tb, async () => {
  const id = tid();
  const r = await postModern(tb, 'server/discover', {}, { id });
  assert.equal(r.status, 200, r.body);
  const msg = message(r);
  assert.equal(msg.id, id);
  const res = msg.result;
  assert.equal(res.resultType, 'complete');
  assert.equal(res.supportedVersions[0], '2026-07-28');
  for (const v of ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']) assert.ok(res.supportedVersions.includes(v), v);
  assert.deepEqual(res.capabilities, { tools: { listChanged: false } });
  assert.match(res.instructions, /\brun\b/);
  assert.equal(res.ttlMs, 3600000);
  assert.equal(res.cacheScope, 'public');
  assert.deepEqual(res._meta[SERVER_INFO], { name: 'talkback', version: res._meta[SERVER_INFO].version });
  assert.equal(typeof res._meta[SERVER_INFO].version, 'string');
  assert.equal(r.headers.get('mcp-session-id'), null);
}));

test('tools/list over 2026-07-28: resultType, ttlMs, cacheScope, the same order every time', withLogs(tb, async () => {
  const a = message(await postModern(tb, 'tools/list', {}, { accept: 'application/json' }));
  const b = message(await postModern(tb, 'tools/list'));
  assert.equal(a.result.resultType, 'complete');
  assert.equal(a.result.ttlMs, 3600000);
  assert.equal(a.result.cacheScope, 'public');
  assert.ok(a.result._meta[SERVER_INFO]);
  assert.deepEqual(a.result.tools, b.result.tools);
  const old = await post(tb, { jsonrpc: '2.0', id: tid(), method: 'tools/list' }, { accept: 'application/json' });
  assert.deepEqual(a.result.tools, old.json.result.tools, 'one table for both eras');
}));

test('tools/call over 2026-07-28: resultType on results, refusals and failures, as JSON and as SSE', withLogs(tb, async () => {
  const conv = tb.chat('wire');
  const hs = { 'X-Conversation-Id': conv, 'X-User-Id': USER };
  for (const accept of ['application/json', 'application/json, text/event-stream']) {
    const ok = message(await postModern(tb, 'tools/call', { name: 'run', arguments: { command: 'echo hi' } }, { headers: hs, accept }));
    assert.equal(ok.result.resultType, 'complete', accept);
    assert.equal(joinText(ok.result), '$ echo hi\nhi\n');
    assert.ok(ok.result._meta[SERVER_INFO]);
    assert.equal(ok.result.ttlMs, undefined, 'a call result is not cacheable');
  }
  const failed = message(await postModern(tb, 'tools/call', { name: 'run', arguments: { command: 'false' } }, { headers: hs }));
  assert.equal(failed.result.resultType, 'complete');
  assert.equal(failed.result.isError, true);
  const refused = message(await postModern(tb, 'tools/call', { name: 'run', arguments: { command: 'ls' } }, { headers: { 'X-Conversation-Id': '' } }));
  assert.equal(refused.result.resultType, 'complete');
  assert.match(joinText(refused.result), /talkback refused this call: the X-Conversation-Id header is missing or empty/);
  const unknown = await postModern(tb, 'tools/call', { name: 'nope', arguments: {} }, { headers: hs });
  assert.equal(message(unknown).error.code, -32602);
}));

/** A 2026-07-28 call that must be refused with 400 and `code`, and run nothing:
 *  its command would create a marker file. */
async function refusedAndNothingRan(conv, code, mangle) {
  const marker = `marker-${tid()}`;
  const hs = { 'X-Conversation-Id': conv, 'X-User-Id': USER };
  const params = { name: 'run', arguments: { command: `touch /work/${marker}` } };
  const r = await mangle(params, hs, marker);
  assert.equal(r.status, 400, r.body);
  assert.equal(r.headers.get('content-type'), 'application/json');
  assert.equal(r.json.error.code, code, r.body);
  assert.equal((await rawRun(tb, conv, USER, `ls /work/${marker} 2>&1 || true`)).text.includes('No such file'), true,
    `${marker} must not exist: nothing may run`);
  return r.json;
}

test('-32020: Mcp-Method, Mcp-Name or MCP-Protocol-Version not matching the body (or missing): 400, nothing runs', withLogs(tb, async () => {
  const conv = tb.chat('mismatch');
  await rawRun(tb, conv, USER, 'true');
  const cases = {
    'Mcp-Method says another method': { 'Mcp-Method': 'tools/list' },
    'Mcp-Name says another tool': { 'Mcp-Name': 'reset' },
    'Mcp-Name missing': { 'Mcp-Name': null },
    'Mcp-Method missing': { 'Mcp-Method': null },
    'MCP-Protocol-Version missing': { 'MCP-Protocol-Version': null },
    'Mcp-Name a sentinel of another name': { 'Mcp-Name': `=?base64?${Buffer.from('reset').toString('base64')}?=` },
    'Mcp-Name a broken sentinel': { 'Mcp-Name': '=?base64?!!!?=' },
  };
  for (const [what, extra] of Object.entries(cases)) {
    const j = await refusedAndNothingRan(conv, -32020,
      (params, hs) => postModern(tb, 'tools/call', params, { headers: { ...hs, ...extra }, accept: 'application/json' }));
    assert.match(j.error.message, /^Header mismatch/, what);
  }
  // The header and _meta naming different versions.
  await refusedAndNothingRan(conv, -32020, (params, hs) => postModern(tb, 'tools/call', params,
    { headers: { ...hs, 'MCP-Protocol-Version': '2025-11-25' } }));
  // A Base64 sentinel of the right name is the name.
  const ok = await postModern(tb, 'tools/call', { name: 'run', arguments: { command: 'echo b64' } },
    { headers: { 'X-Conversation-Id': conv, 'X-User-Id': USER, 'Mcp-Name': `=?base64?${Buffer.from('run').toString('base64')}?=` },
      accept: 'application/json' });
  assert.equal(ok.status, 200, ok.body);
  assert.equal(joinText(ok.json.result), '$ echo b64\nb64\n');
}));

test('-32022: an unsupported version names the supported ones and the one requested', withLogs(tb, async () => {
  const conv = tb.chat('version');
  await rawRun(tb, conv, USER, 'true');
  for (const v of ['1900-01-01', '2099-12-31']) {
    const j = await refusedAndNothingRan(conv, -32022, (params, hs) => post(tb, {
      jsonrpc: '2.0', id: tid(), method: 'tools/call',
      params: { ...params, _meta: { ...modernMeta(), 'io.modelcontextprotocol/protocolVersion': v } },
    }, { headers: { ...hs, 'MCP-Protocol-Version': v, 'Mcp-Method': 'tools/call', 'Mcp-Name': 'run' } }));
    assert.equal(j.error.data.requested, v);
    assert.ok(j.error.data.supported.includes('2026-07-28'), JSON.stringify(j.error.data));
    assert.ok(j.error.data.supported.includes('2025-11-25'), JSON.stringify(j.error.data));
  }
}));

test('-32602: a 2026-07-28 request without a required _meta field, 400, nothing runs', withLogs(tb, async () => {
  const conv = tb.chat('meta');
  await rawRun(tb, conv, USER, 'true');
  const headers = { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': 'run' };
  const without = (key) => {
    const m = modernMeta();
    delete m[key];
    return m;
  };
  for (const meta of [undefined, without('io.modelcontextprotocol/clientCapabilities'),
    without('io.modelcontextprotocol/protocolVersion'), { ...modernMeta(), 'io.modelcontextprotocol/clientCapabilities': 'x' }]) {
    const j = await refusedAndNothingRan(conv, -32602, (params, hs) => post(tb, {
      jsonrpc: '2.0', id: tid(), method: 'tools/call', params: meta ? { ...params, _meta: meta } : params,
    }, { headers: { ...hs, ...headers } }));
    assert.match(j.error.message, /_meta/);
  }
}));

test('methods the 2026-07-28 revision does not have answer 404 with -32601', withLogs(tb, async () => {
  for (const m of ['initialize', 'ping', 'resources/list']) {
    const id = tid();
    const r = await postModern(tb, m, {}, { id });
    assert.equal(r.status, 404, `${m}: ${r.body}`);
    assert.equal(r.json.error.code, -32601);
    assert.equal(r.json.id, id);
  }
  const n = await post(tb, { jsonrpc: '2.0', method: 'notifications/initialized' },
    { headers: { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'notifications/initialized' } });
  assert.equal(n.status, 202);
}));

// ---- 3. the other clients ------------------------------------------------------------------

test('the v2 client in dual-era mode speaks 2026-07-28; in its default mode, 2025-11-25', withLogs(tb, async () => {
  const conv = tb.chat('v2modes');
  const auto = await modern(conv, { mode: 'auto' });
  assert.equal(auto.getProtocolEra(), 'modern');
  await call(auto, 'write_file', { path: 'auto.txt', content: 'auto\n' });
  const plain = await modern(conv, { mode: 'legacy' });
  assert.equal(plain.getProtocolEra(), 'legacy');
  assert.equal(await runOk(plain, 'cat auto.txt'), 'auto\n');
  assert.equal((await plain.listTools()).tools.length, 4);
}));

test('legacy answers carry nothing of the modern era', withLogs(tb, async () => {
  const conv = tb.chat('legacy');
  const init = await post(tb, {
    jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
  }, { accept: 'application/json' });
  assert.deepEqual(Object.keys(init.json.result), ['protocolVersion', 'capabilities', 'serverInfo', 'instructions']);
  const list = await post(tb, { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    { accept: 'application/json', headers: { 'MCP-Protocol-Version': '2025-11-25' } });
  assert.deepEqual(Object.keys(list.json.result), ['tools']);
  const c = await legacy(conv);
  const r = await call(c, 'run', { command: 'echo legacy' });
  assert.deepEqual(Object.keys(r.result).sort(), ['content', 'isError']);
  // A 2025-11-25 version in _meta is the legacy era too.
  const meta = await post(tb, {
    jsonrpc: '2.0', id: 3, method: 'tools/list',
    params: { _meta: { ...modernMeta(), 'io.modelcontextprotocol/protocolVersion': '2025-11-25' } },
  }, { accept: 'application/json' });
  assert.deepEqual(Object.keys(meta.json.result), ['tools']);
}));

test('/metrics counts the messages each era answered', withLogs(tb, async () => {
  const count = async (era) => {
    const r = await fetch(tb.url.replace(/\/mcp$/, '/metrics'));
    const m = new RegExp(`^talkback_mcp_requests_total\\{era="${era}"\\} (\\d+)$`, 'm').exec(await r.text());
    assert.ok(m, `talkback_mcp_requests_total{era="${era}"}`);
    return Number(m[1]);
  };
  const [modern0, legacy0] = [await count('modern'), await count('legacy')];
  await postModern(tb, 'tools/list');
  await postModern(tb, 'tools/list');
  await post(tb, { jsonrpc: '2.0', id: tid(), method: 'ping' });
  assert.equal(await count('modern'), modern0 + 2);
  assert.equal(await count('legacy'), legacy0 + 1);
}));
