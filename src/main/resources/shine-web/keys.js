// The user's keys on this device: the Ed25519 device key and the user's X25519 encryption keys (newest first, old
// ones kept to read old messages), made or imported here, kept as CryptoKeys in IndexedDB, exported ("Export key")
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

async function importPair(seed, publicKey) {
  const jwk = { kty: 'OKP', crv: 'Ed25519', d: b64url(seed), x: b64url(publicKey), ext: true };
  const privateKey = await crypto.subtle.importKey('jwk', jwk, 'Ed25519', true, ['sign']);
  const verifyKey = await crypto.subtle.importKey('raw', publicKey, 'Ed25519', true, ['verify']);
  // the file's public key must belong to its private key: a signature made with one verifies with the other
  const probe = new TextEncoder().encode('SHiNE key check');
  const signature = await crypto.subtle.sign('Ed25519', privateKey, probe);
  if (!(await crypto.subtle.verify('Ed25519', verifyKey, signature, probe))) {
    throw new Error('This key file is damaged: its public key does not belong to its private key. Use another copy.');
  }
  return privateKey;
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
  return {
    login, publicKeyB64: json.publicKeyB64, privateKey: await importPair(seed, publicKey),
    encryptionKeys: await encryptionKeysFromFile(json.encryptionKeys),
  };
}

async function encryptionKeysFromFile(list) {
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
    let privateKey;
    try {
      privateKey = await importPrivateKey(b64decode(entry.privateKeyB64), { extractable: true });
    } catch (e) {
      throw broken;
    }
    if (b64encode(await publicKeyOf(privateKey)) !== entry.publicKeyB64) {
      throw broken;
    }
    keys.push({ publicKeyB64: entry.publicKeyB64, privateKey });
  }
  return keys;
}

/**
 * A new X25519 encryption key pair ({publicKeyB64, privateKey}). Its private key can be read only by "Export key"
 * and by "Add a device" (which hands it to the new device sealed to that device's transfer key): WebCrypto has no
 * key that only those two may read, so it is extractable and nothing else reads it.
 */
export async function createEncryptionKey() {
  const { privateKey, publicKey } = await generateKeyPair({ extractable: true });
  return { publicKeyB64: b64encode(publicKey), privateKey };
}

/** The raw private keys of the user's encryption keys, as the key file and the key transfer carry them. */
export async function encryptionSecrets(identity) {
  return Promise.all((identity.encryptionKeys || []).map(async (k) => ({
    publicKeyB64: k.publicKeyB64, privateKeyB64: b64encode(await exportPrivateKey(k.privateKey)),
  })));
}

/** Encryption keys from what encryptionSecrets answered (a key transfer), checked like a key file's. */
export function encryptionKeysFrom(secrets) {
  return encryptionKeysFromFile(secrets);
}

/** A new device key (Ed25519) for `login`; encryption keys come with registration or from another device. */
export async function createKey(login) {
  const pair = await crypto.subtle.generateKey('Ed25519', true, ['sign', 'verify']);
  const publicKey = new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey));
  return { login, publicKeyB64: b64encode(publicKey), privateKey: pair.privateKey, encryptionKeys: [] };
}

/** The key file, format 2, as KeyFile writes it (the device key and the user's encryption keys, newest first). */
export async function keyFileText(identity) {
  const jwk = await crypto.subtle.exportKey('jwk', identity.privateKey);
  const file = {
    format: KEY_FILE_FORMAT, login: identity.login, publicKeyB64: identity.publicKeyB64,
    privateKeyB64: b64encode(fromB64url(jwk.d)), encryptionKeys: await encryptionSecrets(identity),
  };
  return `${JSON.stringify(file, null, 2)}\n`;
}

/** The identity kept here, or undefined; one kept before encryption keys came has none. */
export async function loadIdentity(db) {
  const identity = await idb(db, 'keys', 'readonly', (store) => store.get('me'));
  return identity && { encryptionKeys: [], ...identity };
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

export function forgetIdentity(db) {
  return idb(db, 'keys', 'readwrite', (store) => store.delete('me'));
}

/** The pinned cards of contacts (the card as first seen, or the newest that followed from it). */
export function idbPins(db) {
  return {
    get: (login) => idb(db, 'pins', 'readonly', (store) => store.get(login)),
    put: (login, card) => idb(db, 'pins', 'readwrite', (store) => store.put(card, login)),
  };
}
