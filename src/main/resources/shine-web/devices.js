// The user's devices (PROTOCOL §4 v3 "Adding a device"): a new browser asks to be added and waits, signed out, until
// a device of the user approves it; the approving device publishes the next card with the new device key and leaves
// the user's encryption keys, sealed to the new browser's transfer key, as the setting keys.transfer.<kid>; "Rotate
// key", "Revoke a device" (which rotates the encryption key in the same card) and "Create recovery key" are the other
// card changes a device makes; "Recover with a recovery key" is the one a browser with no device key makes. No DOM
// here: account.js and app.js show what these answer.
import { browserLabel } from './cards.js';
import { authText, b64decode, b64encode, fromB64url } from './codec.js';
import { generateKeyPair, kidOf, openKeyTransfer, privateKeysOf, sealKeyTransfer } from './hpke.js';
import {
  createEncryptionKey, createKey, encryptionKeysFrom, encryptionSecrets, keyFromFile, withDeviceKey,
  withEncryptionKeys,
} from './keys.js';
import { anonymous, changeCard, publishedCard } from './protocol.js';

const utf8 = new TextEncoder();
/** The first line of the text a new device shows (and the approving device reads). */
const HEADER = 'SHiNE add device';

export const transferSetting = (kid) => `keys.transfer.${kid}`;

/** A new device's request: its device key and a fresh transfer key, kept (in IndexedDB) until it is approved. */
export async function newDeviceRequest(login) {
  const device = await createKey(login);
  const transfer = await generateKeyPair();
  const label = browserLabel(navigator.userAgent);
  return { ...device, label, transferPrivateKey: transfer.privateKey, transferPublicKeyB64: b64encode(transfer.publicKey) };
}

/** The text the new device shows (and draws as a QR code) for the approving device to paste. */
export function requestText(request) {
  return `${HEADER}\nlogin: ${request.login}\ndevice key: ${request.publicKeyB64}\n`
    + `transfer key: ${request.transferPublicKeyB64}\nname: ${request.label}`;
}

/** {login, deviceKeyB64, transferKeyB64, label} from pasted text, or an error that says what is wrong with it. */
export function parseRequest(text) {
  const lines = text.trim().split(/\r?\n/).map((line) => line.trim());
  const field = (name) => {
    const line = lines.find((l) => l.startsWith(`${name}:`));
    return line ? line.slice(name.length + 1).trim() : '';
  };
  const isKey = (k) => /^[A-Za-z0-9+/]{43}=$/.test(k);
  const request = { login: field('login'), deviceKeyB64: field('device key'), transferKeyB64: field('transfer key'),
    label: field('name').slice(0, 32) };
  if (lines[0] !== HEADER || !isKey(request.deviceKeyB64) || !isKey(request.transferKeyB64)) {
    throw new Error('This is not the text a new device shows under "Add this browser to an existing account". Copy '
      + 'all of it, from "SHiNE add device" to its last line.');
  }
  return request;
}

/**
 * The approving side: the next card lists the new device key (and has an encryption key — made here if the card had
 * none), then the user's encryption keys, sealed to the transfer key, are left as the setting the new device reads.
 * A request from a device the card lists already (one that missed a new encryption key, see keysRequest) publishes
 * no card: only the keys are handed over. Answers the identity with the encryption keys it now holds (to be saved).
 */
