// The protocol client: one logged-in session (conn.js) and its verifier (verify.js). The server's events, checked and
// one after another in the order they came, become the store's events; the ops the chat uses return checked
// messages; registration runs on a connection of its own that never logs in. No DOM here.
import {
  Kind, b64decode, b64encode, baseKey as baseKeyOf, cardText, decodeBody, parseContainer, randomNonce, signContainer,
} from './codec.js';
import { Connection } from './conn.js';
import { Verifier } from './verify.js';

export const PAGE = 50;

export function wsUrl() {
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`;
}

export function notVerifiedText(reason) {
  return `Not verified — ${reason}`;
}

/** A message as the chat keeps it; one that does not verify keeps the reason, never the container's words. */
export function fromContainer(container, outgoing, deliveryState, check) {
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

export class ProtocolClient {
  /** onState(connection, error) as conn.js says it; onEvent(storeEvent); onError(error) of an event's handling. */
  constructor(url, identity, { onState, onEvent, onError }) {
    this.identity = identity;
    this.onEvent = onEvent;
    this.onError = onError;
    this.events = Promise.resolve();
    this.ended = false;
    this.conn = new Connection(url, identity, { onEvent: (op, payload) => this.queue(op, payload), onState });
    this.verifier = new Verifier(identity.login, (login) => this.conn.request('GetUserCard', { login })
      .then(({ card }) => card, (e) => {
        if (e.code === 'USER_NOT_FOUND') {
          return null;
        }
        throw e;
      }));
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
        message: fromContainer(container, outgoing, outgoing ? payload.deliveryState : undefined, check),
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
    return conversations.map((c, i) => ({
      peer: c.peer, lastAtMs: c.lastAtMs, unread: c.unread,
      lastText: checks[i].verified ? decodeBody(checks[i].container.body) : notVerifiedText(checks[i].reason),
    }));
  }

  /** A page of a chat, newest first: {messages, hasMore, lastAtMs (the oldest entry's time, or null)}. */
  async page(peer, beforeCreatedAtMs) {
    const request = beforeCreatedAtMs === undefined ? { peer, limit: PAGE } : { peer, beforeCreatedAtMs, limit: PAGE };
    const page = await this.conn.request('GetDirectMessages', request);
    const checks = await Promise.all(page.messages.map((entry) => this.verifier.copy(entry.blobB64,
      entry.direction === 'outgoing' ? Kind.OUTGOING : Kind.INCOMING, entry)));
    const messages = [];
    page.messages.forEach((entry, i) => {
      const { container } = checks[i];
      if (container) {
        const message = fromContainer(container, entry.direction === 'outgoing', entry.deliveryState, checks[i]);
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

/** Publishes a signed card naming `servers` on this server, which relays it. */
export function register(identity, servers) {
  return anonymous(async (call) => {
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

/** The card this server has for a login, or null. */
export function publishedCard(login) {
  return anonymous((call) => call('GetUserCard', { login })).then(({ card }) => card, () => null);
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
          error.status = frame.status;
          error.code = frame.error.code;
          w.fail(error);
        }
      }
    };
    socket.onerror = () => reject(new Error('The server cannot be reached right now. Try again in a moment.'));
    socket.onopen = () => work(call).then(resolve, reject).finally(() => socket.close());
  });
}
