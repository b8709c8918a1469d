// The web chat's codec (served from the jar's shine-web/) against the vectors DmCodec signed
// (src/test/resources/dm/web-codec-vectors.json, checked on the Java side by DmCodecWebVectorsTest).
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { webcrypto } from 'node:crypto';

// Node 18 (Debian 12's) has WebCrypto only as a module; later versions also as the global the page uses
globalThis.crypto ??= webcrypto;
const codec = await import('../src/main/resources/shine-web/codec.js');
const keys = await import('../src/main/resources/shine-web/keys.js');
const {
  b64decode, b64encode, baseKey, decodeBody, encodeBody, messageKey, parseContainer, randomNonce, signContainer,
  unsignedBytes, verifyContainer,
} = codec;
const { keyFileText, keyFromFile } = keys;
const vectors = JSON.parse(await readFile(new URL('../src/test/resources/dm/web-codec-vectors.json', import.meta.url)));
const fileText = JSON.stringify(vectors.key);
const identity = await keyFromFile(fileText);
const publicKey = await crypto.subtle.importKey('raw', b64decode(vectors.key.publicKeyB64), 'Ed25519', true,
  ['verify']);

function fieldsOf(vector) {
  return {
    kind: vector.kind, createdAtMs: vector.createdAtMs, nonce: BigInt(vector.nonce), revision: vector.revision,
    from: vector.from, to: vector.to, ref: vector.ref, body: new TextEncoder().encode(vector.body),
  };
}

test('the JS codec signs every vector to the bytes the Java codec signed', async () => {
  assert.ok(vectors.containers.length >= 5);
  for (const vector of vectors.containers) {
    const signed = await signContainer(fieldsOf(vector), identity.privateKey);
    assert.equal(b64encode(signed), vector.containerB64, `kind ${vector.kind} ${vector.body}`);
  }
});

test('the JS codec parses and verifies the Java containers, and refuses a changed byte or trailing bytes', async () => {
  for (const vector of vectors.containers) {
    const bytes = b64decode(vector.containerB64);
    const parsed = parseContainer(bytes);
    assert.equal(parsed.kind, vector.kind);
    assert.equal(parsed.createdAtMs, vector.createdAtMs);
    assert.equal(parsed.nonce, BigInt(vector.nonce));
    assert.equal(parsed.revision, vector.revision);
    assert.equal(parsed.ref, vector.ref);
    assert.equal(baseKey(parsed), `${vector.from}|${vector.to}|${vector.createdAtMs}|${vector.nonce}`);
    assert.equal(messageKey(parsed), `${baseKey(parsed)}|${vector.kind}`);
    assert.equal(await verifyContainer(bytes, publicKey), true);
    for (const at of [20, bytes.length - 65, bytes.length - 1]) {
      const changed = bytes.slice();
      changed[at] ^= 1;
      assert.equal(await verifyContainer(changed, publicKey).catch(() => false), false, `byte ${at} changed`);
    }
    const longer = new Uint8Array(bytes.length + 1);
    longer.set(bytes);
    assert.throws(() => parseContainer(longer));
    assert.throws(() => parseContainer(bytes.subarray(0, bytes.length - 1)));
  }
});

test('bodies are the v2 JSON the CLI writes; older raw UTF-8 bodies still read', () => {
  assert.equal(new TextDecoder().decode(encodeBody('hello bob')), '{"v":1,"text":"hello bob"}');
  assert.equal(decodeBody(encodeBody('Привет, ёжик 🦔')), 'Привет, ёжик 🦔');
  assert.equal(decodeBody(new TextEncoder().encode('plain old text')), 'plain old text');
});

test('a keygen file (format 1) imports, exports to the same fields in format 2, and a mismatched public key is refused',
  async () => {
  assert.equal(identity.login, 'alice');
  const exported = JSON.parse(await keyFileText(identity));
  assert.deepEqual(exported, { format: 2, ...vectors.key, encryptionKeys: [] });
  const other = { ...vectors.key, publicKeyB64: b64encode(new Uint8Array(32).fill(9)) };
  await assert.rejects(keyFromFile(JSON.stringify(other)));
  await assert.rejects(keyFromFile('not json'));
  assert.throws(() => unsignedBytes({ ...fieldsOf(vectors.containers[0]), from: 'Not A Login' }));
});

