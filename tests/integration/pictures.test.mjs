// pictures.test.mjs -- what a program draws comes back with its result.
//
// Real sandboxes (the agent's fast path), the official MCP client: image
// files a run or run_code call writes under /work come back after the text
// as MCP image content blocks, each named in the text with its path, pixel
// size and bytes; unchanged files are not sent again; a call that drew
// nothing has no image block; images over image_max_bytes or past
// image_max_count are named and not embedded.  Also: plt.show() with no
// display, a run_code verdict with its plot, a render the way LibreChat's
// formatter does it, a recording that replays with its images, and the
// Docker exec path (no agent), which finds no images and says nothing.
//
// Needs a sandbox image with matplotlib and Pillow (deploy/image); to try
// one built under another tag: TALKBACK_TEST_IMAGE=talkback-sandbox:TAG.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';

import { Talkback, withLogs, connect, call, run, runOk, BIN } from './harness.mjs';

const MAX_BYTES = 4 * 1024 * 1024;   // image_max_bytes' default
const MAX_COUNT = 3;
const tb = new Talkback({
  name: 'pictures',
  env: { TALKBACK_IMAGE_MAX_COUNT: String(MAX_COUNT) },
  judges: 1,
});
// A sandbox manager without the agent: commands run through Docker exec.
const plain = new Talkback({ name: 'pictures-exec', sandboxEnv: { TALKBACK_AGENT_PATH: '/nonexistent' } });
const rec = path.join(tb.dir, 'pictures.rec');
const USER = 'user-pictures';
let c;

before(async () => {
  tb.gatewayEnv = { TALKBACK_RECORD: rec };
  await tb.start();
  c = await connect(tb, { conv: tb.chat('draw'), user: USER });
  await runOk(c, 'true');
});

after(async () => {
  await c?.close().catch(() => {});
  await tb.cleanup();
  await plain.cleanup();
});

/** The image blocks of a result. */
const images = (r) => (r.result.content || []).filter((b) => b.type === 'image');

/** Width and height from a PNG's, GIF's or JPEG's bytes (the test's own reading). */
function pixelSize(buf) {
  if (buf.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) {
    return [buf.readUInt32BE(16), buf.readUInt32BE(20)];
  }
  if (buf.subarray(0, 3).toString('latin1') === 'GIF') return [buf.readUInt16LE(6), buf.readUInt16LE(8)];
  if (buf[0] === 0xff && buf[1] === 0xd8) {
    let p = 2;
    while (p + 9 < buf.length) {
      const mk = buf[p + 1];
      if (mk >= 0xc0 && mk <= 0xcf && mk !== 0xc4 && mk !== 0xc8 && mk !== 0xcc) {
        return [buf.readUInt16BE(p + 7), buf.readUInt16BE(p + 5)];
      }
      p += 2 + buf.readUInt16BE(p + 2);
    }
  }
  if (buf.subarray(0, 4).toString('latin1') === 'RIFF' && buf.subarray(12, 16).toString('latin1') === 'VP8 ') {
    return [buf.readUInt16LE(26) & 0x3fff, buf.readUInt16LE(28) & 0x3fff];
  }
  return null;
}

/** A python3 one-liner that saves a WxH image with Pillow. */
const pil = (file, w, h, fmt = '', extra = '') =>
  `python3 -c "from PIL import Image; Image.new('RGB', (${w}, ${h}), (200, 30, 30)).save('${file}'${fmt ? `, '${fmt}'` : ''}${extra})"`;

/** LibreChat's formatToolContent (packages/api/src/mcp/parsers.ts) for a
 *  provider it shows images for: the text blocks joined, each image block an
 *  image_url artifact with a data URL. */
function librechatRender(result) {
  const texts = [];
  const artifacts = [];
  for (const b of result.content || []) {
    if (b.type === 'text') texts.push(b.text);
    else if (b.type === 'image') {
      artifacts.push({ type: 'image_url', image_url: { url: `data:${b.mimeType};base64,${b.data}` } });
    } else texts.push(JSON.stringify(b));
  }
  return { text: texts.join('\n\n'), artifacts };
}

test('a saved PNG comes back after the text, with its path, pixel size and bytes', withLogs(tb, async () => {
  const cmd = pil('a.png', 123, 45);
  const r = await run(c, cmd);
  assert.equal(r.isError, false, r.text);
  assert.equal(r.result.content[0].type, 'text');
  const im = images(r);
  assert.equal(im.length, 1, r.text);
  assert.equal(r.result.content.length, 2, 'one text block, then the image');
  assert.equal(im[0].mimeType, 'image/png');
  const bytes = Buffer.from(im[0].data, 'base64');
  assert.deepEqual(pixelSize(bytes), [123, 45]);
  assert.ok(r.text.startsWith(`$ ${cmd}\n`), r.text);
  assert.ok(r.text.includes(`[image /work/a.png: 123x45 PNG, ${bytes.length} bytes, shown below]`), r.text);
}));

