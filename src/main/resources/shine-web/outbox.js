// The outbox and the ticks. What the user writes (or edits) is signed once, kept in IndexedDB and shown pending until
// the own server answers; a lost answer (closed socket, timeout, 429, 5xx) is a resend of the same bytes after a
// pause or the next login, a 4xx ends it as failed. The ticks (seed §8) a sent message shows: a clock pending, grey ✓
// accepted, light ✓ delivered, ✓✓ read, red ! failed. For the browser and Node: storage and session are handed in.
import { Kind, b64encode, encodeBody, signContainer } from './codec.js';
import { MAX_BODY_BYTES, plain, tooLong } from './errors.js';

export const RETRY_MS = 2000;
const RANK = { accepted: 1, delivered: 2, failed: 2 };
export const TICKS = {
  pending: { mark: '', label: 'Sending' },
  accepted: { mark: '✓', label: 'Sent: accepted by your server' },
  delivered: { mark: '✓', label: 'Delivered' },
  read: { mark: '✓✓', label: 'Read' },
  failed: { mark: '!', label: 'Delivery failed' },
};

/** A delivery state never goes back: `next` only when it ranks higher than `current`. */
export function laterDelivery(current, next) {
  return next && (RANK[next] || 0) > (RANK[current] || 0) ? next : current;
}

/** The tick a message of the user's shows: pending, else read (a receipt outranks delivery), else its delivery. */
export function tickOf(message) {
  if (message.pending) {
    return 'pending';
  }
  return message.read ? 'read' : message.deliveryState;
}

/** The outbox's storage in the IndexedDB store 'outbox' (keyPath baseKey) of keys.js. */
export function idbStorage(db, idb) {
  return {
    all: () => idb(db, 'outbox', 'readonly', (store) => store.getAll()),
    put: (entry) => idb(db, 'outbox', 'readwrite', (store) => store.put(entry)),
    delete: (baseKey) => idb(db, 'outbox', 'readwrite', (store) => store.delete(baseKey)),
  };
}

/**
 * `session` is {identity, client}: the signed-in key and its protocol client (sendPair, ready), read on each use.
 * `onError(text)` says why a send ended as failed.
 */
export class Outbox {
  constructor({
    store, storage, session, onError = () => {}, setTimer = setTimeout, retryMs = RETRY_MS,
    seal = async (owner, baseKey, kind, revision, body) => body,
  }) {
    Object.assign(this, { store, storage, session, onError, setTimer, retryMs, seal });
    this.flushing = false;
    this.again = false;
  }

  /**
   * Seals each copy to its owner (`seal`: the recipient's key for the incoming copy, the sender's own for the outgoing
   * one, when their cards have one), signs the pair once, keeps it, shows it pending and sends it when it can.
   */
  async queue(peer, createdAtMs, nonce, revision, text) {
    const long = tooLong(text);
    if (long) {
      throw new Error(long); // the server would refuse it: nothing is signed or kept
    }
    const { identity } = this.session;
    const baseKey = `${identity.login}|${peer}|${createdAtMs}|${nonce}`;
    const body = encodeBody(text);
    const incomingBody = await this.seal(peer, baseKey, Kind.INCOMING, revision, body);
    const outgoingBody = await this.seal(identity.login, baseKey, Kind.OUTGOING, revision, body);
    if (incomingBody.length > MAX_BODY_BYTES || outgoingBody.length > MAX_BODY_BYTES) {
      throw new Error(tooLong(text, true)); // too long once sealed
    }
    const fields = { createdAtMs, nonce, revision, from: identity.login, to: peer };
    const incoming = await signContainer({ ...fields, body: incomingBody, kind: Kind.INCOMING }, identity.privateKey);
    const outgoing = await signContainer({ ...fields, body: outgoingBody, kind: Kind.OUTGOING }, identity.privateKey);
    const entry = {
      baseKey, owner: fields.from, peer, createdAtMs,
      nonce: String(nonce), revision, text, incomingBlobB64: b64encode(incoming), outgoingBlobB64: b64encode(outgoing),
    };
    await this.storage.put(entry);
    this.store.dispatch({ type: 'queued', entry });
    this.flush();
    return entry;
  }

  /** Drops what the outbox holds for a message (it was deleted): an edit waiting to be sent is not sent. */
  async forget(baseKey) {
    await this.storage.delete(baseKey);
  }

  /** Shows what the outbox holds for the open chat as pending (after a reload, or on opening a chat). */
  async show() {
    this.store.dispatch({ type: 'outboxShown', entries: await this.storage.all() });
  }

  /**
   * Sends every kept pair of the user, oldest first, with the bytes signed when it was written. A flush asked for
   * while one runs (a message written meanwhile) makes the running one look again when it is done.
   */
  async flush() {
    const { identity, client } = this.session;
    if (!client || !client.ready) {
      return;
    }
    if (this.flushing) {
      this.again = true;
      return;
    }
    this.flushing = true;
    try {
      do {
        this.again = false;
        const entries = (await this.storage.all())
          .filter((e) => e.owner === identity.login).sort((a, b) => a.createdAtMs - b.createdAtMs);
        for (const entry of entries) {
          if (!(await this.send(client, entry))) {
            this.setTimer(() => this.flush(), this.retryMs);
            return;
          }
        }
      } while (this.again);
    } finally {
      this.flushing = false;
    }
  }

  /** One pair: false when its answer was lost (it stays kept, to be sent again). */
  async send(client, entry) {
    let answer;
    try {
      answer = await client.sendPair(entry);
    } catch (e) {
      if (e.status >= 400 && e.status < 500 && e.status !== 429) {
        // refused for good: these bytes will never be accepted, and they are not re-signed
        await this.storage.delete(entry.baseKey);
        this.store.dispatch({ type: 'sendFailed', baseKey: entry.baseKey });
        this.onError(`Not sent to ${entry.peer}: ${plain(e, { peer: entry.peer })}`);
        return true;
      }
      return false;
    }
    await this.storage.delete(entry.baseKey);
    this.store.dispatch({
      type: 'sent', baseKey: entry.baseKey, revision: entry.revision, deliveryState: answer.deliveryState,
    });
    return true;
  }
}
