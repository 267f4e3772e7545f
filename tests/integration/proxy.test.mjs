// proxy.test.mjs -- talkback-proxy against a scripted OpenAI-compatible
// model server.
//
// The real model cannot run here, so the model server is a node:http
// server written below that answers every request from a script chosen by
// the X-Scenario header (which the proxy forwards like every other header).
// The proxy is the real build/talkback-proxy, started on a free port with
// TALKBACK_PROXY_LISTEN / TALKBACK_PROXY_UPSTREAM.  Requests are LibreChat-
// shaped: the turn's tool calls in OpenAI format, tools named
// <tool>_mcp_sandbox, run_code results ending in the judge's verdict.
//
// Needs nothing but node 20 and the built proxy (no Docker).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { freePort } from './harness.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const BUILD = process.env.TALKBACK_BUILD_DIR || path.join(ROOT, 'build');
const PROXY_BIN = path.join(BUILD, 'talkback-proxy');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- transcripts ---------------------------------------------------------------

const PASS_TEXT = (code, out) =>
  `Saved /work/main.lua (${code.length} bytes).\n$ lua5.4 main.lua < input\ninput:\n3 4\noutput:\n${out}\n` +
  'PASS: the output matches the expected output.\n';
const FAIL_TEXT =
  '$ ./main < input\ninput:\n3 4\noutput:\n8\nFAIL: line 1 differs.\n  expected: 7\n  got:      8\n' +
  "Don't answer yet: fix the code and call run_code again until it says PASS.\n";

let callSeq = 0;
/** An assistant tool call and its result, as LibreChat sends them. */
function call(name, args, result) {
  const id = `call_${++callSeq}`;
  return [
    { role: 'assistant', content: '', tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }] },
    { role: 'tool', tool_call_id: id, content: result },
  ];
}
const runCode = (language, code, result) =>
  call('run_code_mcp_sandbox', { language, code, input: '3 4', expected: '7' }, result);

function chatRequest(turn, { stream = false, history = [] } = {}) {
  return {
    model: 'scripted',
    stream,
    messages: [
      { role: 'system', content: 'You have a sandbox.' },
      ...history,
      { role: 'user', content: 'Write a program that adds two numbers.' },
      ...turn,
    ],
    tools: [{ type: 'function', function: { name: 'run_code_mcp_sandbox', parameters: { type: 'object' } } }],
  };
}

// ---- the scripted model server -----------------------------------------------------------

const ID = 'chatcmpl-scripted';
const chunk = (delta, finish = null) => ({
  id: ID, object: 'chat.completion.chunk', created: 1700000000, model: 'scripted',
  choices: [{ index: 0, delta, finish_reason: finish }],
});
const sseEvent = (obj) => `data: ${typeof obj === 'string' ? obj : JSON.stringify(obj)}\n\n`;
const completion = (message, finish = 'stop') => ({
  id: ID, object: 'chat.completion', created: 1700000000, model: 'scripted',
  choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }],
  usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
});

/** A reply as text: streamed in pieces, or one JSON answer. */
function textReply(text) {
  return (req, res, body) => {
    if (body.stream) {
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
      res.write(sseEvent(chunk({ role: 'assistant', content: '' })));
      for (let i = 0; i < text.length; i += 7) res.write(sseEvent(chunk({ content: text.slice(i, i + 7) })));
      res.write(sseEvent(chunk({}, 'stop')));
      res.end(sseEvent('[DONE]'));
    } else {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(completion({ content: text })));
    }
  };
}

const TOOL_CALL = { id: 'call_x', type: 'function', function: { name: 'run_code_mcp_sandbox', arguments: '{"language":"lua","code":"print(1)"}' } };

