// The user's keys on this device: the Ed25519 device key and the user's X25519 encryption keys (newest first, old
// ones kept to read old messages), made or imported here, kept as non-extractable CryptoKeys in IndexedDB with their
// raw bytes sealed in a vault that only "Export key" and "Add a device" open, exported ("Export key")
// in the key file format 2 that KeyFile writes; format 1 files (keygen, no encryption key) are read too. Contacts'
// cards pinned on first sight live here as well ('pins').
import { b64decode, b64encode, b64url, fromB64url } from './codec.js';
import { exportPrivateKey, generateKeyPair, importPrivateKey, publicKeyOf } from './hpke.js';

const DB_NAME = 'shine-chat';
const DB_VERSION = 2;
/** The key file format this page writes (KeyFile.FORMAT). */
export const KEY_FILE_FORMAT = 2;

export function openDb() {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(DB_NAME, DB_VERSION);
    request.onupgradeneeded = (event) => {
      const db = request.result;
      if (event.oldVersion < 1) {
        db.createObjectStore('keys');
        db.createObjectStore('outbox', { keyPath: 'baseKey' });
      }
      if (event.oldVersion < 2) {
        db.createObjectStore('pins');
      }
    };
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

export function idb(db, store, mode, action) {
  return new Promise((resolve, reject) => {
    const tx = db.transaction(store, mode);
    const request = action(tx.objectStore(store));
    tx.oncomplete = () => resolve(request ? request.result : undefined);
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error);
  });
}

// An identity: {login, publicKeyB64, privateKey, encryptionKeys: [{publicKeyB64, privateKey}] newest first, vault}.
// Its private keys are non-extractable CryptoKeys: code that holds them can sign and open, never read them. The raw
// secrets that "Export key" writes and "Add a device" hands over live only in the vault: AES-256-GCM under a
// non-extractable key of its own, opened by openVault for those two and nothing else.

/** A non-extractable Ed25519 signing key for a 32-byte seed, checked against the public key said with it. */
async function importSeed(seed, publicKey) {
  const jwk = { kty: 'OKP', crv: 'Ed25519', d: b64url(seed), x: b64url(publicKey), ext: false };
  const privateKey = await crypto.subtle.importKey('jwk', jwk, 'Ed25519', false, ['sign']);
  const verifyKey = await crypto.subtle.importKey('raw', publicKey, 'Ed25519', false, ['verify']);
  // the file's public key must belong to its private key: a signature made with one verifies with the other
  const probe = new TextEncoder().encode('SHiNE key check');
  const signature = await crypto.subtle.sign('Ed25519', privateKey, probe);
  if (!(await crypto.subtle.verify('Ed25519', verifyKey, signature, probe))) {
    throw new Error('This key file is damaged: its public key does not belong to its private key. Use another copy.');
  }
  return privateKey;
}

async function sealVault(secrets) {
  const wrapKey = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const plain = new TextEncoder().encode(JSON.stringify(secrets));
  const ct = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, wrapKey, plain));
  return { wrapKey, ivB64: b64encode(iv), ctB64: b64encode(ct) };
}

/** The identity's raw secrets: {seedB64, encryptionKeys: [{publicKeyB64, privateKeyB64}]} (Export key, a transfer). */
async function openVault(identity) {
  const { wrapKey, ivB64, ctB64 } = identity.vault;
  const plain = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: b64decode(ivB64) }, wrapKey, b64decode(ctB64));
  return JSON.parse(new TextDecoder().decode(plain));
}

/** The identity of a device key (its seed) and the user's encryption keys (checked secrets, newest first). */
async function identityOf(login, seed, publicKeyB64, encryptionKeys) {
  const privateKey = await importSeed(seed, b64decode(publicKeyB64));
  const keys = await Promise.all(encryptionKeys.map(async (k) => ({
    publicKeyB64: k.publicKeyB64, privateKey: await importPrivateKey(b64decode(k.privateKeyB64)),
  })));
  const vault = await sealVault({ seedB64: b64encode(seed), encryptionKeys });
  return { login, publicKeyB64, privateKey, encryptionKeys: keys, vault };
}

/**
 * Reads the text of a key file: format 1 (keygen: {"login"?, "publicKeyB64", "privateKeyB64"}, the 32-byte Ed25519
 * seed) or format 2 (the same and "encryptionKeys": [{"publicKeyB64", "privateKeyB64"}] newest first).
 */
export async function keyFromFile(text, fallbackLogin) {
  let json;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new Error('This file is not a key file (it is not JSON). Choose the .key file that keygen or Export key wrote.');
  }
  if (typeof json.privateKeyB64 !== 'string' || typeof json.publicKeyB64 !== 'string') {
    throw new Error('This file is not a key file (it has no publicKeyB64 and privateKeyB64). Choose the .key file that '
      + 'keygen or Export key wrote.');
  }
  if (json.format !== undefined && json.format !== 1 && json.format !== KEY_FILE_FORMAT) {
    throw new Error(`This key file is of format ${json.format}, newer than this page reads. Use a newer version of the `
      + 'chat, or export the key again from where it was made.');
  }
  const seed = b64decode(json.privateKeyB64);
  const publicKey = b64decode(json.publicKeyB64);
  if (seed.length !== 32 || publicKey.length !== 32) {
    throw new Error('This file holds no Ed25519 key of 32 bytes, so it is not a SHiNE key file. Choose another file.');
  }
  const login = json.login || fallbackLogin;
  if (!login || !/^[a-z0-9_.-]{1,32}$/.test(login)) {
    throw new Error('This key file names no login: type your login in the Login field, then import the file again.');
  }
  return identityOf(login, seed, json.publicKeyB64, await encryptionKeysFrom(json.encryptionKeys));
}

