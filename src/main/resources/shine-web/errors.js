// What the page says when something goes wrong, in plain words with what to do: the one place where the server's
// error codes (docs/protocol.md "Error codes") and the page's own failures become sentences, and where the size of a
// message is checked before it is signed. For the browser and Node.
import { encodeBody } from './codec.js';

/** The largest body the server takes (PROTOCOL §2: body ≤ 64 KiB; DmCodec.DEFAULT_MAX_BODY), in bytes. */
export const MAX_BODY_BYTES = 64 * 1024;
/** What a body of our clients' JSON {"v":1,"text":""} takes beside the text. */
const BODY_OVERHEAD = encodeBody('').length;
/** The longest plain text (ASCII, nothing to escape) that fits: 65,519 characters. */
export const MAX_PLAIN_CHARS = MAX_BODY_BYTES - BODY_OVERHEAD;
/** What sealing adds to a body (PROTOCOL §4 v3): the envelope's JSON, the 32-byte enc and the 16-byte tag, base64. */
const SEALED_OVERHEAD = 132;
/** The size of a body of `n` bytes once sealed: 132 + 4·⌈(n+16)/3⌉. */
export function sealedSize(n) {
  return SEALED_OVERHEAD + 4 * Math.ceil((n + 16) / 3);
}
/** The longest plain text (ASCII, nothing to escape) that fits once sealed: 49,020 characters. */
export const MAX_SEALED_CHARS = Math.floor((MAX_BODY_BYTES - SEALED_OVERHEAD) / 4) * 3 - 16 - BODY_OVERHEAD;
/** How far the server's clock and a new message's time may be apart (delivery.maxClockSkewMs, default). */
const SKEW_MINUTES = 10;

const number = (n) => n.toLocaleString('en-US');

/**
 * Null when `text` fits in one message, else the sentence that says so. The limit is the body's bytes — once sealed
 * when the message is `encrypted` (either copy); in characters it depends on the text (a letter outside ASCII takes
 * 2–4 bytes), so it is given for this very text.
 */
export function tooLong(text, encrypted = false) {
  const plainBytes = encodeBody(text).length;
  const bytes = encrypted ? sealedSize(plainBytes) : plainBytes;
  if (bytes <= MAX_BODY_BYTES) {
    return null;
  }
  const chars = [...text].length;
  const most = encrypted ? MAX_SEALED_CHARS : MAX_PLAIN_CHARS;
  const fits = Math.floor(chars * most / (plainBytes - BODY_OVERHEAD));
  const limit = fits === most ? number(fits) : `about ${number(fits)} characters like these`;
  return `This message is too long: ${number(chars)} characters, the limit is ${limit} (64 KiB). `
    + 'Shorten it or split it into several messages.';
}

const LOGIN_RULE = 'A login is 1 to 32 characters: lower-case letters a–z, digits, and _ . -';