const scenarios = {
  'no-code': textReply('The program adds the two numbers and passed the test.'),
  'lua-pointer': textReply('code shown in the previous step'),
  'empty': textReply(''),
  'with-code': textReply('Here it is:\n\n```lua\nlocal a, b = io.read("n", "n")\nprint(a + b)\n```\n'),
  'tool-call': (req, res, body) => {
    if (body.stream) {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write(sseEvent(chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, ...TOOL_CALL, function: { name: TOOL_CALL.function.name, arguments: '' } }] })));
      res.write(sseEvent(chunk({ tool_calls: [{ index: 0, function: { arguments: TOOL_CALL.function.arguments } }] })));
      res.write(sseEvent(chunk({}, 'tool_calls')));
      res.end(sseEvent('[DONE]'));
    } else {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(completion({ content: null, tool_calls: [TOOL_CALL] }, 'tool_calls')));
    }
  },
  'malformed-sse': (req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    res.write(sseEvent(chunk({ content: 'Done' })));
    res.write('data: {"choices": [ this is not json\n\n');
    res.write('event: weird\nid: 7\n\n');
    res.write(sseEvent(chunk({}, 'stop')));
    res.end('data: [DONE]\n\ndata: {"half":');   // and a torn event at the end
  },
  'broken-off': (req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    res.write(sseEvent(chunk({ content: 'Partial' })));
    setTimeout(() => res.socket.destroy(), 50);
  },
  'rate-limited': (req, res) => {
    res.writeHead(429, { 'Content-Type': 'application/json', 'Retry-After': '7', 'X-Upstream': 'yes' });
    res.end(JSON.stringify({ error: { message: 'Too many requests', type: 'rate_limit', code: 429 } }));
  },
  'slow-stream': (req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    res.write(sseEvent(chunk({ role: 'assistant', content: 'first' })));
    let n = 0;
    const t = setInterval(() => {
      if (res.destroyed || n++ > 200) {
        clearInterval(t);
        if (!res.destroyed) res.end(sseEvent('[DONE]'));
        return;
      }
      res.write(sseEvent(chunk({ content: ' more' })));
    }, 50);
    res.on('close', () => clearInterval(t));
  },
  'stalled': (req, res) => {
    // Answers nothing for a long time (a model still thinking).
    const t = setTimeout(() => textReply('late')(req, res, {}), 20000);
    res.on('close', () => clearTimeout(t));
  },
};

class ScriptedUpstream {
  constructor() {
    this.requests = [];
    this.closed = [];   // scenario names whose response closed before it ended
    this.server = http.createServer((req, res) => {
      let raw = '';
      req.setEncoding('utf8');
      req.on('data', (d) => (raw += d));
      req.on('end', () => {
        let body = {};
        try { body = raw ? JSON.parse(raw) : {}; } catch { body = { unparsable: raw }; }
        const scenario = req.headers['x-scenario'] || '';
        this.requests.push({ method: req.method, url: req.url, headers: req.headers, raw, body, scenario });
        res.on('close', () => { if (!res.writableEnded) this.closed.push(scenario); });
        if (req.url.startsWith('/v1/models')) {
          res.writeHead(200, { 'Content-Type': 'application/json', 'X-Upstream': 'models' });
          res.end(JSON.stringify({ object: 'list', data: [{ id: 'scripted', object: 'model', owned_by: 'test' }] }));
          return;
        }
        const fn = scenarios[scenario];
        if (!fn) {
          res.writeHead(404, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify({ error: { message: `no scenario ${scenario} for ${req.method} ${req.url}` } }));
          return;
        }
        fn(req, res, body);
      });
    });
  }
  listen() {
    return new Promise((r) => this.server.listen(0, '127.0.0.1', () => r(this.server.address().port)));
  }
  close() {
    this.server.closeAllConnections?.();
    return new Promise((r) => this.server.close(r));
  }
  last() {
    return this.requests[this.requests.length - 1];
  }
}

// ---- the proxy ---------------------------------------------------------------------------------

async function startProxy(upstreamUrl) {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'talkback-proxy-it-'));
  const conf = path.join(dir, 'empty.conf');
  fs.writeFileSync(conf, '');
  const log = path.join(dir, 'proxy.log');
  const out = fs.openSync(log, 'a');
  const child = spawn(PROXY_BIN, [], {
    env: {
      ...process.env,
      TALKBACK_CONFIG: conf,
      TALKBACK_PROXY_LISTEN: `127.0.0.1:${port}`,
      TALKBACK_PROXY_UPSTREAM: upstreamUrl,
      TALKBACK_LOG_LEVEL: 'debug',
    },
    stdio: ['ignore', out, out],
  });
  const exited = new Promise((r) => child.on('exit', (code, signal) => r({ code, signal })));
  const end = Date.now() + 5000;
  for (;;) {
    const ok = await new Promise((r) => {
      const s = net.connect(port, '127.0.0.1', () => { s.destroy(); r(true); });
      s.on('error', () => r(false));
    });
    if (ok) break;
    if (Date.now() > end || child.exitCode !== null)
      throw new Error(`talkback-proxy did not start:\n${fs.readFileSync(log, 'utf8')}`);
    await sleep(20);
  }
  return {
    port,
    base: `http://127.0.0.1:${port}`,
    child,
    log: () => fs.readFileSync(log, 'utf8'),
    alive: () => child.exitCode === null && child.signalCode === null,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const r = await Promise.race([exited, sleep(5000).then(() => null)]);
      if (!r) child.kill('SIGKILL');
      return r;
    },
  };
}

