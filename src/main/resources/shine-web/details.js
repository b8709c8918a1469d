// A message of the user's in full: what its state is per the seed (§8) — waiting in this browser, accepted by the
// user's server, delivered to the recipient's servers, read and when, or failed — as rows of a term and its value.
// The protocol says that a copy reached one of the recipient's servers, not which one (DmDeliveryStateChanged carries
// no server), and when a message was read only in the receipt (readAtMs). For the browser and Node.
import { tickOf } from './outbox.js';
import { dayTimeLabel } from './when.js';

/** [{term, value}] for an outgoing message to `peer`; `serverLogin` is the server that served this page. */
export function detailsOf(message, { peer, serverLogin, nowMs = Date.now() }) {
  const state = tickOf(message);
  const rows = [{ term: 'Written', value: dayTimeLabel(message.createdAtMs, nowMs) }];
  if (message.revision > 0) {
    rows.push({ term: 'Edited', value: message.revision === 1 ? 'Yes, once' : `Yes, ${message.revision} times` });
  }
  rows.push({ term: 'Accepted by your server', value: accepted(message, serverLogin) });
  rows.push({ term: `Delivered to ${peer}`, value: delivered(message, state, peer) });
  rows.push({ term: `Read by ${peer}`, value: read(message, nowMs) });
  rows.push({ term: 'Message key', value: message.messageKey });
  return rows;
}

function accepted(message, serverLogin) {
  if (message.pending) {
    return message.revision > 0 ? 'Not yet for this edit: it waits in this browser and is sent when the connection '
      + 'is back' : 'Not yet: it waits in this browser and is sent when the connection is back';
  }
  return `Yes, by ${serverLogin}`;
}

function delivered(message, state, peer) {
  if (message.read || state === 'delivered') {
    return `Yes, to one of ${peer}'s servers (the servers do not say which)`;
  }
  if (state === 'failed') {
    return `Failed: none of ${peer}'s servers took it in the hour your servers kept trying. Edit it to send it again`;
  }
  if (message.pending) {
    return 'Not yet';
  }
  return `Not yet: ${peer}'s servers did not answer; your servers keep trying for up to an hour`;
}

function read(message, nowMs) {
  if (!message.read) {
    return 'Not yet';
  }
  return message.readAtMs === undefined ? 'Yes (when is not known on this page)'
    : `Yes, ${dayTimeLabel(message.readAtMs, nowMs)}`;
}
