// snippet.test.mjs -- the README's LibreChat snippet, taken literally.
//
// The yaml block under "## LibreChat" in README.md is read from the file
// (not copied here), its placeholders filled in as LibreChat fills them
// ({{LIBRECHAT_BODY_CONVERSATIONID}}, {{LIBRECHAT_USER_ID}}, ${ENV}), and a
// token-protected talkback is driven the way LibreChat's own client code
// drives it: the v1 SDK client (@modelcontextprotocol/sdk, which LibreChat
// pins) with those headers -- initialize, tools/list, tools/call -- and the
// answers must be the legacy era's, untouched by the 2026-07-28 era.  Then
// what `requiresOAuth: false` is there for: without it LibreChat probes a
// new server with a bare request that has none of the configured headers,
// and a 401 carrying `WWW-Authenticate: Bearer` makes it treat the server as
// an OAuth one; a token-protected talkback answers exactly that.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { Talkback, withLogs, ROOT, joinText } from './harness.mjs';

const TOKEN = 'it-snippet-token-0123456789abcdef';
const tb = new Talkback({ name: 'snippet', gatewayEnv: { TALKBACK_AUTH_TOKEN: TOKEN } });

/** The sandbox entry of the README's LibreChat yaml: {type, url, requiresOAuth, timeout, headers}. */
function readmeSnippet() {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## LibreChat'));
  const m = /```yaml\n([\s\S]*?)```/.exec(section);
  assert.ok(m, 'README.md has a yaml block under ## LibreChat');
  const entry = { headers: {} };
  let inHeaders = false;
  for (const raw of m[1].split('\n')) {
    const line = raw.replace(/\s+#.*$/, '');
    const kv = /^(\s*)([A-Za-z-]+):\s*(.*)$/.exec(line);
    if (!kv) continue;
    const [, indent, key, value] = kv;
    const v = value.replace(/^"(.*)"$/, '$1');
    if (inHeaders && indent.length >= 6) {
      entry.headers[key] = v;
      continue;
    }
    inHeaders = key === 'headers';
    if (!inHeaders && indent.length === 4) entry[key] = v;
  }
  return entry;
}

/** Fill the placeholders as LibreChat does. */
function fill(value, { conv, user, env }) {
  return value
    .replaceAll('{{LIBRECHAT_BODY_CONVERSATIONID}}', conv)
    .replaceAll('{{LIBRECHAT_USER_ID}}', user)
    .replace(/\$\{([A-Z_]+)\}/g, (_, k) => env[k] ?? '');
}

before(async () => {
  await tb.start();
});

after(async () => {
  await tb.cleanup();
});

test('the README snippet names what LibreChat needs', () => {
  const s = readmeSnippet();
  assert.equal(s.type, 'streamable-http');
  assert.equal(s.requiresOAuth, 'false');
  assert.match(s.url, /\/mcp$/);
  assert.ok(Number(s.timeout) > 0);
  assert.equal(s.headers['X-Conversation-Id'], '{{LIBRECHAT_BODY_CONVERSATIONID}}');
  assert.equal(s.headers['X-User-Id'], '{{LIBRECHAT_USER_ID}}');
  assert.match(s.headers.Authorization, /^Bearer \$\{TALKBACK_TOKEN\}$/);
});

test('LibreChat\'s client with the snippet\'s headers: the legacy era, as before', withLogs(tb, async () => {
  const s = readmeSnippet();
  const ctx = { conv: tb.chat('snippet'), user: 'user-snippet', env: { TALKBACK_TOKEN: TOKEN } };
  const headers = Object.fromEntries(Object.entries(s.headers).map(([k, v]) => [k, fill(v, ctx)]));
  const client = new Client({ name: 'librechat', version: '0.8.8' });
  const transport = new StreamableHTTPClientTransport(new URL(tb.url), { requestInit: { headers } });
  await client.connect(transport);
  try {
    assert.equal(transport.protocolVersion, '2025-11-25');
    const { tools } = await client.listTools();
    assert.equal(tools.length, 4);
    const r = await client.callTool({ name: 'run', arguments: { command: 'echo from librechat' } }, undefined,
      { timeout: Number(s.timeout) });
    assert.equal(joinText(r), '$ echo from librechat\nfrom librechat\n');
    assert.deepEqual(Object.keys(r).sort(), ['content', 'isError'], 'no field of the 2026-07-28 era');
  } finally {
    await client.close();
  }
}));

test('why requiresOAuth: false: LibreChat\'s bare probe gets a 401 with WWW-Authenticate: Bearer', withLogs(tb, async () => {
  // What LibreChat sends to detect OAuth: HEAD, then a bare POST {}, with none of the configured headers.
  const head = await fetch(tb.url, { method: 'HEAD' });
  await head.arrayBuffer();
  const probe = await fetch(tb.url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
  await probe.arrayBuffer();
  assert.equal(probe.status, 401);
  assert.match(probe.headers.get('www-authenticate') ?? '', /^Bearer\b/);
}));
