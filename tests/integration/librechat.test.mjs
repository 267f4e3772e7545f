// librechat.test.mjs -- what LibreChat really hands the model, for every
// kind of failure talkback can answer.
//
// LibreChat turns a tools/call result into the model's text with its own
// formatter (packages/api/src/mcp/parsers.ts, formatToolContent).  Read from
// its code, the behaviour that matters here is:
//   - text blocks are joined with a blank line between them;
//   - image blocks become image_url artifacts (data: URLs) beside the text
//     for the providers it knows, and JSON text for the others;
//   - resource blocks become "Resource Text/URI/MIME Type" lines; any other
//     block type is JSON text;
//   - an empty content falls back to structuredContent as JSON, else
//     "(No response)";
//   - isError is never read, and no progress token is ever sent.
// render() below does the same (written for this test, not copied), and
// every failure must be visible in the text alone.  A second instance with
// a short client_timeout shows that a call the client would cut off ends
// with talkback's own text first.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import Ajv from 'ajv';

import { Talkback, withLogs, connect, call } from './harness.mjs';

// ---- LibreChat's formatter, reimplemented -------------------------------------------------

const KNOWN_PROVIDERS = new Set(['google', 'anthropic', 'openai', 'azureopenai', 'openrouter', 'xai',
  'deepseek', 'ollama', 'bedrock']);

/** One block as LibreChat writes it into the text; null for an image a
 *  known provider gets as an artifact instead. */
function blockText(block, known, artifacts) {
  if (block.type === 'text') return block.text;
  if (block.type === 'image' && known) {
    const url = /^https?:\/\//.test(block.data) ? block.data : `data:${block.mimeType};base64,${block.data}`;
    artifacts.push({ type: 'image_url', image_url: { url } });
    return null;
  }
  if (block.type === 'resource') {
    const r = block.resource ?? {};
    const lines = [];
    if (r.text) lines.push(known ? `Resource Text: ${r.text}` : r.text);
    if (r.uri) lines.push(known ? `Resource URI: ${r.uri}` : `Resource URI: ${r.uri}`);
    if (r.mimeType) lines.push(known ? `Resource MIME Type: ${r.mimeType}` : `Type: ${r.mimeType}`);
    return lines.length ? lines.join('\n') : null;
  }
  return JSON.stringify(block, null, 2);
}

/** [text the model reads, artifacts]: what LibreChat makes of a result. */
export function render(result, provider = 'openai') {
  const known = KNOWN_PROVIDERS.has(provider);
  const content = result?.content ?? [];
  if (content.length === 0) {
    const s = result?.structuredContent;
    return [s != null && typeof s === 'object' ? JSON.stringify(s, null, 2) : '(No response)', undefined];
  }
  const artifacts = [];
  const parts = content.map((b) => blockText(b, known, artifacts)).filter((t) => t);
  const text = parts.join('\n\n');
  return [text || (artifacts.length ? '' : '(No response)'), artifacts.length ? { content: artifacts } : undefined];
}

// ---- the formatter itself, on made-up results ---------------------------------------------

test('the reimplemented formatter: joined text, images as artifacts, isError ignored', () => {
  const r = { isError: true, content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] };
  assert.deepEqual(render(r), ['a\n\nb', undefined]);
  assert.deepEqual(render({ ...r, isError: false }), render(r)); // isError changes nothing
  const img = { content: [{ type: 'text', text: 'plot' }, { type: 'image', mimeType: 'image/png', data: 'AAAA' }] };
  assert.deepEqual(render(img), ['plot', { content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }]);
  assert.match(render(img, 'custom')[0], /^plot\n\n\{\n {2}"type": "image"/);
  assert.deepEqual(render({ content: [] }), ['(No response)', undefined]);
  assert.deepEqual(render({ content: [], structuredContent: { a: 1 } }), ['{\n  "a": 1\n}', undefined]);
});

// ---- every failure, through talkback ------------------------------------------------------

const tb = new Talkback({ name: 'librechat', judges: 1 });
// A client that waits 60 s per call: run's timeouts must fit below it.
const SHORT = 60;
const short = new Talkback({ name: 'librechat-short', env: { TALKBACK_CLIENT_TIMEOUT: `${SHORT}s` } });
const clients = [];

before(async () => {
  await Promise.all([tb.start(), short.start()]);
});

after(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await Promise.all([tb.cleanup(), short.cleanup()]);
});

async function chat(t, label) {
  const c = await connect(t, { conv: t.chat(label), user: 'user-librechat' });
  clients.push(c);
  return c;
}

