// protocol.test.mjs -- talkback's MCP endpoint at the protocol level:
//   tools/list through the SDK (run, write_file, reset: object input
//   schemas, annotations)
//   Streamable HTTP rules checked with raw requests: stateless (no
//   Mcp-Session-Id), GET/DELETE -> 405, unsupported MCP-Protocol-Version ->
//   400, malformed JSON -> 400/-32700, unknown method -> -32601, unknown
//   tool -> -32602, foreign Origin/Host -> 403, body over 8 MiB -> 413,
//   notifications -> 202, tools/call answered as SSE when the client
//   accepts text/event-stream and as JSON when it does not
//   the MCP conformance suite's server-initialize, ping and tools-list

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {
  Talkback, withLogs, connect, post, sseMessages, tid, CONFORMANCE,
} from './harness.mjs';

const tb = new Talkback({ name: 'protocol' });
let conv;

before(async () => {
  await tb.start();
  conv = tb.chat('proto');
});

after(async () => {
  await tb.cleanup();
});

const INIT = (id = tid()) => ({
  jsonrpc: '2.0', id, method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'it', version: '1' } },
});

test('tools/list: 4 tools including run, write_file and reset, each with an object inputSchema and annotations', withLogs(tb, async () => {
  const c = await connect(tb); // no X-Conversation-Id needed to list tools
  try {
    const { tools } = await c.listTools();
    const names = tools.map((t) => t.name);
    for (const n of ['run', 'write_file', 'reset']) assert.ok(names.includes(n), `${n} in ${names}`);
    assert.equal(tools.length, 4, `tools: ${names.join(', ')}`);
    for (const t of tools) {
      assert.match(t.name, /^[A-Za-z0-9_./-]{1,64}$/);
      assert.equal(typeof t.description, 'string');
      assert.ok(t.description.length > 0);
      assert.equal(t.inputSchema?.type, 'object', `${t.name} inputSchema`);
      assert.equal(typeof t.annotations, 'object', `${t.name} annotations`);
      assert.ok(t.annotations !== null);
      for (const k of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']) {
        assert.equal(typeof t.annotations[k], 'boolean', `${t.name}.annotations.${k}`);
      }
      assert.equal(t.outputSchema, undefined, `${t.name} declares no outputSchema`);
    }
    // What is required is said in the descriptions, not in a `required` a
    // client would refuse a call on before talkback can explain (issue 25;
    // librechat.test.mjs).
    const runTool = tools.find((t) => t.name === 'run');
    assert.equal(runTool.inputSchema.required, undefined);
    assert.match(runTool.inputSchema.properties.command.description, /Required, a string\.$/);
    const wf = tools.find((t) => t.name === 'write_file');
    for (const a of ['path', 'content']) {
      assert.match(wf.inputSchema.properties[a].description, /Required, a string\.$/);
    }
  } finally {
    await c.close();
  }
}));

test('initialize: protocol version negotiated, no Mcp-Session-Id (stateless)', withLogs(tb, async () => {
  const r = await post(tb, INIT(), { accept: 'application/json, text/event-stream' });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('mcp-session-id'), null);
  const msg = r.headers.get('content-type').startsWith('text/event-stream') ? sseMessages(r.body)[0] : r.json;
  assert.equal(msg.result.protocolVersion, '2025-11-25');
  assert.equal(typeof msg.result.serverInfo.name, 'string');
  assert.ok(msg.result.capabilities.tools);

  const old = await post(tb, { ...INIT(), params: { ...INIT().params, protocolVersion: '2025-06-18' } },
    { accept: 'application/json' });
  assert.equal(old.json.result.protocolVersion, '2025-06-18');

  // No answer carries an Mcp-Session-Id.
  const list = await post(tb, { jsonrpc: '2.0', id: tid(), method: 'tools/list' }, { accept: 'application/json' });
  assert.equal(list.status, 200);
  assert.equal(list.headers.get('mcp-session-id'), null);
}));

