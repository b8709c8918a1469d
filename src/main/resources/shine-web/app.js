// The web chat's bootstrap: it makes the store (state.js), the views (views.js), the outbox (outbox.js), the chat's
// actions (chat.js) and the account (account.js, which starts the protocol client of protocol.js), and wires the
// page's controls to them. Keys and outbox live in IndexedDB (keys.js); everything shown is verified (verify.js); the
// title and notifications tell of new messages (attention.js); errors are said in plain words (errors.js).
import { createAccount } from './account.js';
import { createAttention } from './attention.js';
import { createChat } from './chat.js';
import { badLogin, plain } from './errors.js';
import { idb, idbPins, loadIdentity, loadRequest, openDb } from './keys.js';
import { Outbox, idbStorage } from './outbox.js';
import { createStore } from './state.js';
import { createViews, guarded } from './views.js';

const $ = (id) => document.getElementById(id);
const store = createStore();
const session = { identity: null, client: null }; // the signed-in key and its protocol client (account.js)
let chat = null;
const views = createViews(store, {
  openChat: (peer, focus) => chat.openChat(peer, focus),
  seen: (baseKey) => chat.readOnScreen(baseKey),
  edit: (message) => chat.edit(message),
  remove: (message) => chat.remove(message),
});

async function main() {
  const db = await openDb();
  const server = await fetch('/.well-known/shine-server').then((r) => r.json());
  views.thisServer(server);
  const outbox = new Outbox({
    store, storage: idbStorage(db, idb), session, onError: (text) => views.error('chat-error', text),
    seal: (owner, baseKey, kind, revision, body) => session.client.sealFor(owner, baseKey, kind, revision, body),
  });
  chat = createChat({ store, session, outbox, views });
  createAttention(store, (peer) => chat.openChat(peer, true));
  const account = createAccount({ db, server, store, session, views, chat, outbox, pins: idbPins(db) });
  wireSetup(account);
  wireChat();
  const identity = await loadIdentity(db);
  const request = identity ? null : await loadRequest(db);
  if (identity) {
    account.start(identity);
  } else if (request && request.vault) {
    account.waitForApproval(request); // (a request kept by an earlier version of this page is made anew by the user)
  } else {
    views.showSetup();
  }
}

function wireSetup(account) {
  $('create-key').addEventListener('click', () => guarded('setup-error', () => account.create($('login').value.trim())));
  $('import-key').addEventListener('change', () => guarded('setup-error',
    () => account.importKey($('import-key'), $('login').value.trim())));
  $('recover-key').addEventListener('change', () => guarded('setup-error',
    () => account.recover($('recover-key'), $('login').value.trim())));
  $('reimport-key').addEventListener('change', () => guarded('refused-error',
    () => account.importKey($('reimport-key'), session.identity ? session.identity.login : '')));
  $('sign-out').addEventListener('click', () => guarded('refused-error', account.signOut));
  $('register-button').addEventListener('click', () => guarded('setup-error',
    () => account.registerAndStart($('second-login').value.trim(), $('second-url').value.trim())));
  $('export-key').addEventListener('click', () => guarded('chat-error', account.exportKey));
  $('add-this-browser').addEventListener('click', () => guarded('setup-error',
    () => account.addThisBrowser($('login').value.trim())));
  $('cancel-adding').addEventListener('click', () => guarded('setup-error', account.cancelAdding));
  $('devices-button').addEventListener('click', () => guarded('chat-error', async () => {
    views.devicesStatus('');
    views.error('devices-error', '');
    $('devices').showModal();
    views.otherDevices(await account.otherDevices());
  }));
  $('devices-close').addEventListener('click', () => $('devices').close());
  $('approve').addEventListener('click', () => guarded('devices-error', async () => {
    await account.approve($('approve-text').value);
    $('approve-text').value = '';
    views.otherDevices(await account.otherDevices());
  }));
  $('revoke').addEventListener('click', () => guarded('devices-error', async () => {
    const key = $('revoke-select').value;
    if (!key) {
      throw new Error('Your card lists no other device to revoke.');
    }
    await account.revoke(key);
    views.otherDevices(await account.otherDevices());
  }));
  $('rotate').addEventListener('click', () => guarded('devices-error', account.rotate));
  $('recovery').addEventListener('click', () => guarded('devices-error', account.recovery));
}

function wireChat() {
  $('open-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const peer = $('chat-with').value.trim();
    const bad = badLogin(peer);
    if (bad) {
      $('open-error').textContent = bad;
      return;
    }
    guarded('open-error', async () => {
      // a login nobody has is said now, not after a send comes back 404 (offline, the send will say it)
      if (session.client && session.client.ready && !(await session.client.userExists(peer))) {
        throw new Error(plain({ status: 404, code: 'USER_NOT_FOUND' }, { peer }));
      }
      $('chat-with').value = '';
      await chat.openChat(peer, true);
    }, { peer });
  });
  $('composer').addEventListener('submit', (event) => {
    event.preventDefault();
    chat.send();
  });
  $('message').addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey) {
      event.preventDefault();
      chat.send();
    } else if (event.key === 'Escape') {
      chat.cancelEdit();
    }
  });
  $('cancel-edit').addEventListener('click', () => {
    chat.cancelEdit();
    $('message').focus();
  });
  $('messages').addEventListener('scroll', () => {
    if ($('messages').scrollTop < 40) {
      guarded('chat-error', chat.loadOlder);
    }
  });
  $('back').addEventListener('click', () => {
    $('chat').classList.remove('in-conversation');
    $('conversations').querySelector('button')?.focus();
  });
}

main().catch((e) => {
  views.showSetup();
  views.error('setup-error', `The chat cannot start in this browser (${e.message}). Reload the page; the chat `
    + 'needs a recent browser with storage allowed for this site.');
});
