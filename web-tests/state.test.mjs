// The web chat's state (shine-web/state.js) without a browser: each event the chat dispatches and what it does to
// the open chat's messages, their ticks, the chat list and its unread counts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { webcrypto } from 'node:crypto';

globalThis.crypto ??= webcrypto;
const { DELETED_TEXT, MAX_EARLY_READS, apply, createStore, initialState } = await import('../src/main/resources/shine-web/state.js');
const { tickOf } = await import('../src/main/resources/shine-web/outbox.js');
const { fromContainer } = await import('../src/main/resources/shine-web/protocol.js');
const { Kind, encodeBody } = await import('../src/main/resources/shine-web/codec.js');

const ME = 'alice';

/** A checked message as the protocol client makes it: from bob (incoming) or to bob (outgoing), at 1000 + n. */
function msg(n, { peer = 'bob', outgoing = false, revision = 0, text = `text ${n}`, verified = true,
  deliveryState } = {}) {
  const container = {
    kind: outgoing ? Kind.OUTGOING : Kind.INCOMING, from: outgoing ? ME : peer, to: outgoing ? peer : ME,
    createdAtMs: 1000 + n, nonce: BigInt(n), revision, body: encodeBody(text),
  };
  return fromContainer(container, outgoing, deliveryState, verified ? { verified: true }
    : { verified: false, reason: 'this message is not signed by bob\'s key' });
}

function run(events, state = initialState()) {
  return events.reduce(apply, state);
}

const signedIn = { type: 'signedIn', login: ME };
const open = (peer) => ({ type: 'chatOpened', peer });
const arrived = (message, peer = 'bob') => ({ type: 'messageArrived', peer, message });
const unread = (state, peer = 'bob') => state.conversations.get(peer)?.unread;

test('an incoming message in the open chat is shown, is the chat\'s last message and counts as unread', () => {
  const m = msg(1, { text: 'hello' });
  const s = run([signedIn, open('bob'), arrived(m)]);
  assert.equal(s.messages.get(m.baseKey).text, 'hello');
  assert.deepEqual(s.conversations.get('bob'), { peer: 'bob', lastAtMs: 1001, unread: 1, lastText: 'hello', touched: 1 });
});

test('a message of another chat changes that chat in the list, not the open chat', () => {
  const s = run([signedIn, open('bob'), arrived(msg(1, { peer: 'carol' }), 'carol')]);
  assert.equal(s.messages.size, 0);
  assert.equal(unread(s, 'carol'), 1);
  assert.equal(s.conversations.get('carol').lastText, 'text 1');
  assert.equal(s.conversations.has('bob'), false);
});

test('the user\'s own copies, edits and messages that do not verify are not unread', () => {
  const s = run([signedIn, open('bob'),
    arrived(msg(1, { outgoing: true })), arrived(msg(2, { revision: 1 })), arrived(msg(3, { verified: false }))]);
  assert.equal(unread(s), 0);
  assert.equal(s.messages.get(msg(3).baseKey).text, 'Not verified — this message is not signed by bob\'s key');
  assert.equal(s.conversations.get('bob').lastText, s.messages.get(msg(3).baseKey).text);
});

test('an older message does not replace the chat\'s last text, but still counts', () => {
  const s = run([signedIn, arrived(msg(5, { text: 'new' })), arrived(msg(2, { text: 'old' }))]);
  assert.equal(s.conversations.get('bob').lastText, 'new');
  assert.equal(s.conversations.get('bob').lastAtMs, 1005);
  assert.equal(unread(s), 2);
});

test('GetConversations replaces the counts the chat kept', () => {
  const s = run([signedIn, arrived(msg(1)), arrived(msg(2)),
    { type: 'conversationsLoaded', conversations: [{ peer: 'bob', lastAtMs: 1002, unread: 0, lastText: 'x' },
      { peer: 'dave', lastAtMs: 7, unread: 4, lastText: 'y' }] }]);
  assert.equal(unread(s), 0);
  assert.equal(unread(s, 'dave'), 4);
});

