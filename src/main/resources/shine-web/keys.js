// The user's Ed25519 key: made or imported here, kept as a CryptoKey in IndexedDB, exported in the keygen format.
import { b64decode, b64encode, b64url, fromB64url } from './codec.js';

const DB_NAME = 'shine-chat';
const DB_VERSION = 1;

export function openDb() {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(DB_NAME, DB_VERSION);
    request.onupgradeneeded = () => {
      const db = request.result;
      db.createObjectStore('keys');
      db.createObjectStore('outbox', { keyPath: 'baseKey' });
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

/** Reads the text of a keygen file: {"login"?, "publicKeyB64", "privateKeyB64"} (the 32-byte Ed25519 seed). */
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
  const seed = b64decode(json.privateKeyB64);
  const publicKey = b64decode(json.publicKeyB64);
  if (seed.length !== 32 || publicKey.length !== 32) {
    throw new Error('This file holds no Ed25519 key of 32 bytes, so it is not a SHiNE key file. Choose another file.');
  }
  const login = json.login || fallbackLogin;
  if (!login || !/^[a-z0-9_.-]{1,32}$/.test(login)) {
    throw new Error('This key file names no login: type your login in the Login field, then import the file again.');
  }
  return { login, publicKeyB64: json.publicKeyB64, privateKey: await importPair(seed, publicKey) };
}

export async function createKey(login) {
  const pair = await crypto.subtle.generateKey('Ed25519', true, ['sign', 'verify']);
  const publicKey = new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey));
  return { login, publicKeyB64: b64encode(publicKey), privateKey: pair.privateKey };
}

/** The keygen file format, as KeyFile writes it. */
export async function keyFileText(identity) {
  const jwk = await crypto.subtle.exportKey('jwk', identity.privateKey);
  const file = { login: identity.login, publicKeyB64: identity.publicKeyB64, privateKeyB64: b64encode(fromB64url(jwk.d)) };
  return `{\n  "login" : ${JSON.stringify(file.login)},\n  "publicKeyB64" : ${JSON.stringify(file.publicKeyB64)},\n`
    + `  "privateKeyB64" : ${JSON.stringify(file.privateKeyB64)}\n}\n`;
}

export function loadIdentity(db) {
  return idb(db, 'keys', 'readonly', (store) => store.get('me'));
}

export function saveIdentity(db, identity) {
  return idb(db, 'keys', 'readwrite', (store) => store.put(identity, 'me'));
}

export function forgetIdentity(db) {
  return idb(db, 'keys', 'readwrite', (store) => store.delete('me'));
}