export async function approveDevice(identity, client, request) {
  if (request.login !== identity.login) {
    throw new Error(`This request is for ${request.login}, and this device is signed in as ${identity.login}.`);
  }
  let updated = identity;
  const served = await publishedCard(identity.login);
  // a device the card lists already, with a card that has an encryption key: only the keys are handed over
  const keysOnly = Boolean(served && served.encryptionKeyB64 && Array.isArray(served.keys)
    && served.keys.some((k) => k.publicKeyB64 === request.deviceKeyB64));
  if (!keysOnly) {
    await changeCard(identity, (card) => {
      if (!card.keys.some((k) => k.publicKeyB64 === request.deviceKeyB64)) {
        card.keys.push({ publicKeyB64: request.deviceKeyB64, ...(request.label ? { label: request.label } : {}) });
      }
    }, identity, async (card) => {
      if (!card.encryptionKeyB64) {
        const key = await createEncryptionKey();
        updated = await withEncryptionKeys(identity, [key, ...await encryptionSecrets(identity)]);
        card.encryptionKeyB64 = key.publicKeyB64;
      }
    });
  } else if (missesEncryptionKey(identity, served)) {
    throw new Error('This device does not hold your current encryption key either: approve the request on the device '
      + 'that revoked the other one, or that received the key from it.');
  }
  const secret = utf8.encode(JSON.stringify({ encryptionKeys: await encryptionSecrets(updated) }));
  const sealed = await sealKeyTransfer(secret, b64decode(request.transferKeyB64), identity.login,
    request.deviceKeyB64);
  const kid = await kidOf(b64decode(request.transferKeyB64));
  await client.conn.request('SetUserSetting',
    { key: transferSetting(kid), value: JSON.parse(new TextDecoder().decode(sealed)) });
  return { identity: updated, keysOnly };
}

/**
 * A device the card lists whose keys lack the card's encryption key (another device revoked one and rotated it):
 * true when it must ask for the keys as a new device does (keysRequest), false when it reads what is sent now.
 */
export function missesEncryptionKey(identity, card) {
  return Boolean(card && card.encryptionKeyB64)
    && !identity.encryptionKeys.some((k) => k.publicKeyB64 === card.encryptionKeyB64);
}

/** That device's request: its own device key and a fresh transfer key, in the text a new device shows. */
export async function keysRequest(identity) {
  const transfer = await generateKeyPair();
  return { login: identity.login, publicKeyB64: identity.publicKeyB64, label: browserLabel(navigator.userAgent),
    transferPrivateKey: transfer.privateKey, transferPublicKeyB64: b64encode(transfer.publicKey) };
}

/**
 * Reads, opens and clears the sealed keys left for a request (through `call`, on a session of the request's login);
 * answers the encryption keys (newest first) or null while they are not there.
 */
async function receiveKeys(call, request) {
  const key = transferSetting(await kidOf(b64decode(request.transferPublicKeyB64)));
  const value = await setting(call, key);
  if (!value) {
    return null;
  }
  const opened = await openKeyTransfer(utf8.encode(JSON.stringify(value)),
    await privateKeysOf([request.transferPrivateKey]), request.login, request.publicKeyB64);
  const { encryptionKeys } = JSON.parse(new TextDecoder().decode(opened));
  const keys = await encryptionKeysFrom(encryptionKeys);
  await call('SetUserSetting', { key, value: null });
  return keys;
}

/**
 * The signed-in device of a keysRequest: null while the keys are not there, else the identity with the received keys
 * first and every key it held before kept after them (to read older messages).
 */
export async function tryKeysHandedOver(client, identity, request) {
  const received = await receiveKeys((op, payload) => client.conn.request(op, payload), request);
  if (!received) {
    return null;
  }
  const kept = (await encryptionSecrets(identity))
    .filter((k) => !received.some((r) => r.publicKeyB64 === k.publicKeyB64));
  return withEncryptionKeys(identity, [...received, ...kept]);
}

/**
 * The new device, waiting: one try to sign in with its device key; null while the card does not list it (or the
 * sealed keys are not there yet), else the identity with the user's encryption keys. The setting is then overwritten
 * with null (settings have no delete).
 */
export function tryAdded(request) {
  return anonymous(async (call) => {
    const { challengeB64, serverLogin } = await call('AuthChallenge', { login: request.login });
    const signature = await crypto.subtle.sign('Ed25519', request.privateKey, authText(serverLogin, challengeB64));
    try {
      await call('AuthLogin', { login: request.login, signatureB64: b64encode(new Uint8Array(signature)),
        publicKeyB64: request.publicKeyB64 });
    } catch (e) {
      if (e.status === 401) {
        return null; // not approved yet
      }
      throw e;
    }
    const encryptionKeys = await receiveKeys(call, request);
    if (!encryptionKeys) {
      return null;
    }
    return withEncryptionKeys(request, encryptionKeys);
  });
}

