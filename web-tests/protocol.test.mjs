// The web chat's protocol client (shine-web/protocol.js) without a browser or a server: the server's events become
// the store's events, checked first, in the order they came, and none of a session that has ended.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { webcrypto } from 'node:crypto';

globalThis.crypto ??= webcrypto;
const { ProtocolClient } = await import('../src/main/resources/shine-web/protocol.js');
const { Kind, encodeBody } = await import('../src/main/resources/shine-web/codec.js');

/** A client whose verifier is stood in for: copies check after `delayMs`, receipts verify when `good`. */
function client({ delayMs = () => 0 } = {}) {
  const events = [];
  const errors = [];
  const c = new ProtocolClient('ws://127.0.0.1:1/ws', { login: 'alice' }, {
    onState: () => {}, onEvent: (e) => events.push(e), onError: (e) => errors.push(e.message),
  });
  c.verifier = {
    copy: async (blobB64, kind, payload) => {
      await new Promise((resolve) => setTimeout(resolve, delayMs(payload)));
      if (payload.broken) {
        return { verified: false, reason: 'unreadable container', container: null };
      }
      return {
        verified: true,
        container: {
          kind, from: kind === Kind.INCOMING ? 'bob' : 'alice', to: kind === Kind.INCOMING ? 'alice' : 'bob',
          createdAtMs: payload.at, nonce: 1n, revision: 0, body: encodeBody(payload.text),
        },
      };
    },
    receipt: async (payload) => ({ verified: payload.good, container: { createdAtMs: 77 } }),
  };
  const settle = () => c.events;
  return { c, events, errors, settle };
}

test('server events become store events, in the order they came even when one checks slower', async () => {
  const { c, events, settle } = client({ delayMs: (p) => (p.text === 'slow' ? 30 : 0) });
  c.queue('IncomingDirectMessage', { blobB64: 'x', text: 'slow', at: 1 });
  c.queue('OutgoingDirectMessage', { blobB64: 'x', text: 'fast', at: 2, deliveryState: 'delivered' });
  c.queue('DmDeliveryStateChanged', { baseKey: 'alice|bob|2|1', deliveryState: 'delivered' });
  c.queue('DmReadByMe', { baseKey: 'bob|alice|1|1' });
  c.queue('IncomingDirectMessage', { blobB64: 'x', broken: true });
  c.queue('SomethingNew', {});
  await settle();
  assert.deepEqual(events.map((e) => e.type), ['messageArrived', 'messageArrived', 'deliveryChanged', 'readByMe']);
  assert.deepEqual([events[0].peer, events[0].message.text, events[0].message.outgoing], ['bob', 'slow', false]);
  assert.deepEqual([events[1].peer, events[1].message.text, events[1].message.deliveryState], ['bob', 'fast',
    'delivered']);
  assert.equal(events[2].deliveryState, 'delivered');
  assert.equal(events[3].baseKey, 'bob|alice|1|1');
});

test('a read receipt with a container is believed only when it verifies', async () => {
  const { c, events, settle } = client();
  c.queue('DmReadReceipt', { baseKey: 'alice|bob|1|1', receiptBlobB64: 'x', good: false });
  c.queue('DmReadReceipt', { baseKey: 'alice|bob|2|1', receiptBlobB64: 'x', good: true });
  c.queue('DmReadReceipt', { baseKey: 'alice|bob|3|1' });
  await settle();
  assert.deepEqual(events.map((e) => [e.type, e.baseKey]), [['readByPeer', 'alice|bob|2|1'],
    ['readByPeer', 'alice|bob|3|1']]);
  assert.equal(events[0].readAtMs, 77, 'the time read is the signed receipt\'s');
});

test('after stop() no event of that session reaches the store; a failure is reported, the next event still goes', async () => {
  const { c, events, errors, settle } = client({ delayMs: () => 10 });
  c.verifier.receipt = async () => { throw new Error('card unreadable'); };
  c.queue('DmReadReceipt', { baseKey: 'alice|bob|1|1', receiptBlobB64: 'x' });
  c.queue('DmReadByMe', { baseKey: 'bob|alice|1|1' });
  await settle();
  assert.deepEqual(errors, ['card unreadable']);
  assert.equal(events.length, 1);
  c.queue('IncomingDirectMessage', { blobB64: 'x', text: 'late', at: 3 });
  c.stop();
  await settle();
  assert.equal(events.length, 1);
});

test('a login refusal the same bytes will meet again stops the connection (every 4xx but 429); others are retried',
  async () => {
    const { refusedForGood } = await import('../src/main/resources/shine-web/conn.js');
    for (const status of [400, 401, 403, 404, 409, 421]) {
      assert.equal(refusedForGood(status), true, String(status));
    }
    for (const status of [0, 429, 500, 503]) {
      assert.equal(refusedForGood(status), false, String(status));
    }
  });