/**
 * Encryption key secrets [{publicKeyB64, privateKeyB64}] as a key file or a key transfer carries them, checked: each
 * private key an X25519 key whose public key is the one said with it. Answers them as given (newest first).
 */
export async function encryptionKeysFrom(list) {
  if (list === undefined) {
    return [];
  }
  const broken = new Error('This key file is damaged: one of its encryption keys is not an X25519 key pair. Use '
    + 'another copy.');
  if (!Array.isArray(list)) {
    throw broken;
  }
  const keys = [];
  for (const entry of list) {
    let publicKey;
    try {
      publicKey = await publicKeyOf(await importPrivateKey(b64decode(entry.privateKeyB64)));
    } catch (e) {
      throw broken;
    }
    if (b64encode(publicKey) !== entry.publicKeyB64) {
      throw broken;
    }
    keys.push({ publicKeyB64: entry.publicKeyB64, privateKeyB64: entry.privateKeyB64 });
  }
  return keys;
}

/**
 * A new X25519 encryption key as a secret {publicKeyB64, privateKeyB64}, to go into an identity (withEncryptionKeys)
 * and nowhere else: its raw bytes are read once, here, to be sealed in the vault.
 */
export async function createEncryptionKey() {
  const { privateKey, publicKey } = await generateKeyPair({ extractable: true });
  return { publicKeyB64: b64encode(publicKey), privateKeyB64: b64encode(await exportPrivateKey(privateKey)) };
}

/** The raw secrets of the user's encryption keys, newest first, as the key file and the key transfer carry them. */
export async function encryptionSecrets(identity) {
  return (await openVault(identity)).encryptionKeys;
}

/** The identity with `secrets` (checked, newest first) as its encryption keys. */
export async function withEncryptionKeys(identity, secrets) {
  const { seedB64 } = await openVault(identity);
  return identityOf(identity.login, b64decode(seedB64), identity.publicKeyB64, secrets);
}

/** The identity with the device key of `device` (a createKey answer) and its own encryption keys ("Rotate key"). */
export async function withDeviceKey(identity, device) {
  const { seedB64 } = await openVault(device);
  return identityOf(identity.login, b64decode(seedB64), device.publicKeyB64, await encryptionSecrets(identity));
}

/** A new device key (Ed25519) for `login`; encryption keys come with registration or from another device. */
export async function createKey(login) {
  const pair = await crypto.subtle.generateKey('Ed25519', true, ['sign', 'verify']);
  const publicKeyB64 = b64encode(new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey)));
  const jwk = await crypto.subtle.exportKey('jwk', pair.privateKey);
  return identityOf(login, fromB64url(jwk.d), publicKeyB64, []);
}

/** The key file, format 2, as KeyFile writes it (the device key and the user's encryption keys, newest first). */
export async function keyFileText(identity) {
  const { seedB64, encryptionKeys } = await openVault(identity);
  const file = {
    format: KEY_FILE_FORMAT, login: identity.login, publicKeyB64: identity.publicKeyB64, privateKeyB64: seedB64,
    encryptionKeys,
  };
  return `${JSON.stringify(file, null, 2)}\n`;
}

/**
 * An identity kept by an earlier version of this page (extractable keys, no vault) as one of today: its keys read
 * once more, to be sealed in a vault and made non-extractable.
 */
async function upgrade(kept) {
  const jwk = await crypto.subtle.exportKey('jwk', kept.privateKey);
  const secrets = await Promise.all((kept.encryptionKeys || []).map(async (k) => ({
    publicKeyB64: k.publicKeyB64, privateKeyB64: b64encode(await exportPrivateKey(k.privateKey)),
  })));
  return identityOf(kept.login, fromB64url(jwk.d), kept.publicKeyB64, secrets);
}

/** The identity kept here, or undefined; one kept by an earlier version of this page is upgraded and kept again. */
export async function loadIdentity(db) {
  const identity = await idb(db, 'keys', 'readonly', (store) => store.get('me'));
  if (identity && !identity.vault) {
    const upgraded = await upgrade(identity);
    await saveIdentity(db, upgraded);
    return upgraded;
  }
  return identity;
}

export function saveIdentity(db, identity) {
  return idb(db, 'keys', 'readwrite', (store) => store.put(identity, 'me'));
}

/** A new device's request while it waits for approval (devices.js), or undefined. */
export function loadRequest(db) {
  return idb(db, 'keys', 'readonly', (store) => store.get('request'));
}

export function saveRequest(db, request) {
  return idb(db, 'keys', 'readwrite', (store) => (request ? store.put(request, 'request') : store.delete('request')));
}

/** A signed-in device's request for the user's new encryption key (devices.js keysRequest), or undefined. */
export function loadKeysRequest(db) {
  return idb(db, 'keys', 'readonly', (store) => store.get('keysRequest'));
}

export function saveKeysRequest(db, request) {
  return idb(db, 'keys', 'readwrite',
    (store) => (request ? store.put(request, 'keysRequest') : store.delete('keysRequest')));
}

/** Forgets the identity and any request of it. */
export function forgetIdentity(db) {
  return idb(db, 'keys', 'readwrite', (store) => {
    store.delete('keysRequest');
    return store.delete('me');
  });
}

/** The pinned cards of contacts (the card as first seen, or the newest that followed from it). */
export function idbPins(db) {
  return {
    get: (login) => idb(db, 'pins', 'readonly', (store) => store.get(login)),
    put: (login, card) => idb(db, 'pins', 'readwrite', (store) => store.put(card, login)),
  };
}