// ---- the client side ------------------------------------------------------------------------------

let upstream, proxy;

async function chat(scenario, request, extraHeaders = {}) {
  return fetch(`${proxy.base}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Authorization: 'Bearer sk-test-key',
      'X-Scenario': scenario,
      ...extraHeaders,
    },
    body: JSON.stringify(request),
  });
}

/** Split an SSE body into data payloads (strings). */
function sseData(text) {
  return text
    .split(/\r?\n\r?\n/)
    .map((ev) => ev.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n'))
    .filter((d) => d.length > 0);
}

/** What a streaming client would see: the content, the finish reason, the
 *  chunk ids, and whether any content came after the finish chunk. */
function streamed(text) {
  const data = sseData(text);
  let content = '';
  let finish = null;
  let contentAfterFinish = false;
  const ids = new Set();
  let done = false;
  for (const d of data) {
    if (d === '[DONE]') { done = true; continue; }
    assert.equal(done, false, 'nothing after [DONE]');
    const j = JSON.parse(d);
    ids.add(`${j.id}|${j.model}|${j.created}`);
    const c = j.choices?.[0];
    if (c?.delta?.content) {
      if (finish) contentAfterFinish = true;
      content += c.delta.content;
    }
    if (c?.finish_reason) finish = c.finish_reason;
  }
  return { content, finish, contentAfterFinish, ids, done };
}

const PROGRAM_LUA = 'local a, b = io.read("n", "n")\nprint(a + b)\n';

before(async () => {
  assert.ok(fs.existsSync(PROXY_BIN), `${PROXY_BIN} is missing: build it first (cmake --build build)`);
  upstream = new ScriptedUpstream();
  const upPort = await upstream.listen();
  // The base ends in /v1 on purpose: the proxy cuts it (client paths carry /v1).
  proxy = await startProxy(`http://127.0.0.1:${upPort}/v1`);
});

after(async () => {
  const r = await proxy?.stop();
  await upstream?.close();
  assert.deepEqual(r, { code: 0, signal: null }, 'the proxy stops cleanly on SIGTERM');
});

// ---- pass-through ------------------------------------------------------------------------------------

test('GET /v1/models passes through with the query string, Authorization and headers', async () => {
  const r = await fetch(`${proxy.base}/v1/models?owned_by=test%20x&a=1`, {
    headers: { Authorization: 'Bearer sk-test-key', 'X-Custom': 'kept' },
  });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('x-upstream'), 'models');
  assert.deepEqual(await r.json(), { object: 'list', data: [{ id: 'scripted', object: 'model', owned_by: 'test' }] });
  const seen = upstream.last();
  assert.equal(seen.url, '/v1/models?owned_by=test%20x&a=1');
  assert.equal(seen.headers.authorization, 'Bearer sk-test-key');
  assert.equal(seen.headers['x-custom'], 'kept');
});

test('upstream error status, headers and body pass through unchanged', async () => {
  const turn = runCode('lua', PROGRAM_LUA, PASS_TEXT(PROGRAM_LUA, '7'));
  for (const stream of [false, true]) {
    const r = await chat('rate-limited', chatRequest(turn, { stream }));
    assert.equal(r.status, 429);
    assert.equal(r.headers.get('retry-after'), '7');
    assert.deepEqual(await r.json(), { error: { message: 'Too many requests', type: 'rate_limit', code: 429 } });
  }
});

test('the request body reaches the model server byte for byte', async () => {
  const req = chatRequest(runCode('lua', PROGRAM_LUA, PASS_TEXT(PROGRAM_LUA, '7')), { stream: true });
  const raw = JSON.stringify(req);
  const r = await chat('no-code', req);
  await r.text();
  assert.equal(upstream.last().raw, raw);
  assert.equal(upstream.last().headers.authorization, 'Bearer sk-test-key');
});

