// One WebSocket session to the server that served the page: the §2 envelope, login on every (re)connect,
// reconnect with capped, jittered backoff. A login the server refuses for good (the key is not the user's, no such
// user, not a server of the user) stops it: it does not try again until the user acts.
import { authText, b64encode } from './codec.js';

const BACKOFF_MS = [250, 500, 1000, 2000, 4000, 8000];
const REQUEST_TIMEOUT_MS = 15000;
/**
 * A refusal of the login that the same bytes will meet again (401 the key does not sign for the login, 403 not
 * allowed, 404 no such user, 421 not a server of the user, a 400): every 4xx but 429, the rule of the outbox too.
 */
export function refusedForGood(status) {
  return status >= 400 && status < 500 && status !== 429;
}

export class RequestError extends Error {
  constructor(status, code, message) {
    super(`${status} ${code}: ${message}`);
    this.status = status;
    this.code = code;
  }
}

export class Connection {
  constructor(url, identity, { onEvent, onState }) {
    this.url = url;
    this.identity = identity;
    this.onEvent = onEvent;
    this.onState = onState;
    this.pending = new Map();
    this.nextId = 1;
    this.failures = 0;
    this.ready = false;
    this.socket = null;
    this.stopped = false;
  }

  start() {
    this.open();
  }

  stop() {
    this.stopped = true;
    if (this.socket) {
      this.socket.close();
    }
  }

  open() {
    this.onState(this.failures === 0 ? 'connecting' : 'reconnecting');
    const socket = new WebSocket(this.url);
    this.socket = socket;
    socket.onopen = () => this.login().then(() => {
      this.failures = 0;
      this.ready = true;
      this.onState('online');
    }, (error) => {
      if (refusedForGood(error.status)) {
        this.stopped = true;
      }
      this.onState('refused', error);
      socket.close();
    });
    socket.onmessage = (message) => this.onFrame(message.data);
    socket.onclose = (event) => {
      this.ready = false;
      if (event && event.code === 1008 && String(event.reason).startsWith('KEY_REVOKED')) {
        this.stopped = true; // the key signs nothing any more: no reconnecting
      }
      failAll(this.pending, new RequestError(0, 'CONNECTION_CLOSED', 'the connection closed'));
      if (this.stopped) {
        if (event && event.code === 1008 && String(event.reason).startsWith('KEY_REVOKED')) {
          this.onState('revoked');
        }
        return;
      }
      const base = BACKOFF_MS[Math.min(this.failures, BACKOFF_MS.length - 1)];
      this.failures++;
      this.onState('offline');
      setTimeout(() => this.open(), base / 2 + Math.random() * base / 2);
    };
  }

  async login() {
    const { login, privateKey } = this.identity;
    const challenge = await this.raw('AuthChallenge', { login });
    const signature = await crypto.subtle.sign('Ed25519', privateKey,
      authText(challenge.serverLogin, challenge.challengeB64));
    await this.raw('AuthLogin', { login, signatureB64: b64encode(new Uint8Array(signature)) });
    this.serverLogin = challenge.serverLogin;
  }

  /** A request on a logged-in session; fails at once while offline. */
  request(op, payload = {}) {
    if (!this.ready) {
      return Promise.reject(new RequestError(0, 'OFFLINE', 'not connected'));
    }
    return this.raw(op, payload);
  }

  raw(op, payload) {
    const socket = this.socket;
    if (!socket || socket.readyState !== WebSocket.OPEN) {
      return Promise.reject(new RequestError(0, 'OFFLINE', 'not connected'));
    }
    const requestId = `w-${this.nextId++}`;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(requestId);
        reject(new RequestError(0, 'TIMEOUT', `${op} got no answer`));
      }, REQUEST_TIMEOUT_MS);
      this.pending.set(requestId, { resolve, reject, timer });
      socket.send(JSON.stringify({ op, requestId, payload }));
    });
  }

  onFrame(text) {
    let frame;
    try {
      frame = JSON.parse(text);
    } catch (e) {
      return;
    }
    if (frame.requestId === undefined) {
      if (frame.status === undefined) {
        this.onEvent(frame.op, frame.payload || {});
      }
      return;
    }
    answer(this.pending, frame);
  }
}

/** Settles the request `frame` answers, if one of `pending` waits for it. */
function answer(pending, frame) {
  const waiting = pending.get(frame.requestId);
  if (!waiting) {
    return;
  }
  pending.delete(frame.requestId);
  clearTimeout(waiting.timer);
  if (frame.status === 200) {
    waiting.resolve(frame.payload || {});
  } else {
    const error = frame.error || {};
    waiting.reject(new RequestError(frame.status, error.code || 'ERROR', error.message || ''));
  }
}

/** Fails every request of `pending` with `error`. */
function failAll(pending, error) {
  for (const { reject, timer } of pending.values()) {
    clearTimeout(timer);
    reject(error);
  }
  pending.clear();
}

/**
 * Runs `work(call)` on a WebSocket of its own that never logs in (reading or publishing a card), then closes it.
 * `call(op, payload)` answers the payload of a 200 or fails with a RequestError: the server's status and code, TIMEOUT
 * when no answer comes within `timeoutMs`, CONNECTION_CLOSED when the socket closes first. A socket that does not open
 * within `timeoutMs` (or is refused) fails the whole with UNREACHABLE. So the answer always comes, in bounded time.
 */
export function anonymous(url, work, timeoutMs = REQUEST_TIMEOUT_MS) {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    const pending = new Map();
    let next = 1;
    let opened = false;
    const opening = setTimeout(() => socket.close(), timeoutMs);
    const call = (op, payload) => {
      if (socket.readyState !== WebSocket.OPEN) {
        return Promise.reject(new RequestError(0, 'CONNECTION_CLOSED', 'the connection closed'));
      }
      const requestId = `a-${next++}`;
      return new Promise((ok, fail) => {
        const timer = setTimeout(() => {
          pending.delete(requestId);
          fail(new RequestError(0, 'TIMEOUT', `${op} got no answer`));
        }, timeoutMs);
        pending.set(requestId, { resolve: ok, reject: fail, timer });
        socket.send(JSON.stringify({ op, requestId, payload }));
      });
    };
    socket.onmessage = (message) => {
      try {
        answer(pending, JSON.parse(message.data));
      } catch (e) {
        // not a frame of the protocol: nothing waits for it
      }
    };
    socket.onopen = () => {
      opened = true;
      clearTimeout(opening);
      Promise.resolve().then(() => work(call)).then(resolve, reject).finally(() => socket.close());
    };
    socket.onclose = () => {
      clearTimeout(opening);
      failAll(pending, new RequestError(0, 'CONNECTION_CLOSED', 'the connection closed'));
      if (!opened) {
        reject(new RequestError(0, 'UNREACHABLE', 'the server cannot be reached'));
      }
    };
  });
}
