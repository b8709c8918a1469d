// The web chat: keys, chat list, conversation with the seed's §8 ticks, an outbox that survives offline time.
// What the server hands it is verified first (verify.js): a message not signed by its author's key is shown marked.
import {
  Kind, b64decode, b64encode, baseKey as baseKeyOf, cardText, decodeBody, encodeBody, parseContainer, randomNonce,
  signContainer,
} from './codec.js';
import { Connection } from './conn.js';
import {
  createKey, forgetIdentity, idb, keyFileText, keyFromFile, loadIdentity, openDb, saveIdentity,
} from './keys.js';
import { Verifier } from './verify.js';

const PAGE = 50;
const MAX_EARLY_READS = 1000;
const RANK = { accepted: 1, delivered: 2, failed: 2 };
const TICKS = {
  pending: { mark: '', label: 'Sending' },
  accepted: { mark: '✓', label: 'Sent: accepted by your server' },
  delivered: { mark: '✓', label: 'Delivered' },
  read: { mark: '✓✓', label: 'Read' },
  failed: { mark: '!', label: 'Delivery failed' },
};
const $ = (id) => document.getElementById(id);

const state = {
  db: null,
  identity: null,
  conn: null,
  verifier: null,
  events: Promise.resolve(), // events are handled one after another, in the order they came
  server: null,
  peer: null,
  messages: new Map(), // baseKey → message of the open chat
  oldestAtMs: null,
  hasMore: false,
  loadingOlder: false,
  conversations: new Map(), // peer → {peer, lastText, lastAtMs, unread}
  receiptsSent: new Set(),
  // receipts whose message is not shown yet (a receipt may overtake the pair on its way to this server)
  earlyReads: new Set(),
  receiptsOwed: new Set(),
  flushing: false,
};

const observer = new IntersectionObserver((entries) => {
  for (const entry of entries) {
    if (entry.isIntersecting) {
      readOnScreen(entry.target.dataset.baseKey);
    }
  }
}, { threshold: 0.6 });

async function main() {
  state.db = await openDb();
  state.server = await fetch('/.well-known/shine-server').then((r) => r.json());
  $('this-server').textContent = `${state.server.serverLogin} (${state.server.url})`;
  wireSetup();
  wireChat();
  const identity = await loadIdentity(state.db);
  if (identity) {
    start(identity);
  } else {
    $('setup').hidden = false;
  }
}

// ---- keys and registration ----

function wireSetup() {
  $('create-key').addEventListener('click', () => guarded($('setup-error'), async () => {
    const login = $('login').value.trim();
    if (!/^[a-z0-9_.-]{1,32}$/.test(login)) {
      throw new Error('a login is 1 to 32 of a-z, 0-9, _ . -');
    }
    const identity = await createKey(login);
    await saveIdentity(state.db, identity);
    showRegister(identity, 'A new key: publish your card so that others can reach you.');
  }));
  $('import-key').addEventListener('change', () => guarded($('setup-error'),
    () => importKey($('import-key'), $('login').value.trim())));
  $('reimport-key').addEventListener('change', () => guarded($('refused-error'),
    () => importKey($('reimport-key'), state.identity ? state.identity.login : '')));
  $('sign-out').addEventListener('click', () => guarded($('refused-error'), signOut));
  $('register-button').addEventListener('click', () => guarded($('setup-error'), async () => {
    await register(state.identity, $('second-login').value.trim(), $('second-url').value.trim());
    start(state.identity);
  }));
  $('export-key').addEventListener('click', () => guarded($('chat-error'), async () => {
    const text = await keyFileText(state.identity);
    const link = document.createElement('a');
    link.href = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
    link.download = `${state.identity.login}.key`;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10000);
  }));
}

async function importKey(input, login) {
  const file = input.files[0];
  if (!file) {
    return;
  }
  const identity = await keyFromFile(await file.text(), login);
  await saveIdentity(state.db, identity);
  input.value = '';
  start(identity);
}