async function setting(call, key) {
  let afterKey;
  for (;;) {
    const page = await call('GetUserSettings', afterKey === undefined ? {} : { afterKey });
    if (Object.hasOwn(page.settings, key)) {
      return page.settings[key];
    }
    if (!page.nextKey) {
      return null;
    }
    afterKey = page.nextKey;
  }
}

/** "Rotate key": a new device key; the old one is retired in the card (signed by it). Answers the new identity. */
export async function rotateKey(identity) {
  const fresh = await createKey(identity.login);
  await changeCard(identity, (card) => {
    const own = card.keys.find((k) => k.publicKeyB64 === identity.publicKeyB64);
    own.publicKeyB64 = fresh.publicKeyB64;
    card.retiredKeys = [...(card.retiredKeys || []), { publicKeyB64: identity.publicKeyB64, retiredAtMs: Date.now() }];
  });
  return withDeviceKey(identity, fresh);
}

/**
 * "Revoke a device": the key leaves the card as revoked, and the encryption key is rotated in the same card (the
 * revoked device knows the old one). Answers the identity with the new encryption key first.
 */
export async function revokeDevice(identity, deviceKeyB64) {
  if (deviceKeyB64 === identity.publicKeyB64) {
    throw new Error('This is this device\'s own key: revoke it from another device, or use Rotate key.');
  }
  const key = await createEncryptionKey();
  await changeCard(identity, (card) => {
    card.keys = card.keys.filter((k) => k.publicKeyB64 !== deviceKeyB64);
    card.retiredKeys = (card.retiredKeys || []).filter((k) => k.publicKeyB64 !== deviceKeyB64);
    card.revokedKeysB64 = [...(card.revokedKeysB64 || []), deviceKeyB64];
    card.encryptionKeyB64 = key.publicKeyB64;
  });
  return withEncryptionKeys(identity, [key, ...await encryptionSecrets(identity)]);
}

/**
 * "Create recovery key": a new Ed25519 key whose public half goes into the card (only when it has none yet); answers
 * the key file text of its private half, to be saved once and kept offline.
 */
export async function createRecoveryKey(identity) {
  const pair = await crypto.subtle.generateKey('Ed25519', true, ['sign', 'verify']);
  const publicKeyB64 = b64encode(new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey)));
  const jwk = await crypto.subtle.exportKey('jwk', pair.privateKey);
  await changeCard(identity, (card) => {
    if (card.recoveryKeyB64) {
      throw new Error('Your card has a recovery key already; only that key can change it (client keys recover).');
    }
    card.recoveryKeyB64 = publicKeyB64;
  });
  const file = { login: identity.login, publicKeyB64, privateKeyB64: b64encode(fromB64url(jwk.d)) };
  return `${JSON.stringify(file, null, 2)}\n`;
}

/**
 * "Recover with a recovery key" (PROTOCOL §4 v3), as `client keys recover` does it: the next epoch, signed by the
 * recovery key (the text of its file), revokes every device key of the card and names a device key made here as the
 * only one, with a new encryption key (the old encryption keys stay with the old devices: what was sealed to them
 * cannot be read here). `login` is used when the file names none. Answers the new identity.
 */
export async function recoverAccount(recoveryKeyText, login) {
  const recovery = await keyFromFile(recoveryKeyText, login);
  const served = await publishedCard(recovery.login);
  if (!served) {
    throw new Error(`There is no user ${recovery.login} on this server: open the chat on one of your access servers.`);
  }
  if (served.recoveryKeyB64 !== recovery.publicKeyB64) {
    throw new Error(`This file is not the recovery key of ${recovery.login}'s card. Choose the file that "Create `
      + 'recovery key" (or client keys recovery) saved.');
  }
  const device = await createKey(recovery.login);
  const key = await createEncryptionKey();
  await changeCard(device, (card) => {
    card.epoch += 1;
    const earlier = card.keys.map((k) => k.publicKeyB64);
    card.keys = [{ publicKeyB64: device.publicKeyB64, label: browserLabel(navigator.userAgent) }];
    card.revokedKeysB64 = [...(card.revokedKeysB64 || []), ...earlier];
    card.encryptionKeyB64 = key.publicKeyB64;
  }, recovery);
  return withEncryptionKeys(device, [key]);
}