test('a format 2 file keeps its encryption keys, newest first, through import and export; a broken one is refused',
  async () => {
    const older = await keys.createEncryptionKey();
    const newer = await keys.createEncryptionKey();
    const text = await keyFileText(await keys.withEncryptionKeys(identity, [newer, older]));
    const back = await keyFromFile(text);
    assert.deepEqual(back.encryptionKeys.map((k) => k.publicKeyB64), [newer.publicKeyB64, older.publicKeyB64]);
    assert.equal(await keyFileText(back), text);
    const file = JSON.parse(text);
    file.encryptionKeys[1].publicKeyB64 = newer.publicKeyB64;
    await assert.rejects(keyFromFile(JSON.stringify(file)), /damaged/);
    await assert.rejects(keyFromFile(JSON.stringify({ ...file, format: 3 })), /format 3/);
  });

test('every private key an identity holds is non-extractable; only the vault gives the raw keys, to Export key and a '
  + 'key transfer', async () => {
    const made = await keys.withEncryptionKeys(await keys.createKey('carol'), [await keys.createEncryptionKey()]);
    const rotated = await keys.withDeviceKey(made, await keys.createKey('carol'));
    for (const identity of [made, rotated, await keyFromFile(await keyFileText(made))]) {
      assert.equal(identity.privateKey.extractable, false);
      assert.equal(identity.encryptionKeys.length, 1);
      assert.equal(identity.encryptionKeys[0].privateKey.extractable, false);
      assert.equal(identity.vault.wrapKey.extractable, false);
      await assert.rejects(crypto.subtle.exportKey('jwk', identity.privateKey));
      await assert.rejects(crypto.subtle.exportKey('pkcs8', identity.encryptionKeys[0].privateKey));
      assert.equal(JSON.stringify(identity).includes((await keys.encryptionSecrets(made))[0].privateKeyB64), false);
    }
    assert.notEqual(rotated.publicKeyB64, made.publicKeyB64);
    assert.deepEqual(await keys.encryptionSecrets(rotated), await keys.encryptionSecrets(made), 'rotation keeps them');
    const file = JSON.parse(await keyFileText(rotated));
    assert.equal(file.publicKeyB64, rotated.publicKeyB64);
    // what the file says signs as the identity's non-extractable key does
    const again = await keyFromFile(JSON.stringify(file));
    const probe = new TextEncoder().encode('probe');
    const verifyKey = await crypto.subtle.importKey('raw', b64decode(file.publicKeyB64), 'Ed25519', false, ['verify']);
    assert.ok(await crypto.subtle.verify('Ed25519', verifyKey,
      await crypto.subtle.sign('Ed25519', again.privateKey, probe), probe));
  });

// ---- verify.js: what the chat makes of what its server hands it (PROTOCOL §13 "Clients verify") ----
const { Verifier, cardKeys } = await import('../src/main/resources/shine-web/verify.js');
const hello = vectors.containers[0].containerB64; // kind 1, alice → bob, signed by alice's vector key

/** A directory of cards that counts its reads; `down` makes every read fail. */
function directory(cards) {
  const reads = [];
  const source = {
    reads, down: false, cards,
    read: async (login) => {
      reads.push(login);
      if (source.down) {
        throw new Error('server unreachable');
      }
      return cards[login] ?? null;
    },
  };
  return source;
}

async function signedCard(login, key, version = 1) {
  const servers = [{ serverLogin: 's1', url: 'ws://127.0.0.1:7101/ws' }];
  const signature = await crypto.subtle.sign('Ed25519', key.privateKey,
    codec.cardText(login, key.publicKeyB64, version, servers));
  return { login, publicKeyB64: key.publicKeyB64, accessServers: servers, version,
    signatureB64: b64encode(new Uint8Array(signature)) };
}

test('the shared card vector (signed by the Java client) verifies, and its key the Java containers', async () => {
  const card = await cardKeys('alice', vectors.card);
  assert.equal(card.problem, null);
  const verifier = new Verifier('bob', async () => vectors.card);
  const check = await verifier.copy(hello, codec.Kind.INCOMING, { messageKey: `${baseKey(parseContainer(b64decode(hello)))}|1` });
  assert.equal(check.verified, true);
  assert.equal(decodeBody(check.container.body), 'hello bob');
  assert.equal((await cardKeys('bob', vectors.card)).problem, 'the card served for bob is not bob\'s');
  assert.equal((await cardKeys('alice', { ...vectors.card, version: 4 })).problem, 'alice\'s card is not signed by its key');
});