test('GET and DELETE on /mcp answer 405', withLogs(tb, async () => {
  const g = await post(tb, null, { method: 'GET', accept: 'text/event-stream' });
  assert.equal(g.status, 405);
  const d = await post(tb, null, { method: 'DELETE', headers: { 'Mcp-Session-Id': 'whatever' } });
  assert.equal(d.status, 405);
}));

test('an unsupported MCP-Protocol-Version header answers 400; supported ones work', withLogs(tb, async () => {
  // 2026-07-28 without its per-request _meta is a malformed modern request
  // (eras.test.mjs has the rest of that era).
  const bad = await post(tb, { jsonrpc: '2.0', id: tid(), method: 'ping' },
    { headers: { 'MCP-Protocol-Version': '2026-07-28' }, accept: 'application/json' });
  assert.equal(bad.status, 400);
  assert.equal(bad.json.error.code, -32602);
  const bad2 = await post(tb, { jsonrpc: '2.0', id: tid(), method: 'tools/list' },
    { headers: { 'MCP-Protocol-Version': 'nonsense' }, accept: 'application/json' });
  assert.equal(bad2.status, 400);
  for (const v of ['2025-11-25', '2025-06-18', '2025-03-26']) {
    const ok = await post(tb, { jsonrpc: '2.0', id: tid(), method: 'ping' },
      { headers: { 'MCP-Protocol-Version': v }, accept: 'application/json' });
    assert.equal(ok.status, 200, v);
    assert.deepEqual(ok.json.result, {});
  }
}));

test('malformed JSON answers 400 with error -32700', withLogs(tb, async () => {
  const r = await post(tb, null, { raw: '{"jsonrpc":"2.0","id":1,"method":', accept: 'application/json' });
  assert.equal(r.status, 400);
  assert.equal(r.json?.error?.code, -32700, r.body);
  assert.equal(r.json.id, null);
}));

test('an unknown method answers -32601; an unknown tool answers -32602', withLogs(tb, async () => {
  const id = tid();
  const r = await post(tb, { jsonrpc: '2.0', id, method: 'resources/list' }, { accept: 'application/json' });
  assert.equal(r.json?.error?.code, -32601, r.body);
  assert.equal(r.json.id, id);

  const u = await post(tb, { jsonrpc: '2.0', id: tid(), method: 'tools/call', params: { name: 'no_such_tool', arguments: {} } },
    { accept: 'application/json', headers: { 'X-Conversation-Id': conv } });
  assert.equal(u.json?.error?.code, -32602, u.body);
}));

test('a foreign Origin answers 403; localhost origins and no Origin are accepted', withLogs(tb, async () => {
  const evil = await post(tb, { jsonrpc: '2.0', id: tid(), method: 'ping' },
    { headers: { Origin: 'http://evil.example' }, accept: 'application/json' });
  assert.equal(evil.status, 403);
  for (const origin of [`http://localhost:${tb.port}`, `http://127.0.0.1:${tb.port}`]) {
    const ok = await post(tb, { jsonrpc: '2.0', id: tid(), method: 'ping' },
      { headers: { Origin: origin }, accept: 'application/json' });
    assert.equal(ok.status, 200, origin);
  }
  const none = await post(tb, { jsonrpc: '2.0', id: tid(), method: 'ping' }, { accept: 'application/json' });
  assert.equal(none.status, 200);
}));

test('a foreign Host header answers 403 on the loopback bind', withLogs(tb, async () => {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
  const status = await new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1', port: tb.port, path: '/mcp', method: 'POST',
      headers: { Host: 'evil.example.com', 'Content-Type': 'application/json', Accept: 'application/json', 'Content-Length': Buffer.byteLength(body) },
    }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode)); });
    req.on('error', reject);
    req.end(body);
  });
  assert.equal(status, 403);
}));

test('a body over 8 MiB with Content-Length answers 413 to a fetch client', withLogs(tb, async () => {
  // fetch writes the whole body before it reads the answer, as LibreChat's
  // HTTP client does: the 413 must still reach it.
  const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call',
    params: { name: 'write_file', arguments: { path: 'x', content: 'a'.repeat(9 * 1024 * 1024) } } });
  let r;
  try {
    r = await post(tb, null, { raw: big, accept: 'application/json', headers: { 'X-Conversation-Id': conv } });
  } catch (e) {
    assert.fail(`fetch failed instead of reading a 413: ${e.cause?.code ?? ''} ${e.cause?.message ?? e.message}`);
  }
  assert.equal(r.status, 413);
}));