/** Forgets the key kept in this browser: back to the start, to create or import one. */
async function signOut() {
  if (state.conn) {
    state.conn.stop();
    state.conn = null;
  }
  await forgetIdentity(state.db);
  state.identity = null;
  $('refused').hidden = true;
  $('chat').hidden = true;
  $('register').hidden = true;
  $('me').textContent = '';
  $('banner').textContent = '';
  $('export-key').hidden = true;
  $('setup').hidden = false;
}

function showRegister(identity, why) {
  state.identity = identity;
  $('refused').hidden = true;
  $('chat').hidden = true;
  $('setup').hidden = false;
  $('register').hidden = false;
  $('register-why').textContent = why;
  $('login').value = identity.login;
  $('register-button').focus();
}

/** Publishes a signed card naming this server (and a second one) on this server, which relays it. */
async function register(identity, secondLogin, secondUrl) {
  const servers = [{ serverLogin: state.server.serverLogin, url: state.server.url }];
  if (secondLogin || secondUrl) {
    if (!secondLogin || !/^wss?:\/\//.test(secondUrl)) {
      throw new Error('a second server needs its serverLogin and a ws:// or wss:// URL');
    }
    servers.push({ serverLogin: secondLogin, url: secondUrl });
  }
  await anonymous(async (call) => {
    let version = 1;
    try {
      const { card } = await call('GetUserCard', { login: identity.login });
      version = card.version + 1;
    } catch (e) {
      if (e.code !== 'USER_NOT_FOUND') {
        throw e;
      }
    }
    const signature = await crypto.subtle.sign('Ed25519', identity.privateKey,
      cardText(identity.login, identity.publicKeyB64, version, servers));
    const card = {
      login: identity.login, publicKeyB64: identity.publicKeyB64, accessServers: servers, version,
      signatureB64: b64encode(new Uint8Array(signature)),
    };
    await call('PublishUserCard', { card });
  });
}

/** Runs calls on a connection of its own that never logs in (registration). */
function anonymous(work) {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(wsUrl());
    const waiting = new Map();
    let next = 1;
    const call = (op, payload) => new Promise((ok, fail) => {
      const requestId = `r-${next++}`;
      waiting.set(requestId, { ok, fail });
      socket.send(JSON.stringify({ op, requestId, payload }));
    });
    socket.onmessage = (m) => {
      const frame = JSON.parse(m.data);
      const w = waiting.get(frame.requestId);
      if (w) {
        waiting.delete(frame.requestId);
        if (frame.status === 200) {
          w.ok(frame.payload);
        } else {
          const error = new Error(`${frame.status} ${frame.error.code}: ${frame.error.message}`);
          error.code = frame.error.code;
          w.fail(error);
        }
      }
    };
    socket.onerror = () => reject(new Error('cannot reach the server'));
    socket.onopen = () => work(call).then(resolve, reject).finally(() => socket.close());
  });
}