test('a container not signed by its author\'s card key, or changed on the way, is not verified and says why', async () => {
  const mallory = await keys.createKey('alice');
  const forged = b64encode(await signContainer(fieldsOf(vectors.containers[0]), mallory.privateKey));
  const verifier = new Verifier('bob', directory({ alice: vectors.card }).read);
  const check = await verifier.copy(forged, codec.Kind.INCOMING);
  assert.equal(check.verified, false);
  assert.equal(check.checked, true);
  assert.equal(check.reason, 'this message is not signed by alice\'s key');
  const changed = b64decode(hello);
  changed[changed.length - 70] ^= 1;
  assert.equal((await verifier.copy(b64encode(changed), codec.Kind.INCOMING)).verified, false);
  assert.equal((await verifier.copy(hello, codec.Kind.OUTGOING)).reason,
    'the server\'s description does not match the message');
  assert.equal((await new Verifier('carol', async () => vectors.card).copy(hello, codec.Kind.INCOMING)).reason,
    'not addressed to carol (alice → bob)');
  assert.equal((await verifier.copy('AAAA', codec.Kind.INCOMING)).reason,
    'the server sent something that is not a readable message');
});

test('cards are kept (at most the capacity, least recently used out first) and read anew once on a failure',
  async () => {
    const carol = await keys.createKey('carol');
    const dave = await keys.createKey('dave');
    const source = directory({ alice: vectors.card, carol: await signedCard('carol', carol),
      dave: await signedCard('dave', dave) });
    const verifier = new Verifier('bob', source.read, 2);
    const from = async (login, key, text) => b64encode(await signContainer({ ...fieldsOf(vectors.containers[0]),
      from: login, nonce: randomNonce(), body: encodeBody(text) }, key.privateKey));
    assert.equal((await verifier.blob(hello)).verified, true);
    assert.equal((await verifier.blob(hello)).verified, true);
    assert.deepEqual(source.reads, ['alice']);
    assert.equal((await verifier.blob(await from('carol', carol, 'c'))).verified, true);
    assert.equal((await verifier.blob(hello)).verified, true); // alice is now the most recently used
    assert.equal((await verifier.blob(await from('dave', dave, 'd'))).verified, true); // over the bound: carol goes
    assert.equal(verifier.cards.size, 2);
    assert.equal((await verifier.blob(await from('carol', carol, 'c2'))).verified, true);
    assert.deepEqual(source.reads, ['alice', 'carol', 'dave', 'carol']);

    // a forgery with a kept card: one read anew, still not verified
    const mallory = await keys.createKey('carol');
    assert.equal((await verifier.blob(await from('carol', mallory, 'forged'))).verified, false);
    assert.deepEqual(source.reads, ['alice', 'carol', 'dave', 'carol', 'carol']);
  });

test('no card: not verified; a card that cannot be read now: unchecked and not kept', async () => {
  const source = directory({});
  const verifier = new Verifier('bob', source.read);
  assert.equal((await verifier.blob(hello)).reason, 'alice has no card on this server');
  const fresh = new Verifier('bob', source.read);
  source.down = true;
  const unchecked = await fresh.blob(hello);
  assert.equal(unchecked.verified, false);
  assert.equal(unchecked.checked, false);
  assert.match(unchecked.reason, /could not read alice's card/);
  assert.equal(fresh.cards.size, 0);
  source.down = false;
  source.cards.alice = vectors.card;
  assert.equal((await fresh.blob(hello)).verified, true);
});

test('a read receipt is verified with the event that carries it', async () => {
  const receipt = vectors.containers[3]; // kind 3, bob → alice, signed by the vector key
  const bobsCard = { ...vectors.card, login: 'bob' };
  // the vector key signed it, so a card of bob's with that key (signed by it) stands in for bob's
  const signature = await crypto.subtle.sign('Ed25519', identity.privateKey,
    codec.cardText('bob', vectors.key.publicKeyB64, bobsCard.version, bobsCard.accessServers));
  bobsCard.signatureB64 = b64encode(new Uint8Array(signature));
  const verifier = new Verifier('alice', async () => bobsCard);
  const payload = { baseKey: receipt.ref, readerLogin: 'bob', readAtMs: receipt.createdAtMs,
    receiptBlobB64: receipt.containerB64 };
  assert.equal((await verifier.receipt(payload)).verified, true);
  assert.equal((await verifier.receipt({ ...payload, baseKey: 'alice|bob|1|2' })).reason,
    'the server\'s description does not match the receipt');
});
