// The chat's state and the one place it changes: apply(state, event) returns the next state and nothing else writes
// it. Maps, sets and messages are replaced, never changed in place, so a view tells what changed by identity. The
// unread count of a chat changes in conversationAfter alone, by the rule of unreadDelta. For the browser and Node.
import { Kind } from './codec.js';
import { laterDelivery } from './outbox.js';

export const MAX_EARLY_READS = 1000;
/** What is shown in place of a deleted message. */
export const DELETED_TEXT = 'Message deleted';

export function initialState() {
  return {
    me: null, // the signed-in login
    peer: null, // the open chat
    // what the open chat's peer's card says: {enc (their encryption key or null), broken, sealed (either copy is)}
    peerCard: null,
    messages: new Map(), // baseKey → message of the open chat
    oldestAtMs: null, // where the next older page starts
    hasMore: false,
    // the first message that was unread when the chat was opened: the "New messages" line goes above it
    unreadFrom: null,
    conversations: new Map(), // peer → {peer, lastText, lastAtMs, unread, touched}
    conversationsSeq: 0, // how many changes events made to the chat list (a chat's `touched`: the last one to it)
    receiptsSent: new Set(), // incoming messages read here or on another device: no receipt to send
    receiptsOwed: new Set(), // seen while offline: sent after the next login
    // receipts for messages not shown yet (a receipt may overtake the pair on its way to this server): baseKey → readAtMs
    earlyReads: new Map(),
  };
}

/** The events (each `{type, ...}`) and what they do; an unknown one changes nothing. */
export function apply(state, event) {
  switch (event.type) {
    case 'signedIn':
      return { ...state, me: event.login };
    case 'signedOut':
      return { ...state, me: null };
    case 'conversationsLoaded': // GetConversations (askedSeq: conversationsSeq when it was sent)
      return conversationsLoaded(state, event);
    case 'chatOpened':
      return event.peer === state.peer ? state
        : {
          ...state, peer: event.peer, peerCard: null, messages: new Map(), oldestAtMs: null, hasMore: false,
          unreadFrom: null,
        };
    case 'peerCard': // the open chat's peer's card, read (and checked against the pinned one) on opening it
      return event.peer === state.peer ? { ...state, peerCard: event.card } : state;
    case 'messageArrived': { // IncomingDirectMessage or OutgoingDirectMessage, checked
      const { message } = event;
      const next = conversationAfter(state, event.peer, { text: message.text, atMs: message.createdAtMs },
        unreadDelta(state, event));
      return event.peer === next.peer ? upsert(next, [message]) : next;
    }
    case 'pageLoaded': // GetDirectMessages: the newest page on opening, or an older one
      return pageLoaded(state, event);
    case 'deliveryChanged':
      return changeMessage(state, event.baseKey,
        (m) => ({ ...m, deliveryState: laterDelivery(m.deliveryState, event.deliveryState) }));
    case 'readByPeer': // DmReadReceipt for one of the user's messages, with when it was read (if told)
      return markRead(state, event.baseKey, event.readAtMs);
    case 'readByMe': { // a receipt of this page's answered, or DmReadByMe from another device of the user
      const peer = event.baseKey.split('|')[0];
      const next = conversationAfter(state, peer, null, unreadDelta(state, event));
      return markRead({ ...next, receiptsSent: new Set(next.receiptsSent).add(event.baseKey) }, event.baseKey);
    }
    case 'receiptOwed':
      return { ...state, receiptsOwed: new Set(state.receiptsOwed).add(event.baseKey) };
    case 'receiptSending': {
      const receiptsOwed = new Set(state.receiptsOwed);
      receiptsOwed.delete(event.baseKey);
      return { ...state, receiptsSent: new Set(state.receiptsSent).add(event.baseKey), receiptsOwed };
    }
    case 'receiptFailed': {
      const receiptsSent = new Set(state.receiptsSent);
      receiptsSent.delete(event.baseKey);
      return { ...state, receiptsSent, receiptsOwed: new Set(state.receiptsOwed).add(event.baseKey) };
    }
    case 'queued': { // the outbox took what the user wrote (or an edit)
      const { entry } = event;
      const next = showPending(state, [entry]);
      return conversationAfter(next, entry.peer, { text: entry.text, atMs: entry.createdAtMs }, 0);
    }
    case 'outboxShown': // what the outbox still holds, shown as pending
      return showPending(state, event.entries);
    case 'sent': // the own server answered SendMessagePair
      return changeMessage(state, event.baseKey, (m) => (m.revision !== event.revision ? m : {
        ...m, pending: false,
        deliveryState: event.revision > 0 ? event.deliveryState : laterDelivery(m.deliveryState, event.deliveryState),
      }));
    case 'sendFailed': // refused for good
      return changeMessage(state, event.baseKey, (m) => ({ ...m, pending: false, deliveryState: 'failed' }));
    case 'deleted': // the user deleted their copy: its words are kept nowhere, also not as the chat's last text
      return deleted(state, event.baseKey);
    default:
      return state;
  }
}

