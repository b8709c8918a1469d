// HPKE (RFC 9180) base mode for DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, AES-128-GCM with WebCrypto only, and the
// v3 encrypted body built on it (PROTOCOL §4 "v3 encrypted bodies"), for the browser and for Node. The steps follow
// the RFC's pseudocode as the server's dm/Hpke.java and dm/BodyCipher.java do; both reproduce RFC 9180 Appendix
// A.1.1 and open each other's bodies. Private keys are CryptoKeys, non-extractable unless asked; public keys, enc and
// ciphertexts are Uint8Arrays.
import { b64decode, b64encode } from './codec.js';

export const ALG = 'hpke-x25519-sha256-aes128gcm';
export const VERSION = 2;
export const ENC_SIZE = 32;
export const TAG_SIZE = 16;

/** Why a body did not open; UNKNOWN_KEY is what the chat shows as "cannot decrypt on this device". */
export const Failure = Object.freeze({
  NOT_ENCRYPTED: 'NOT_ENCRYPTED',
  UNKNOWN_KEY: 'UNKNOWN_KEY',
  MALFORMED: 'MALFORMED',
  AUTHENTICATION_FAILED: 'AUTHENTICATION_FAILED',
});

/** An HPKE ciphertext that does not open (unusable enc, or it does not authenticate). */
export class HpkeOpenError extends Error {}

/** A body that does not open, with `failure` one of Failure. */
export class BodyOpenError extends Error {
  constructor(failure, message) {
    super(message);
    this.failure = failure;
  }
}

const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const HASH_SIZE = 32;
const KEY_SIZE = 16;
const NONCE_SIZE = 12;
const KID_BYTES = 8;
const MODE_BASE = 0x00;
const NONE = new Uint8Array(0);
const VERSION_LABEL = utf8.encode('HPKE-v1');
const KEM_SUITE = concat(utf8.encode('KEM'), Uint8Array.of(0x00, 0x20));
const HPKE_SUITE = concat(utf8.encode('HPKE'), Uint8Array.of(0x00, 0x20, 0x00, 0x01, 0x00, 0x01));
// PKCS#8 PrivateKeyInfo of an X25519 key (RFC 8410) up to its 32 raw bytes: WebCrypto imports no raw private key
const PKCS8_X25519 = Uint8Array.of(0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x6e, 0x04,
  0x22, 0x04, 0x20);
// the X25519 base point (u = 9): DH(sk, base point) is sk's public key, so a non-extractable key still tells it
const BASE_POINT = Uint8Array.of(9, ...new Uint8Array(31));

function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function requireLength(bytes, length, what) {
  if (!(bytes instanceof Uint8Array) || bytes.length !== length) {
    throw new Error(`${what} must be ${length} bytes`);
  }
}

// ---- X25519 keys ----

/** A CryptoKey for a raw 32-byte X25519 private key (a key file, "Export key", a test vector). */
export async function importPrivateKey(raw, { extractable = false } = {}) {
  requireLength(raw, 32, 'X25519 private key');
  return crypto.subtle.importKey('pkcs8', concat(PKCS8_X25519, raw), { name: 'X25519' }, extractable,
    ['deriveBits']);
}

/** The raw 32 bytes of an extractable private key. */
export async function exportPrivateKey(privateKey) {
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey('pkcs8', privateKey));
  return pkcs8.slice(pkcs8.length - 32);
}

/** A fresh key pair: {privateKey: CryptoKey, publicKey: 32 bytes}. */
export async function generateKeyPair({ extractable = false } = {}) {
  const pair = await crypto.subtle.generateKey({ name: 'X25519' }, extractable, ['deriveBits']);
  const publicKey = new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey));
  return { privateKey: pair.privateKey, publicKey };
}

export async function publicKeyOf(privateKey) {
  return dh(privateKey, BASE_POINT);
}

/** RFC 9180 §7.1.3 DeriveKeyPair: the key pair a seed of input keying material stands for. */
export async function deriveKeyPair(ikm, { extractable = false } = {}) {
  const prk = await labeledExtract(KEM_SUITE, NONE, 'dkp_prk', ikm);
  const privateKey = await importPrivateKey(await labeledExpand(KEM_SUITE, prk, 'sk', NONE, 32), { extractable });
  return { privateKey, publicKey: await publicKeyOf(privateKey) };
}

