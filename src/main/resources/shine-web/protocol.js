// The protocol client: one logged-in session (conn.js) and its verifier (verify.js). The server's events, checked and
// one after another in the order they came, become the store's events; the ops the chat uses return checked
// messages; registration runs on a connection of its own that never logs in. No DOM here.
import { keysChangedText, nextCard, readCard, signCard } from './cards.js';
import {
  Kind, b64decode, b64encode, baseKey as baseKeyOf, decodeBody, parseContainer, randomNonce, signContainer,
} from './codec.js';
import { Connection, anonymous as anonymousOn } from './conn.js';
import { isEncryptedBody, openBody, privateKeysOf, sealBody } from './hpke.js';
import { Verifier } from './verify.js';

/** What is shown for a body that does not open with this device's keys: never its bytes as text. */
export const CANNOT_DECRYPT = 'Cannot decrypt on this device';
/** The marker of a plaintext message from a contact whose card has an encryption key. */
export const SENT_UNENCRYPTED = 'sent unencrypted';

export const PAGE = 50;

export function wsUrl() {
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`;
}

export function notVerifiedText(reason) {
  return `Not verified — ${reason}`;
}

/**
 * A message as the chat keeps it; one that does not verify keeps the reason, never the container's words. `shown`
 * {text, marker} is what readText made of its body (by default the plaintext body's text).
 */
export function fromContainer(container, outgoing, deliveryState, check, shown = null) {
  const { text, marker } = shown || { text: decodeBody(container.body), marker: null };
  return {
    baseKey: baseKeyOf(container),
    messageKey: `${baseKeyOf(container)}|${outgoing ? Kind.OUTGOING : Kind.INCOMING}`,
    outgoing,
    createdAtMs: container.createdAtMs,
    nonce: container.nonce,
    revision: container.revision,
    text: check.verified ? text : notVerifiedText(check.reason),
    verified: check.verified,
    marker: check.verified ? marker : null, // null, 'cannot-decrypt' or 'unencrypted'
    sealed: check.verified && isEncryptedBody(container.body),
    deliveryState: deliveryState || 'accepted',
    read: false,
    deleted: false,
    pending: false,
  };
}

export class ProtocolClient {
  /**
   * onState(connection, error) as conn.js says it; onEvent(storeEvent); onError(error) of an event's handling;
   * onUndecryptable() when a body sealed to a key this device lacks comes.
   */
  constructor(url, identity, { onState, onEvent, onError, onUndecryptable = () => {}, pins = null }) {
    this.identity = identity;
    this.onUndecryptable = onUndecryptable;
    this.onEvent = onEvent;
    this.onError = onError;
    this.events = Promise.resolve();
    this.ended = false;
    this.pins = pins;
    this.conn = new Connection(url, identity, { onEvent: (op, payload) => this.queue(op, payload), onState });
    this.verifier = new Verifier(identity.login, (login) => this.conn.request('GetUserCard', { login })
      .then(({ card }) => card, (e) => {
        if (e.code === 'USER_NOT_FOUND') {
          return null;
        }
        throw e;
      }), undefined, {
      pins,
      readChain: (login, sinceEpoch, sinceVersion) => this.conn
        .request('GetUserCard', { login, sinceEpoch, sinceVersion }).then(({ chain }) => chain || []),
    });
  }

  /**
   * What the chat knows of a user's card: {enc (the encryption key, or null), broken, problem}; read through the
   * verifier (pinned), or from the pin alone while offline. Throws when neither can be read.
   */
  async cardState(login) {
    let info;
    try {
      info = await this.verifier.cardOf(login);
    } catch (e) {
      const raw = this.pins && await this.pins.get(login);
      if (!raw) {
        throw e;
      }
      info = await readCard(login, raw);
    }
    return { enc: info.card ? info.card.enc : null, broken: Boolean(info.broken), problem: info.problem || null };
  }

  /**
   * The body of one copy as it is sent: sealed to its owner's encryption key when the owner's card has one (kind 1:
   * the recipient's, kind 2: the sender's own), else as it is. A contact whose keys changed unsigned gets nothing.
   */
  async sealFor(owner, baseKey, kind, revision, body) {
    const card = await this.cardState(owner);
    if (card.broken) {
      throw new Error(`${keysChangedText(owner)}: sending to ${owner} is disabled.`);
    }
    return card.enc ? sealBody(body, b64decode(card.enc), baseKey, kind, revision) : body;
  }

  /** The lookup kid → this device's encryption private keys, made anew when they change (a key transfer). */
  decryptionKeys() {
    const keys = this.identity.encryptionKeys || [];
    if (this.keysFor !== keys) {
      this.keysFor = keys;
      this.keysWithKid = privateKeysOf(keys.map((k) => k.privateKey));
    }
    return this.keysWithKid;
  }

  /**
   * {text, marker} of a verified container's body: an encrypted one opened with this device's keys (else the
   * "cannot decrypt" marker, never its bytes), a plaintext one marked when its author's card has an encryption key.
   */
  async readText(container) {
    const { body } = container;
    if (isEncryptedBody(body)) {
      try {
        const plain = await openBody(body, await this.decryptionKeys(), baseKeyOf(container), container.kind,
          container.revision);
        return { text: decodeBody(plain), marker: null };
      } catch (e) {
        this.onUndecryptable();
        return { text: CANNOT_DECRYPT, marker: 'cannot-decrypt' };
      }
    }
    const text = decodeBody(body);
    if (container.kind === Kind.INCOMING && container.from !== this.identity.login) {
      try {
        if ((await this.cardState(container.from)).enc) {
          return { text, marker: 'unencrypted' };
        }
      } catch (e) {
        // the author's card cannot be read now: no marker rather than a wrong one
      }
    }
    return { text, marker: null };
  }

  async shown(check) {
    return check.verified ? this.readText(check.container) : null;
  }

  start() {
    this.conn.start();
  }

  stop() {
    this.ended = true;
    this.conn.stop();
  }

  get ready() {
    return this.conn.ready;
  }

  /** True once the server refused the login for good (or stop()). */
  get stopped() {
    return this.conn.stopped;
  }

  queue(op, payload) {
    this.events = this.events.then(() => this.translate(op, payload))
      .then((event) => {
        if (event && !this.ended) { // not an event of a session that has ended
          this.onEvent(event);
        }
      })
      .catch((e) => this.onError(e));
  }

  /** The store's event for a server event, or null when it says nothing the chat shows. */
  async translate(op, payload) {
    if (op === 'IncomingDirectMessage' || op === 'OutgoingDirectMessage') {
      const check = await this.verifier.copy(payload.blobB64,
        op === 'OutgoingDirectMessage' ? Kind.OUTGOING : Kind.INCOMING, payload);
      const { container } = check;
      if (!container) {
        return null;
      }
      const outgoing = container.kind === Kind.OUTGOING;
      return {
        type: 'messageArrived', peer: outgoing ? container.to : container.from,
        message: fromContainer(container, outgoing, outgoing ? payload.deliveryState : undefined, check,
          await this.shown(check)),
      };
    }
    if (op === 'DmDeliveryStateChanged') {
      return { type: 'deliveryChanged', baseKey: payload.baseKey, deliveryState: payload.deliveryState };
    }
    if (op === 'DmReadReceipt') {
      // a receipt that comes with its signed container is believed only when that verifies
      if (payload.receiptBlobB64 === undefined) {
        return { type: 'readByPeer', baseKey: payload.baseKey, readAtMs: payload.readAtMs };
      }
      const check = await this.verifier.receipt(payload);
      // the time read is the signed receipt's own
      return check.verified ? { type: 'readByPeer', baseKey: payload.baseKey, readAtMs: check.container.createdAtMs }
        : null;
    }
    if (op === 'DmReadByMe') {
      return { type: 'readByMe', baseKey: payload.baseKey };
    }
    return null;
  }

  /** Whether the server knows `login` (GetUserCard); a failure other than USER_NOT_FOUND is thrown. */
  async userExists(login) {
    try {
      await this.conn.request('GetUserCard', { login });
      return true;
    } catch (e) {
      if (e.code === 'USER_NOT_FOUND') {
        return false;
      }
      throw e;
    }
  }

  /** The chat list: [{peer, lastAtMs, unread, lastText}], each last message checked. */
  async conversations() {
    const { conversations } = await this.conn.request('GetConversations', { limit: 100 });
    const checks = await Promise.all(conversations.map((c) => this.verifier.blob(c.lastBlobB64)));
    const shown = await Promise.all(checks.map((check) => this.shown(check)));
    return conversations.map((c, i) => ({
      peer: c.peer, lastAtMs: c.lastAtMs, unread: c.unread,
      lastText: checks[i].verified ? shown[i].text : notVerifiedText(checks[i].reason),
    }));
  }

  /** A page of a chat, newest first: {messages, hasMore, lastAtMs (the oldest entry's time, or null)}. */
  async page(peer, beforeCreatedAtMs) {
    const request = beforeCreatedAtMs === undefined ? { peer, limit: PAGE } : { peer, beforeCreatedAtMs, limit: PAGE };
    const page = await this.conn.request('GetDirectMessages', request);
    const checks = await Promise.all(page.messages.map((entry) => this.verifier.copy(entry.blobB64,
      entry.direction === 'outgoing' ? Kind.OUTGOING : Kind.INCOMING, entry)));
    const shown = await Promise.all(checks.map((check) => this.shown(check)));
    const messages = [];
    page.messages.forEach((entry, i) => {
      const { container } = checks[i];
      if (container) {
        const message = fromContainer(container, entry.direction === 'outgoing', entry.deliveryState, checks[i],
          shown[i]);
        message.read = entry.read;
        message.deleted = entry.deleted;
        if (entry.deleted) {
          message.text = ''; // a deleted copy's words are never shown
        }
        messages.push(message);
      }
    });
    const last = page.messages[page.messages.length - 1];
    const lastAtMs = last ? parseContainer(b64decode(last.blobB64)).createdAtMs : null;
    return { messages, hasMore: page.hasMore, lastAtMs };
  }

  sendPair(entry) {
    return this.conn.request('SendMessagePair',
      { incomingBlobB64: entry.incomingBlobB64, outgoingBlobB64: entry.outgoingBlobB64 });
  }

  async sendReadReceipt(baseKey) {
    const receipt = await signContainer({
      kind: Kind.READ_RECEIPT, createdAtMs: Date.now(), nonce: randomNonce(), revision: 0,
      from: this.identity.login, to: baseKey.split('|')[0], ref: baseKey,
    }, this.identity.privateKey);
    await this.conn.request('SendReadReceipt', { receiptBlobB64: b64encode(receipt) });
  }

  /** A tombstone for the user's own copy (PROTOCOL §5). */
  async deleteMessage(peer, messageKey) {
    const tombstone = await signContainer({
      kind: Kind.TOMBSTONE, createdAtMs: Date.now(), nonce: randomNonce(), revision: 0,
      from: this.identity.login, to: peer, ref: messageKey,
    }, this.identity.privateKey);
    await this.conn.request('DeleteMessage', { tombstoneBlobB64: b64encode(tombstone) });
  }
}

/**
 * Publishes the v3 card that follows the served one (or the first card of a login new here), naming `servers` and
 * this device's key (with its `label`); `encryptionKeyB64` is set when the card has none. A v1 card moves to v3
 * here, signed by its key. A login whose card does not list this key as a device key is refused as KEY_MISMATCH.
 */
export function register(identity, servers, { label, encryptionKeyB64 = null }) {
  return anonymous(async (call) => {
    const served = await servedCard(call, identity.login);
    const card = nextCard(identity.login, served, (next) => {
      next.accessServers = servers;
      const own = next.keys.find((k) => k.publicKeyB64 === identity.publicKeyB64);
      if (own) {
        own.label = own.label || label;
      } else if (!served) {
        next.keys.push({ publicKeyB64: identity.publicKeyB64, label });
      }
      if (!next.encryptionKeyB64 && encryptionKeyB64) {
        next.encryptionKeyB64 = encryptionKeyB64;
      }
    });
    if (!card.keys.some((k) => k.publicKeyB64 === identity.publicKeyB64)) {
      const error = new Error('another key');
      error.code = 'KEY_MISMATCH';
      throw error;
    }
    await call('PublishUserCard', { card: await signCard(card, identity.publicKeyB64, identity.privateKey) });
    return card;
  });
}

/**
 * Publishes the card that follows the one served now, as `change(card)` edits it, signed by this device's key: "Add a
 * device", "Rotate key", "Revoke a device", "Create recovery key" (`asyncChange` for an edit that must wait, such
 * as making a key). Answers the published card.
 */
export function changeCard(identity, change, signer = identity, asyncChange = async () => {}) {
  return anonymous(async (call) => {
    const served = await servedCard(call, identity.login);
    if (!served) {
      throw Object.assign(new Error('no card'), { code: 'USER_NOT_FOUND', status: 404 });
    }
    const card = nextCard(identity.login, served, change);
    await asyncChange(card);
    const published = await signCard(card, signer.publicKeyB64, signer.privateKey);
    await call('PublishUserCard', { card: published });
    return published;
  });
}

async function servedCard(call, login) {
  try {
    return (await call('GetUserCard', { login })).card;
  } catch (e) {
    if (e.code !== 'USER_NOT_FOUND') {
      throw e;
    }
    return null;
  }
}

/**
 * The card this server has for a login, or null when it has none (404). Any other failure (no answer, the server
 * unreachable or refusing) is thrown, never taken for "no card".
 */
export function publishedCard(login) {
  return anonymous((call) => servedCard(call, login));
}

/** Runs calls on a connection of its own to this page's server that never logs in (conn.js `anonymous`). */
export function anonymous(work) {
  return anonymousOn(wsUrl(), work);
}