/**
 * The one rule for the unread count: a new incoming message that verifies adds one (an edit, revision > 0, is not
 * another unread message), the user's first read of one takes one away.
 */
function unreadDelta(state, event) {
  if (event.type === 'messageArrived') {
    const m = event.message;
    return !m.outgoing && m.revision === 0 && m.verified ? 1 : 0;
  }
  if (event.type === 'readByMe') {
    return state.messages.get(event.baseKey)?.read || state.earlyReads.has(event.baseKey) ? 0 : -1;
  }
  return 0;
}

/** A chat's newer last message (if `last`) and its unread count moved by `delta`, never below 0. */
function conversationAfter(state, peer, last, delta) {
  const had = state.conversations.get(peer);
  if (!had && !last) {
    return state;
  }
  const c = { ...(had || { peer, lastAtMs: 0, unread: 0, lastText: '' }) };
  if (last && last.atMs >= c.lastAtMs) {
    c.lastAtMs = last.atMs;
    c.lastText = last.text;
  }
  c.unread = Math.max(0, c.unread + delta);
  if (had && !last && c.unread === had.unread) {
    return state;
  }
  return touch(state, c);
}

/** A chat changed by an event: it counts as changed after any chat list asked for before. */
function touch(state, c) {
  const seq = state.conversationsSeq + 1;
  const conversations = new Map(state.conversations).set(c.peer, { ...c, touched: seq });
  return { ...state, conversationsSeq: seq, conversations };
}

/**
 * The server's list and counts replace ours, except for a chat an event changed after the request left: the answer
 * may have been read before that event's message was stored (a push after a login, with the list on its way), so
 * that chat keeps ours unless the server's last message is newer.
 */
function conversationsLoaded(state, event) {
  const loaded = new Map(event.conversations.map((c) => [c.peer, { ...c }]));
  if (event.askedSeq !== undefined) {
    for (const c of state.conversations.values()) {
      const theirs = loaded.get(c.peer);
      if (c.touched > event.askedSeq && (!theirs || theirs.lastAtMs <= c.lastAtMs)) {
        loaded.set(c.peer, c);
      }
    }
  }
  return { ...state, conversations: loaded };
}

function pageLoaded(state, event) {
  if (event.peer !== state.peer) {
    return state; // the user opened another chat meanwhile
  }
  let next = upsert(state, event.messages);
  if (event.newest && next.unreadFrom === null) {
    next = { ...next, unreadFrom: firstUnread(next.messages) };
  }
  if (!event.newest) {
    return { ...next, oldestAtMs: event.lastAtMs ?? next.oldestAtMs, hasMore: event.hasMore };
  }
  if (next.oldestAtMs === null && event.lastAtMs !== null) {
    return { ...next, oldestAtMs: event.lastAtMs, hasMore: event.hasMore };
  }
  return next;
}

/** The oldest incoming message that verified and is not read yet, or null. */
function firstUnread(messages) {
  let first = null;
  for (const m of messages.values()) {
    if (!m.outgoing && m.verified && !m.read && !m.deleted && (!first || m.createdAtMs < first.createdAtMs)) {
      first = m;
    }
  }
  return first ? first.baseKey : null;
}