function wsUrl() {
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`;
}

// ---- the session ----

function start(identity) {
  state.identity = identity;
  if (state.conn) {
    state.conn.stop();
  }
  $('setup').hidden = true;
  $('register').hidden = true;
  $('refused').hidden = true;
  $('chat').hidden = false;
  $('me').textContent = `Signing in as ${identity.login}…`;
  $('export-key').hidden = false;
  const conn = new Connection(wsUrl(), identity, { onEvent, onState });
  state.conn = conn;
  state.verifier = new Verifier(identity.login, (login) => conn.request('GetUserCard', { login })
    .then(({ card }) => card, (e) => {
      if (e.code === 'USER_NOT_FOUND') {
        return null;
      }
      throw e;
    }));
  conn.start();
  renderOutboxOnly();
}

function onState(connection, error) {
  const banner = $('banner');
  if (connection === 'online') {
    banner.textContent = '';
    $('me').textContent = `Signed in as ${state.identity.login}`;
    onOnline();
  } else if (connection === 'refused') {
    refused(error);
  } else if (connection === 'offline' || connection === 'reconnecting') {
    banner.textContent = 'Offline: reconnecting. Messages you write are sent when the connection is back.';
  }
}

/**
 * The server refused the login. For good (the connection stopped trying): no such user, not a server of the user,
 * or a key that is not the user's here — said plainly, with what the user can do. Otherwise it tries again.
 */
async function refused(error) {
  const { login } = state.identity;
  if (!state.conn || !state.conn.stopped) {
    $('banner').textContent = `Login refused: ${error ? error.message : ''}. Trying again.`;
    return;
  }
  $('me').textContent = 'Not signed in';
  $('banner').textContent = '';
  if (error.code === 'USER_NOT_FOUND') {
    showRegister(state.identity, `There is no user ${login} on this server: register first.`);
    return;
  }
  if (error.code === 'NOT_ACCESS_SERVER') {
    showRegister(state.identity, `This server is not one of ${login}'s access servers: register again to add it.`);
    return;
  }
  let why = `The server refused to sign you in as ${login}: ${error.message}`;
  if (error.status === 401) {
    // the login exists here (else 404): unless its card names this very key, the key is someone else's
    const card = await anonymous((call) => call('GetUserCard', { login })).then(({ card: c }) => c, () => null);
    if (!card || card.publicKeyB64 !== state.identity.publicKeyB64) {
      why = `This key is not ${login}'s key on this server.`;
    }
  }
  $('chat').hidden = true;
  $('refused-why').textContent = why;
  $('refused-error').textContent = '';
  $('refused').hidden = false;
}

async function onOnline() {
  await loadConversations();
  if (state.peer) {
    await openChat(state.peer, false);
  }
  for (const baseKey of state.receiptsOwed) {
    readOnScreen(baseKey);
  }
  await flushOutbox();
}

function onEvent(op, payload) {
  const verifier = state.verifier;
  state.events = state.events.then(() => handleEvent(verifier, op, payload))
    .catch((e) => { $('chat-error').textContent = e.message; });
}

async function handleEvent(verifier, op, payload) {
  if (verifier !== state.verifier) {
    return; // an event of a session that has ended
  }
  if (op === 'IncomingDirectMessage' || op === 'OutgoingDirectMessage') {
    const check = await verifier.copy(payload.blobB64,
      op === 'OutgoingDirectMessage' ? Kind.OUTGOING : Kind.INCOMING, payload);
    const { container } = check;
    if (!container) {
      return;
    }
    const outgoing = container.kind === Kind.OUTGOING;
    const peer = outgoing ? container.to : container.from;
    const message = fromContainer(container, outgoing, outgoing ? payload.deliveryState : undefined, check);
    // an edit (revision > 0) of a message is not another unread one, nor is one that does not verify
    touchConversation(peer, message.text, container.createdAtMs,
      outgoing || container.revision > 0 || !check.verified ? 0 : 1);
    if (peer === state.peer) {
      upsert(message);
    }
  } else if (op === 'DmDeliveryStateChanged') {
    updateMessage(payload.baseKey, (m) => mergeState(m, payload.deliveryState));
  } else if (op === 'DmReadReceipt') {
    // a receipt that comes with its signed container is believed only when that verifies
    if (payload.receiptBlobB64 === undefined || (await verifier.receipt(payload)).verified) {
      markRead(payload.baseKey);
    }
  } else if (op === 'DmReadByMe') {
    const peer = payload.baseKey.split('|')[0];
    state.receiptsSent.add(payload.baseKey);
    const had = state.messages.get(payload.baseKey);
    if (!had || !had.read) {
      const conversation = state.conversations.get(peer);
      if (conversation && conversation.unread > 0) {
        conversation.unread--;
        renderConversations();
      }
    }
    markRead(payload.baseKey);
  }
}

function markRead(baseKey) {
  if (state.messages.has(baseKey)) {
    updateMessage(baseKey, (m) => { m.read = true; });
    return;
  }
  state.earlyReads.add(baseKey);
  if (state.earlyReads.size > MAX_EARLY_READS) {
    state.earlyReads.delete(state.earlyReads.values().next().value);
  }
}

// ---- chat list ----

