// The web chat's outbox (shine-web/outbox.js) without a browser: pairs signed once with a real Ed25519 key, kept in
// a storage, shown pending, sent oldest first, resent with the same bytes after a lost answer, failed on a refusal.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { webcrypto } from 'node:crypto';

globalThis.crypto ??= webcrypto;
const { Outbox, TICKS, laterDelivery, tickOf } = await import('../src/main/resources/shine-web/outbox.js');
const { createStore } = await import('../src/main/resources/shine-web/state.js');
const { createKey } = await import('../src/main/resources/shine-web/keys.js');
const { Kind, b64decode, decodeBody, parseContainer, verifyContainer } =
  await import('../src/main/resources/shine-web/codec.js');

const identity = await createKey('alice');
const publicKey = await crypto.subtle.importKey('raw', b64decode(identity.publicKeyB64), 'Ed25519', true, ['verify']);

/** The outbox's storage as a Map (IndexedDB in the page). */
function memoryStorage() {
  const entries = new Map();
  return {
    entries,
    all: async () => [...entries.values()].map((e) => ({ ...e })),
    put: async (entry) => { entries.set(entry.baseKey, { ...entry }); },
    delete: async (baseKey) => { entries.delete(baseKey); },
  };
}

/** A protocol client that records each SendMessagePair and answers with what `answer(entry, n)` gives or throws. */
function fakeClient(answer = () => ({ deliveryState: 'accepted' })) {
  const sent = [];
  return {
    ready: true,
    sent,
    async sendPair(entry) {
      sent.push({ ...entry });
      return answer(entry, sent.length);
    },
  };
}

function refusal(status, code) {
  return Object.assign(new Error(`${status} ${code}: no`), { status, code });
}

function setUp({ client = null, storage = memoryStorage() } = {}) {
  const store = createStore();
  store.dispatch({ type: 'signedIn', login: 'alice' });
  store.dispatch({ type: 'chatOpened', peer: 'bob' });
  const session = { identity, client };
  const timers = [];
  const errors = [];
  const outbox = new Outbox({
    store, storage, session, onError: (text) => errors.push(text), setTimer: (f, ms) => timers.push({ f, ms }),
  });
  return { store, storage, session, timers, errors, outbox };
}

const shown = (store, baseKey) => store.state.messages.get(baseKey);
const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

test('offline, a message is signed once, kept and shown pending, and nothing is sent', async () => {
  const { store, storage, outbox } = setUp();
  const entry = await outbox.queue('bob', 1700000000000, 42n, 0, 'hello bob');
  assert.equal(entry.baseKey, 'alice|bob|1700000000000|42');
  assert.deepEqual([...storage.entries.keys()], [entry.baseKey]);
  assert.equal(tickOf(shown(store, entry.baseKey)), 'pending');
  assert.equal(store.state.conversations.get('bob').lastText, 'hello bob');
  for (const [blob, kind] of [[entry.incomingBlobB64, Kind.INCOMING], [entry.outgoingBlobB64, Kind.OUTGOING]]) {
    const bytes = b64decode(blob);
    const container = parseContainer(bytes);
    assert.deepEqual([container.kind, container.from, container.to, container.createdAtMs, container.nonce,
      container.revision, decodeBody(container.body)], [kind, 'alice', 'bob', 1700000000000, 42n, 0, 'hello bob']);
    assert.ok(await verifyContainer(bytes, publicKey), 'signed with the user\'s key');
  }
});

test('online, the kept pairs go oldest first and leave the outbox on the answer', async () => {
  const client = fakeClient((entry) => ({ deliveryState: entry.text === 'second' ? 'delivered' : 'accepted' }));
  const { store, storage, outbox, session } = setUp();
  const second = await outbox.queue('bob', 2000, 2n, 0, 'second');
  const first = await outbox.queue('bob', 1000, 1n, 0, 'first');
  session.client = client;
  await outbox.flush();
  assert.deepEqual(client.sent.map((e) => e.text), ['first', 'second']);
  assert.equal(storage.entries.size, 0);
  assert.equal(tickOf(shown(store, first.baseKey)), 'accepted');
  assert.equal(tickOf(shown(store, second.baseKey)), 'delivered');
});

test('a lost answer keeps the pair, tries again later and resends the very same bytes', async () => {
  let fail = true;
  const client = fakeClient(() => {
    if (fail) {
      throw refusal(0, 'TIMEOUT');
    }
    return { deliveryState: 'accepted' };
  });
  const { store, storage, outbox, timers } = setUp({ client });
  const entry = await outbox.queue('bob', 1000, 7n, 0, 'retry me');
  await settle();
  assert.equal(client.sent.length, 1);
  assert.equal(storage.entries.size, 1, 'kept');
  assert.equal(tickOf(shown(store, entry.baseKey)), 'pending');
  assert.equal(timers.length, 1);
  assert.equal(timers[0].ms, 2000);
  fail = false;
  await timers[0].f();
  assert.equal(client.sent.length, 2);
  assert.equal(client.sent[1].incomingBlobB64, client.sent[0].incomingBlobB64, 'not signed again');
  assert.equal(client.sent[1].outgoingBlobB64, client.sent[0].outgoingBlobB64);
  assert.equal(storage.entries.size, 0);
  assert.equal(tickOf(shown(store, entry.baseKey)), 'accepted');
});

