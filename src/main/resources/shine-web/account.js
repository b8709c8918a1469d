// The user's key and session: create, import, export and forget the key, register its card, start a session (a
// protocol client whose events go to the store) and say what its connection does, including a login refused.
import { ProtocolClient, publishedCard, register, wsUrl } from './protocol.js';
import {
  createKey, forgetIdentity, keyFileText, keyFromFile, saveIdentity,
} from './keys.js';

const LOGIN = /^[a-z0-9_.-]{1,32}$/;

/** `session` {identity, client} is written here alone. */
export function createAccount({ db, server, store, session, views, chat, outbox }) {
  async function create(login) {
    if (!LOGIN.test(login)) {
      throw new Error('a login is 1 to 32 of a-z, 0-9, _ . -');
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

  /** Publishes a signed card naming this server (and a second one), then signs in. */
  async function registerAndStart(secondLogin, secondUrl) {
    const servers = [{ serverLogin: server.serverLogin, url: server.url }];
    if (secondLogin || secondUrl) {
      if (!secondLogin || !/^wss?:\/\//.test(secondUrl)) {
        throw new Error('a second server needs its serverLogin and a ws:// or wss:// URL');
      }
      servers.push({ serverLogin: secondLogin, url: secondUrl });
    }
    await register(session.identity, servers);
    start(session.identity);
  }

  async function exportKey() {
    views.download(await keyFileText(session.identity), `${session.identity.login}.key`);
  }

  /** Forgets the key kept in this browser: back to the start, to create or import one. */
  async function signOut() {
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
    if (session.client) {
      session.client.stop();
    }
    views.showChat(identity.login);
    const client = new ProtocolClient(wsUrl(), identity, {
      onState: (connection, error) => onState(client, connection, error),
      onEvent: (event) => store.dispatch(event),
      onError: (e) => views.error('chat-error', e.message),
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
      views.signedIn(session.identity.login);
      chat.online();
    } else if (connection === 'refused') {
      refused(client, error);
    } else if (connection === 'offline' || connection === 'reconnecting') {
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
      views.banner(`Login refused: ${error ? error.message : ''}. Trying again.`);
      return;
    }
    views.notSignedIn();
    if (error.code === 'USER_NOT_FOUND') {
      showRegister(identity, `There is no user ${identity.login} on this server: register first.`);
      return;
    }
    if (error.code === 'NOT_ACCESS_SERVER') {
      showRegister(identity,
        `This server is not one of ${identity.login}'s access servers: register again to add it.`);
      return;
    }
    let why = `The server refused to sign you in as ${identity.login}: ${error.message}`;
    if (error.status === 401) {
      // the login exists here (else 404): unless its card names this very key, the key is someone else's
      const card = await publishedCard(identity.login);
      if (!card || card.publicKeyB64 !== identity.publicKeyB64) {
        why = `This key is not ${identity.login}'s key on this server.`;
      }
    }
    views.showRefused(why);
  }

  return { create, importKey, registerAndStart, exportKey, signOut, start };
}
