// What the server hands the chat is checked before it is shown (PROTOCOL §13 "Clients verify"): every container
// against its author's card key (GetUserCard), with WebCrypto Ed25519. Cards are kept in memory, at most MAX_CARDS,
// the least recently used dropped first; a container that does not verify with a kept card is checked once more
// against the card read anew (its author may have a newer one). For the browser and for Node.
import { chainFollows, compareCards, keysChangedText, messageKeysOf, readCard } from './cards.js';
import {
  Kind, b64decode, baseKey as baseKeyOf, messageKey as messageKeyOf, parseContainer,
} from './codec.js';

export const MAX_CARDS = 500;
const UNREADABLE = 'the server sent something that is not a readable message';

/** A check's outcome: `verified`, or why not; `checked` is false when the author's card could not be read now. */
const ok = (container) => ({ verified: true, checked: true, reason: '', container });
const notVerified = (reason, container = null) => ({ verified: false, checked: true, reason, container });
const unchecked = (reason, container) => ({ verified: false, checked: false, reason, container });

/**
 * The keys a card lets sign containers — a v1 card's one key, a v3 card's current and retired device keys (never a
 * revoked one) — once the card names the login asked for and its own signature verifies (cards.js); `card` is the
 * card as cards.js reads it.
 */
export async function cardKeys(login, raw) {
  const { card, problem } = await readCard(login, raw);
  if (problem) {
    return { keys: [], problem, card: null };
  }
  const keys = await Promise.all(messageKeysOf(card)
    .map((k) => crypto.subtle.importKey('raw', b64decode(k), 'Ed25519', false, ['verify'])));
  return { keys, problem: null, card };
}

export class Verifier {
  /**
   * `me`: the signed-in login; `readCard(login)`: a promise of the card JSON, or null when the server has none
   * (any other failure: the card cannot be read now). `pins` {get(login), put(login, raw)} keeps each contact's card
   * as first seen (IndexedDB in the page); `readChain(login, sinceEpoch, sinceVersion)` answers the cards served
   * after that place, oldest first (GetUserCard's chain). Without pins every card is taken as served.
   */
  constructor(me, readCard, capacity = MAX_CARDS, { pins = null, readChain = null } = {}) {
    this.me = me;
    this.readCard = readCard;
    this.capacity = capacity;
    this.pins = pins;
    this.readChain = readChain;
    this.cards = new Map(); // login → promise of {keys, problem}, in order of use (the oldest first)
  }

  /** A copy of an event or a history entry: its kind and the keys the server says it has must be the container's. */
  async copy(blobB64, kind, claims = {}) {
    const container = parse(blobB64);
    if (!container) {
      return notVerified(UNREADABLE);
    }
    if (container.kind !== kind || (claims.messageKey !== undefined && claims.messageKey !== messageKeyOf(container))
        || (claims.baseKey !== undefined && claims.baseKey !== baseKeyOf(container))) {
      return notVerified('the server\'s description does not match the message', container);
    }
    return this.owned(container, b64decode(blobB64));
  }

  /** The receipt a DmReadReceipt event carries (receiptBlobB64), which must say what the event says. */
  async receipt(payload) {
    const container = parse(payload.receiptBlobB64);
    if (!container) {
      return notVerified('the server sent a receipt that cannot be read');
    }
    if (container.kind !== Kind.READ_RECEIPT || container.ref !== payload.baseKey
        || container.from !== payload.readerLogin) {
      return notVerified('the server\'s description does not match the receipt', container);
    }
    return this.owned(container, b64decode(payload.receiptBlobB64));
  }

  /** A container that must be the user's and its author's (the last message of a chat in the list). */
  async blob(blobB64) {
    const container = parse(blobB64);
    return container ? this.owned(container, b64decode(blobB64)) : notVerified(UNREADABLE);
  }

  async owned(container, bytes) {
    const mine = container.kind === Kind.INCOMING || container.kind === Kind.READ_RECEIPT
      ? container.to === this.me : container.from === this.me;
    if (!mine) {
      return notVerified(`not addressed to ${this.me} (${container.from} → ${container.to})`, container);
    }
    return this.signature(container, bytes);
  }