/** DH(sk, pk); null when pk is a point of small order (the result would be all zeros, RFC 9180 §7.1.4). */
async function dh(privateKey, publicKey) {
  requireLength(publicKey, 32, 'X25519 public key');
  const peer = await crypto.subtle.importKey('raw', publicKey, { name: 'X25519' }, true, []);
  let shared;
  try {
    shared = new Uint8Array(await crypto.subtle.deriveBits({ name: 'X25519', public: peer }, privateKey, 256));
  } catch (e) {
    if (e.name === 'OperationError') {
      return null; // WebCrypto itself refuses an all-zero result
    }
    throw e;
  }
  return shared.some((b) => b !== 0) ? shared : null;
}

// ---- HKDF-SHA256 and RFC 9180's labels ----

async function hmac(key, data) {
  const hmacKey = await crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await crypto.subtle.sign('HMAC', hmacKey, data));
}

/** RFC 5869 HKDF-Extract; an empty salt is HashLen zeros (WebCrypto imports no zero-length HMAC key). */
function extract(salt, ikm) {
  return hmac(salt.length === 0 ? new Uint8Array(HASH_SIZE) : salt, ikm);
}

/** RFC 5869 HKDF-Expand. */
async function expand(prk, info, length) {
  const out = new Uint8Array(Math.ceil(length / HASH_SIZE) * HASH_SIZE);
  let block = NONE;
  for (let counter = 1; (counter - 1) * HASH_SIZE < length; counter++) {
    block = await hmac(prk, concat(block, info, Uint8Array.of(counter)));
    out.set(block, (counter - 1) * HASH_SIZE);
  }
  return out.slice(0, length);
}

/** RFC 9180 §4 LabeledExtract. */
function labeledExtract(suite, salt, label, ikm) {
  return extract(salt, concat(VERSION_LABEL, suite, utf8.encode(label), ikm));
}

/** RFC 9180 §4 LabeledExpand. */
function labeledExpand(suite, prk, label, info, length) {
  return expand(prk, concat(Uint8Array.of(length >> 8, length & 0xff), VERSION_LABEL, suite, utf8.encode(label),
    info), length);
}

// ---- the KEM, the key schedule and the context ----

/** RFC 9180 §4.1 ExtractAndExpand. */
async function extractAndExpand(dhResult, kemContext) {
  const prk = await labeledExtract(KEM_SUITE, NONE, 'eae_prk', dhResult);
  return labeledExpand(KEM_SUITE, prk, 'shared_secret', kemContext, HASH_SIZE);
}

/** RFC 9180 §5.1 KeySchedule in base mode (no PSK). */
async function keySchedule(sharedSecret, info) {
  const pskIdHash = await labeledExtract(HPKE_SUITE, NONE, 'psk_id_hash', NONE);
  const infoHash = await labeledExtract(HPKE_SUITE, NONE, 'info_hash', info);
  const context = concat(Uint8Array.of(MODE_BASE), pskIdHash, infoHash);
  const secret = await labeledExtract(HPKE_SUITE, sharedSecret, 'secret', NONE);
  const key = await labeledExpand(HPKE_SUITE, secret, 'key', context, KEY_SIZE);
  const baseNonce = await labeledExpand(HPKE_SUITE, secret, 'base_nonce', context, NONCE_SIZE);
  const exporterSecret = await labeledExpand(HPKE_SUITE, secret, 'exp', context, HASH_SIZE);
  return new Context(key, baseNonce, exporterSecret);
}

/**
 * An encryption context (RFC 9180 §5.2). The sequence number is the caller's: the chat only ever uses 0 (one message
 * per context); the RFC's vectors list others. Sealing two plaintexts under one sequence number reuses a nonce.
 */
class Context {
  constructor(key, baseNonce, exporterSecret) {
    this.key = key;
    this.baseNonce = baseNonce;
    this.exporterSecret = exporterSecret;
  }

  /** RFC 9180 §5.2 ComputeNonce: the base nonce XOR the sequence number, big-endian. */
  nonce(sequence) {
    const nonce = this.baseNonce.slice();
    let rest = BigInt(sequence);
    for (let i = NONCE_SIZE - 1; i >= 0 && rest > 0n; i--) {
      nonce[i] ^= Number(rest & 0xffn);
      rest >>= 8n;
    }
    return nonce;
  }

  async seal(sequence, aad, plaintext) {
    const key = await crypto.subtle.importKey('raw', this.key, 'AES-GCM', false, ['encrypt']);
    return new Uint8Array(await crypto.subtle.encrypt(
      { name: 'AES-GCM', iv: this.nonce(sequence), additionalData: aad, tagLength: TAG_SIZE * 8 }, key, plaintext));
  }

