// The user's key and session: create, import, export and forget the key, register its card, start a session (a
// protocol client whose events go to the store) and say what its connection does, including a login refused.
import { browserLabel } from './cards.js';
import { badLogin, plain } from './errors.js';
import { ProtocolClient, publishedCard, register, wsUrl } from './protocol.js';
import {
  approveDevice, createRecoveryKey, keysRequest, missesEncryptionKey, newDeviceRequest, parseRequest,
  recoverAccount, requestText, revokeDevice, rotateKey, tryAdded, tryKeysHandedOver,
} from './devices.js';
import {
  createEncryptionKey, createKey, forgetIdentity, keyFileText, keyFromFile, loadKeysRequest, saveIdentity,
  saveKeysRequest, saveRequest, withEncryptionKeys,
} from './keys.js';
import { encodeQr } from './qr.js';

const POLL_MS = 2000;
/** At most one look at the card per this many ms because of bodies this device cannot open. */
const KEYS_CHECK_MS = 10000;

/** Whether a card as served (v1 or v3) lists `publicKeyB64` as a device key. */
export function listsKey(card, publicKeyB64) {
  return Boolean(card) && (card.publicKeyB64 === publicKeyB64
    || (Array.isArray(card.keys) && card.keys.some((k) => k.publicKeyB64 === publicKeyB64)));
}

/** The banner of a device that lacks the card's encryption key (another device revoked one and made a new key). */
export const KEYS_NEEDED_TEXT = 'Another of your devices made a new encryption key: messages sent to you from now on '
  + 'cannot be read here until that device hands it over. Open "Devices" to see how.';

/** What a device whose key was revoked is told when the server closes its session. */
export const REVOKED_TEXT = 'This device\'s key was revoked from another of your devices, so this browser is signed out '
  + 'and its keys are forgotten. If that was not you, use your recovery key.';

