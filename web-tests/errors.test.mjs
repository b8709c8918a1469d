// What the web chat says when something goes wrong (shine-web/errors.js) and what it says about a message
// (details.js, when.js), without a browser: plain sentences that say what to do, the server's real body limit checked
// before anything is signed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { webcrypto } from 'node:crypto';

globalThis.crypto ??= webcrypto;
const { MAX_BODY_BYTES, MAX_PLAIN_CHARS, badLogin, plain, tooLong } =
  await import('../src/main/resources/shine-web/errors.js');
const { encodeBody } = await import('../src/main/resources/shine-web/codec.js');
const { Outbox } = await import('../src/main/resources/shine-web/outbox.js');
const { createStore } = await import('../src/main/resources/shine-web/state.js');
const { createKey } = await import('../src/main/resources/shine-web/keys.js');
const { detailsOf } = await import('../src/main/resources/shine-web/details.js');
const { dayKey, dayLabel } = await import('../src/main/resources/shine-web/when.js');

test('the limit is the server\'s: a body of 64 KiB, 65,519 plain characters in the chat\'s JSON body', () => {
  assert.equal(MAX_BODY_BYTES, 65536); // DmCodec.DEFAULT_MAX_BODY, PROTOCOL §2
  assert.equal(MAX_PLAIN_CHARS, 65519);
  assert.equal(encodeBody('a'.repeat(MAX_PLAIN_CHARS)).length, MAX_BODY_BYTES);
  assert.equal(tooLong('a'.repeat(MAX_PLAIN_CHARS)), null);
  assert.equal(tooLong('a'.repeat(MAX_PLAIN_CHARS + 1)), 'This message is too long: 65,520 characters, the limit is '
    + '65,519 (64 KiB). Shorten it or split it into several messages.');
  assert.equal(tooLong('a'.repeat(70000)), 'This message is too long: 70,000 characters, the limit is 65,519 (64 KiB). '
    + 'Shorten it or split it into several messages.');
});

test('for letters that take more bytes the limit is given for that text', () => {
  const cyrillic = 'я'.repeat(40000); // 2 bytes each
  assert.match(tooLong(cyrillic), /^This message is too long: 40,000 characters, the limit is about 32,759 characters like these/);
  assert.equal(tooLong('я'.repeat(32759)), null);
  assert.notEqual(tooLong('я'.repeat(32760)), null);
  // an emoji is one character, not two UTF-16 units
  assert.match(tooLong('😀'.repeat(20000)), /^This message is too long: 20,000 characters, the limit is about 16,379/);
});

test('a text too long is refused by the outbox before anything is signed, kept or shown', async () => {
  const store = createStore();
  store.dispatch({ type: 'signedIn', login: 'alice' });
  store.dispatch({ type: 'chatOpened', peer: 'bob' });
  const kept = [];
  const outbox = new Outbox({
    store, session: { identity: await createKey('alice'), client: null },
    storage: { all: async () => kept, put: async (e) => kept.push(e), delete: async () => {} },
  });
  await assert.rejects(outbox.queue('bob', 1000, 1n, 0, 'x'.repeat(70000)), /^Error: This message is too long: 70,000/);
  assert.equal(kept.length, 0);
  assert.equal(store.state.messages.size, 0);
});

test('server codes become sentences that say what to do; the code is named only when the page has no words for it',
  () => {
    assert.equal(plain({ status: 404, code: 'USER_NOT_FOUND', message: 'x' }, { peer: 'bob' }),
      'bob is not registered on this server: check the login.');
    assert.match(plain({ status: 413, code: 'CONTAINER_TOO_LARGE' }), /too long .* 65,536 bytes.* Shorten it/);
    assert.match(plain({ status: 409, code: 'KEY_MISMATCH' }, { login: 'alice' }),
      /^The login alice is already taken on this server by another key\. Choose another login/);
    assert.match(plain({ status: 0, code: 'OFFLINE', message: 'not connected' }), /^You are offline/);
    assert.match(plain({ status: 429, code: 'SOMETHING_NEW' }), /busy/);
    assert.match(plain({ status: 503, code: 'SOMETHING_NEW' }), /Try again in a minute/);
    assert.equal(plain({ status: 400, code: 'SOMETHING_NEW', message: 'jargon' }), 'The server refused this '
      + '(SOMETHING_NEW). Reload the page and try again; if it keeps happening, tell the server\'s operator.');
    assert.equal(plain(new Error('A sentence of the page.')), 'A sentence of the page.');
    for (const code of ['CLOCK_SKEW', 'SELF_MESSAGE', 'RATE_LIMITED', 'STORAGE_UNAVAILABLE', 'INTERNAL', 'ROUTE_NAME',
      'ROUTE_CONFLICT', 'ROUTE_NOT_ALLOWED', 'INVITE_REQUIRED', 'NOT_ACCESS_SERVER', 'BAD_SIGNATURE', 'TIMEOUT']) {
      const sentence = plain({ status: 400, code, message: 'jargon' }, { login: 'alice', peer: 'bob' });
      assert.doesNotMatch(sentence, /jargon|[A-Z]{2,}_[A-Z]/, `${code}: no codes or server words`);
      assert.match(sentence, /\.$/, `${code}: a sentence`);
    }
    assert.equal(badLogin('bob'), null);
    assert.match(badLogin('Bob'), /^A login is 1 to 32 characters/);
  });