test('a chat list answered after a message arrived keeps that chat; the others are the server\'s', () => {
  // the list was asked for at login (askedSeq 0); a push came before its answer, which the server read before the
  // pushed message was stored
  const s = run([signedIn, arrived(msg(1)),
    { type: 'conversationsLoaded', askedSeq: 0, conversations: [{ peer: 'dave', lastAtMs: 7, unread: 4, lastText: 'y' }] }]);
  assert.equal(unread(s), 1, 'bob\'s chat, made by the push, is kept');
  assert.equal(s.conversations.get('bob').lastText, 'text 1');
  assert.equal(unread(s, 'dave'), 4);
  // a list asked for after the push replaces it, and a newer last message of the server's wins over a changed chat
  const asked = s.conversationsSeq;
  const later = run([{ type: 'conversationsLoaded', askedSeq: asked, conversations: [] }], s);
  assert.equal(later.conversations.size, 0);
  const newer = run([arrived(msg(2)), { type: 'conversationsLoaded', askedSeq: asked,
    conversations: [{ peer: 'bob', lastAtMs: 5000, unread: 3, lastText: 'newer' }] }], s);
  assert.equal(unread(newer), 3);
  assert.equal(newer.conversations.get('bob').lastText, 'newer');
});

test('reading a message takes one from the unread count once, whichever of its two reports comes first', () => {
  const m = msg(1);
  const before = run([signedIn, open('bob'), arrived(m), arrived(msg(2))]);
  assert.equal(unread(before), 2);
  // the page's own receipt answered, then DmReadByMe for the same message (or the other way round)
  for (const order of [['answer', 'event'], ['event', 'answer']]) {
    const s = run(order.map(() => ({ type: 'readByMe', baseKey: m.baseKey })), before);
    assert.equal(unread(s), 1, order.join(' then '));
    assert.equal(s.messages.get(m.baseKey).read, true);
    assert.ok(s.receiptsSent.has(m.baseKey));
  }
});

test('the unread count never goes below zero and a read of a message read before takes nothing', () => {
  const m = { ...msg(1), read: true };
  const s = run([signedIn, open('bob'),
    { type: 'conversationsLoaded', conversations: [{ peer: 'bob', lastAtMs: 1001, unread: 1, lastText: '' }] },
    { type: 'pageLoaded', peer: 'bob', newest: true, messages: [m], hasMore: false, lastAtMs: 1001 },
    { type: 'readByMe', baseKey: m.baseKey }]);
  assert.equal(unread(s), 1, 'the loaded message was read already');
  const zero = run([{ type: 'readByMe', baseKey: msg(7).baseKey }, { type: 'readByMe', baseKey: msg(8).baseKey }],
    run([{ type: 'conversationsLoaded', conversations: [{ peer: 'bob', lastAtMs: 0, unread: 1, lastText: '' }] }]));
  assert.equal(unread(zero), 0);
});

test('a read on another device of a message not shown counts once and shows it read when it appears', () => {
  const m = msg(1);
  const s = run([signedIn, arrived(m), arrived(msg(2)), open('carol'),
    { type: 'readByMe', baseKey: m.baseKey }, { type: 'readByMe', baseKey: m.baseKey }, open('bob'),
    { type: 'pageLoaded', peer: 'bob', newest: true, messages: [m], hasMore: false, lastAtMs: 1001 }]);
  assert.equal(unread(s), 1);
  assert.equal(s.messages.get(m.baseKey).read, true);
});

test('ticks: accepted, then delivered, never back; a receipt makes it read', () => {
  const m = msg(1, { outgoing: true });
  let s = run([signedIn, open('bob'), arrived(m)]);
  assert.equal(tickOf(s.messages.get(m.baseKey)), 'accepted');
  s = run([{ type: 'deliveryChanged', baseKey: m.baseKey, deliveryState: 'delivered' }], s);
  assert.equal(tickOf(s.messages.get(m.baseKey)), 'delivered');
  s = run([{ type: 'deliveryChanged', baseKey: m.baseKey, deliveryState: 'accepted' }], s);
  assert.equal(tickOf(s.messages.get(m.baseKey)), 'delivered', 'a late accepted does not undo delivered');
  s = run([{ type: 'readByPeer', baseKey: m.baseKey }], s);
  assert.equal(tickOf(s.messages.get(m.baseKey)), 'read');
  assert.equal(unread(s), 0, 'the peer\'s receipt is not the user\'s unread');
});

