// cards.js and the pinning in verify.js: v1 and v3 cards read and verified, which newer card follows from a pinned
// one (PROTOCOL §4 v3), and what the verifier does with a card that does not follow. Cards are signed here as the
// server's CardText.v3 and client.DeviceCard write them (the browser tests publish such cards to the real server).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { webcrypto } from 'node:crypto';

globalThis.crypto ??= webcrypto;
const { b64encode, cardText, cardText3 } = await import('../src/main/resources/shine-web/codec.js');
const {
  chainFollows, follows, keysChangedText, messageKeysOf, readCard,
} = await import('../src/main/resources/shine-web/cards.js');
const { Verifier } = await import('../src/main/resources/shine-web/verify.js');

const ROUTES = [{ serverLogin: 's1', url: 'ws://127.0.0.1:1/ws' }];

async function newKey() {
  const pair = await crypto.subtle.generateKey('Ed25519', true, ['sign', 'verify']);
  return { b64: b64encode(new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey))), ...pair };
}

async function sign3(fields, signer) {
  const card = { login: 'bob', epoch: 0, accessServers: ROUTES, ...fields, signerKeyB64: signer.b64 };
  card.signatureB64 = b64encode(new Uint8Array(await crypto.subtle.sign('Ed25519', signer.privateKey, cardText3(card))));
  return card;
}

async function sign1(key, version) {
  const card = { login: 'bob', publicKeyB64: key.b64, accessServers: ROUTES, version };
  card.signatureB64 = b64encode(new Uint8Array(await crypto.subtle.sign('Ed25519', key.privateKey,
    cardText('bob', key.b64, version, ROUTES))));
  return card;
}

const read = async (raw) => (await readCard('bob', raw)).card;
const [d1, d2, d3, recovery, thief] = await Promise.all([newKey(), newKey(), newKey(), newKey(), newKey()]);
const enc = b64encode(new Uint8Array(32).fill(7));

test('the v3 signed text is the server\'s, lists in card order and nothing after = when absent', () => {
  const text = new TextDecoder().decode(cardText3({
    login: 'bob', epoch: 1, version: 7, keys: [{ publicKeyB64: 'K1', label: 'not signed' }, { publicKeyB64: 'K2' }],
    retiredKeys: [{ publicKeyB64: 'R1', retiredAtMs: 5 }, { publicKeyB64: 'R2', retiredAtMs: 6 }],
    revokedKeysB64: ['X1'], encryptionKeyB64: 'E', accessServers: [...ROUTES, { serverLogin: 's2', url: 'ws://b/ws' }],
  }));
  assert.equal(text, 'SHiNE_CARD3|bob|1|7|keys=K1,K2|recovery=|enc=E|retired=R1@5,R2@6|revoked=X1'
    + '|s1=ws://127.0.0.1:1/ws|s2=ws://b/ws');
});