test('image blocks pass through untouched: a turn whose tool result and user message carry images reaches the model server byte for byte, and the verdict beside the image is still read', async () => {
  // A run_code result with a plot, as LibreChat hands it on: the text
  // blocks (the image named before the verdict, which the judge always
  // writes last), then the image as an image_url part with a data URL;
  // then the same image in an earlier user message.
  const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
  const image = { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } };
  const turn = runCode('lua', PROGRAM_LUA, PASS_TEXT(PROGRAM_LUA, '7'));
  const named = turn[1].content.replace('PASS: ', '[image /work/plot.png: 1x1 PNG, 70 bytes, shown below]\nPASS: ');
  turn[1].content = [{ type: 'text', text: named }, image];
  const turnWithUser = chatRequest(turn);
  const raw = JSON.stringify(turnWithUser);
  const r = await chat('no-code', turnWithUser);
  const j = await r.json();
  assert.equal(upstream.last().raw, raw);
  assert.ok(upstream.last().raw.includes(png));
  assert.equal(j.choices[0].message.content,
    'The program adds the two numbers and passed the test.\n\n' +
      '**The program that passed its test:**\n\n```lua\n' + PROGRAM_LUA + '```\n');
  // A user message with an image before the turn passes as well.
  const withHistory = chatRequest(turn, { history: [{ role: 'user', content: [{ type: 'text', text: 'Like this one:' }, image] }] });
  const raw2 = JSON.stringify(withHistory);
  await (await chat('no-code', withHistory)).text();
  assert.equal(upstream.last().raw, raw2);
});

// ---- repair ----------------------------------------------------------------------------------------