test('a delivery that failed shows as failed', () => {
  const m = msg(1, { outgoing: true });
  const s = run([signedIn, open('bob'), arrived(m),
    { type: 'deliveryChanged', baseKey: m.baseKey, deliveryState: 'failed' }]);
  assert.equal(tickOf(s.messages.get(m.baseKey)), 'failed');
});

test('a receipt that overtakes its message is kept and applied when the message appears', () => {
  const m = msg(1, { outgoing: true });
  const s = run([signedIn, open('bob'), { type: 'readByPeer', baseKey: m.baseKey }, arrived(m)]);
  assert.equal(tickOf(s.messages.get(m.baseKey)), 'read');
  assert.equal(s.earlyReads.has(m.baseKey), false, 'used once');
});

test('at most MAX_EARLY_READS receipts wait, the oldest dropped first', () => {
  const events = [];
  for (let i = 0; i <= MAX_EARLY_READS; i++) {
    events.push({ type: 'readByPeer', baseKey: `alice|bob|${i}|0` });
  }
  const s = run(events);
  assert.equal(s.earlyReads.size, MAX_EARLY_READS);
  assert.equal(s.earlyReads.has('alice|bob|0|0'), false);
  assert.ok(s.earlyReads.has(`alice|bob|${MAX_EARLY_READS}|0`));
});

test('an edit (higher revision) replaces the text; an older revision does not', () => {
  const m = msg(1, { outgoing: true, deliveryState: 'delivered' });
  let s = run([signedIn, open('bob'), arrived(m), arrived(msg(1, { outgoing: true, revision: 2, text: 'v2' }))]);
  assert.equal(s.messages.get(m.baseKey).text, 'v2');
  assert.equal(s.messages.get(m.baseKey).revision, 2);
  assert.equal(s.messages.get(m.baseKey).deliveryState, 'accepted', 'the edit has its own delivery');
  s = run([arrived(msg(1, { outgoing: true, revision: 1, text: 'v1' }))], s);
  assert.equal(s.messages.get(m.baseKey).text, 'v2');
  assert.equal(s.messages.size, 1);
});

test('a copy that does not verify never replaces one that did; one that does replaces one that did not', () => {
  const good = msg(1, { text: 'real' });
  let s = run([signedIn, open('bob'), arrived(good), arrived(msg(1, { revision: 1, verified: false }))]);
  assert.equal(s.messages.get(good.baseKey).text, 'real');
  assert.equal(s.messages.get(good.baseKey).verified, true);
  s = run([open('bob'), arrived(msg(2, { verified: false })), arrived(msg(2, { text: 'checked' }))], s);
  assert.equal(s.messages.get(msg(2).baseKey).text, 'checked');
  assert.equal(s.messages.get(msg(2).baseKey).verified, true);
});

test('a deleted message stays deleted, also when a page brings it again', () => {
  const m = msg(1, { outgoing: true });
  const s = run([signedIn, open('bob'), arrived(m), { type: 'deleted', baseKey: m.baseKey },
    { type: 'pageLoaded', peer: 'bob', newest: true, messages: [m], hasMore: false, lastAtMs: 1001 }]);
  assert.equal(s.messages.get(m.baseKey).deleted, true);
  const fromServer = run([signedIn, open('bob'), { type: 'pageLoaded', peer: 'bob', newest: true,
    messages: [{ ...msg(2, { outgoing: true }), deleted: true }], hasMore: false, lastAtMs: 1002 }]);
  assert.equal(fromServer.messages.get(msg(2, { outgoing: true }).baseKey).deleted, true);
});

test('a deleted message keeps no words: not in the chat, not as the chat\'s last text, not from a waiting edit', () => {
  const m = msg(1, { outgoing: true, text: 'secret' });
  const s = run([signedIn, open('bob'), arrived(m), { type: 'deleted', baseKey: m.baseKey }]);
  assert.equal(s.messages.get(m.baseKey).text, '');
  assert.equal(s.conversations.get('bob').lastText, DELETED_TEXT);
  const edit = { baseKey: m.baseKey, owner: ME, peer: 'bob', createdAtMs: 1001, nonce: '1', revision: 1, text: 'secret 2' };
  assert.equal(run([{ type: 'outboxShown', entries: [edit] }], s).messages.get(m.baseKey).text, '');
  const again = run([{ type: 'pageLoaded', peer: 'bob', newest: true, messages: [msg(1, { outgoing: true, revision: 2,
    text: 'secret 3' })], hasMore: false, lastAtMs: 1001 }], s);
  assert.equal(again.messages.get(m.baseKey).text, '');
  // an older message deleted leaves the chat's last text alone
  const newer = run([signedIn, open('bob'), arrived(m), arrived(msg(2, { text: 'later' })),
    { type: 'deleted', baseKey: m.baseKey }]);
  assert.equal(newer.conversations.get('bob').lastText, 'later');
});

