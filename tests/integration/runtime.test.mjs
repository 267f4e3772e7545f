// runtime.test.mjs -- the `runtime` setting (the gVisor switch): the sandbox
// manager puts HostConfig.Runtime into every new sandbox when it is set.
//
// gVisor itself is not installed here, so this checks the failure a wrong
// setting gives: with TALKBACK_RUNTIME=no-such-runtime, a run call comes
// back as an isError result that names the missing runtime and says that
// nothing ran, and no container is left behind.  docs/deployment.md tells how
// to register runsc with Docker.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { Talkback, withLogs, post, containersOf } from './harness.mjs';

const tb = new Talkback({ name: 'runtime', sandboxEnv: { TALKBACK_RUNTIME: 'no-such-runtime' } });

before(async () => {
  await tb.start();
});

after(async () => {
  await tb.cleanup();
});

test('runtime: a runtime Docker does not know gives an isError result that names it', withLogs(tb, async () => {
  const conv = tb.chat('rt');
  const r = await post(tb, {
    jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'run', arguments: { command: 'echo hi' } },
  }, { headers: { 'X-Conversation-Id': conv }, accept: 'application/json' });
  assert.equal(r.status, 200, r.body);
  const res = r.json.result;
  assert.equal(res.isError, true, r.body);
  const text = res.content.map((c) => c.text).join('\n');
  assert.match(text, /runtime/i, text);
  assert.match(text, /no-such-runtime/, text);
  assert.match(text, /nothing ran/, text);
  assert.doesNotMatch(text, /^\$ echo hi\nhi/, 'the command did not run');
  assert.deepEqual(await containersOf(conv), [], 'no container was left behind');
}));
