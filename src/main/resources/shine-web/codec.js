// The SHiNE_DM container (PROTOCOL §3): byte layout, keys, base64 and the v2 body, for the browser and for Node.
// Integers are big-endian; createdAtMs and nonce are i64 (BigInt here), revision u32.

export const Kind = Object.freeze({ INCOMING: 1, OUTGOING: 2, READ_RECEIPT: 3, TOMBSTONE: 4 });
const MAGIC = new TextEncoder().encode('SHiNE_DM');
const VERSION = 1;
const SIGNATURE_SIZE = 64;
const MAX_BODY = 64 * 1024;
const LOGIN = /^[a-z0-9_.-]{1,32}$/;
const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

export function b64encode(bytes) {
  let text = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(text);
}

export function b64decode(text) {
  if (typeof text !== 'string' || text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) {
    throw new Error('not padded standard base64');
  }
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) {
    bytes[i] = binary.charCodeAt(i);
  }
  return bytes;
}

export function b64url(bytes) {
  return b64encode(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function fromB64url(text) {
  const standard = text.replace(/-/g, '+').replace(/_/g, '/');
  return b64decode(standard + '='.repeat((4 - (standard.length % 4)) % 4));
}

/** A random nonce in [0, 2^63), as the Java client draws it. */
export function randomNonce() {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  bytes[0] &= 0x7f;
  return new DataView(bytes.buffer).getBigInt64(0);
}

/** Every byte of a container but the signature: the bytes the author signs. */
export function unsignedBytes({ kind, createdAtMs, nonce, revision, from, to, ref = '', body = new Uint8Array(0) }) {
  for (const [name, login] of [['from', from], ['to', to]]) {
    if (!LOGIN.test(login)) {
      throw new Error(`${name} is not a login: ${login}`);
    }
  }
  const fromBytes = utf8.encode(from);
  const toBytes = utf8.encode(to);
  const refBytes = utf8.encode(ref);
  if (refBytes.length > 0xffff || body.length > MAX_BODY) {
    throw new Error('ref or body too long');
  }
  const size = 8 + 1 + 1 + 8 + 8 + 4 + 1 + fromBytes.length + 1 + toBytes.length + 2 + refBytes.length + 4
    + body.length;
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  let at = 0;
  out.set(MAGIC, at); at += 8;
  view.setUint8(at++, VERSION);
  view.setUint8(at++, kind);
  view.setBigInt64(at, BigInt(createdAtMs)); at += 8;
  view.setBigInt64(at, BigInt(nonce)); at += 8;
  view.setUint32(at, Number(revision)); at += 4;
  view.setUint8(at++, fromBytes.length); out.set(fromBytes, at); at += fromBytes.length;
  view.setUint8(at++, toBytes.length); out.set(toBytes, at); at += toBytes.length;
  view.setUint16(at, refBytes.length); at += 2; out.set(refBytes, at); at += refBytes.length;
  view.setUint32(at, body.length); at += 4; out.set(body, at);
  return out;
}

/** Signs the fields with an Ed25519 CryptoKey: the whole container. */
export async function signContainer(fields, privateKey) {
  const unsigned = unsignedBytes(fields);
  const signature = new Uint8Array(await crypto.subtle.sign('Ed25519', privateKey, unsigned));
  const container = new Uint8Array(unsigned.length + SIGNATURE_SIZE);
  container.set(unsigned);
  container.set(signature, unsigned.length);
  return container;
}

/** Parses exactly one container (no signature check); throws on anything else. */
export function parseContainer(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  const need = (n) => {
    if (at + n > bytes.length) {
      throw new Error('truncated container');
    }
  };
  need(10);
  for (let i = 0; i < 8; i++) {
    if (bytes[i] !== MAGIC[i]) {
      throw new Error('bad magic');
    }
  }
  at = 8;
  if (view.getUint8(at++) !== VERSION) {
    throw new Error('unsupported version');
  }
  const kind = view.getUint8(at++);
  if (kind < 1 || kind > 4) {
    throw new Error('unknown kind');
  }
  need(20);
  const createdAtMs = view.getBigInt64(at); at += 8;
  const nonce = view.getBigInt64(at); at += 8;
  const revision = view.getUint32(at); at += 4;
  if (createdAtMs < 0n || nonce < 0n) {
    throw new Error('negative createdAtMs or nonce');
  }
  const text = (length) => {
    need(length);
    const value = strictUtf8.decode(bytes.subarray(at, at + length));
    at += length;
    return value;
  };
  need(1);
  const from = text(view.getUint8(at++));
  need(1);
  const to = text(view.getUint8(at++));
  if (!LOGIN.test(from) || !LOGIN.test(to)) {
    throw new Error('bad login');
  }
  need(2);
  const refLength = view.getUint16(at); at += 2;
  const ref = text(refLength);
  if ((kind <= 2) !== (ref === '')) {
    throw new Error('ref does not fit the kind');
  }
  need(4);
  const bodyLength = view.getUint32(at); at += 4;
  if (bodyLength > MAX_BODY) {
    throw new Error('body too long');
  }
  need(bodyLength);
  const body = bytes.slice(at, at + bodyLength); at += bodyLength;
  if (bytes.length - at !== SIGNATURE_SIZE) {
    throw new Error('bad signature length or trailing bytes');
  }
  return {
    kind, createdAtMs: Number(createdAtMs), nonce, revision, from, to, ref, body,
    signature: bytes.slice(at), signedLength: at,
  };
}

export async function verifyContainer(bytes, publicKey) {
  const parsed = parseContainer(bytes);
  return crypto.subtle.verify('Ed25519', publicKey, parsed.signature, bytes.subarray(0, parsed.signedLength));
}

export function baseKey({ from, to, createdAtMs, nonce }) {
  return `${from}|${to}|${createdAtMs}|${nonce}`;
}

export function messageKey(container) {
  return `${baseKey(container)}|${container.kind}`;
}

/** The v2 body our clients write: UTF-8 JSON {"v":1,"text":...}. */
export function encodeBody(text) {
  return utf8.encode(JSON.stringify({ v: 1, text }));
}

/** The text of a body: the v2 JSON, or (older messages) raw UTF-8 text. */
export function decodeBody(body) {
  const raw = new TextDecoder().decode(body);
  try {
    const value = JSON.parse(raw);
    if (value && value.v === 1 && typeof value.text === 'string') {
      return value.text;
    }
  } catch (e) {
    // not JSON: a v1 body is the text itself
  }
  return raw;
}

/** The text a user signs to log in (PROTOCOL §5). */
export function authText(serverLogin, challengeB64) {
  return utf8.encode(`SHiNE_AUTH|${serverLogin}|${challengeB64}`);
}

/** The text a card is signed over (PROTOCOL §4). */
export function cardText(login, publicKeyB64, version, accessServers) {
  const routes = accessServers.map((s) => `${s.serverLogin}=${s.url}`).join('|');
  return utf8.encode(`SHiNE_CARD|${login}|${publicKeyB64}|${version}|${routes}`);
}

/**
 * The text a v3 card is signed over (PROTOCOL §4 v3, CardText.v3 on the server): lists in card order, nothing after
 * `=` when absent; labels are not signed.
 */
export function cardText3(card) {
  const keys = card.keys.map((k) => k.publicKeyB64).join(',');
  const retired = (card.retiredKeys || []).map((k) => `${k.publicKeyB64}@${k.retiredAtMs}`).join(',');
  const revoked = (card.revokedKeysB64 || []).join(',');
  const routes = card.accessServers.map((s) => `|${s.serverLogin}=${s.url}`).join('');
  return utf8.encode(`SHiNE_CARD3|${card.login}|${card.epoch}|${card.version}|keys=${keys}`
    + `|recovery=${card.recoveryKeyB64 || ''}|enc=${card.encryptionKeyB64 || ''}|retired=${retired}`
    + `|revoked=${revoked}${routes}`);
}