test('"New messages" goes above the oldest message unread when the chat opened, and stays there', () => {
  const read = { ...msg(1), read: true };
  const page = (messages) => ({ type: 'pageLoaded', peer: 'bob', newest: true, messages, hasMore: false,
    lastAtMs: 1001 });
  let s = run([signedIn, open('bob'), page([msg(3), msg(2), { ...msg(4, { outgoing: true }) }, read])]);
  assert.equal(s.unreadFrom, msg(2).baseKey);
  s = run([{ type: 'readByMe', baseKey: msg(2).baseKey }, page([msg(5), { ...msg(2), read: true }])], s);
  assert.equal(s.unreadFrom, msg(2).baseKey, 'reading and reconnecting do not move it');
  assert.equal(run([open('carol')], s).unreadFrom, null, 'another chat starts without it');
  assert.equal(run([signedIn, open('bob'), page([read, msg(6, { verified: false })])]).unreadFrom, null,
    'nothing unread, or only what does not verify: no line');
});

test('a receipt\'s time is kept with the message, also when the receipt came first', () => {
  const m = msg(1, { outgoing: true });
  assert.equal(run([signedIn, open('bob'), arrived(m), { type: 'readByPeer', baseKey: m.baseKey, readAtMs: 5000 }])
    .messages.get(m.baseKey).readAtMs, 5000);
  assert.equal(run([signedIn, open('bob'), { type: 'readByPeer', baseKey: m.baseKey, readAtMs: 6000 }, arrived(m)])
    .messages.get(m.baseKey).readAtMs, 6000);
});

test('switching chats empties the open chat; opening the same one keeps it', () => {
  const m = msg(1);
  const s = run([signedIn, open('bob'), arrived(m),
    { type: 'pageLoaded', peer: 'bob', newest: true, messages: [], hasMore: true, lastAtMs: 900 }]);
  assert.equal(apply(s, open('bob')), s);
  const carol = apply(s, open('carol'));
  assert.equal(carol.peer, 'carol');
  assert.equal(carol.messages.size, 0);
  assert.equal(carol.oldestAtMs, null);
  assert.equal(carol.hasMore, false);
  assert.equal(unread(carol), 1, 'the chat list stays');
});

test('pages: the newest sets where older ones start, each older one moves it; a page of a chat left is dropped', () => {
  let s = run([signedIn, open('bob'),
    { type: 'pageLoaded', peer: 'bob', newest: true, messages: [msg(9), msg(8)], hasMore: true, lastAtMs: 1008 }]);
  assert.deepEqual([s.oldestAtMs, s.hasMore, s.messages.size], [1008, true, 2]);
  s = run([{ type: 'pageLoaded', peer: 'bob', newest: true, messages: [msg(9)], hasMore: false, lastAtMs: 1009 }], s);
  assert.deepEqual([s.oldestAtMs, s.hasMore], [1008, true], 'a newest page again (a reconnect) keeps the bound');
  s = run([{ type: 'pageLoaded', peer: 'bob', newest: false, messages: [msg(3)], hasMore: false, lastAtMs: 1003 }], s);
  assert.deepEqual([s.oldestAtMs, s.hasMore, s.messages.size], [1003, false, 3]);
  const left = run([open('carol'),
    { type: 'pageLoaded', peer: 'bob', newest: true, messages: [msg(1)], hasMore: false, lastAtMs: 1001 }], s);
  assert.equal(left.messages.size, 0);
});