async function loadConversations() {
  const { conversations } = await state.conn.request('GetConversations', { limit: 100 });
  const checks = await Promise.all(conversations.map((c) => state.verifier.blob(c.lastBlobB64)));
  state.conversations.clear();
  conversations.forEach((c, i) => {
    state.conversations.set(c.peer, {
      peer: c.peer, lastAtMs: c.lastAtMs, unread: c.unread,
      lastText: checks[i].verified ? decodeBody(checks[i].container.body) : notVerifiedText(checks[i].reason),
    });
  });
  renderConversations();
}

function touchConversation(peer, text, atMs, unreadDelta) {
  const c = state.conversations.get(peer) || { peer, lastAtMs: 0, unread: 0, lastText: '' };
  if (atMs >= c.lastAtMs) {
    c.lastAtMs = atMs;
    c.lastText = text;
  }
  c.unread += unreadDelta;
  state.conversations.set(peer, c);
  renderConversations();
}

function renderConversations() {
  const list = $('conversations');
  const sorted = [...state.conversations.values()].sort((a, b) => b.lastAtMs - a.lastAtMs);
  const items = sorted.map((c) => {
    const li = document.createElement('li');
    const button = document.createElement('button');
    button.type = 'button';
    button.dataset.peer = c.peer;
    button.setAttribute('aria-current', String(c.peer === state.peer));
    const name = span('peer', c.peer);
    const last = span('last', c.lastText);
    const unread = span('unread', c.unread > 0 ? String(c.unread) : '');
    unread.setAttribute('aria-label', c.unread > 0 ? `${c.unread} unread` : 'none unread');
    button.append(name, unread, last);
    button.addEventListener('click', () => openChat(c.peer, true));
    li.append(button);
    return li;
  });
  list.replaceChildren(...items);
}

// ---- the conversation ----

function wireChat() {
  $('open-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const peer = $('chat-with').value.trim();
    if (!/^[a-z0-9_.-]{1,32}$/.test(peer)) {
      $('chat-error').textContent = 'a login is 1 to 32 of a-z, 0-9, _ . -';
      return;
    }
    $('chat-with').value = '';
    openChat(peer, true);
  });
  $('composer').addEventListener('submit', (event) => {
    event.preventDefault();
    send();
  });
  $('message').addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey) {
      event.preventDefault();
      send();
    }
  });
  $('messages').addEventListener('scroll', () => {
    if ($('messages').scrollTop < 40) {
      loadOlder();
    }
  });
  $('back').addEventListener('click', () => {
    $('chat').classList.remove('in-conversation');
    $('conversations').querySelector('button')?.focus();
  });
}

async function openChat(peer, focus) {
  const switching = peer !== state.peer;
  state.peer = peer;
  if (switching) {
    state.oldestAtMs = null;
    state.hasMore = false;
    state.messages.clear();
    $('messages').replaceChildren();
  }
  $('peer-name').textContent = peer;
  $('composer').hidden = false;
  $('chat').classList.add('in-conversation');
  $('chat-error').textContent = '';
  renderConversations();
  await renderOutboxOnly();
  if (state.conn && state.conn.ready) {
    try {
      const page = await state.conn.request('GetDirectMessages', { peer, limit: PAGE });
      await addPage(page, true);
    } catch (e) {
      $('chat-error').textContent = e.message;
    }
  }
  if (focus) {
    $('message').focus();
  }
}

async function addPage(page, newest) {
  const checks = await Promise.all(page.messages.map((entry) => state.verifier.copy(entry.blobB64,
    entry.direction === 'outgoing' ? Kind.OUTGOING : Kind.INCOMING, entry)));
  page.messages.forEach((entry, i) => {
    const { container } = checks[i];
    if (!container) {
      return;
    }
    const message = fromContainer(container, entry.direction === 'outgoing', entry.deliveryState, checks[i]);
    message.read = entry.read;
    message.deleted = entry.deleted;
    upsert(message, !newest);
  });
  if (newest) {
    const last = page.messages[page.messages.length - 1];
    if (state.oldestAtMs === null && last) {
      state.oldestAtMs = parseContainer(b64decode(last.blobB64)).createdAtMs;
      state.hasMore = page.hasMore;
    }
    scrollToEnd();
  }
}