for (const stream of [false, true]) {
  const mode = stream ? 'streaming' : 'non-streaming';

  async function reply(scenario, turn, opts = {}) {
    const r = await chat(scenario, chatRequest(turn, { stream, ...opts }));
    assert.equal(r.status, 200);
    if (stream) {
      assert.match(r.headers.get('content-type'), /^text\/event-stream/);
      const text = await r.text();
      const s = streamed(text);
      assert.equal(s.done, true, '[DONE] arrives');
      assert.equal(s.contentAfterFinish, false, 'no content after the finish chunk');
      assert.equal(s.ids.size, 1, 'every chunk carries the upstream id, model and created');
      return { content: s.content, finish: s.finish, raw: text };
    }
    const j = await r.json();
    return { content: j.choices[0].message.content, finish: j.choices[0].finish_reason, json: j };
  }

  test(`${mode}: a reply without code after a PASS gets the passing program`, async () => {
    const turn = runCode('lua', PROGRAM_LUA, PASS_TEXT(PROGRAM_LUA, '7'));
    const { content, finish } = await reply('no-code', turn);
    assert.equal(finish, 'stop');
    assert.equal(
      content,
      'The program adds the two numbers and passed the test.\n\n' +
        '**The program that passed its test:**\n\n```lua\n' + PROGRAM_LUA + '```\n',
    );
  });

  test(`${mode}: after FAIL only, the last program that ran, labelled as not passing`, async () => {
    const v1 = '#include <stdio.h>\nint main(){int a,b;scanf("%d %d",&a,&b);printf("%d\\n",a+b+1);}\n';
    const v2 = '#include <stdio.h>\nint main(){int a,b;scanf("%d %d",&a,&b);printf("%d\\n",a*2);}\n';
    const turn = [...runCode('c', v1, FAIL_TEXT), ...runCode('c', v2, FAIL_TEXT)];
    const { content } = await reply('no-code', turn);
    assert.ok(content.endsWith('**The last program that ran (it did not pass its test):**\n\n```c\n' + v2 + '```\n'), content);
    assert.ok(!content.includes('a+b+1'));
  });

  test(`${mode}: several run_code calls give the last passing one`, async () => {
    const p = (n) => `print(${n})\n`;
    const turn = [
      ...runCode('python3', p(1), FAIL_TEXT),
      ...runCode('python3', p(2), PASS_TEXT(p(2), '7')),
      ...runCode('py', p(3), PASS_TEXT(p(3), '7')),
      ...runCode('python', p(4), FAIL_TEXT),
    ];
    const { content } = await reply('no-code', turn);
    assert.ok(content.endsWith('**The program that passed its test:**\n\n```python\nprint(3)\n```\n'), content);
  });

  test(`${mode}: a file written with write_file and executed with run`, async () => {
    const prog = 'import sys\na, b = map(int, sys.stdin.read().split())\nprint(a + b)\n';
    const turn = [
      ...call('write_file_mcp_sandbox', { path: 'add.py', content: prog }, `Wrote ${prog.length} bytes to /work/add.py.`),
      ...call('write_file_mcp_sandbox', { path: 'in.txt', content: '3 4\n' }, 'Wrote 4 bytes to /work/in.txt.'),
      ...call('run_mcp_sandbox', { command: 'python3 add.py < in.txt' }, '$ python3 add.py < in.txt\n7\n'),
    ];
    const { content } = await reply('no-code', turn);
    assert.ok(
      content.endsWith(
        '**The last program that ran, `/work/add.py` (run with `python3 add.py < in.txt`; not tested against an ' +
          'expected output):**\n\n```python\n' + prog + '```\n',
      ),
      content,
    );
  });

  test(`${mode}: the Lua case from the field ("code shown in the previous step")`, async () => {
    // A Lua solution that passed 5 out of 5; the reply points at it instead of showing it.
    const lua = 'local n = io.read("n")\nlocal t = {}\nfor i = 1, n do t[i] = io.read("n") end\n' +
      'table.sort(t)\nprint(table.concat(t, " "))\n';
    const turn = [
      ...runCode('lua', lua.replace('table.sort(t)\n', ''), FAIL_TEXT),
      ...runCode('Lua', lua, PASS_TEXT(lua, '1 2 3 4 5')),
    ];
    const { content } = await reply('lua-pointer', turn);
    assert.ok(content.startsWith('code shown in the previous step\n\n'));
    assert.ok(content.endsWith('**The program that passed its test:**\n\n```lua\n' + lua + '```\n'), content);
  });

  test(`${mode}: an empty reply gets the program alone`, async () => {
    const code = 'int main(){return 0;}';
    const { content } = await reply('empty', runCode('c', code, PASS_TEXT(code, '7')));
    assert.equal(content, '**The program that passed its test:**\n\n```c\n' + code + '\n```\n');
  });

  test(`${mode}: a reply that has a code block is untouched`, async () => {
    const turn = runCode('lua', PROGRAM_LUA, PASS_TEXT(PROGRAM_LUA, '7'));
    const direct = await (await fetch(`http://127.0.0.1:${upstream.server.address().port}/v1/chat/completions`, {
      method: 'POST', headers: { 'X-Scenario': 'with-code' }, body: JSON.stringify(chatRequest(turn, { stream })),
    })).text();
    const r = await chat('with-code', chatRequest(turn, { stream }));
    assert.equal(await r.text(), direct, 'byte for byte what the model server sent');
  });

  test(`${mode}: a tool-call answer is untouched`, async () => {
    const turn = runCode('lua', PROGRAM_LUA, FAIL_TEXT);
    const direct = await (await fetch(`http://127.0.0.1:${upstream.server.address().port}/v1/chat/completions`, {
      method: 'POST', headers: { 'X-Scenario': 'tool-call' }, body: JSON.stringify(chatRequest(turn, { stream })),
    })).text();
    const r = await chat('tool-call', chatRequest(turn, { stream }));
    assert.equal(await r.text(), direct);
  });

  test(`${mode}: a turn that ran no program is untouched`, async () => {
    const history = runCode('lua', PROGRAM_LUA, PASS_TEXT(PROGRAM_LUA, '7'));   // an earlier turn's
    const turn = call('run_mcp_sandbox', { command: 'ls /work' }, '$ ls /work\nmain.lua\n');
    const direct = await (await fetch(`http://127.0.0.1:${upstream.server.address().port}/v1/chat/completions`, {
      method: 'POST', headers: { 'X-Scenario': 'no-code' },
      body: JSON.stringify(chatRequest(turn, { stream, history: [{ role: 'user', content: 'first' }, ...history] })),
    })).text();
    const r = await chat('no-code', chatRequest(turn, { stream, history: [{ role: 'user', content: 'first' }, ...history] }));
    assert.equal(await r.text(), direct);
  });
}

// ---- streaming behaviour and failures ----------------------------------------------------------------

test('streaming: deltas pass through as they arrive, not at the end', async () => {
  const turn = runCode('lua', PROGRAM_LUA, PASS_TEXT(PROGRAM_LUA, '7'));
  const t0 = Date.now();
  const r = await chat('slow-stream', chatRequest(turn, { stream: true }));
  const reader = r.body.getReader();
  const { value } = await reader.read();
  const first = Date.now() - t0;
  assert.match(new TextDecoder().decode(value), /"content":"first"/);
  // The scripted stream runs for ~10 s; the first delta must not wait for it.
  assert.ok(first < 2000, `first delta after ${first} ms`);
  await reader.cancel();
});

