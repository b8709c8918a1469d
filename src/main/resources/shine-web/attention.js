// New messages while the user looks elsewhere: the unread count in the tab's title ("(3) SHiNE chat") and, only when
// the user turned them on with the "Notify me" switch (off by default; the browser asks for permission then), a
// notification for each new message that arrives while the tab is hidden. The choice is kept in this browser.
const TITLE = 'SHiNE chat';
const SETTING = 'shine-chat.notify';
const PREVIEW = 120;

/** `openChat(peer)` is what a click on a notification does. */
export function createAttention(store, openChat) {
  const $ = (id) => document.getElementById(id);
  const toggle = $('notify');
  const note = $('notify-note');
  const supported = typeof Notification === 'function';
  let on = supported && localStorage.getItem(SETTING) === 'on' && Notification.permission === 'granted';

  $('notify-row').hidden = !supported;
  toggle.checked = on;

  function set(value, why = '') {
    on = value;
    toggle.checked = value;
    note.textContent = why;
    localStorage.setItem(SETTING, value ? 'on' : 'off');
  }

  toggle.addEventListener('change', async () => {
    if (!toggle.checked) {
      set(false);
      return;
    }
    const permission = Notification.permission === 'granted' ? 'granted' : await Notification.requestPermission();
    if (permission === 'granted') {
      set(true);
    } else {
      set(false, 'This browser blocks notifications from this page: allow them in its site settings, then turn '
        + 'this on again.');
    }
  });

  store.subscribe((state, previous, event) => {
    if (state.conversations !== previous.conversations) {
      const unread = [...state.conversations.values()].reduce((sum, c) => sum + c.unread, 0);
      document.title = unread > 0 ? `(${unread}) ${TITLE}` : TITLE;
    }
    if (event.type === 'messageArrived' && on && document.visibilityState === 'hidden') {
      const { message, peer } = event;
      if (!message.outgoing && message.verified && message.revision === 0) {
        notify(peer, message);
      }
    }
  });

  function notify(peer, message) {
    const body = message.text.length > PREVIEW ? `${message.text.slice(0, PREVIEW)}…` : message.text;
    const notification = new Notification(`New message from ${peer}`, { body, tag: message.baseKey });
    notification.addEventListener('click', () => {
      window.focus();
      notification.close();
      openChat(peer);
    });
  }
}
