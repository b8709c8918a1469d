// User cards as the chat reads them (PROTOCOL §4, v1 and v3): a card checked against its own signature becomes one
// plain shape, and `follows` says whether a newer card follows from a pinned one the way the protocol allows (the
// same epoch signed by a current device key of the previous card, epoch + 1 by its recovery key, every old key kept as
// a key, retired or revoked). The one place the chat reads keys from a card. For the browser and for Node.
import { b64decode, b64encode, cardText, cardText3 } from './codec.js';

const B64_32 = /^[A-Za-z0-9+/]{43}=$/;

/** The words of the blocking warning for a card that does not follow from the pinned one. */
export function keysChangedText(login) {
  return `${login}'s keys changed in a way their devices did not sign`;
}

const isKey = (text) => typeof text === 'string' && B64_32.test(text);

/**
 * {card, problem}: `card` is {login, epoch, version, current: [B64], retired: [{publicKeyB64, retiredAtMs}], revoked:
 * [B64], recovery, enc, signer, raw (the card as served)} once the card names `login` and its own signature verifies;
 * else `problem` says why not.
 */
export async function readCard(login, raw) {
  if (!raw || raw.login !== login) {
    return { card: null, problem: `the card served for ${login} is not ${login}'s` };
  }
  let card;
  let signed;
  try {
    if (raw.publicKeyB64 !== undefined) {
      if (!isKey(raw.publicKeyB64) || !Array.isArray(raw.accessServers) || !Number.isSafeInteger(raw.version)) {
        throw new Error('malformed');
      }
      card = { login, epoch: 0, version: raw.version, current: [raw.publicKeyB64], retired: [], revoked: [],
        recovery: null, enc: null, signer: raw.publicKeyB64, raw };
      signed = cardText(login, raw.publicKeyB64, raw.version, raw.accessServers);
    } else {
      card = v3Shape(login, raw);
      signed = cardText3(raw);
    }
  } catch (e) {
    return { card: null, problem: `${login}'s card is malformed` };
  }
  let verified = false;
  try {
    const key = await crypto.subtle.importKey('raw', b64decode(card.signer), 'Ed25519', false, ['verify']);
    verified = await crypto.subtle.verify('Ed25519', key, b64decode(raw.signatureB64), signed);
  } catch (e) {
    verified = false;
  }
  if (!verified) {
    return { card: null, problem: `${login}'s card is not signed by its key` };
  }
  return { card, problem: null };
}

function v3Shape(login, raw) {
  const list = (value) => (value === undefined ? [] : value);
  const keys = raw.keys;
  const retired = list(raw.retiredKeys);
  const revoked = list(raw.revokedKeysB64);
  if (!Array.isArray(keys) || keys.length < 1 || !keys.every((k) => isKey(k?.publicKeyB64))
      || !Array.isArray(retired) || !retired.every((k) => isKey(k?.publicKeyB64) && Number.isSafeInteger(k.retiredAtMs))
      || !Array.isArray(revoked) || !revoked.every(isKey) || !Array.isArray(raw.accessServers)
      || !Number.isSafeInteger(raw.epoch) || !Number.isSafeInteger(raw.version) || !isKey(raw.signerKeyB64)
      || (raw.recoveryKeyB64 !== undefined && !isKey(raw.recoveryKeyB64))
      || (raw.encryptionKeyB64 !== undefined && !isKey(raw.encryptionKeyB64))) {
    throw new Error('malformed');
  }
  return {
    login, epoch: raw.epoch, version: raw.version, current: keys.map((k) => k.publicKeyB64),
    labels: keys.map((k) => k.label || ''), retired: retired.map((k) => ({ ...k })), revoked: [...revoked],
    recovery: raw.recoveryKeyB64 || null, enc: raw.encryptionKeyB64 || null, signer: raw.signerKeyB64, raw,
  };
}

/** The keys that verify the user's messages: current and retired device keys, never revoked ones. */
export function messageKeysOf(card) {
  return [...card.current, ...card.retired.map((k) => k.publicKeyB64)].filter((k) => !card.revoked.includes(k));
}

