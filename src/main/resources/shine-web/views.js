// The views: the DOM of index.html, drawn from the store's state (the chat list, the open chat's messages and their
// ticks) and the screens (setup, register, refused, chat). They change no state: the user's clicks go to `handlers`
// (openChat, edit, remove, seen — a message at least 60 % on screen).
import { TICKS, tickOf } from './outbox.js';

const $ = (id) => document.getElementById(id);

export function createViews(store, handlers) {
  const observer = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (entry.isIntersecting) {
        handlers.seen(entry.target.dataset.baseKey);
      }
    }
  }, { threshold: 0.6 });

  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') {
      for (const li of $('messages').children) {
        observer.unobserve(li);
        if (!li.classList.contains('mine')) {
          observer.observe(li);
        }
      }
    }
  });

  store.subscribe((state, previous, event) => {
    if (state.peer !== previous.peer) {
      $('messages').replaceChildren();
    }
    if (event.type === 'chatOpened') {
      $('peer-name').textContent = state.peer;
      $('composer').hidden = false;
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
    if (state.conversations !== previous.conversations || state.peer !== previous.peer) {
      renderConversations(state);
    }
    if (event.type === 'pageLoaded' && event.newest && event.peer === state.peer) {
      scrollToEnd();
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
  }

  function renderMessage(message) {
    const list = $('messages');
    let li = list.querySelector(`[data-base-key="${CSS.escape(message.baseKey)}"]`);
    if (message.deleted) {
      li?.remove();
      return;
    }
    const atEnd = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
    if (!li) {
      li = document.createElement('li');
      li.dataset.baseKey = message.baseKey;
      li.dataset.createdAtMs = String(message.createdAtMs);
      const after = [...list.children].find((other) => Number(other.dataset.createdAtMs) > message.createdAtMs);
      list.insertBefore(li, after || null);
      if (!message.outgoing) {
        observer.observe(li);
      }
    }
    li.className = `message${message.outgoing ? ' mine' : ''}${message.verified ? '' : ' not-verified'}`;
    li.dataset.messageKey = message.messageKey;
    li.dataset.verified = String(message.verified);
    const text = span('text', message.text);
    const meta = document.createElement('div');
    meta.className = 'meta';
    const time = document.createElement('time');
    time.dateTime = new Date(message.createdAtMs).toISOString();
    time.textContent = new Date(message.createdAtMs).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
    meta.append(time);
    if (message.revision > 0) {
      meta.append(span('edited', 'edited'));
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
      if (!message.pending) {
        meta.append(actionButton('Edit', () => handlers.edit(message)),
          actionButton('Delete', () => handlers.remove(message)));
      }
    } else {
      delete li.dataset.state;
    }
    li.replaceChildren(text, meta);
    if (atEnd) {
      scrollToEnd();
    }
  }

  function actionButton(text, action) {
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = text;
    button.addEventListener('click', () => guarded('chat-error', action));
    return button;
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
      $('this-server').textContent = `${server.serverLogin} (${server.url})`;
    },
    showSetup() {
      $('setup').hidden = false;
    },
    showRegister(login, why) {
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
      $('setup').hidden = true;
      $('register').hidden = true;
      $('refused').hidden = true;
      $('chat').hidden = false;
      $('me').textContent = `Signing in as ${login}…`;
      $('export-key').hidden = false;
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
    signedOut() {
      $('refused').hidden = true;
      $('chat').hidden = true;
      $('register').hidden = true;
      $('me').textContent = '';
      $('banner').textContent = '';
      $('export-key').hidden = true;
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
    focusComposer() {
      $('message').focus();
    },
    askEdit(text) {
      return prompt('Edit message', text);
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

/** Runs an action of the user's; what fails is said in the element errorId. */
export async function guarded(errorId, action) {
  const element = $(errorId);
  element.textContent = '';
  try {
    await action();
  } catch (e) {
    element.textContent = e.message;
  }
}

function span(className, text) {
  const s = document.createElement('span');
  s.className = className;
  s.textContent = text;
  return s;
}

function scrollToEnd() {
  const list = $('messages');
  list.scrollTop = list.scrollHeight;
}