test('v1 and v3 cards read as one shape; retired keys verify messages, revoked ones do not', async () => {
  const v1 = await read(await sign1(d1, 3));
  assert.deepEqual([v1.epoch, v1.version, v1.current, v1.enc], [0, 3, [d1.b64], null]);
  const v3 = await read(await sign3({
    version: 4, keys: [{ publicKeyB64: d2.b64, label: 'Chromium' }], encryptionKeyB64: enc,
    retiredKeys: [{ publicKeyB64: d1.b64, retiredAtMs: 10 }], revokedKeysB64: [d3.b64],
  }, d1));
  assert.equal(v3.enc, enc);
  assert.deepEqual(messageKeysOf(v3), [d2.b64, d1.b64]);
  const forged = await sign3({ version: 4, keys: [{ publicKeyB64: d2.b64 }] }, d1);
  forged.version = 5;
  assert.match((await readCard('bob', forged)).problem, /not signed by its key/);
  assert.match((await readCard('alice', forged)).problem, /is not alice's/);
  assert.match((await readCard('bob', { ...forged, keys: [] })).problem, /malformed/);
});

test('a newer card follows when a device key of the previous one signs the same epoch, or its recovery key the next',
  async () => {
    const first = await read(await sign1(d1, 1));
    const upgraded = await read(await sign3({ version: 2, keys: [{ publicKeyB64: d1.b64 }], encryptionKeyB64: enc }, d1));
    assert.ok(follows(first, upgraded), 'a v1 card moves to v3 signed by its key');
    const added = await read(await sign3({
      version: 3, keys: [{ publicKeyB64: d1.b64 }, { publicKeyB64: d2.b64 }], encryptionKeyB64: enc,
      recoveryKeyB64: recovery.b64,
    }, d1));
    assert.ok(follows(upgraded, added), 'a device added, the first recovery key set');
    const rotated = await read(await sign3({
      version: 4, keys: [{ publicKeyB64: d3.b64 }, { publicKeyB64: d2.b64 }], encryptionKeyB64: enc,
      recoveryKeyB64: recovery.b64, retiredKeys: [{ publicKeyB64: d1.b64, retiredAtMs: 1 }],
    }, d1));
    assert.ok(follows(added, rotated));
    const recovered = await read(await sign3({
      epoch: 1, version: 1, keys: [{ publicKeyB64: thief.b64 }], recoveryKeyB64: recovery.b64,
      retiredKeys: [{ publicKeyB64: d1.b64, retiredAtMs: 1 }], revokedKeysB64: [d3.b64, d2.b64],
    }, recovery));
    assert.ok(follows(rotated, recovered), 'a recovery replaces every device key');
    assert.ok(chainFollows(first, [upgraded, added, rotated, recovered]));
    assert.ok(!chainFollows(first, []), 'an empty chain leads nowhere');
    assert.ok(!chainFollows(first, [recovered]), 'a step left out: the recovery key that signs it is not in the pin');
  });

test('a card that does not follow: a stranger\'s key, a dropped key, a new epoch without the recovery key, a '
  + 'revoked key back', async () => {
  const pinned = await read(await sign3({ version: 1, keys: [{ publicKeyB64: d1.b64 }], recoveryKeyB64: recovery.b64 },
    d1));
  const byThief = await read(await sign3({ version: 2, keys: [{ publicKeyB64: thief.b64 }],
    revokedKeysB64: [d1.b64], recoveryKeyB64: recovery.b64 }, thief));
  assert.ok(!follows(pinned, byThief));
  const dropped = await read(await sign3({ version: 2, keys: [{ publicKeyB64: d2.b64 }], recoveryKeyB64: recovery.b64 },
    d1));
  assert.ok(!follows(pinned, dropped));
  const epochByDevice = await read(await sign3({ epoch: 1, version: 1, keys: [{ publicKeyB64: d1.b64 }],
    recoveryKeyB64: recovery.b64 }, d1));
  assert.ok(!follows(pinned, epochByDevice));
  const recoveryDropped = await read(await sign3({ version: 2, keys: [{ publicKeyB64: d1.b64 }] }, d1));
  assert.ok(!follows(pinned, recoveryDropped), 'only the recovery key removes the recovery key');
  const revoking = await read(await sign3({ version: 2, keys: [{ publicKeyB64: d2.b64 }], revokedKeysB64: [d1.b64],
    recoveryKeyB64: recovery.b64 }, d1));
  assert.ok(follows(pinned, revoking));
  const back = await read(await sign3({ version: 3, keys: [{ publicKeyB64: d2.b64 }, { publicKeyB64: d1.b64 }],
    recoveryKeyB64: recovery.b64 }, d2));
  assert.ok(!follows(revoking, back));
  assert.ok(!follows(revoking, pinned), 'an older card never follows');
});

test('the verifier pins a contact\'s first card, takes a newer one only through a chain that follows, and else '
  + 'verifies nothing of theirs', async () => {
  const pins = new Map();
  const store = { get: async (login) => pins.get(login), put: async (login, card) => { pins.set(login, card); } };
  const v1 = await sign1(d1, 1);
  const v2 = await sign3({ version: 2, keys: [{ publicKeyB64: d1.b64 }, { publicKeyB64: d2.b64 }] }, d1);
  const byThief = await sign3({ version: 3, keys: [{ publicKeyB64: thief.b64 }], revokedKeysB64: [d1.b64, d2.b64] },
    thief);
  let served = v1;
  let chain = [];
  const verifier = () => new Verifier('alice', async () => served, 10,
    { pins: store, readChain: async () => chain });

  assert.deepEqual((await verifier().cardOf('bob')).card.current, [d1.b64]);
  assert.equal(pins.get('bob'), v1, 'pinned on first sight');
  served = v2;
  chain = [v2];
  assert.deepEqual((await verifier().cardOf('bob')).card.current, [d1.b64, d2.b64]);
  assert.equal(pins.get('bob'), v2, 'the newer card that follows is pinned');
  served = v1;
  assert.deepEqual((await verifier().cardOf('bob')).card.current, [d1.b64, d2.b64], 'an older card served: the pin');
  served = byThief;
  chain = [byThief];
  const seen = await verifier().cardOf('bob');
  assert.equal(seen.broken, true);
  assert.equal(seen.problem, keysChangedText('bob'));
  assert.equal(seen.problem, 'bob\'s keys changed in a way their devices did not sign');
  assert.deepEqual(seen.keys, []);
  assert.equal(pins.get('bob'), v2, 'the pin stays');
});

const { browserLabel, nextCard, signCard } = await import('../src/main/resources/shine-web/cards.js');

test('the card after a v1 card is v3 of the next version, signed by its key, and follows from it; labels are the '
  + 'browser\'s name', async () => {
  const v1 = await sign1(d1, 4);
  const next = nextCard('bob', v1, (card) => {
    card.keys[0].label = 'Chromium on Linux';
    card.encryptionKeyB64 = enc;
  });
  assert.deepEqual(next, { login: 'bob', epoch: 0, version: 5, keys: [{ publicKeyB64: d1.b64, label: 'Chromium on Linux' }],
    accessServers: ROUTES, encryptionKeyB64: enc });
  const signed = await signCard(next, d1.b64, d1.privateKey);
  assert.equal(signed.signerKeyB64, d1.b64);
  assert.ok(follows(await read(v1), await read(signed)));
  const first = nextCard('bob', null, (card) => card.keys.push({ publicKeyB64: d2.b64 }));
  assert.deepEqual([first.epoch, first.version], [0, 1]);
  assert.equal(browserLabel('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) '
    + 'HeadlessChrome/140.0.0.0 Safari/537.36'), 'Chrome on Linux');
  assert.equal(browserLabel('Mozilla/5.0 (Android 14; Mobile; rv:128.0) Gecko/128.0 Firefox/128.0'), 'Firefox on Android');
});

const { parseRequest, requestText } = await import('../src/main/resources/shine-web/devices.js');
const keysModule = await import('../src/main/resources/shine-web/keys.js');
const hpke = await import('../src/main/resources/shine-web/hpke.js');

test('Add a device: the text the new browser shows reads back; other text is refused in plain words; the sealed '
  + 'encryption keys open only for that login and device key', async () => {
  const transfer = await hpke.generateKeyPair();
  const request = { login: 'bob', publicKeyB64: d3.b64, transferPublicKeyB64: b64encode(transfer.publicKey),
    label: 'Firefox on Android' };
  assert.deepEqual(parseRequest(`  ${requestText(request)}\n`), { login: 'bob', deviceKeyB64: d3.b64,
    transferKeyB64: request.transferPublicKeyB64, label: 'Firefox on Android' });
  assert.throws(() => parseRequest('login: bob'), /not the text a new device shows/);
  assert.throws(() => parseRequest(requestText({ ...request, publicKeyB64: 'short' })), /not the text/);

  const identity = await keysModule.withEncryptionKeys(await keysModule.createKey('bob'),
    [await keysModule.createEncryptionKey(), await keysModule.createEncryptionKey()]);
  const secret = new TextEncoder().encode(JSON.stringify({
    encryptionKeys: await keysModule.encryptionSecrets(identity) }));
  const sealed = await hpke.sealKeyTransfer(secret, transfer.publicKey, 'bob', d3.b64);
  const keysWithKid = await hpke.privateKeysOf([transfer.privateKey]);
  const opened = JSON.parse(new TextDecoder().decode(await hpke.openKeyTransfer(sealed, keysWithKid, 'bob', d3.b64)));
  const received = await keysModule.encryptionKeysFrom(opened.encryptionKeys);
  assert.deepEqual(received.map((k) => k.publicKeyB64), identity.encryptionKeys.map((k) => k.publicKeyB64));
  await assert.rejects(hpke.openKeyTransfer(sealed, keysWithKid, 'bob', d2.b64), 'bound to the new device key');
});

test('the Java DeviceCard\'s v3 cards (dm/card-v3-vectors.json): the same signed text, the same signature, the keys '
  + 'that verify messages, and each card follows from the one before', async () => {
  const { readFile } = await import('node:fs/promises');
  const { cards } = JSON.parse(await readFile(new URL('../src/test/resources/dm/card-v3-vectors.json', import.meta.url)));
  assert.equal(cards.length, 4);
  const read3 = [];
  for (const vector of cards) {
    const { card } = vector;
    assert.equal(new TextDecoder().decode(cardText3(card)), vector.signedText);
    const { card: shape, problem } = await readCard(card.login, card);
    assert.equal(problem, null);
    assert.deepEqual(messageKeysOf(shape), vector.verifyingKeysB64);
    const signer = await keysModule.keyFromFile(JSON.stringify({ login: card.login, publicKeyB64: card.signerKeyB64,
      privateKeyB64: vector.signerPrivateKeyB64 }));
    const { signatureB64, signerKeyB64, ...unsigned } = card;
    assert.equal((await signCard(unsigned, signerKeyB64, signer.privateKey)).signatureB64, signatureB64);
    read3.push(shape);
  }
  assert.ok(chainFollows(read3[0], read3.slice(1)));
  for (let i = 1; i < read3.length; i++) {
    assert.ok(follows(read3[i - 1], read3[i]), `card ${i + 1} follows card ${i}`);
  }
  assert.ok(!follows(read3[0], read3[3]), 'a recovery whose key the first card did not have');
});