async function loadOlder() {
  if (state.loadingOlder || !state.hasMore || state.oldestAtMs === null || !state.conn.ready) {
    return;
  }
  state.loadingOlder = true;
  const list = $('messages');
  const before = list.scrollHeight - list.scrollTop;
  try {
    // the bound is exclusive: one past the oldest time also brings messages that share it (known ones are skipped)
    const page = await state.conn.request('GetDirectMessages',
      { peer: state.peer, beforeCreatedAtMs: state.oldestAtMs + 1, limit: PAGE });
    await addPage(page, false);
    const last = page.messages[page.messages.length - 1];
    if (last) {
      state.oldestAtMs = parseContainer(b64decode(last.blobB64)).createdAtMs;
    }
    state.hasMore = page.hasMore;
    list.scrollTop = list.scrollHeight - before;
  } finally {
    state.loadingOlder = false;
  }
}

/** A message as the chat keeps it; one that does not verify keeps the reason, never the container's words. */
function fromContainer(container, outgoing, deliveryState, check) {
  return {
    baseKey: baseKeyOf(container),
    messageKey: `${baseKeyOf(container)}|${outgoing ? Kind.OUTGOING : Kind.INCOMING}`,
    outgoing,
    createdAtMs: container.createdAtMs,
    nonce: container.nonce,
    revision: container.revision,
    text: check.verified ? decodeBody(container.body) : notVerifiedText(check.reason),
    verified: check.verified,
    deliveryState: deliveryState || 'accepted',
    read: false,
    deleted: false,
    pending: false,
  };
}

function notVerifiedText(reason) {
  return `Not verified — ${reason}`;
}

function mergeState(message, next) {
  if (next && (RANK[next] || 0) > (RANK[message.deliveryState] || 0)) {
    message.deliveryState = next;
  }
}

/** Adds or updates a message of the open chat; a higher revision replaces the text and its state. */
function upsert(message) {
  const had = state.messages.get(message.baseKey);
  if (had) {
    if (had.verified && !message.verified) {
      return; // a container that does not verify never replaces one that did
    }
    if (!had.verified && message.verified) {
      Object.assign(had, message, { read: had.read || message.read });
      render(had);
      return;
    }
    if (message.revision > had.revision) {
      had.revision = message.revision;
      had.text = message.text;
      had.deliveryState = message.deliveryState;
    } else if (message.revision === had.revision) {
      mergeState(had, message.deliveryState);
    }
    had.read = had.read || message.read;
    had.deleted = had.deleted || message.deleted;
    had.pending = had.pending && message.pending;
    render(had);
  } else {
    if (state.earlyReads.delete(message.baseKey)) {
      message.read = true;
    }
    state.messages.set(message.baseKey, message);
    render(message);
  }
}

function updateMessage(baseKey, change) {
  const message = state.messages.get(baseKey);
  if (message) {
    change(message);
    render(message);
  }
}

function displayState(message) {
  if (message.pending) {
    return 'pending';
  }
  return message.read ? 'read' : message.deliveryState;
}