test('malformed upstream SSE passes through unchanged, nothing appended, no crash', async () => {
  const turn = runCode('lua', PROGRAM_LUA, PASS_TEXT(PROGRAM_LUA, '7'));
  const r = await chat('malformed-sse', chatRequest(turn, { stream: true }));
  assert.equal(r.status, 200);
  const text = await r.text();
  assert.equal(
    text,
    sseEvent(chunk({ content: 'Done' })) + 'data: {"choices": [ this is not json\n\n' + 'event: weird\nid: 7\n\n' +
      sseEvent(chunk({}, 'stop')) + 'data: [DONE]\n\ndata: {"half":',
  );
  assert.ok(proxy.alive());
});

test('a stream that breaks off ends with a clear error event', async () => {
  const turn = runCode('lua', PROGRAM_LUA, PASS_TEXT(PROGRAM_LUA, '7'));
  const r = await chat('broken-off', chatRequest(turn, { stream: true }));
  assert.equal(r.status, 200);
  const data = sseData(await r.text());
  const last = JSON.parse(data[data.length - 1]);
  assert.match(last.error.message, /talkback-proxy: the model server's stream broke off/);
  assert.ok(!data.includes('[DONE]'));
  assert.ok(!data.join('').includes('passed its test'), 'nothing appended to a broken reply');
  assert.ok(proxy.alive());
});

test('client disconnect mid-stream aborts the upstream transfer; the proxy carries on', async () => {
  const turn = runCode('lua', PROGRAM_LUA, PASS_TEXT(PROGRAM_LUA, '7'));
  for (const scenario of ['slow-stream', 'stalled']) {
    const before = upstream.closed.filter((s) => s === scenario).length;
    const ac = new AbortController();
    const p = fetch(`${proxy.base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Scenario': scenario },
      body: JSON.stringify(chatRequest(turn, { stream: scenario === 'slow-stream' })),
      signal: ac.signal,
    });
    if (scenario === 'slow-stream') {
      const r = await p;
      const reader = r.body.getReader();
      await reader.read();
      ac.abort();
      await reader.cancel().catch(() => {});
    } else {
      await sleep(300);   // the model server has the request and says nothing yet
      ac.abort();
      await p.catch(() => {});
    }
    const end = Date.now() + 5000;
    while (upstream.closed.filter((s) => s === scenario).length === before) {
      assert.ok(Date.now() < end, `the model server's ${scenario} response was not closed after the client left`);
      await sleep(50);
    }
  }
  assert.ok(proxy.alive());
  const r = await chat('no-code', chatRequest(runCode('lua', PROGRAM_LUA, PASS_TEXT(PROGRAM_LUA, '7'))));
  assert.equal(r.status, 200);
  assert.match((await r.json()).choices[0].message.content, /passed its test/);
});

test('model server down: 502 with an OpenAI-style error, for both kinds of request', async () => {
  const downPort = await freePort();
  const p = await startProxy(`http://127.0.0.1:${downPort}`);
  try {
    for (const stream of [false, true]) {
      const r = await fetch(`${p.base}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(chatRequest(runCode('lua', 'x', PASS_TEXT('x', '7')), { stream })),
      });
      assert.equal(r.status, 502);
      assert.match(r.headers.get('content-type'), /application\/json/);
      const j = await r.json();
      assert.equal(j.error.type, 'upstream_error');
      assert.match(j.error.message, new RegExp(`talkback-proxy: the model server at http://127.0.0.1:${downPort} did not answer`));
    }
    const m = await fetch(`${p.base}/v1/models`);
    assert.equal(m.status, 502);
    assert.ok(p.alive());
  } finally {
    assert.deepEqual(await p.stop(), { code: 0, signal: null });
  }
});

test('a request body over proxy_max_body gets 413', async () => {
  const upPort = upstream.server.address().port;
  const port = await freePort();
  const child = spawn(PROXY_BIN, ['--proxy-listen', `127.0.0.1:${port}`, '--proxy-upstream', `http://127.0.0.1:${upPort}`,
    '--proxy-max-body', '1K'], { env: { ...process.env, TALKBACK_CONFIG: '/dev/null' }, stdio: 'ignore' });
  try {
    let r;
    for (let i = 0; i < 100; i++) {
      r = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
        method: 'POST', headers: { 'Content-Type': 'application/json' }, body: 'x'.repeat(5000),
      }).catch(() => null);
      if (r) break;
      await sleep(20);
    }
    assert.equal(r.status, 413);
    assert.match((await r.json()).error.message, /proxy_max_body/);
  } finally {
    child.kill('SIGTERM');
  }
});