const SENT = { baseKey: 'alice|bob|1|1', messageKey: 'alice|bob|1|1|2', outgoing: true, createdAtMs: 1,
  revision: 0, deliveryState: 'accepted', read: false, pending: false, verified: true };
const rows = (message) => Object.fromEntries(detailsOf(message, { peer: 'bob', serverLogin: 's1', nowMs: 1 })
  .map(({ term, value }) => [term, value]));

test('a message\'s details say its state per the seed, step by step', () => {
  assert.match(rows({ ...SENT, pending: true })['Accepted by your server'], /^Not yet: it waits in this browser/);
  assert.equal(rows(SENT)['Accepted by your server'], 'Yes, by s1');
  assert.match(rows(SENT)['Delivered to bob'], /^Not yet: bob's servers did not answer/);
  assert.match(rows({ ...SENT, deliveryState: 'delivered' })['Delivered to bob'], /^Yes, to one of bob's servers/);
  assert.match(rows({ ...SENT, deliveryState: 'failed' })['Delivered to bob'], /^Failed: none of bob's servers/);
  assert.equal(rows(SENT)['Read by bob'], 'Not yet');
  assert.match(rows({ ...SENT, read: true })['Read by bob'], /^Yes \(when is not known/);
  assert.match(rows({ ...SENT, read: true, readAtMs: 1 })['Read by bob'], /^Yes, Today /);
  assert.match(rows({ ...SENT, read: true })['Delivered to bob'], /^Yes/, 'read means delivered');
  assert.equal(rows(SENT).Edited, undefined);
  assert.equal(rows({ ...SENT, revision: 2 }).Edited, 'Yes, 2 times');
  assert.equal(rows(SENT)['Message key'], 'alice|bob|1|1|2');
});

test('days: today, yesterday, else the date; two times are one day by the local calendar', () => {
  const now = new Date(2025, 2, 5, 9, 30).getTime();
  assert.equal(dayLabel(new Date(2025, 2, 5, 0, 1).getTime(), now), 'Today');
  assert.equal(dayLabel(new Date(2025, 2, 4, 23, 59).getTime(), now), 'Yesterday');
  assert.match(dayLabel(new Date(2025, 2, 3, 12).getTime(), now), /Monday/);
  assert.match(dayLabel(new Date(2024, 2, 3, 12).getTime(), now), /2024/);
  assert.equal(dayKey(new Date(2025, 0, 1, 0, 0).getTime()), dayKey(new Date(2025, 0, 1, 23, 59).getTime()));
  assert.notEqual(dayKey(new Date(2025, 0, 1, 23, 59).getTime()), dayKey(new Date(2025, 0, 2, 0, 0).getTime()));
});

test('an encrypted chat\'s limit is the sealed size: 132 + 4·⌈(n+16)/3⌉ bytes ≤ 64 KiB, 49,020 plain characters',
  async () => {
    const { MAX_SEALED_CHARS, sealedSize, tooLong: tooLongFor } = await import('../src/main/resources/shine-web/errors.js');
    assert.equal(MAX_SEALED_CHARS, 49020);
    assert.equal(sealedSize(17), 176);
    assert.equal(tooLongFor('x'.repeat(49020), true), null);
    assert.equal(tooLongFor('x'.repeat(49021), true), 'This message is too long: 49,021 characters, the limit is 49,020 '
      + '(64 KiB). Shorten it or split it into several messages.');
    assert.equal(tooLongFor('x'.repeat(49021)), null, 'plain, it fits');
  });
