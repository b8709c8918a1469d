// What the user does in a chat, and what the chat does on each login: open a chat and page back through it, send a
// read receipt for what is on screen, write, edit (in the composer) and delete. It asks the protocol client and the
// outbox, and tells the store what happened; `session` is {identity, client} of account.js.
import { randomNonce } from './codec.js';
import { keysChangedText } from './cards.js';
import { plain, tooLong } from './errors.js';

export function createChat({ store, session, outbox, views }) {
  let loadingOlder = false;
  let editing = null; // the baseKey of the message the composer edits
  const ready = () => Boolean(session.client && session.client.ready);

  /** After each login: the chat list, the open chat anew, the receipts owed, then the outbox. */
  async function online() {
    const askedSeq = store.state.conversationsSeq;
    const conversations = await session.client.conversations();
    store.dispatch({ type: 'conversationsLoaded', conversations, askedSeq });
    if (store.state.peer) {
      await openChat(store.state.peer, false);
    }
    for (const baseKey of store.state.receiptsOwed) {
      readOnScreen(baseKey);
    }
    await outbox.flush();
  }

  async function openChat(peer, focus) {
    if (peer !== store.state.peer) {
      cancelEdit();
    }
    store.dispatch({ type: 'chatOpened', peer });
    // the composer takes the focus now, not after the page came: by then the user may be typing elsewhere
    if (focus) {
      views.focusComposer();
    }
    await outbox.show();
    await readPeerCard(peer);
    if (ready()) {
      try {
        const page = await session.client.page(peer);
        store.dispatch({ type: 'pageLoaded', peer, newest: true, ...page });
      } catch (e) {
        views.error('chat-error', plain(e, { peer }));
      }
    }
    if (focus) {
      views.focusComposer({ onlyIfLost: true }); // a composer disabled and enabled again meanwhile lost it
    }
  }

  /** Whether the peer's messages are sealed (their card, and the user's own, have an encryption key), or blocked. */
  async function readPeerCard(peer) {
    if (!session.client) {
      return;
    }
    try {
      const [theirs, mine] = await Promise.all([session.client.cardState(peer),
        session.client.cardState(session.identity.login)]);
      store.dispatch({
        type: 'peerCard', peer, card: { enc: theirs.enc, broken: theirs.broken, sealed: Boolean(theirs.enc || mine.enc) },
      });
    } catch (e) {
      // offline and never seen: nothing is known yet; the next login reads it
    }
  }

  async function loadOlder() {
    const { peer, hasMore, oldestAtMs } = store.state;
    if (loadingOlder || !hasMore || oldestAtMs === null || !ready()) {
      return;
    }
    loadingOlder = true;
    const restoreScroll = views.keepScroll();
    try {
      // the bound is exclusive: one past the oldest time also brings messages that share it (known ones are skipped)
      const page = await session.client.page(peer, oldestAtMs + 1);
      store.dispatch({ type: 'pageLoaded', peer, newest: false, ...page });
      restoreScroll();
    } finally {
      loadingOlder = false;
    }
  }

  /** A receipt, once, for an incoming message that verified and is on screen in a visible tab; owed while offline. */
  async function readOnScreen(baseKey) {
    const { messages, receiptsSent } = store.state;
    const message = messages.get(baseKey);
    if (!message || message.outgoing || !message.verified || message.read || receiptsSent.has(baseKey)
        || !views.visible()) {
      return;
    }
    if (!ready()) {
      store.dispatch({ type: 'receiptOwed', baseKey });
      return;
    }
    store.dispatch({ type: 'receiptSending', baseKey });
    try {
      await session.client.sendReadReceipt(baseKey);
      store.dispatch({ type: 'readByMe', baseKey });
    } catch (e) {
      store.dispatch({ type: 'receiptFailed', baseKey });
    }
  }

  /** Sends what the composer holds: a new message, or the edit of one. A text the server would refuse stays there. */
  async function send() {
    const text = views.composerText();
    const { peer } = store.state;
    if (!text || !peer) {
      return;
    }
    const card = store.state.peerCard;
    if (card && card.broken) {
      views.error('chat-error', `${keysChangedText(peer)}: sending to ${peer} is disabled.`);
      return;
    }
    const long = tooLong(text, Boolean(card && card.sealed));
    views.error('chat-error', long || '');
    if (long) {
      return;
    }
    const edited = editing && store.state.messages.get(editing);
    cancelEdit();
    views.clearComposer();
    if (edited) {
      // an edit is the pair again with the same createdAtMs and nonce and the next revision; a message deleted
      // meanwhile is not brought back
      if (!edited.deleted && text !== edited.text) {
        await views.guarded('chat-error',
          () => outbox.queue(peer, edited.createdAtMs, edited.nonce, edited.revision + 1, text), { peer });
      }
      return;
    }
    await views.guarded('chat-error', () => outbox.queue(peer, Date.now(), randomNonce(), 0, text), { peer });
  }

  /** The composer takes the message's text; Send saves the edit, Cancel (or Escape) leaves it. */
  function edit(message) {
    editing = message.baseKey;
    views.editing(message.text);
  }

  function cancelEdit() {
    if (editing) {
      editing = null;
      views.editing(null);
    }
  }

  /** A tombstone for the user's copy; the bubble becomes a "Message deleted" mark. */
  async function remove(message) {
    const { peer } = store.state;
    if (!ready()) {
      throw new Error('You are offline: a message can be deleted once the connection is back.');
    }
    if (!views.confirmDelete(message, peer)) {
      return;
    }
    if (editing === message.baseKey) {
      cancelEdit();
    }
    await session.client.deleteMessage(peer, message.messageKey);
    await outbox.forget(message.baseKey);
    store.dispatch({ type: 'deleted', baseKey: message.baseKey });
  }

  return { online, openChat, loadOlder, readOnScreen, send, edit, cancelEdit, remove };
}