/** -1, 0 or 1 as card a comes before, at the place of, or after card b (ordered by epoch, then version). */
export function compareCards(a, b) {
  if (a.epoch !== b.epoch) {
    return a.epoch < b.epoch ? -1 : 1;
  }
  return a.version === b.version ? 0 : (a.version < b.version ? -1 : 1);
}

/** Whether `next` (read by readCard) follows directly from `previous` as PROTOCOL §4 v3 allows. */
export function follows(previous, next) {
  if (compareCards(next, previous) <= 0) {
    return false;
  }
  if (next.epoch === previous.epoch) {
    if (!previous.current.includes(next.signer)) {
      return false;
    }
    if (previous.recovery !== null && next.recovery !== previous.recovery) {
      return false; // only the recovery key changes or removes the recovery key
    }
  } else if (next.epoch !== previous.epoch + 1 || previous.recovery === null || next.signer !== previous.recovery) {
    return false;
  }
  const retired = next.retired.map((k) => k.publicKeyB64);
  const kept = new Set([...next.current, ...retired, ...next.revoked]);
  if (!previous.current.every((k) => kept.has(k))) {
    return false; // a key silently dropped
  }
  const gone = new Set([...previous.revoked, ...previous.retired.map((k) => k.publicKeyB64)]);
  if (next.current.some((k) => gone.has(k))) {
    return false; // a retired or revoked key never comes back
  }
  return previous.revoked.every((k) => !retired.includes(k));
}

/** Whether `chain` (oldest first) leads from `pinned` step by step; an empty chain leads nowhere. */
export function chainFollows(pinned, chain) {
  let previous = pinned;
  for (const card of chain) {
    if (compareCards(card, previous) <= 0) {
      continue; // a card at or before the pinned one adds nothing
    }
    if (!follows(previous, card)) {
      return false;
    }
    previous = card;
  }
  return previous !== pinned;
}

/**
 * The v3 card that follows `served` (as served, v1 or v3; null for a login new here): the same epoch, the next
 * version, the same keys, lists and routes, then `change(card)` edits it. As client.DeviceCard.next does.
 */
export function nextCard(login, served, change = () => {}) {
  const card = { login, epoch: 0, version: 1, keys: [], accessServers: [] };
  if (served) {
    card.epoch = served.epoch || 0;
    card.version = served.version + 1;
    card.keys = served.publicKeyB64 !== undefined ? [{ publicKeyB64: served.publicKeyB64 }]
      : served.keys.map((k) => ({ ...k }));
    for (const field of ['recoveryKeyB64', 'encryptionKeyB64']) {
      if (served[field]) {
        card[field] = served[field];
      }
    }
    if (served.retiredKeys?.length) {
      card.retiredKeys = served.retiredKeys.map((k) => ({ ...k }));
    }
    if (served.revokedKeysB64?.length) {
      card.revokedKeysB64 = [...served.revokedKeysB64];
    }
    card.accessServers = served.accessServers.map((s) => ({ ...s }));
  }
  change(card);
  return card;
}

/** Signs a v3 card with a device key (or the recovery key): the card as PublishUserCard takes it. */
export async function signCard(card, signerKeyB64, privateKey) {
  const signed = { ...card, signerKeyB64 };
  for (const list of ['retiredKeys', 'revokedKeysB64']) {
    if (signed[list] && signed[list].length === 0) {
      delete signed[list];
    }
  }
  const signature = await crypto.subtle.sign('Ed25519', privateKey, cardText3(signed));
  return { ...signed, signatureB64: b64encode(new Uint8Array(signature)) };
}

/** A device key's label: the browser's name, at most 32 characters (labels are not signed). */
export function browserLabel(userAgent) {
  const names = [['Edg/', 'Edge'], ['Firefox/', 'Firefox'], ['Chromium/', 'Chromium'], ['Chrome/', 'Chrome'],
    ['Safari/', 'Safari']];
  const found = names.find(([token]) => userAgent.includes(token));
  const os = ['Android', 'iPhone', 'Linux', 'Windows', 'Mac'].find((o) => userAgent.includes(o));
  return `${found ? found[1] : 'Browser'}${os ? ` on ${os}` : ''}`.slice(0, 32);
}