  async open(sequence, aad, ciphertext) {
    if (ciphertext.length < TAG_SIZE) {
      throw new HpkeOpenError(`the ciphertext is shorter than its ${TAG_SIZE}-byte tag`);
    }
    const key = await crypto.subtle.importKey('raw', this.key, 'AES-GCM', false, ['decrypt']);
    try {
      return new Uint8Array(await crypto.subtle.decrypt(
        { name: 'AES-GCM', iv: this.nonce(sequence), additionalData: aad, tagLength: TAG_SIZE * 8 }, key,
        ciphertext));
    } catch (e) {
      throw new HpkeOpenError('the ciphertext does not authenticate (wrong key, info or aad, or altered)');
    }
  }

  /** RFC 9180 §5.3 Export. */
  export(exporterContext, length) {
    return labeledExpand(HPKE_SUITE, this.exporterSecret, 'sec', exporterContext, length);
  }
}

/**
 * RFC 9180 §5.1.1 SetupBaseS: {enc, sharedSecret, context}. `ephemeral` ({privateKey, publicKey}) is for test
 * vectors only; by default a fresh key pair is drawn. Throws when pkR is a point of small order.
 */
export async function setupBaseS(recipientPublicKey, info, ephemeral = null) {
  requireLength(recipientPublicKey, 32, 'X25519 public key');
  const pair = ephemeral || await generateKeyPair();
  const dhResult = await dh(pair.privateKey, recipientPublicKey);
  if (dhResult === null) {
    throw new Error("the recipient's X25519 public key is a point of small order");
  }
  const enc = pair.publicKey.slice();
  const sharedSecret = await extractAndExpand(dhResult, concat(enc, recipientPublicKey));
  return { enc, sharedSecret, context: await keySchedule(sharedSecret, info) };
}

/** RFC 9180 §5.1.1 SetupBaseR: {sharedSecret, context}; throws HpkeOpenError for an unusable enc. */
export async function setupBaseR(enc, recipientPrivateKey, info) {
  if (!(enc instanceof Uint8Array) || enc.length !== ENC_SIZE) {
    throw new HpkeOpenError(`the encapsulated key is not ${ENC_SIZE} bytes`);
  }
  const dhResult = await dh(recipientPrivateKey, enc);
  if (dhResult === null) {
    throw new HpkeOpenError('the encapsulated key is a point of small order');
  }
  const sharedSecret = await extractAndExpand(dhResult, concat(enc, await publicKeyOf(recipientPrivateKey)));
  return { sharedSecret, context: await keySchedule(sharedSecret, info) };
}

/** Single-shot SealBase (sequence number 0): {enc, ciphertext}; `ephemeral` as for setupBaseS (test vectors). */
export async function seal(recipientPublicKey, info, aad, plaintext, ephemeral = null) {
  const { enc, context } = await setupBaseS(recipientPublicKey, info, ephemeral);
  return { enc, ciphertext: await context.seal(0, aad, plaintext) };
}

/** Single-shot OpenBase (sequence number 0); throws HpkeOpenError. */
export async function open(enc, recipientPrivateKey, info, aad, ciphertext) {
  const { context } = await setupBaseR(enc, recipientPrivateKey, info);
  return context.open(0, aad, ciphertext);
}

// ---- the encrypted body and the key transfer (PROTOCOL §4) ----

/** The key id of an X25519 public key: base64 of the first 8 bytes of its SHA-256. */
export async function kidOf(publicKey) {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', publicKey));
  return b64encode(digest.subarray(0, KID_BYTES));
}

/** The lookup kid → private keys over the device's X25519 private keys (old ones included), for openBody. */
export async function privateKeysOf(privateKeys) {
  const byKid = new Map();
  for (const privateKey of privateKeys) {
    const kid = await kidOf(await publicKeyOf(privateKey));
    byKid.set(kid, [...(byKid.get(kid) || []), privateKey]);
  }
  return (kid) => byKid.get(kid) || [];
}

function bodyInfo(baseKey, kind, revision) {
  return utf8.encode(`SHiNE_DM body|${baseKey}|${kind}|${revision}`);
}

function keyTransferInfo(login, newDeviceKeyB64) {
  return utf8.encode(`SHiNE_KEYS|${login}|${newDeviceKeyB64}`);
}

