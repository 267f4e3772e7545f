// long.test.mjs -- a five-minute command over SSE: a raw tools/call of
// `sleep 300` (timeout 330) with Accept: text/event-stream keeps its
// connection alive with ": keepalive" comments every sse_keepalive seconds
// (default 15) and ends with one "event: message" holding the result.
// It has a file of its own so it runs alongside the other test files.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { Talkback, withLogs, tid, sseMessages } from './harness.mjs';

const tb = new Talkback({ name: 'long' });

before(async () => {
  await tb.start();
});

after(async () => {
  await tb.cleanup();
});

test('sleep 300 over SSE: at least 15 keepalive comments, then the result event', { timeout: 420000 }, withLogs(tb, async () => {
  const conv = tb.chat('long');
  const id = tid();
  const t0 = Date.now();
  const res = await fetch(tb.url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'X-Conversation-Id': conv,
      'X-User-Id': 'user-long',
    },
    body: JSON.stringify({
      jsonrpc: '2.0', id, method: 'tools/call',
      params: { name: 'run', arguments: { command: 'sleep 300', timeout: 330 } },
    }),
    signal: AbortSignal.timeout(400000),
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^text\/event-stream/);

  // Read the stream as it comes, noting when each keepalive arrived.
  const decoder = new TextDecoder();
  let body = '';
  const keepaliveAt = [];
  for await (const chunk of res.body) {
    const text = decoder.decode(chunk, { stream: true });
    body += text;
    const n = (text.match(/^: keepalive$/gm) || []).length;
    for (let i = 0; i < n; i++) keepaliveAt.push(Date.now() - t0);
  }
  const elapsed = Date.now() - t0;

  const keepalives = (body.match(/^: keepalive\n\n/gm) || []).length;
  assert.ok(keepalives >= 15, `${keepalives} keepalive comments in ${elapsed} ms`);
  // They came spread over the wait, not in a burst at the end.
  assert.ok(keepaliveAt[0] < 30000, `first keepalive after ${keepaliveAt[0]} ms`);
  for (let i = 1; i < keepaliveAt.length; i++) {
    assert.ok(keepaliveAt[i] - keepaliveAt[i - 1] < 30000,
      `gap of ${keepaliveAt[i] - keepaliveAt[i - 1]} ms between keepalives ${i} and ${i + 1}`);
  }

  const blocks = body.split('\n\n').filter((b) => b.length > 0);
  const last = blocks[blocks.length - 1];
  assert.match(last, /^event: message\ndata: \{.*\}$/, `the last event:\n${last}`);
  assert.ok(blocks.slice(0, -1).every((b) => b === ': keepalive'), 'only keepalives before the result');
  const msgs = sseMessages(body);
  assert.equal(msgs.length, 1);
  assert.equal(msgs[0].id, id);
  assert.equal(msgs[0].result.isError, false, msgs[0].result.content[0].text);
  assert.equal(msgs[0].result.content[0].text, '$ sleep 300\n');
  assert.ok(elapsed >= 299000, `answered after ${elapsed} ms`);
}));