test('429 and 5xx are tried again; another 4xx ends the message as failed and the rest still go', async () => {
  for (const status of [429, 503]) {
    const { storage, outbox, timers, session } = setUp();
    await outbox.queue('bob', 1000, 1n, 0, 'x');
    session.client = fakeClient(() => { throw refusal(status, 'BUSY'); });
    await outbox.flush();
    assert.equal(storage.entries.size, 1, `${status} keeps it`);
    assert.equal(timers.length, 1);
  }
  const { store, storage, outbox, errors, session, timers } = setUp();
  const skewed = await outbox.queue('bob', 1000, 1n, 0, 'too old');
  const fine = await outbox.queue('bob', 2000, 2n, 0, 'fine');
  session.client = fakeClient((entry) => {
    if (entry.text === 'too old') {
      throw refusal(400, 'CLOCK_SKEW');
    }
    return { deliveryState: 'accepted' };
  });
  await outbox.flush();
  assert.equal(storage.entries.size, 0);
  assert.equal(tickOf(shown(store, skewed.baseKey)), 'failed');
  assert.equal(TICKS[tickOf(shown(store, skewed.baseKey))].mark, '!');
  assert.equal(errors.length, 1);
  assert.match(errors[0], /^Not sent to bob: The server takes a new message only within 10 minutes of its own clock/);
  assert.equal(tickOf(shown(store, fine.baseKey)), 'accepted');
  assert.equal(timers.length, 0);
});

test('an edit is a pair of the next revision; its answer sets its tick', async () => {
  const { store, outbox, session } = setUp();
  const first = await outbox.queue('bob', 1000, 1n, 0, 'first');
  session.client = fakeClient(() => ({ deliveryState: 'delivered' }));
  await outbox.flush();
  store.dispatch({ type: 'readByPeer', baseKey: first.baseKey });
  assert.equal(tickOf(shown(store, first.baseKey)), 'read');
  session.client = fakeClient(() => ({ deliveryState: 'accepted' }));
  const edit = await outbox.queue('bob', 1000, 1n, 1, 'first, edited');
  assert.equal(edit.baseKey, first.baseKey);
  assert.equal(parseContainer(b64decode(edit.outgoingBlobB64)).revision, 1);
  await settle();
  const m = shown(store, first.baseKey);
  assert.deepEqual([m.text, m.revision, m.pending, m.deliveryState], ['first, edited', 1, false, 'accepted']);
});

test('one flush at a time, only the signed-in user\'s entries, nothing while offline', async () => {
  const storage = memoryStorage();
  await storage.put({ baseKey: 'carol|bob|1|1', owner: 'carol', peer: 'bob', createdAtMs: 1, nonce: '1', revision: 0,
    text: 'not alice\'s', incomingBlobB64: '', outgoingBlobB64: '' });
  const client = fakeClient();
  client.ready = false;
  const { outbox } = setUp({ client, storage });
  await outbox.queue('bob', 1000, 1n, 0, 'mine');
  await outbox.flush();
  assert.equal(client.sent.length, 0, 'not while offline');
  client.ready = true;
  await Promise.all([outbox.flush(), outbox.flush()]);
  assert.deepEqual(client.sent.map((e) => e.text), ['mine']);
  assert.deepEqual([...storage.entries.keys()], ['carol|bob|1|1']);
});

test('a message written while a send is on its way goes too, without another login or message', async () => {
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  const client = fakeClient(async (entry) => {
    if (entry.text === 'first') {
      await held; // the answer to the first is still on its way when the second is written
    }
    return { deliveryState: 'accepted' };
  });
  const { store, storage, outbox, timers } = setUp({ client });
  await outbox.queue('bob', 1000, 1n, 0, 'first');
  const second = await outbox.queue('bob', 2000, 2n, 0, 'second');
  assert.deepEqual(client.sent.map((e) => e.text), ['first']);
  release();
  await settle();
  assert.deepEqual(client.sent.map((e) => e.text), ['first', 'second']);
  assert.equal(storage.entries.size, 0);
  assert.equal(tickOf(shown(store, second.baseKey)), 'accepted');
  assert.equal(timers.length, 0);
});

test('after a reload the outbox shows what it still holds as pending', async () => {
  const { storage, outbox } = setUp();
  const entry = await outbox.queue('bob', 1000, 1n, 0, 'written offline');
  const reloaded = setUp({ storage });
  assert.equal(shown(reloaded.store, entry.baseKey), undefined);
  await reloaded.outbox.show();
  const m = shown(reloaded.store, entry.baseKey);
  assert.deepEqual([m.text, tickOf(m), m.nonce], ['written offline', 'pending', 1n]);
});

test('ticks: their marks and labels, and a delivery state that never goes back', () => {
  assert.deepEqual(Object.fromEntries(Object.entries(TICKS).map(([k, v]) => [k, v.mark])),
    { pending: '', accepted: '✓', delivered: '✓', read: '✓✓', failed: '!' });
  assert.equal(TICKS.accepted.label, 'Sent: accepted by your server');
  assert.equal(laterDelivery('accepted', 'delivered'), 'delivered');
  assert.equal(laterDelivery('delivered', 'accepted'), 'delivered');
  assert.equal(laterDelivery('failed', 'delivered'), 'failed');
  assert.equal(laterDelivery('accepted', undefined), 'accepted');
  assert.equal(tickOf({ pending: true, read: true, deliveryState: 'delivered' }), 'pending');
  assert.equal(tickOf({ pending: false, read: true, deliveryState: 'failed' }), 'read');
});