/** What a failure must show in the text alone. */
const FAILED = /\[exit code -?\d+\]|\[timed out after|Nothing ran|\bFAIL\b|Don't answer yet|\[talkback/;

/** The call's result as LibreChat renders it for a known and an unknown
 *  provider: the same text, with every block a text block. */
function rendered(r) {
  const [text, artifacts] = render(r.result, 'openai');
  const [text2] = render(r.result, 'custom');
  assert.equal(text, text2);
  assert.equal(artifacts, undefined);
  assert.ok(r.result.content.every((b) => b.type === 'text'), JSON.stringify(r.result));
  return text;
}

test('every failing call shows its failure in the text LibreChat gives the model', withLogs(tb, async () => {
  const c = await chat(tb, 'failures');
  const cases = [
    ['run', { command: 'ls /nope' }, /\[exit code 2\]/],
    ['run', { command: 'sleep 5', timeout: 1 }, /\[timed out after 1 s/],
    ['run', { command: 'curl -s http://localhost:3000/' }, /\[exit code 7\]\n\[curl could not connect/],
    ['run', { command: 'systemctl start nginx' }, /systemctl cannot work here/],
    ['run', {}, /\[talkback: argument `command` is required.*Nothing ran\.\]/],
    ['run', { cmd: 'ls' }, /it is called `command`\. Nothing ran/],
    ['run', { command: 'ls', timeout: 100000 }, /must be between 1 and \d+ seconds.*Nothing ran/],
    ['write_file', { content: 'x' }, /argument `path` is required/],
    ['write_file', { filename: 'a.py', content: 'x' }, /it is called `path`/],
    ['run_code', { language: 'python', code: 'print(int(input()) + 1)', input: '1\n', expected: '3\n' }, /FAIL/],
    ['run_code', { language: 'python', code: 'print(int(input()) +)', input: '1\n', expected: '2\n' }, /SyntaxError/],
    ['run_code', { language: 'python', code: 'print(1)', stdin: '1\n' }, /it is called `input`\. Nothing ran/],
    ['run_code', { language: 'brainfuck', code: 'x' }, /brainfuck/i],
  ];
  for (const [name, args, want] of cases) {
    const r = await call(c, name, args, { timeout: 180000 });
    const text = rendered(r);
    assert.equal(r.isError, true, `${name} ${JSON.stringify(args)} should fail:\n${text}`);
    assert.match(text, want, `${name} ${JSON.stringify(args)}`);
    assert.match(text, FAILED, `${name} ${JSON.stringify(args)}: no failure visible without isError:\n${text}`);
  }
  // A success reads as one: no failure marker at all.
  const ok = await call(c, 'run', { command: 'echo fine' });
  assert.equal(rendered(ok), '$ echo fine\nfine\n');
  const pass = await call(c, 'run_code', { language: 'python', code: 'print(int(input()) + 1)', input: '1\n', expected: '2\n' },
    { timeout: 180000 });
  assert.match(rendered(pass), /^PASS/m);
  assert.doesNotMatch(rendered(pass), /\[exit code|Nothing ran|\bFAIL\b/);
}));

test('a call without a conversation id: talkback\'s refusal is text too', withLogs(tb, async () => {
  // LibreChat itself refuses a chat request without one before it reaches
  // talkback; a client that sends an empty header gets this.
  const res = await fetch(tb.url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-Conversation-Id': '' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'run', arguments: { command: 'echo hi' } } }),
  });
  assert.equal(res.status, 200);
  const r = (await res.json()).result;
  const text = rendered({ result: r });
  assert.match(text, /talkback refused this call: the X-Conversation-Id header is missing or empty/);
  assert.match(text, /Nothing ran\.\]$/);
}));

// ---- LibreChat's schema check, before a call is sent ------------------------------------

// LibreChat's agents check every call against the advertised inputSchema
// before sending it (LangChain's tool(): the JSON schema validated as it
// is, or LibreChat's own JSON-schema-to-zod conversion, whose objects drop
// names they do not list unless additionalProperties says otherwise), and
// a call that does not fit never reaches the server: the model reads this
// text and nothing else.
const SCHEMA_ERROR = 'Error: Received tool input did not match expected schema\n Please fix your mistakes.';
const ajv = new Ajv({ strict: false, allErrors: false });

/** The text the model reads for a call: LibreChat's schema error, or
 *  talkback's result as LibreChat renders it; and whether it was sent. */
async function throughLibreChat(c, tool, args) {
  if (!ajv.validate(tool.inputSchema, args)) return { sent: false, text: SCHEMA_ERROR };
  // Names the schema does not list reach the server only with
  // additionalProperties (LibreChat's zod conversion strips them otherwise).
  const listed = Object.keys(tool.inputSchema.properties ?? {});
  const kept = tool.inputSchema.additionalProperties === true ? args
    : Object.fromEntries(Object.entries(args).filter(([k]) => listed.includes(k)));
  const r = await call(c, tool.name, kept, { timeout: 180000 });
  return { sent: true, text: rendered(r) };
}

/** The largest timeout a property's description states ("at most N."). */
function advertisedMax(prop) {
  assert.equal(prop.maximum, undefined, 'no maximum a client would refuse a call on');
  const m = /at most (\d+)\./.exec(prop.description);
  assert.ok(m, prop.description);
  return Number(m[1]);
}

test('LibreChat\'s schema check lets every mistake through to talkback\'s own words', withLogs(tb, async () => {
  const c = await chat(tb, 'schema');
  const { tools } = await c.listTools();
  const tool = (n) => tools.find((t) => t.name === n);
  const max = advertisedMax(tool('run').inputSchema.properties.timeout);
  const cases = [
    // a wrong name
    ['run', { cmd: 'ls' }, /\[talkback: run has no argument `cmd`: it is called `command`\. Nothing ran/],
    ['write_file', { filename: 'a.py', content: 'x' }, /it is called `path`/],
    ['run_code', { language: 'python', code: 'print(1)', stdin: '1\n' }, /it is called `input`\. Nothing ran/],
    // a missing argument
    ['run', {}, /\[talkback: argument `command` is required and must be a string\. Nothing ran\.\]/],
    ['write_file', { path: 'a.txt' }, /argument `content` is required/],
    ['run_code', { language: 'python', code: 'print(1)', tests: [{ input: '1\n' }] }, /item 1 of `tests` has no `expected`/],
    // a wrong type
    ['run', { command: ['ls', '-la'] }, /argument `command` must be a string, not an array\. Nothing ran/],
    ['run', { command: 'ls', timeout: '30' }, /argument `timeout` must be an integer, not a string\. Nothing ran/],
    // a timeout too long, and one too short
    ['run', { command: 'true', timeout: max + 1000 }, new RegExp(`argument \`timeout\` must be between 1 and ${max} seconds.*Nothing ran`)],
    ['run', { command: 'true', timeout: 0 }, /argument `timeout` must be between 1 and/],
  ];
  for (const [name, args, want] of cases) {
    const r = await throughLibreChat(c, tool(name), args);
    assert.ok(r.sent, `${name} ${JSON.stringify(args)}: LibreChat would refuse it with its schema error`);
    assert.match(r.text, want, `${name} ${JSON.stringify(args)}: ${r.text}`);
    assert.doesNotMatch(r.text, /did not match expected schema/);
  }
  // The check is real: the same calls against a schema with `required` and
  // a `maximum`, as talkback advertised before, never reach talkback.
  const strict = structuredClone(tool('run').inputSchema);
  strict.required = ['command'];
  strict.properties.command.type = 'string';
  strict.properties.timeout = { ...strict.properties.timeout, type: 'integer', maximum: max };
  delete strict.additionalProperties;
  for (const args of [{ cmd: 'ls' }, {}, { command: ['ls'] }, { command: 'true', timeout: max + 1 }]) {
    const r = await throughLibreChat(c, { ...tool('run'), inputSchema: strict }, args);
    assert.deepEqual(r, { sent: false, text: SCHEMA_ERROR }, JSON.stringify(args));
  }
  // Right calls pass both and run.
  const ok = await throughLibreChat(c, tool('run'), { command: 'echo fine', timeout: 10 });
  assert.deepEqual(ok, { sent: true, text: '$ echo fine\nfine\n' });
  assert.ok(ajv.validate(strict, { command: 'echo fine', timeout: 10 }));
}));

// ---- the client's own timeout --------------------------------------------------------------

test('client_timeout: run takes long timeouts as jobs, run_code stays below it, and talkback\'s text comes first', withLogs(short, async () => {
  const c = await chat(short, 'short');
  const { tools } = await c.listTools();
  for (const t of tools) {
    const to = t.inputSchema.properties?.timeout;
    if (!to) continue;
    const max = advertisedMax(to);
    // run_code's programs end within the call; run's go on as jobs past it.
    if (t.name === 'run') assert.equal(max, 1800, `${t.name}: at most ${max}`);
    else assert.ok(max >= 1 && max < SHORT, `${t.name}: at most ${max}`);
    assert.ok(to.default >= 1 && to.default <= max && to.default < SHORT, `${t.name}: default ${to.default}`);
  }
  const run = { maximum: advertisedMax(tools.find((t) => t.name === 'run').inputSchema.properties.timeout) };
  // The longest run there is, over-running: talkback answers itself, before
  // the client (waiting SHORT s, like LibreChat's timeout) would throw
  // "Request timed out", and the command goes on as a job.
  const r = await call(c, 'run', { command: 'echo begun; sleep 600', timeout: run.maximum },
    { timeout: SHORT * 1000 });
  const text = rendered(r);
  assert.match(text, new RegExp(`^\\$ echo begun; sleep 600\\nbegun\\n\\[Still running after \\d+ s, so this call answers now: the command goes on in the background as job (\\d+), and is stopped at its timeout of ${run.maximum} s like any command\\.`));
  const over = await call(c, 'run', { command: 'true', timeout: run.maximum + 1 });
  assert.match(rendered(over), /must be between 1 and 1800 seconds \(default \d+\)\. Call run again with a timeout in that range: a command still running when the call must answer goes on as a job\. Nothing ran\.\]$/);
}));