/** The parsed envelope, or null when the bytes are not the v2 encrypted body's JSON. */
function envelopeOf(body) {
  let value;
  try {
    value = JSON.parse(strictUtf8.decode(body));
  } catch (e) {
    return null;
  }
  const isObject = value !== null && typeof value === 'object' && !Array.isArray(value);
  // any v2 body is encrypted: one of another alg does not open here, and is never shown as text
  return isObject && value.v === VERSION ? value : null;
}

/** True when the body is JSON saying it is an encrypted (v2) body, whether or not it then opens here. */
export function isEncryptedBody(body) {
  return envelopeOf(body) !== null;
}

async function sealEnvelope(plaintext, publicKey, info) {
  const { enc, ciphertext } = await seal(publicKey, info, NONE, plaintext);
  const envelope = { v: VERSION, alg: ALG, kid: await kidOf(publicKey), encB64: b64encode(enc),
    ctB64: b64encode(ciphertext) };
  return utf8.encode(JSON.stringify(envelope));
}

function malformed(detail) {
  return new BodyOpenError(Failure.MALFORMED, `malformed encrypted body: ${detail}`);
}

function textField(envelope, field) {
  const value = envelope[field];
  if (typeof value !== 'string' || value === '') {
    throw malformed(`${field} is missing or not a string`);
  }
  return value;
}

function base64Field(envelope, field) {
  const text = textField(envelope, field);
  try {
    return b64decode(text);
  } catch (e) {
    throw malformed(`${field} is not padded standard base64`);
  }
}

async function openEnvelope(body, keysWithKid, info) {
  const envelope = envelopeOf(body);
  if (envelope === null) {
    throw new BodyOpenError(Failure.NOT_ENCRYPTED, `not an encrypted body (no v ${VERSION} JSON)`);
  }
  if (envelope.alg !== ALG) {
    throw malformed(`alg ${JSON.stringify(envelope.alg)} is not ${ALG}`);
  }
  const kid = textField(envelope, 'kid');
  const enc = base64Field(envelope, 'encB64');
  const ciphertext = base64Field(envelope, 'ctB64');
  if (enc.length !== ENC_SIZE) {
    throw malformed(`encB64 is ${enc.length} bytes, not ${ENC_SIZE}`);
  }
  if (ciphertext.length < TAG_SIZE) {
    throw malformed(`ctB64 is ${ciphertext.length} bytes, shorter than the ${TAG_SIZE}-byte tag`);
  }
  const candidates = await keysWithKid(kid);
  if (candidates.length === 0) {
    throw new BodyOpenError(Failure.UNKNOWN_KEY, `cannot decrypt on this device: it holds no key ${kid}`);
  }
  let reason = '';
  for (const privateKey of candidates) {
    try {
      return await open(enc, privateKey, info, NONE, ciphertext);
    } catch (e) {
      if (!(e instanceof HpkeOpenError)) {
        throw e;
      }
      reason = e.message;
    }
  }
  throw new BodyOpenError(Failure.AUTHENTICATION_FAILED,
    `the encrypted body does not open with key ${kid}: ${reason}`);
}

/** Seals a v1 body to the owner of one copy (kind 1: the recipient's key; kind 2: the sender's own key). */
export function sealBody(plaintextBody, ownerPublicKey, baseKey, kind, revision) {
  return sealEnvelope(plaintextBody, ownerPublicKey, bodyInfo(baseKey, kind, revision));
}

/**
 * Opens a body sealed for the same copy; answers the v1 body bytes or throws BodyOpenError. `keysWithKid(kid)`
 * answers the device's private keys with that kid (privateKeysOf makes one).
 */
export function openBody(body, keysWithKid, baseKey, kind, revision) {
  return openEnvelope(body, keysWithKid, bodyInfo(baseKey, kind, revision));
}

/** Seals what the approving device hands a new one (the user's private keys) to the new device's transfer key. */
export function sealKeyTransfer(secret, transferPublicKey, login, newDeviceKeyB64) {
  return sealEnvelope(secret, transferPublicKey, keyTransferInfo(login, newDeviceKeyB64));
}

/** Opens what sealKeyTransfer sealed for this login and device key; throws BodyOpenError. */
export function openKeyTransfer(sealed, keysWithKid, login, newDeviceKeyB64) {
  return openEnvelope(sealed, keysWithKid, keyTransferInfo(login, newDeviceKeyB64));
}