test('a chunked body over 8 MiB answers 413', withLogs(tb, async () => {
  // No Content-Length: the size is only known while reading.
  const enc = new TextEncoder();
  const chunk = enc.encode('a'.repeat(1024 * 1024));
  let sent = 0;
  const stream = new ReadableStream({
    pull(ctrl) {
      if (sent === 0) ctrl.enqueue(enc.encode('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"'));
      if (sent >= 9) {
        ctrl.enqueue(enc.encode('"}}'));
        ctrl.close();
        return;
      }
      sent++;
      ctrl.enqueue(chunk);
    },
  });
  const res = await fetch(tb.url, {
    method: 'POST', body: stream, duplex: 'half',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
  });
  await res.arrayBuffer();
  assert.equal(res.status, 413);
}));

test('a body just under 8 MiB is accepted', withLogs(tb, async () => {
  const pad = 'a'.repeat(8 * 1024 * 1024 - 200);
  const r = await post(tb, { jsonrpc: '2.0', id: 7, method: 'ping', params: { pad } }, { accept: 'application/json' });
  assert.equal(r.status, 200);
  assert.deepEqual(r.json.result, {});
}));

test('notifications answer 202 with no body', withLogs(tb, async () => {
  const r = await post(tb, { jsonrpc: '2.0', method: 'notifications/initialized' });
  assert.equal(r.status, 202);
  assert.equal(r.body, '');
  const c = await post(tb, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 12345 } },
    { headers: { 'X-Conversation-Id': conv } });
  assert.equal(c.status, 202);
  assert.equal(c.body, '');
}));

test('tools/call answers SSE "event: message" when text/event-stream is accepted, JSON otherwise', withLogs(tb, async () => {
  const id = tid();
  const headers = { 'X-Conversation-Id': conv, 'X-User-Id': 'proto-user' };
  const msg = { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'run', arguments: { command: 'echo sse' } } };
  const s = await post(tb, msg, { headers, accept: 'application/json, text/event-stream' });
  assert.equal(s.status, 200);
  assert.match(s.headers.get('content-type'), /^text\/event-stream/);
  assert.equal(s.headers.get('mcp-session-id'), null);
  const events = s.body.split('\n\n').filter((b) => b && !b.startsWith(':'));
  assert.equal(events.length, 1, s.body);
  assert.match(events[0], /^event: message\ndata: \{.*\}$/, 'one "event: message" with one-line data');
  assert.doesNotMatch(s.body, /^id:/m, 'no SSE id: fields');
  const [m] = sseMessages(s.body);
  assert.equal(m.id, id);
  assert.equal(m.result.content[0].text, '$ echo sse\nsse\n');
  assert.equal(m.result.isError, false);

  const j = await post(tb, { ...msg, id: tid() }, { headers, accept: 'application/json' });
  assert.equal(j.status, 200);
  assert.match(j.headers.get('content-type'), /^application\/json/);
  assert.equal(j.json.result.content[0].text, '$ echo sse\nsse\n');
}));

function conformance(scenario) {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'talkback-it-conformance-'));
  return new Promise((resolve) => {
    execFile(CONFORMANCE, ['server', '--url', tb.url, '--scenario', scenario, '-o', out],
      { cwd: out, timeout: 120000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        fs.rmSync(out, { recursive: true, force: true });
        resolve({ code: err ? (err.code ?? 1) : 0, stdout, stderr });
      });
  });
}

for (const scenario of ['server-initialize', 'ping', 'tools-list']) {
  test(`conformance suite: ${scenario} passes`, withLogs(tb, async () => {
    const r = await conformance(scenario);
    assert.equal(r.code, 0, `conformance ${scenario} exited ${r.code}\n${r.stdout}\n${r.stderr}`);
  }));
}