/** `session` {identity, client} is written here alone. */
export function createAccount({ db, server, store, session, views, chat, outbox, pins }) {
  let lastRefusal = null; // a refusal the connection tries again after: its words stay until a login succeeds
  let waiting = null; // the request of this browser while it waits to be added to an account
  let keysWanted = null; // the request of this signed-in device for the card's new encryption key, while polled
  let lastKeysCheck = 0;
  let afterSignIn = null; // words for the banner once the next session signs in
  async function create(login) {
    const bad = badLogin(login);
    if (bad) {
      throw new Error(bad);
    }
    const identity = await createKey(login);
    await saveIdentity(db, identity);
    showRegister(identity, 'A new key: publish your card so that others can reach you.');
  }

  async function importKey(input, login) {
    const file = input.files[0];
    if (!file) {
      return;
    }
    const identity = await keyFromFile(await file.text(), login);
    await saveIdentity(db, identity);
    input.value = '';
    start(identity);
  }

  /**
   * "Recover with a recovery key": the login takes a device key made here as its only one (every earlier device key
   * revoked, those devices signed out) and a new encryption key; then it signs in.
   */
  async function recover(input, login) {
    const file = input.files[0];
    if (!file) {
      return;
    }
    input.value = '';
    const identity = await recoverAccount(await file.text(), login);
    await saveIdentity(db, identity);
    afterSignIn = `Recovered ${identity.login}: this browser is now your only device, and every earlier device key is `
      + 'revoked. Messages sealed to your old encryption key cannot be read here. Export key to keep a copy, and '
      + 'create a new recovery key under "Devices" only if you lost the file.';
    start(identity);
  }

  /** Publishes a signed card naming this server (and a second one), then signs in. */
  async function registerAndStart(secondLogin, secondUrl) {
    const servers = [{ serverLogin: server.serverLogin, url: server.url }];
    if (secondLogin || secondUrl) {
      if (!secondLogin || !/^wss?:\/\//.test(secondUrl)) {
        throw new Error('A second server needs both its serverLogin and its WebSocket URL (it starts with ws:// or '
          + 'wss://). Fill in both, or leave both empty.');
      }
      servers.push({ serverLogin: secondLogin, url: secondUrl });
    }
    let { identity } = session;
    try {
      // a card with no encryption key gets one made here (a v1 card moves to v3 with it)
      const served = await publishedCard(identity.login);
      if (!(served && served.encryptionKeyB64) && identity.encryptionKeys.length === 0
          && (!served || listsKey(served, identity.publicKeyB64))) {
        identity = await withEncryptionKeys(identity, [await createEncryptionKey()]);
        await saveIdentity(db, identity);
        session.identity = identity;
      }
      await register(identity, servers, {
        label: browserLabel(navigator.userAgent),
        encryptionKeyB64: identity.encryptionKeys[0] ? identity.encryptionKeys[0].publicKeyB64 : null,
      });
    } catch (e) {
      throw new Error(plain(e, { login: session.identity.login }));
    }
    start(session.identity);
  }

  async function exportKey() {
    views.download(await keyFileText(session.identity), `${session.identity.login}.key`);
  }

  /** Forgets the key kept in this browser: back to the start, to create or import one. */
  async function signOut() {
    keysWanted = null;
    if (session.client) {
      session.client.stop();
      session.client = null;
    }
    await forgetIdentity(db);
    session.identity = null;
    store.dispatch({ type: 'signedOut' });
    views.signedOut();
  }

  function showRegister(identity, why) {
    session.identity = identity;
    views.showRegister(identity.login, why);
  }

  function start(identity) {
    session.identity = identity;
    lastRefusal = null;
    if (session.client) {
      session.client.stop();
    }
    views.showChat(identity.login);
    const client = new ProtocolClient(wsUrl(), identity, {
      pins,
      onState: (connection, error) => onState(client, connection, error),
      onEvent: (event) => store.dispatch(event),
      onError: (e) => views.error('chat-error', plain(e)),
      onUndecryptable: () => {
        // a body sealed to a key this device lacks: maybe the card has a new one (at most one look in KEYS_CHECK_MS)
        if (!keysWanted && Date.now() - lastKeysCheck > KEYS_CHECK_MS) {
          lastKeysCheck = Date.now();
          checkKeys(client).catch((e) => views.error('chat-error', plain(e)));
        }
      },
    });
    session.client = client;
    store.dispatch({ type: 'signedIn', login: identity.login });
    client.start();
    outbox.show();
  }

  function onState(client, connection, error) {
    if (client !== session.client) {
      return; // a session that has ended
    }
    if (connection === 'online') {
      lastRefusal = null;
      views.signedIn(session.identity.login);
      if (afterSignIn) {
        views.banner(afterSignIn);
        afterSignIn = null;
      }
      chat.online().catch((e) => views.error('chat-error', plain(e)));
      checkKeys(client).catch((e) => views.error('chat-error', plain(e)));
    } else if (connection === 'refused') {
      refused(client, error);
    } else if (connection === 'revoked') {
      revoked();
    } else if ((connection === 'offline' || connection === 'reconnecting') && !lastRefusal) {
      views.banner('Offline: reconnecting. Messages you write are sent when the connection is back.');
    }
  }

  /**
   * The server refused the login. For good (the connection stopped trying): no such user, not a server of the user,
   * or a key that is not the user's here — said plainly, with what the user can do. Otherwise it tries again.
   */
  async function refused(client, error) {
    const { identity } = session;
    if (!client.stopped) {
      // busy or a passing fault (429, 5xx, a challenge lost): said until the next try signs in
      lastRefusal = error;
      views.banner(`Not signed in yet: ${plain(error, { login: identity.login })} The page tries again by itself.`);
      return;
    }
    views.notSignedIn();
    if (error.code === 'USER_NOT_FOUND') {
      showRegister(identity, `There is no user ${identity.login} on this server: register first.`);
      return;
    }
    if (error.code === 'NOT_ACCESS_SERVER') {
      showRegister(identity, `This server is not one of ${identity.login}'s access servers. Open the chat on one of `
        + `them, or register here to make this server one of ${identity.login}'s (your card then names this server `
        + 'and the second one you give below).');
      return;
    }
    let why = `The server refused to sign you in as ${identity.login}. ${plain(error, { login: identity.login })}`;
    if (error.status === 401) {
      // the login exists here (else 404): unless its card names this very key, the key is someone else's
      // the card cannot be read (no answer): the refusal is said as the server gave it
      const card = await publishedCard(identity.login).catch(() => undefined);
      if (card && Array.isArray(card.revokedKeysB64) && card.revokedKeysB64.includes(identity.publicKeyB64)) {
        why = REVOKED_TEXT.replace(', so this browser is signed out and its keys are forgotten', ': sign out here');
      } else if (card !== undefined && !listsKey(card, identity.publicKeyB64)) {
        why = `This key is not ${identity.login}'s key on this server.`;
      }
    }
    views.showRefused(why);
  }

  /**
   * After each login: a device whose keys lack its card's encryption key asks for it as a new device does (its text
   * and QR code under "Devices", a banner that says why) and takes it, by itself, once another device approves.
   */
  async function checkKeys(client) {
    const card = await publishedCard(session.identity.login);
    if (client !== session.client) {
      return;
    }
    if (!missesEncryptionKey(session.identity, card)) {
      if (keysWanted) {
        keysWanted = null;
        await saveKeysRequest(db, null);
      }
      views.keysNeeded(null);
      return;
    }
    views.banner(KEYS_NEEDED_TEXT);
    if (keysWanted && keysWanted.publicKeyB64 === session.identity.publicKeyB64) {
      return; // asked already, and polled
    }
    let request = await loadKeysRequest(db);
    if (!request || request.publicKeyB64 !== session.identity.publicKeyB64) {
      request = await keysRequest(session.identity);
      await saveKeysRequest(db, request);
    }
    keysWanted = request;
    const text = requestText(request);
    views.keysNeeded(text, encodeQr(text));
    const poll = async () => {
      if (keysWanted !== request || session.client !== client) {
        return;
      }
      try {
        const updated = client.ready ? await tryKeysHandedOver(client, session.identity, request) : null;
        if (updated && keysWanted === request && session.client === client) {
          keysWanted = null;
          await saveIdentity(db, updated);
          await saveKeysRequest(db, null);
          views.keysNeeded(null);
          views.devicesStatus('This device has your new encryption key: it reads new messages again.');
          start(updated);
          return;
        }
      } catch (e) {
        views.error('devices-error', plain(e, { login: request.login }));
      }
      setTimeout(poll, POLL_MS);
    };
    poll();
  }

  /** "Add this browser to an existing account": a device key and a transfer key, shown, then waiting for approval. */
  async function addThisBrowser(login) {
    const bad = badLogin(login);
    if (bad) {
      throw new Error(bad);
    }
    const request = await newDeviceRequest(login);
    await saveRequest(db, request);
    waitForApproval(request);
  }

  /** Shows the request (text and QR code) and tries, every POLL_MS, to sign in with it until it is approved. */
  function waitForApproval(request) {
    waiting = request;
    const text = requestText(request);
    views.showAdding(request.login, text, encodeQr(text));
    const poll = async () => {
      if (waiting !== request) {
        return;
      }
      try {
        const identity = await tryAdded(request);
        if (identity && waiting === request) {
          waiting = null;
          await saveIdentity(db, identity);
          await saveRequest(db, null);
          start(identity);
          return;
        }
        views.addingStatus('Not approved yet: waiting…');
      } catch (e) {
        views.addingStatus(`Not approved yet: ${plain(e, { login: request.login })}`);
      }
      setTimeout(poll, POLL_MS);
    };
    poll();
  }

  async function cancelAdding() {
    waiting = null;
    await saveRequest(db, null);
    views.signedOut();
  }

  /** Approves a new device from the text it shows; this device may get an encryption key on the way. */
  async function approve(text) {
    const request = parseRequest(text);
    const { identity, keysOnly } = await approveDevice(session.identity, session.client, request);
    await changed(identity, keysOnly
      ? `Handed your encryption keys to ${request.label || 'that device'}: it reads new messages in a few seconds.`
      : `Added ${request.label || 'the new device'}: it signs in by itself in a few seconds.`);
  }

  async function revoke(deviceKeyB64) {
    await changed(await revokeDevice(session.identity, deviceKeyB64),
      'Revoked: that device is signed out, and your encryption key is a new one.');
  }

  async function rotate() {
    await changed(await rotateKey(session.identity), 'This device has a new key; the old one is retired in your card. '
      + 'Export key again if you keep a copy.');
  }

  async function recovery() {
    const text = await createRecoveryKey(session.identity);
    views.download(text, `${session.identity.login}-recovery.key`);
    views.devicesStatus('Your recovery key was saved as a file, once: keep it offline (on paper or a USB stick in a '
      + 'drawer), never on this device. With it you can take your account back if your devices are lost or stolen; '
      + 'anyone who has it can too.');
  }

  /** The identity after a card change: kept, and a new session signed in with it. */
  async function changed(identity, words) {
    if (identity !== session.identity) {
      await saveIdentity(db, identity);
      start(identity);
    }
    views.devicesStatus(words);
  }

  /** The card's device keys other than this one: [{publicKeyB64, label}]. */
  async function otherDevices() {
    const card = await publishedCard(session.identity.login);
    return (card && card.keys ? card.keys : []).filter((k) => k.publicKeyB64 !== session.identity.publicKeyB64);
  }

  /** The server closed the session because this device's key was revoked: signed out, keys forgotten, said plainly. */
  async function revoked() {
    session.client = null;
    keysWanted = null;
    await forgetIdentity(db);
    session.identity = null;
    store.dispatch({ type: 'signedOut' });
    views.notSignedIn();
    views.showRefused(REVOKED_TEXT);
  }

  return {
    create, importKey, recover, registerAndStart, exportKey, signOut, start, addThisBrowser, waitForApproval, cancelAdding,
    approve, revoke, rotate, recovery, otherDevices,
  };
}