function render(message) {
  const list = $('messages');
  let li = list.querySelector(`[data-base-key="${CSS.escape(message.baseKey)}"]`);
  if (message.deleted) {
    li?.remove();
    return;
  }
  const atEnd = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
  if (!li) {
    li = document.createElement('li');
    li.dataset.baseKey = message.baseKey;
    li.dataset.createdAtMs = String(message.createdAtMs);
    const after = [...list.children].find((other) => Number(other.dataset.createdAtMs) > message.createdAtMs);
    list.insertBefore(li, after || null);
    if (!message.outgoing) {
      observer.observe(li);
    }
  }
  li.className = `message${message.outgoing ? ' mine' : ''}${message.verified ? '' : ' not-verified'}`;
  li.dataset.messageKey = message.messageKey;
  li.dataset.verified = String(message.verified);
  const text = span('text', message.text);
  const meta = document.createElement('div');
  meta.className = 'meta';
  const time = document.createElement('time');
  time.dateTime = new Date(message.createdAtMs).toISOString();
  time.textContent = new Date(message.createdAtMs).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  meta.append(time);
  if (message.revision > 0) {
    meta.append(span('edited', 'edited'));
  }
  if (!message.verified) {
    li.dataset.state = 'not-verified';
    text.setAttribute('role', 'alert');
  } else if (message.outgoing) {
    const shown = displayState(message);
    li.dataset.state = shown;
    const tick = span('tick', TICKS[shown].mark);
    tick.dataset.state = shown;
    tick.setAttribute('role', 'img');
    tick.setAttribute('aria-label', TICKS[shown].label);
    tick.title = TICKS[shown].label;
    if (shown === 'failed') {
      meta.append(span('failed-text', 'Message not delivered'));
    }
    meta.append(tick);
    if (!message.pending) {
      meta.append(actionButton('Edit', () => edit(message)), actionButton('Delete', () => remove(message)));
    }
  } else {
    delete li.dataset.state;
  }
  li.replaceChildren(text, meta);
  if (atEnd) {
    scrollToEnd();
  }
}

function actionButton(text, action) {
  const button = document.createElement('button');
  button.type = 'button';
  button.textContent = text;
  button.addEventListener('click', () => guarded($('chat-error'), action));
  return button;
}

function span(className, text) {
  const s = document.createElement('span');
  s.className = className;
  s.textContent = text;
  return s;
}

function scrollToEnd() {
  const list = $('messages');
  list.scrollTop = list.scrollHeight;
}

// ---- read receipts ----

async function readOnScreen(baseKey) {
  const message = state.messages.get(baseKey);
  if (!message || message.outgoing || !message.verified || message.read || state.receiptsSent.has(baseKey)
      || document.visibilityState !== 'visible') {
    return;
  }
  if (!state.conn || !state.conn.ready) {
    state.receiptsOwed.add(baseKey);
    return;
  }
  state.receiptsSent.add(baseKey);
  state.receiptsOwed.delete(baseKey);
  const peer = baseKey.split('|')[0];
  try {
    const receipt = await signContainer({
      kind: Kind.READ_RECEIPT, createdAtMs: Date.now(), nonce: randomNonce(), revision: 0,
      from: state.identity.login, to: peer, ref: baseKey,
    }, state.identity.privateKey);
    await state.conn.request('SendReadReceipt', { receiptBlobB64: b64encode(receipt) });
    message.read = true;
    const c = state.conversations.get(peer);
    if (c && c.unread > 0) {
      c.unread--;
      renderConversations();
    }
  } catch (e) {
    state.receiptsSent.delete(baseKey);
    state.receiptsOwed.add(baseKey);
  }
}

// ---- sending: the outbox keeps the signed bytes until the own server answers ----

async function send() {
  const textarea = $('message');
  const text = textarea.value.trim();
  if (!text || !state.peer) {
    return;
  }
  textarea.value = '';
  await guarded($('chat-error'), () => queuePair(state.peer, Date.now(), randomNonce(), 0, text));
}

async function queuePair(peer, createdAtMs, nonce, revision, text) {
  const fields = { createdAtMs, nonce, revision, from: state.identity.login, to: peer, body: encodeBody(text) };
  const incoming = await signContainer({ ...fields, kind: Kind.INCOMING }, state.identity.privateKey);
  const outgoing = await signContainer({ ...fields, kind: Kind.OUTGOING }, state.identity.privateKey);
  const entry = {
    baseKey: `${fields.from}|${peer}|${createdAtMs}|${nonce}`, owner: fields.from, peer, createdAtMs,
    nonce: String(nonce), revision, text, incomingBlobB64: b64encode(incoming), outgoingBlobB64: b64encode(outgoing),
  };
  await idb(state.db, 'outbox', 'readwrite', (store) => store.put(entry));
  showPending(entry);
  touchConversation(peer, text, createdAtMs, 0);
  flushOutbox();
}