  /** Whether the author's card key signs the container: the kept card first, then one read anew. */
  async signature(container, bytes) {
    const author = container.from;
    const { entry, readNow } = this.lookup(author);
    const first = await this.check(container, bytes, entry);
    if (first.verified || !first.checked || readNow) {
      return first;
    }
    return this.check(container, bytes, this.reread(author, entry));
  }

  async check(container, bytes, entry) {
    let card;
    try {
      card = await entry;
    } catch (e) {
      // why the card could not be read (offline, a timeout) changes nothing for the user: it is read again later
      return unchecked(`could not read ${container.from}'s card now; it is checked again when the chat is opened again`,
        container);
    }
    if (card.problem) {
      return notVerified(card.problem, container);
    }
    const signed = bytes.subarray(0, container.signedLength);
    for (const key of card.keys) {
      if (await crypto.subtle.verify('Ed25519', key, container.signature, signed)) {
        return ok(container);
      }
    }
    return notVerified(`this message is not signed by ${container.from}'s key`, container);
  }

  lookup(login) {
    const kept = this.cards.get(login);
    if (kept) {
      this.cards.delete(login);
      this.cards.set(login, kept);
      return { entry: kept, readNow: false };
    }
    return { entry: this.keep(login, this.read(login)), readNow: true };
  }

  reread(login, stale) {
    const now = this.cards.get(login);
    if (now && now !== stale) {
      return now;
    }
    this.cards.delete(login);
    return this.keep(login, this.read(login));
  }

  keep(login, entry) {
    this.cards.set(login, entry);
    while (this.cards.size > this.capacity) {
      this.cards.delete(this.cards.keys().next().value);
    }
    // a read that failed is forgotten, so that the next message tries again
    entry.catch(() => {
      if (this.cards.get(login) === entry) {
        this.cards.delete(login);
      }
    });
    return entry;
  }

  /** The card of `login` as read now ({keys, problem, card, broken?}), through the cache. */
  cardOf(login) {
    return this.lookup(login).entry;
  }

  async read(login) {
    const raw = await this.readCard(login);
    if (!raw) {
      return { keys: [], problem: `${login} has no card on this server`, card: null };
    }
    const served = await cardKeys(login, raw);
    return served.problem || !this.pins ? served : this.pinned(login, served);
  }

  /**
   * The served card checked against the pinned one: pinned on first sight; a newer one taken (and pinned) only when
   * the chain from the pinned one follows step by step; an older one leaves the pinned one in force; anything else
   * is `broken`, which verifies nothing and blocks sending.
   */
  async pinned(login, served) {
    const raw = await this.pins.get(login);
    if (!raw) {
      await this.pins.put(login, served.card.raw);
      return served;
    }
    const pinned = await cardKeys(login, raw);
    if (pinned.problem) {
      await this.pins.put(login, served.card.raw);
      return served;
    }
    const order = compareCards(served.card, pinned.card);
    if (order < 0) {
      return pinned;
    }
    if (order === 0) {
      return sameText(served.card, pinned.card) ? served : broken(login);
    }
    const chain = [];
    for (const cardRaw of await this.readChain(login, pinned.card.epoch, pinned.card.version)) {
      const read = await readCard(login, cardRaw);
      if (read.problem) {
        return broken(login);
      }
      chain.push(read.card);
    }
    if (!chainFollows(pinned.card, chain)) {
      return broken(login);
    }
    const newest = await cardKeys(login, chain[chain.length - 1].raw);
    await this.pins.put(login, newest.card.raw);
    return newest;
  }
}

function broken(login) {
  return { keys: [], problem: keysChangedText(login), card: null, broken: true };
}

function sameText(a, b) {
  return a.signer === b.signer && JSON.stringify({ ...a.raw, keys: a.current, signatureB64: 0 })
    === JSON.stringify({ ...b.raw, keys: b.current, signatureB64: 0 });
}

function parse(blobB64) {
  try {
    return parseContainer(b64decode(blobB64));
  } catch (e) {
    return null;
  }
}