test('a file that did not change is not sent again', withLogs(tb, async () => {
  const r = await run(c, 'ls -l a.png && cat a.png > /dev/null && touch a.png');
  assert.equal(r.isError, false, r.text);
  assert.equal(images(r).length, 0, r.text);
  assert.doesNotMatch(r.text, /\[image /);
  // Written again (new content): back again.
  const again = await run(c, pil('a.png', 60, 30));
  assert.equal(images(again).length, 1, again.text);
  assert.deepEqual(pixelSize(Buffer.from(images(again)[0].data, 'base64')), [60, 30]);
}));

test('a call that draws nothing has no image block', withLogs(tb, async () => {
  const r = await run(c, 'echo no pictures here > notes.txt; cat notes.txt');
  assert.deepEqual(r.result.content.map((b) => b.type), ['text']);
  assert.doesNotMatch(r.text, /\[image /);
}));

test('plt.show() with no display brings the figure back', withLogs(tb, async () => {
  const cmd = 'python3 -c "import matplotlib.pyplot as plt; plt.figure(figsize=(4, 3), dpi=50); plt.plot([1, 3, 2]); plt.show()"';
  const r = await run(c, cmd);
  assert.equal(r.isError, false, r.text);
  const im = images(r);
  assert.equal(im.length, 1, r.text);
  assert.deepEqual(pixelSize(Buffer.from(im[0].data, 'base64')), [200, 150]);
  assert.match(r.text, /\[image \/work\/figure-1\.png: 200x150 PNG, \d+ bytes, shown below\]/);
}));

test('savefig into a new subfolder comes back', withLogs(tb, async () => {
  const cmd = 'mkdir -p out/deep/er && python3 -c "import matplotlib.pyplot as plt; plt.figure(figsize=(2, 2), dpi=40); plt.bar([1, 2], [3, 4]); plt.savefig(\'out/deep/er/bars.png\')"';
  const r = await run(c, cmd);
  const im = images(r);
  assert.equal(im.length, 1, r.text);
  assert.deepEqual(pixelSize(Buffer.from(im[0].data, 'base64')), [80, 80]);
  assert.match(r.text, /\[image \/work\/out\/deep\/er\/bars\.png: 80x80 PNG, \d+ bytes, shown below\]/);
}));

test('a run_code program\'s plot comes back with its verdict', withLogs(tb, async () => {
  const code = [
    'import matplotlib.pyplot as plt',
    'xs = list(range(10))',
    'plt.figure(figsize=(3, 2), dpi=50)',
    'plt.plot(xs, [x * x for x in xs])',
    'plt.savefig("squares.png")',
    'print(sum(xs))',
  ].join('\n');
  const r = await call(c, 'run_code', { language: 'python', code, expected: '45\n' });
  assert.equal(r.isError, false, r.text);
  assert.match(r.text, /PASS/);
  assert.match(r.text, /\[image \/work\/squares\.png: 150x100 PNG, \d+ bytes, shown below\]/);
  // The verdict stays the last line (the reply proxy reads it there).
  assert.match(r.text, /\]\n(?:.*\n)*PASS: [^\n]*\n?$/, r.text);
  const im = images(r);
  assert.equal(im.length, 1, r.text);
  assert.deepEqual(pixelSize(Buffer.from(im[0].data, 'base64')), [150, 100]);
}));

/** A python3 one-liner that saves a WxH image of random pixels (it does not compress). */
const noise = (file, w, h) =>
  `python3 -c "import os; from PIL import Image; Image.frombytes('RGB', (${w}, ${h}), os.urandom(${w * h * 3})).save('${file}')"`;

test('a 3 MB image comes back whole, byte for byte', withLogs(tb, async () => {
  const r = await run(c, `${noise('big.png', 1000, 1000)} && sha256sum big.png`);
  const im = images(r);
  assert.equal(im.length, 1, r.text);
  const bytes = Buffer.from(im[0].data, 'base64');
  assert.ok(bytes.length > 3000000, `${bytes.length} bytes`);
  assert.deepEqual(pixelSize(bytes), [1000, 1000]);
  const sum = crypto.createHash('sha256').update(bytes).digest('hex');
  assert.ok(r.text.includes(`${sum}  big.png\n`), r.text.slice(0, 400));
  assert.ok(r.text.includes(`[image /work/big.png: 1000x1000 PNG, ${bytes.length} bytes, shown below]`));
}));

test('an image over image_max_bytes is named, not embedded, with how to make it smaller', withLogs(tb, async () => {
  const cmd = noise('noise.png', 1300, 1300);
  const r = await run(c, cmd);
  assert.equal(images(r).length, 0, r.text);
  assert.match(r.text, new RegExp(`\\[image /work/noise\\.png: 1300x1300 PNG, \\d+ bytes: too big to show \\(over ${MAX_BYTES} bytes\\)\\. To see it, save it smaller: a lower dpi or figure size`));
}));

test('many images at once: the first image_max_count come back in the order written, the rest are named', withLogs(tb, async () => {
  const cmd = [
    pil('many/1.png', 11, 12), pil('many/2.jpg', 21, 22), pil('many/3.gif', 31, 32),
    pil('many/4.webp', 41, 42), pil('many/5.png', 51, 52),
  ].join(' && ');
  const r = await run(c, `mkdir -p many && ${cmd}`);
  const im = images(r);
  assert.equal(im.length, MAX_COUNT, r.text);
  assert.deepEqual(im.map((b) => b.mimeType), ['image/png', 'image/jpeg', 'image/gif']);
  assert.deepEqual(im.map((b) => pixelSize(Buffer.from(b.data, 'base64'))), [[11, 12], [21, 22], [31, 32]]);
  assert.match(r.text, /\[image \/work\/many\/1\.png: 11x12 PNG, \d+ bytes, shown below\]\n\[image \/work\/many\/2\.jpg: 21x22 JPEG/);
  assert.match(r.text, new RegExp(`\\[image /work/many/4\\.webp: 41x42 WebP, \\d+ bytes: not shown, only ${MAX_COUNT} images are shown per call\\.\\]`));
  assert.match(r.text, /\[image \/work\/many\/5\.png: 51x52 PNG, \d+ bytes: not shown, only/);
}));

test('the kind comes from the bytes, not the name', withLogs(tb, async () => {
  const r = await run(c, `${pil('looks-like.txt', 7, 8, 'PNG')} && printf 'not a picture' > fake.png`);
  const im = images(r);
  assert.equal(im.length, 1, r.text);
  assert.match(r.text, /\[image \/work\/looks-like\.txt: 7x8 PNG/);
  assert.doesNotMatch(r.text, /\[image \/work\/fake/);
}));

test('rendered the way LibreChat\'s formatter does, the text still starts with "$ command" and the images are artifacts', withLogs(tb, async () => {
  const cmd = pil('render.png', 32, 16);
  const r = await run(c, cmd);
  const shown = librechatRender(r.result);
  assert.ok(shown.text.startsWith(`$ ${cmd}\n`), shown.text);
  assert.equal(shown.artifacts.length, 1);
  assert.match(shown.artifacts[0].image_url.url, /^data:image\/png;base64,iVBORw0KGgo/);
  assert.ok(!shown.text.includes('iVBORw0KGgo'), 'no base64 in the text the model reads');
}));

test('the recording carries the images, and replays with them the same', withLogs(tb, async () => {
  const conv = tb.chat('replay');
  const rc = await connect(tb, { conv, user: USER });
  try {
    const r = await run(rc, pil('replayed.png', 9, 9));
    assert.equal(images(r).length, 1, r.text);
    await call(rc, 'reset', {});
  } finally {
    await rc.close();
  }
  await tb.stopGateway();
  const out = await new Promise((resolve) => {
    execFile(BIN.replay, [rec], { env: tb.env({}), timeout: 180000, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ code: err ? err.code : 0, stdout, stderr }));
  });
  // The whole recording replays; this chat's run must match, images included.
  assert.match(out.stdout, /replayed \d+ requests/, out.stdout + out.stderr);
  assert.doesNotMatch(out.stdout, new RegExp(`DIFFERS: request \\d+: sandbox run \\(conversation ${conv}\\)`), out.stdout);
}));

test('through the Docker exec path (no agent) no images are found: the result is as before', withLogs(plain, async () => {
  await plain.start();
  const pc = await connect(plain, { conv: plain.chat('exec'), user: USER });
  try {
    const cmd = pil('exec.png', 5, 5);
    const r = await run(pc, cmd);
    assert.equal(r.isError, false, r.text);
    assert.deepEqual(r.result.content.map((b) => b.type), ['text']);
    // (a program that printed nothing may be told so)
    assert.match(r.text, new RegExp(`^\\$ ${cmd.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n(\\[No output: [^\\n]*\\]\\n)?$`));
  } finally {
    await pc.close();
  }
}));