function showPending(entry) {
  if (entry.peer !== state.peer || entry.owner !== state.identity.login) {
    return;
  }
  // a shown message that did not verify is not the user's: the pending one takes its place
  const had = state.messages.get(entry.baseKey)?.verified ? state.messages.get(entry.baseKey) : null;
  if (had && had.revision > entry.revision) {
    return;
  }
  const message = had || {
    baseKey: entry.baseKey, messageKey: `${entry.baseKey}|${Kind.OUTGOING}`, outgoing: true,
    createdAtMs: entry.createdAtMs, nonce: BigInt(entry.nonce), deliveryState: 'accepted', read: false,
    deleted: false, verified: true,
  };
  message.revision = entry.revision;
  message.text = entry.text;
  message.pending = true;
  state.messages.set(message.baseKey, message);
  render(message);
}

async function renderOutboxOnly() {
  const entries = await idb(state.db, 'outbox', 'readonly', (store) => store.getAll());
  for (const entry of entries) {
    showPending(entry);
  }
}

/** Sends every queued pair with the bytes signed when it was written; a lost answer is a resend of them. */
async function flushOutbox() {
  if (state.flushing || !state.conn || !state.conn.ready) {
    return;
  }
  state.flushing = true;
  try {
    const entries = (await idb(state.db, 'outbox', 'readonly', (store) => store.getAll()))
      .filter((e) => e.owner === state.identity.login).sort((a, b) => a.createdAtMs - b.createdAtMs);
    for (const entry of entries) {
      let answer;
      try {
        answer = await state.conn.request('SendMessagePair',
          { incomingBlobB64: entry.incomingBlobB64, outgoingBlobB64: entry.outgoingBlobB64 });
      } catch (e) {
        if (e.status >= 400 && e.status < 500 && e.status !== 429) {
          // refused for good: these bytes will never be accepted, and they are not re-signed
          await idb(state.db, 'outbox', 'readwrite', (store) => store.delete(entry.baseKey));
          updateMessage(entry.baseKey, (m) => { m.pending = false; m.deliveryState = 'failed'; });
          $('chat-error').textContent = `Not sent to ${entry.peer}: ${e.message}`;
          continue;
        }
        setTimeout(flushOutbox, 2000);
        return;
      }
      await idb(state.db, 'outbox', 'readwrite', (store) => store.delete(entry.baseKey));
      updateMessage(entry.baseKey, (m) => {
        if (m.revision === entry.revision) {
          m.pending = false;
          if (entry.revision > 0) {
            m.deliveryState = answer.deliveryState;
          } else {
            mergeState(m, answer.deliveryState);
          }
        }
      });
    }
  } finally {
    state.flushing = false;
  }
}

async function edit(message) {
  const text = prompt('Edit message', message.text);
  if (text === null || !text.trim() || text.trim() === message.text) {
    return;
  }
  await queuePair(state.peer, message.createdAtMs, message.nonce, message.revision + 1, text.trim());
}

async function remove(message) {
  if (!state.conn.ready) {
    throw new Error('offline: a message can be deleted once the connection is back');
  }
  const tombstone = await signContainer({
    kind: Kind.TOMBSTONE, createdAtMs: Date.now(), nonce: randomNonce(), revision: 0,
    from: state.identity.login, to: state.peer, ref: message.messageKey,
  }, state.identity.privateKey);
  await state.conn.request('DeleteMessage', { tombstoneBlobB64: b64encode(tombstone) });
  message.deleted = true;
  render(message);
}

async function guarded(errorElement, action) {
  errorElement.textContent = '';
  try {
    await action();
  } catch (e) {
    errorElement.textContent = e.message;
  }
}

document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') {
    for (const li of $('messages').children) {
      observer.unobserve(li);
      if (!li.classList.contains('mine')) {
        observer.observe(li);
      }
    }
  }
});

main().catch((e) => {
  $('setup').hidden = false;
  $('setup-error').textContent = `The chat cannot start: ${e.message}`;
});