test('receipts owed while offline, sent, and owed again when the send fails', () => {
  const k = msg(1).baseKey;
  let s = run([{ type: 'receiptOwed', baseKey: k }]);
  assert.ok(s.receiptsOwed.has(k));
  s = apply(s, { type: 'receiptSending', baseKey: k });
  assert.ok(s.receiptsSent.has(k));
  assert.equal(s.receiptsOwed.has(k), false);
  s = apply(s, { type: 'receiptFailed', baseKey: k });
  assert.equal(s.receiptsSent.has(k), false);
  assert.ok(s.receiptsOwed.has(k));
});

const entry = (n, extra = {}) => ({
  baseKey: `alice|bob|${1000 + n}|${n}`, owner: ME, peer: 'bob', createdAtMs: 1000 + n, nonce: String(n),
  revision: 0, text: `out ${n}`, ...extra,
});

test('what the outbox takes shows pending in its chat and as the chat\'s last message, not unread', () => {
  const s = run([signedIn, open('bob'), { type: 'queued', entry: entry(1) }]);
  const m = s.messages.get(entry(1).baseKey);
  assert.equal(tickOf(m), 'pending');
  assert.equal(m.outgoing, true);
  assert.equal(m.nonce, 1n);
  assert.equal(m.messageKey, `${entry(1).baseKey}|2`);
  assert.deepEqual(s.conversations.get('bob'), { peer: 'bob', lastAtMs: 1001, unread: 0, lastText: 'out 1', touched: 1 });
  const elsewhere = run([signedIn, open('carol'), { type: 'queued', entry: entry(1) }]);
  assert.equal(elsewhere.messages.size, 0);
  assert.equal(elsewhere.conversations.get('bob').lastText, 'out 1');
  const someoneElses = run([{ type: 'signedIn', login: 'mallory' }, open('bob'),
    { type: 'outboxShown', entries: [entry(1)] }]);
  assert.equal(someoneElses.messages.size, 0, 'another login\'s outbox is not shown');
});

test('the own server\'s answer ends pending: a first send never goes back, an edit takes the answer', () => {
  let s = run([signedIn, open('bob'), { type: 'queued', entry: entry(1) }]);
  const k = entry(1).baseKey;
  s = apply(s, { type: 'deliveryChanged', baseKey: k, deliveryState: 'delivered' });
  s = apply(s, { type: 'sent', baseKey: k, revision: 0, deliveryState: 'accepted' });
  assert.equal(tickOf(s.messages.get(k)), 'delivered');
  s = apply(s, { type: 'queued', entry: entry(1, { revision: 1, text: 'edited' }) });
  assert.equal(tickOf(s.messages.get(k)), 'pending');
  assert.equal(s.messages.get(k).text, 'edited');
  assert.equal(apply(s, { type: 'sent', baseKey: k, revision: 0, deliveryState: 'accepted' }), s,
    'an answer for an older revision changes nothing');
  s = apply(s, { type: 'sent', baseKey: k, revision: 1, deliveryState: 'accepted' });
  assert.equal(tickOf(s.messages.get(k)), 'accepted');
  assert.equal(s.messages.get(k).revision, 1);
});

test('a send refused for good is failed; a pending entry of an older revision is not shown over a newer one', () => {
  let s = run([signedIn, open('bob'), { type: 'queued', entry: entry(1) }]);
  s = apply(s, { type: 'sendFailed', baseKey: entry(1).baseKey });
  assert.equal(tickOf(s.messages.get(entry(1).baseKey)), 'failed');
  const newer = run([signedIn, open('bob'), arrived(msg(1, { outgoing: true, revision: 3, text: 'v3' }))]);
  assert.equal(apply(newer, { type: 'outboxShown', entries: [entry(1)] }), newer);
});

test('the store applies each event once, tells its listeners, and never changes a state it handed out', () => {
  const store = createStore();
  const seen = [];
  store.subscribe((state, previous, event) => seen.push([previous.peer, state.peer, event.type]));
  store.dispatch(signedIn);
  const before = store.state;
  store.dispatch(open('bob'));
  store.dispatch(arrived(msg(1)));
  assert.deepEqual(seen, [[null, null, 'signedIn'], [null, 'bob', 'chatOpened'], ['bob', 'bob', 'messageArrived']]);
  assert.equal(before.peer, null);
  assert.equal(before.messages.size, 0);
  assert.equal(before.conversations.size, 0);
  assert.equal(store.state.messages.size, 1);
  assert.equal(apply(store.state, { type: 'no such event' }), store.state);
});
