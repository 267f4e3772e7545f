// hints-assert.mjs -- what the talk-back tests ask of a result's bracketed
// lines, written once for hints, hints2, hints3 and background.

import assert from 'node:assert/strict';

/** The lines talkback added: "[...]" lines other than "[exit code N]" (and,
 *  with skipTimeout, other than the timeout line). */
export function hintsOf(text, skipTimeout = false) {
  return text.split('\n').filter((l) => l.startsWith('[') && !/^\[exit code -?\d+\]$/.test(l)
    && !(skipTimeout && l.startsWith('[timed out after')));
}

/** Exactly one hint line, starting with prefix; returns it. */
export function oneHint(r, prefix, skipTimeout = false) {
  const h = hintsOf(r.text, skipTimeout);
  assert.equal(h.length, 1, `want one hint starting ${JSON.stringify(prefix)}, got:\n${r.text}`);
  assert.ok(h[0].startsWith(prefix), `want a hint starting ${JSON.stringify(prefix)}, got:\n${r.text}`);
  assert.ok(h[0].endsWith(']'), r.text);
  return h[0];
}

export function noHint(r, skipTimeout = false) {
  assert.deepEqual(hintsOf(r.text, skipTimeout), [], `want no hint, got:\n${r.text}`);
}

/** Nothing in the result sends the model to install something. */
export function noInstall(r) {
  assert.doesNotMatch(r.text, /apt-get install|apt-cache search|apt install|is not installed/, r.text);
}