/** What a refusal or failure means for the user, by its code; `ctx` names who is meant ({login, peer}). */
const SENTENCES = {
  // the page's own failures (conn.js: no status)
  OFFLINE: () => 'You are offline. This works again once the connection is back; the page reconnects by itself.',
  TIMEOUT: () => 'The server did not answer in time. Try again in a moment.',
  CONNECTION_CLOSED: () => 'The connection closed before the server answered. Try again once it is back.',
  UNREACHABLE: () => 'The server cannot be reached right now. Try again in a moment.',
  // a message or receipt refused
  CONTAINER_TOO_LARGE: () => `This message is too long for the server (the limit is ${number(MAX_BODY_BYTES)} bytes, `
    + `${number(MAX_PLAIN_CHARS)} plain characters). Shorten it or split it into several messages.`,
  FRAME_TOO_LARGE: (ctx) => SENTENCES.CONTAINER_TOO_LARGE(ctx),
  CLOCK_SKEW: () => `The server takes a new message only within ${SKEW_MINUTES} minutes of its own clock: this one `
    + 'was written longer ago while offline, or this device\'s clock is wrong. Check the clock, then write it again.',
  SELF_MESSAGE: () => 'You cannot send a message to yourself. Open a chat with someone else.',
  USER_NOT_FOUND: (ctx) => `${ctx.peer || 'That user'} is not registered on this server: check the login.`,
  CONTENT_CONFLICT: () => 'The server already holds another version of this message. Reload the page to see it.',
  BAD_SIGNATURE: (ctx) => `The server does not take this key's signature for ${ctx.login || 'you'}: the key in this `
    + 'browser may not be your current one. Sign out and import your current key file.',
  FORBIDDEN_AUTHOR: () => 'This page is signed in as another user than the message\'s author. Reload the page.',
  NOT_AUTHENTICATED: () => 'You are not signed in at the moment. Wait until the page has signed in again, then retry.',
  // busy or broken: nothing was stored, or it was and a resend is harmless
  RATE_LIMITED: () => 'You are sending faster than the server allows. Wait a few seconds and try again.',
  TOO_MANY_IN_FLIGHT: () => 'Too much is waiting for the server at once. Wait a few seconds and try again.',
  OVERLOADED: () => 'The server is busy right now. Wait a moment and try again.',
  STORAGE_UNAVAILABLE: () => 'The server cannot reach its database right now. Try again in a minute.',
  INTERNAL: () => 'The server ran into an error of its own. Try again; if it keeps happening, tell its operator.',
  // registration (PublishUserCard)
  INVALID_LOGIN: () => `${LOGIN_RULE}. Check it.`,
  KEY_MISMATCH: (ctx) => `The login ${ctx.login || ''} is already taken on this server by another key. Choose `
    + 'another login, or import that login\'s key file if it is yours.',
  STALE_VERSION: () => 'The server already has a newer card for this login. Reload the page and register again.',
  CARD_CONFLICT: () => 'The server already has a different card of this version. Reload the page and register again.',
  ROUTE_CONFLICT: () => 'This server knows that second server under another URL. Check the second server\'s '
    + 'serverLogin and URL.',
  ROUTE_NAME: () => 'This server does not know that second server: its serverLogin must be the host name of its URL '
    + '(or a server this one is configured with). Check both.',
  ROUTE_NOT_ALLOWED: () => 'This server may not connect to the second server\'s address. Give its public address.',
  NOT_ACCESS_SERVER: (ctx) => `This server is not one of ${ctx.login || 'your'}'s access servers. Open the chat on `
    + 'one of them, or register here again to make this server one of them.',
  INVITE_REQUIRED: () => 'This server registers new users by invitation only, and this page cannot take an invite '
    + 'code: register with the command-line client (client register --invite CODE) or ask the operator.',
  INVITE_INVALID: () => 'The invite code is unknown, used already or expired. Ask the operator for a new one.',
};

/** The sentence for an error of conn.js, protocol.js or the server (`{status, code, message}`). */
export function plain(error, ctx = {}) {
  const sentence = error && SENTENCES[error.code];
  if (sentence) {
    return sentence(ctx);
  }
  if (!error || error.status === undefined) {
    return error && error.message ? error.message : 'Something went wrong. Reload the page and try again.';
  }
  if (error.status === 429) {
    return SENTENCES.OVERLOADED(ctx);
  }
  if (error.status >= 500) {
    return 'The server cannot do this right now. Try again in a minute.';
  }
  // a refusal the page does not expect: a fault of the page or a newer server; the code helps whoever looks into it
  return `The server refused this (${error.code || error.status}). Reload the page and try again; if it keeps `
    + 'happening, tell the server\'s operator.';
}

/** The sentence for a login that is not 1–32 of a-z 0-9 _ . - (null when it is one). */
export function badLogin(login) {
  return /^[a-z0-9_.-]{1,32}$/.test(login) ? null : `${LOGIN_RULE}. Check it.`;
}
