// The views: the DOM of index.html, drawn from the store's state (the chat list, the open chat's messages with their
// ticks, day lines and the "New messages" line, a message's menu and details) and the screens (loading, setup,
// register, refused, chat). They change no state: the user's clicks go to `handlers` (openChat, edit, remove, seen —
// a message at least 60 % on screen).
import { detailsOf } from './details.js';
import { plain } from './errors.js';
import { createMenu } from './menu.js';
import { qrPath } from './qr.js';
import { TICKS, tickOf } from './outbox.js';
import { keysChangedText } from './cards.js';
import { SENT_UNENCRYPTED } from './protocol.js';
import { DELETED_TEXT } from './state.js';
import { dayKey, dayLabel, timeLabel } from './when.js';

const $ = (id) => document.getElementById(id);

export function createViews(store, handlers) {
  const menu = createMenu($('message-menu'));
  let serverLogin = '';
  const observer = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (entry.isIntersecting) {
        handlers.seen(entry.target.dataset.baseKey);
      }
    }
  }, { threshold: 0.6 });

  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') {
      for (const li of $('messages').querySelectorAll('li[data-base-key]')) {
        observer.unobserve(li);
        if (!li.classList.contains('mine')) {
          observer.observe(li);
        }
      }
    }
  });
  $('details-close').addEventListener('click', () => $('details').close());

  store.subscribe((state, previous, event) => {
    if (state.peer !== previous.peer) {
      $('messages').replaceChildren();
      menu.close();
    }
    if (event.type === 'chatOpened') {
      $('peer-name').textContent = state.peer;
      $('composer').hidden = false;
      $('messages').hidden = false;
      $('empty').hidden = true;
      $('chat').classList.add('in-conversation');
      $('chat-error').textContent = '';
    }
    if (state.messages !== previous.messages) {
      for (const [baseKey, message] of state.messages) {
        if (previous.messages.get(baseKey) !== message) {
          renderMessage(message);
        }
      }
    }
    if (state.messages !== previous.messages || state.unreadFrom !== previous.unreadFrom) {
      drawLines(state.unreadFrom);
    }
    if (state.conversations !== previous.conversations || state.peer !== previous.peer) {
      renderConversations(state);
    }
    if (state.peerCard !== previous.peerCard || state.peer !== previous.peer) {
      renderPeerNote(state);
    }
    if (event.type === 'pageLoaded' && event.newest && event.peer === state.peer) {
      const line = $('messages').querySelector('.new-messages');
      if (line && previous.unreadFrom === null) {
        line.scrollIntoView({ block: 'start' });
      } else if (!line) {
        scrollToEnd();
      }
    }
  });

  function renderConversations(state) {
    const sorted = [...state.conversations.values()].sort((a, b) => b.lastAtMs - a.lastAtMs);
    const items = sorted.map((c) => {
      const li = document.createElement('li');
      const button = document.createElement('button');
      button.type = 'button';
      button.dataset.peer = c.peer;
      button.setAttribute('aria-current', String(c.peer === state.peer));
      const name = span('peer', c.peer);
      const last = span('last', c.lastText);
      const unread = span('unread', c.unread > 0 ? String(c.unread) : '');
      unread.setAttribute('aria-label', c.unread > 0 ? `${c.unread} unread` : 'none unread');
      button.append(name, unread, last);
      button.addEventListener('click', () => handlers.openChat(c.peer, true));
      li.append(button);
      return li;
    });
    $('conversations').replaceChildren(...items);
    $('no-chats').hidden = items.length > 0;
  }

  /**
   * Under the peer's name: "not end-to-end encrypted" when their card has no encryption key; a blocking warning (and
   * no composer) when their keys changed in a way their devices did not sign.
   */
  function renderPeerNote(state) {
    const note = $('peer-note');
    const card = state.peerCard;
    const broken = Boolean(card && card.broken);
    note.hidden = !card || (!broken && card.enc !== null);
    note.textContent = !card ? '' : (broken ? `${keysChangedText(state.peer)}. Sending to ${state.peer} is `
      + 'disabled: ask them, on another channel, what happened.' : 'not end-to-end encrypted');
    note.className = broken ? 'peer-note warning' : 'peer-note';
    note.setAttribute('role', broken ? 'alert' : 'status');
    $('message').disabled = broken;
    $('send').disabled = broken;
  }

  /** A line with the day above each day's first message, and "New messages" above the first unread one. */
  function drawLines(unreadFrom) {
    const list = $('messages');
    for (const line of list.querySelectorAll('li.day, li.new-messages')) {
      line.remove();
    }
    let day = null;
    for (const li of [...list.children]) {
      const at = Number(li.dataset.createdAtMs);
      if (dayKey(at) !== day) {
        day = dayKey(at);
        list.insertBefore(separator('day', dayLabel(at)), li);
      }
      if (li.dataset.baseKey === unreadFrom) {
        list.insertBefore(separator('new-messages', 'New messages'), li);
      }
    }
  }

  function renderMessage(message) {
    const list = $('messages');
    let li = list.querySelector(`li[data-base-key="${CSS.escape(message.baseKey)}"]`);
    const atEnd = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
    if (!li) {
      li = document.createElement('li');
      li.dataset.baseKey = message.baseKey;
      li.dataset.createdAtMs = String(message.createdAtMs);
      const after = [...list.querySelectorAll('li[data-base-key]')]
        .find((other) => Number(other.dataset.createdAtMs) > message.createdAtMs);
      list.insertBefore(li, after || null);
      if (!message.outgoing) {
        observer.observe(li);
      }
    }
    li.className = `message${message.outgoing ? ' mine' : ''}${message.verified ? '' : ' not-verified'}`
      + `${message.deleted ? ' deleted' : ''}${message.marker === 'cannot-decrypt' ? ' cannot-decrypt' : ''}`;
    if (message.marker) {
      li.dataset.marker = message.marker;
    } else {
      delete li.dataset.marker;
    }
    li.dataset.messageKey = message.messageKey;
    li.dataset.verified = String(message.verified);
    const meta = document.createElement('div');
    meta.className = 'meta';
    const time = document.createElement('time');
    time.dateTime = new Date(message.createdAtMs).toISOString();
    time.textContent = timeLabel(message.createdAtMs);
    meta.append(time);
    if (message.deleted) {
      // a quiet mark in place of the bubble: no words, no tick, no menu
      li.dataset.state = 'deleted';
      li.replaceChildren(span('deleted-text', DELETED_TEXT), meta);
      return;
    }
    const text = span('text', message.text);
    if (message.revision > 0) {
      meta.append(span('edited', '(edited)'));
    }
    if (message.marker === 'unencrypted') {
      meta.append(span('marker', SENT_UNENCRYPTED));
    }
    if (!message.verified) {
      li.dataset.state = 'not-verified';
      text.setAttribute('role', 'alert');
    } else if (message.outgoing) {
      const shown = tickOf(message);
      li.dataset.state = shown;
      const tick = span('tick', TICKS[shown].mark);
      tick.dataset.state = shown;
      tick.setAttribute('role', 'img');
      tick.setAttribute('aria-label', TICKS[shown].label);
      tick.title = TICKS[shown].label;
      if (shown === 'failed') {
        meta.append(span('failed-text', 'Message not delivered'));
      }
      meta.append(tick);
    } else {
      delete li.dataset.state;
    }
    const items = menuItems(message);
    if (items.length > 0) {
      meta.append(menuButton(items));
    }
    li.replaceChildren(text, meta);
    if (atEnd) {
      scrollToEnd();
    }
  }

  /** What the user may do with a message: the author edits and deletes, either side deletes its copy. */
  function menuItems(message) {
    if (!message.verified) {
      return [];
    }
    const items = [];
    if (message.outgoing && !message.pending && message.marker !== 'cannot-decrypt') {
      items.push({ label: 'Edit', action: () => guarded('chat-error', () => handlers.edit(message)) });
    }
    if (!message.pending) {
      items.push({ label: 'Delete', action: () => guarded('chat-error', () => handlers.remove(message)) });
    }
    if (message.outgoing) {
      items.push({ label: 'Details', action: () => showDetails(message.baseKey) });
    }
    return items;
  }

  function menuButton(items) {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'menu-button';
    button.textContent = '⋯';
    button.title = 'More';
    button.setAttribute('aria-label', 'Actions');
    button.setAttribute('aria-haspopup', 'menu');
    button.setAttribute('aria-expanded', 'false');
    button.addEventListener('click', () => menu.open(button, items));
    return button;
  }

  /** The details of a message of the user's, as the store has it now. */
  function showDetails(baseKey) {
    const message = store.state.messages.get(baseKey);
    if (!message) {
      return;
    }
    $('details-text').textContent = message.text;
    const rows = detailsOf(message, { peer: store.state.peer, serverLogin });
    $('details-list').replaceChildren(...rows.flatMap(({ term, value }) => {
      const dt = document.createElement('dt');
      dt.textContent = term;
      const dd = document.createElement('dd');
      dd.textContent = value;
      return [dt, dd];
    }));
    $('details').showModal();
  }

  return {
    guarded,
    error(id, text) {
      $(id).textContent = text;
    },
    banner(text) {
      $('banner').textContent = text;
    },
    thisServer(server) {
      serverLogin = server.serverLogin;
      $('this-server').textContent = `${server.serverLogin} (${server.url})`;
    },
    showSetup() {
      $('loading').hidden = true;
      $('setup').hidden = false;
    },
    showRegister(login, why) {
      $('loading').hidden = true;
      $('refused').hidden = true;
      $('chat').hidden = true;
      $('setup').hidden = false;
      $('register').hidden = false;
      $('register-why').textContent = why;
      $('login').value = login;
      $('register-button').focus();
    },
    /** A session starts: the chat screen, signing in. */
    showChat(login) {
      $('loading').hidden = true;
      $('setup').hidden = true;
      $('register').hidden = true;
      $('refused').hidden = true;
      $('chat').hidden = false;
      $('me').textContent = `Signing in as ${login}…`;
      $('export-key').hidden = false;
      $('devices-button').hidden = false;
      $('adding').hidden = true;
      $('key-section').hidden = false;
    },
    signedIn(login) {
      $('banner').textContent = '';
      $('me').textContent = `Signed in as ${login}`;
    },
    notSignedIn() {
      $('me').textContent = 'Not signed in';
      $('banner').textContent = '';
    },
    showRefused(why) {
      $('chat').hidden = true;
      $('refused-why').textContent = why;
      $('refused-error').textContent = '';
      $('refused').hidden = false;
    },
    /** A new browser waiting to be added: its request as text and as a QR code drawn here (SVG). */
    showAdding(login, text, qr) {
      $('loading').hidden = true;
      $('setup').hidden = false;
      $('register').hidden = true;
      $('key-section').hidden = true;
      $('adding').hidden = false;
      $('adding-login').textContent = login;
      $('request-text').value = text;
      drawQr($('request-qr'), qr);
    },
    /** A signed-in device that lacks the card's encryption key: its request under "Devices" (null: none). */
    keysNeeded(text, qr) {
      $('keys-needed').hidden = !text;
      $('keys-request-text').value = text || '';
      if (text) {
        drawQr($('keys-request-qr'), qr);
      } else {
        $('keys-request-qr').replaceChildren();
      }
    },
    addingStatus(text) {
      $('adding-status').textContent = text;
    },
    devicesStatus(text) {
      $('devices-status').textContent = text;
    },
    /** The devices "Revoke a device" offers: the card's other device keys, by label and the start of the key. */
    otherDevices(keys) {
      $('revoke-select').replaceChildren(...keys.map((k) => {
        const option = document.createElement('option');
        option.value = k.publicKeyB64;
        option.textContent = `${k.label || 'A device'} (${k.publicKeyB64.slice(0, 8)}…)`;
        return option;
      }));
    },
    signedOut() {
      $('adding').hidden = true;
      $('key-section').hidden = false;
      $('refused').hidden = true;
      $('chat').hidden = true;
      $('register').hidden = true;
      $('me').textContent = '';
      $('banner').textContent = '';
      $('export-key').hidden = true;
      $('devices-button').hidden = true;
      $('setup').hidden = false;
    },
    /** Saves a text as a file the browser downloads. */
    download(text, name) {
      const link = document.createElement('a');
      link.href = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
      link.download = name;
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(link.href), 10000);
    },
    /** The composer's text, trimmed. */
    composerText() {
      return $('message').value.trim();
    },
    clearComposer() {
      $('message').value = '';
    },
    /** Focus to the composer; `onlyIfLost`: only if nothing else has it (the user moved on: leave it there). */
    focusComposer({ onlyIfLost = false } = {}) {
      const active = document.activeElement;
      if (onlyIfLost && active && active !== document.body) {
        return;
      }
      $('message').focus();
    },
    /** The composer holds a message's text to edit (Send saves it), or (null) goes back to writing a new one. */
    editing(text) {
      $('editing').hidden = text === null;
      $('send').textContent = text === null ? 'Send' : 'Save';
      $('message').value = text === null ? '' : text;
      if (text !== null) {
        $('message').focus();
      }
    },
    confirmDelete(message, peer) {
      return confirm(message.outgoing
        ? `Delete this message? It goes from your devices and servers; ${peer} keeps the copy they received.`
        : `Delete this message? It goes from your devices and servers; ${peer} keeps their own copy.`);
    },
    visible() {
      return document.visibilityState === 'visible';
    },
    /** Keeps what is on screen in place while older messages come in above it: call the result after. */
    keepScroll() {
      const list = $('messages');
      const before = list.scrollHeight - list.scrollTop;
      return () => {
        list.scrollTop = list.scrollHeight - before;
      };
    },
  };
}

/** Runs an action of the user's; what fails is said in plain words (errors.js) in the element errorId. */
export async function guarded(errorId, action, context = {}) {
  const element = $(errorId);
  element.textContent = '';
  try {
    await action();
  } catch (e) {
    element.textContent = plain(e, context);
  }
}

function span(className, text) {
  const s = document.createElement('span');
  s.className = className;
  s.textContent = text;
  return s;
}

function separator(className, text) {
  const li = document.createElement('li');
  li.className = className;
  li.setAttribute('role', 'separator');
  li.append(span('', text));
  return li;
}

function scrollToEnd() {
  const list = $('messages');
  list.scrollTop = list.scrollHeight;
}

/** Draws a QR code (qr.js) into `container` as an SVG of its own, with a quiet zone. */
function drawQr(container, qr) {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  const side = qr.size + 8;
  svg.setAttribute('viewBox', `0 0 ${side} ${side}`);
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', 'QR code of this text');
  const path = document.createElementNS(ns, 'path');
  path.setAttribute('d', qrPath(qr));
  svg.append(path);
  container.replaceChildren(svg);
}