/** A deleted copy keeps no text; the chat list does not show it as the last message either. */
function deleted(state, baseKey) {
  const had = state.messages.get(baseKey);
  if (!had) {
    return state;
  }
  const next = changeMessage(state, baseKey, (m) => ({ ...m, deleted: true, text: '' }));
  const c = state.conversations.get(state.peer);
  if (!c || c.lastAtMs !== had.createdAtMs) {
    return next;
  }
  return touch(next, { ...c, lastText: DELETED_TEXT });
}

/** Adds or updates messages of the open chat; a higher revision replaces the text and its state. */
function upsert(state, messages) {
  const all = new Map(state.messages);
  const earlyReads = new Map(state.earlyReads);
  for (const message of messages) {
    const had = all.get(message.baseKey);
    if (!had) {
      const early = earlyReads.get(message.baseKey);
      const m = earlyReads.delete(message.baseKey) ? { ...message, read: true, readAtMs: early } : message;
      all.set(message.baseKey, m.deleted ? { ...m, text: '' } : m);
      continue;
    }
    if (had.verified && !message.verified) {
      continue; // a container that does not verify never replaces one that did
    }
    if (!had.verified && message.verified) {
      all.set(message.baseKey, { ...had, ...message, read: had.read || message.read });
      continue;
    }
    const m = { ...had };
    if (message.revision > had.revision) {
      m.revision = message.revision;
      m.text = message.text;
      m.deliveryState = message.deliveryState;
    } else if (message.revision === had.revision) {
      m.deliveryState = laterDelivery(had.deliveryState, message.deliveryState);
    }
    m.read = had.read || message.read;
    m.readAtMs = had.readAtMs ?? message.readAtMs;
    m.deleted = had.deleted || message.deleted;
    if (m.deleted) {
      m.text = '';
    }
    m.pending = had.pending && message.pending;
    all.set(message.baseKey, m);
  }
  return { ...state, messages: all, earlyReads };
}

function changeMessage(state, baseKey, change) {
  const had = state.messages.get(baseKey);
  if (!had) {
    return state;
  }
  const m = change(had);
  return m === had ? state : { ...state, messages: new Map(state.messages).set(baseKey, m) };
}

/** A shown message is marked read; a receipt for one not shown yet is kept (at most MAX_EARLY_READS). */
function markRead(state, baseKey, readAtMs) {
  if (state.messages.has(baseKey)) {
    return changeMessage(state, baseKey, (m) => (m.read && (m.readAtMs !== undefined || readAtMs === undefined) ? m
      : { ...m, read: true, readAtMs: m.readAtMs ?? readAtMs }));
  }
  const earlyReads = new Map(state.earlyReads).set(baseKey, readAtMs);
  if (earlyReads.size > MAX_EARLY_READS) {
    earlyReads.delete(earlyReads.keys().next().value);
  }
  return { ...state, earlyReads };
}

/** Outbox entries of the open chat shown as pending; a shown message that did not verify is replaced by its own. */
function showPending(state, entries) {
  let all = null;
  for (const entry of entries) {
    if (entry.peer !== state.peer || entry.owner !== state.me) {
      continue;
    }
    const shown = (all || state.messages).get(entry.baseKey);
    const had = shown?.verified ? shown : null;
    if (had && (had.revision > entry.revision || had.deleted)) {
      continue; // a newer revision is shown, or the message was deleted (an edit of it is never shown again)
    }
    all = all || new Map(state.messages);
    all.set(entry.baseKey, {
      ...(had || {
        baseKey: entry.baseKey, messageKey: `${entry.baseKey}|${Kind.OUTGOING}`, outgoing: true,
        createdAtMs: entry.createdAtMs, nonce: BigInt(entry.nonce), deliveryState: 'accepted', read: false,
        deleted: false, verified: true,
      }),
      revision: entry.revision, text: entry.text, pending: true,
    });
  }
  return all ? { ...state, messages: all } : state;
}

/** A single store: `dispatch(event)` applies it and tells each listener (state, previous state, event). */
export function createStore(state = initialState()) {
  const listeners = [];
  return {
    get state() {
      return state;
    },
    dispatch(event) {
      const previous = state;
      state = apply(state, event);
      for (const listener of listeners) {
        listener(state, previous, event);
      }
      return state;
    },
    subscribe(listener) {
      listeners.push(listener);
    },
  };
}
