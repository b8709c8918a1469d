// The browser's HPKE (shine-web/hpke.js) in Node: RFC 9180's vectors for the suite (src/test/resources/hpke/
// rfc9180-a1-base.json, checked on the Java side by HpkeTest), the encrypted body and why one does not open, and the
// bodies the Java side sealed (hpke/java-body-vectors.json, and fresh ones from shine-tools.jar when it is built).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { webcrypto } from 'node:crypto';
import { fileURLToPath } from 'node:url';

// Node 18 (Debian 12's) has WebCrypto only as a module; later versions also as the global the page uses
globalThis.crypto ??= webcrypto;
const hpke = await import('../src/main/resources/shine-web/hpke.js');
const { b64decode, b64encode } = await import('../src/main/resources/shine-web/codec.js');
const {
  Failure, deriveKeyPair, exportPrivateKey, generateKeyPair, importPrivateKey, isEncryptedBody, kidOf, open,
  openBody, openKeyTransfer, privateKeysOf, publicKeyOf, seal, sealBody, sealKeyTransfer, setupBaseR, setupBaseS,
} = hpke;

const { checkVectors, writeVectors } = await import('./hpke-vectors.mjs');

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TOOLS_JAR = join(ROOT, 'target', 'shine-tools.jar');
const rfc = JSON.parse(await readFile(new URL('../src/test/resources/hpke/rfc9180-a1-base.json', import.meta.url)));
const fromHex = (text) => Uint8Array.from(text.match(/../g) || [], (pair) => parseInt(pair, 16));
const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
const utf8 = new TextEncoder();
const BASE_KEY = 'alice|bob|1700000000000|42';
const BODY = utf8.encode('{"v":1,"text":"hi bob"}');

async function rejectsWith(promise, failure, messagePart = '') {
  await assert.rejects(promise, (e) => {
    assert.equal(e.failure, failure, e.message);
    assert.ok(e.message.includes(messagePart), `${e.message} lacks ${messagePart}`);
    return true;
  });
}

test('DeriveKeyPair turns the RFC vector\'s ikmE and ikmR into its skEm/pkEm and skRm/pkRm', async () => {
  assert.equal(rfc.mode, 0);
  assert.equal(rfc.kem_id, 0x20);
  for (const role of ['E', 'R']) {
    const pair = await deriveKeyPair(fromHex(rfc[`ikm${role}`]), { extractable: true });
    assert.equal(hex(await exportPrivateKey(pair.privateKey)), rfc[`sk${role}m`]);
    assert.equal(hex(pair.publicKey), rfc[`pk${role}m`]);
  }
  assert.equal(hex(await publicKeyOf(await importPrivateKey(fromHex(rfc.skRm)))), rfc.pkRm);
});

test('the RFC vector: enc, shared secret, key schedule, every encryption and export, sealed and opened', async () => {
  const ephemeral = { privateKey: await importPrivateKey(fromHex(rfc.skEm)), publicKey: fromHex(rfc.pkEm) };
  const sender = await setupBaseS(fromHex(rfc.pkRm), fromHex(rfc.info), ephemeral);
  const recipient = await setupBaseR(fromHex(rfc.enc), await importPrivateKey(fromHex(rfc.skRm)), fromHex(rfc.info));
  assert.equal(hex(sender.enc), rfc.enc);
  assert.equal(hex(sender.sharedSecret), rfc.shared_secret);
  assert.equal(hex(recipient.sharedSecret), rfc.shared_secret);
  assert.equal(hex(sender.context.key), rfc.key);
  assert.equal(hex(sender.context.baseNonce), rfc.base_nonce);
  assert.equal(hex(sender.context.exporterSecret), rfc.exporter_secret);
  assert.ok(rfc.encryptions.length >= 6);
  for (const e of rfc.encryptions) {
    assert.equal(hex(sender.context.nonce(e.sequence_number)), e.nonce, `nonce ${e.sequence_number}`);
    const ct = await sender.context.seal(e.sequence_number, fromHex(e.aad), fromHex(e.pt));
    assert.equal(hex(ct), e.ct, `ct ${e.sequence_number}`);
    assert.equal(hex(await recipient.context.open(e.sequence_number, fromHex(e.aad), ct)), e.pt);
  }
  for (const e of rfc.exports) {
    assert.equal(hex(await sender.context.export(fromHex(e.exporter_context), e.L)), e.exported_value);
  }
  const first = rfc.encryptions[0];
  const single = await seal(fromHex(rfc.pkRm), fromHex(rfc.info), fromHex(first.aad), fromHex(first.pt), ephemeral);
  assert.equal(hex(single.ciphertext), first.ct);
});

test('a fresh seal opens with the recipient\'s key only, under the same info and aad, unaltered', async () => {
  const bob = await generateKeyPair();
  const info = utf8.encode('info');
  const none = new Uint8Array(0);
  const sealed = await seal(bob.publicKey, info, none, utf8.encode('hello'));
  assert.equal(new TextDecoder().decode(await open(sealed.enc, bob.privateKey, info, none, sealed.ciphertext)),
    'hello');
  const altered = sealed.ciphertext.slice();
  altered[0] ^= 1;
  await assert.rejects(open(sealed.enc, bob.privateKey, info, none, altered), /does not authenticate/);
  await assert.rejects(open(sealed.enc, (await generateKeyPair()).privateKey, info, none, sealed.ciphertext));
  await assert.rejects(open(sealed.enc, bob.privateKey, utf8.encode('other'), none, sealed.ciphertext));
  await assert.rejects(open(new Uint8Array(32), bob.privateKey, info, none, sealed.ciphertext), /small order/);
  await assert.rejects(seal(Uint8Array.of(1, ...new Uint8Array(31)), info, none, none), /small order/);
  await assert.rejects(crypto.subtle.exportKey('pkcs8', bob.privateKey), 'generated private keys do not leave');
});

test('a sealed body is the v2 JSON with the key\'s kid and opens for its own copy only', async () => {
  const bob = await generateKeyPair();
  const keys = await privateKeysOf([bob.privateKey]);
  const sealed = await sealBody(BODY, bob.publicKey, BASE_KEY, 1, 3);
  const envelope = JSON.parse(new TextDecoder().decode(sealed));
  assert.deepEqual(Object.keys(envelope), ['v', 'alg', 'kid', 'encB64', 'ctB64']);
  assert.equal(envelope.v, 2);
  assert.equal(envelope.alg, 'hpke-x25519-sha256-aes128gcm');
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bob.publicKey));
  assert.equal(envelope.kid, b64encode(digest.subarray(0, 8)));
  assert.equal(await kidOf(bob.publicKey), envelope.kid);
  assert.equal(b64decode(envelope.encB64).length, 32);
  assert.equal(b64decode(envelope.ctB64).length, BODY.length + 16);
  assert.ok(isEncryptedBody(sealed));
  assert.deepEqual(await openBody(sealed, keys, BASE_KEY, 1, 3), BODY);

  await rejectsWith(openBody(sealed, keys, 'alice|bob|1700000000000|43', 1, 3), Failure.AUTHENTICATION_FAILED,
    'does not open');
  await rejectsWith(openBody(sealed, keys, BASE_KEY, 2, 3), Failure.AUTHENTICATION_FAILED);
  await rejectsWith(openBody(sealed, keys, BASE_KEY, 1, 4), Failure.AUTHENTICATION_FAILED);
  const other = await generateKeyPair();
  await rejectsWith(openBody(sealed, await privateKeysOf([other.privateKey]), BASE_KEY, 1, 3), Failure.UNKNOWN_KEY,
    'cannot decrypt on this device');
});

test('a changed ciphertext does not authenticate; a broken envelope is malformed; other bodies are not encrypted',
  async () => {
    const bob = await generateKeyPair();
    const keys = await privateKeysOf([bob.privateKey]);
    const envelope = JSON.parse(new TextDecoder().decode(await sealBody(BODY, bob.publicKey, BASE_KEY, 1, 0)));
    const changed = (fields) => utf8.encode(JSON.stringify({ ...envelope, ...fields }));
    const ct = b64decode(envelope.ctB64);
    ct[ct.length - 1] ^= 1;
    await rejectsWith(openBody(changed({ ctB64: b64encode(ct) }), keys, BASE_KEY, 1, 0),
      Failure.AUTHENTICATION_FAILED, 'does not authenticate');
    const cases = [
      [{ kid: undefined }, 'kid is missing'],
      [{ encB64: undefined }, 'encB64 is missing'],
      [{ ctB64: 'not base64!' }, 'ctB64 is not padded standard base64'],
      [{ ctB64: 'A'.repeat(22) }, 'ctB64 is not padded standard base64'],
      [{ encB64: b64encode(new Uint8Array(31)) }, 'encB64 is 31 bytes'],
      [{ ctB64: b64encode(new Uint8Array(15)) }, 'ctB64 is 15 bytes, shorter than the 16-byte tag'],
    ];
    for (const [fields, message] of cases) {
      assert.ok(isEncryptedBody(changed(fields)));
      await rejectsWith(openBody(changed(fields), keys, BASE_KEY, 1, 0), Failure.MALFORMED,
        `malformed encrypted body: ${message}`);
    }
    for (const body of ['{"v":1,"text":"hi"}', 'plain old text', '', '[2]',
      '{"v":"2","alg":"hpke-x25519-sha256-aes128gcm"}']) {
      assert.equal(isEncryptedBody(utf8.encode(body)), false, body);
      await rejectsWith(openBody(utf8.encode(body), keys, BASE_KEY, 1, 0), Failure.NOT_ENCRYPTED,
        'not an encrypted body');
    }
    // a v2 body of another alg is encrypted (never shown as text) and does not open here
    for (const body of ['{"v":2}', '{"v":2,"alg":"other"}']) {
      assert.equal(isEncryptedBody(utf8.encode(body)), true, body);
      await rejectsWith(openBody(utf8.encode(body), keys, BASE_KEY, 1, 0), Failure.MALFORMED,
        'malformed encrypted body: alg');
    }
  });

test('a device with old and new keys opens bodies sealed to either; key transfer binds login and device key',
  async () => {
    const old = await generateKeyPair();
    const rotated = await generateKeyPair();
    const both = await privateKeysOf([old.privateKey, rotated.privateKey]);
    assert.deepEqual(await openBody(await sealBody(BODY, old.publicKey, BASE_KEY, 1, 0), both, BASE_KEY, 1, 0), BODY);
    assert.deepEqual(await openBody(await sealBody(BODY, rotated.publicKey, BASE_KEY, 2, 1), both, BASE_KEY, 2, 1),
      BODY);

    const transfer = await generateKeyPair();
    const newDevice = await privateKeysOf([transfer.privateKey]);
    const secret = utf8.encode('{"keys":["..."]}');
    const sealed = await sealKeyTransfer(secret, transfer.publicKey, 'bob', 'DEVICEKEY=');
    assert.deepEqual(await openKeyTransfer(sealed, newDevice, 'bob', 'DEVICEKEY='), secret);
    await rejectsWith(openKeyTransfer(sealed, newDevice, 'bob', 'OTHERKEY='), Failure.AUTHENTICATION_FAILED);
    await rejectsWith(openKeyTransfer(sealed, newDevice, 'eve', 'DEVICEKEY='), Failure.AUTHENTICATION_FAILED);
    await rejectsWith(openBody(sealed, newDevice, BASE_KEY, 1, 0), Failure.AUTHENTICATION_FAILED);
  });

test('every body and key transfer the Java side sealed (hpke/java-body-vectors.json) opens in JS', async () => {
  const vectors = JSON.parse(await readFile(join(ROOT, 'src/test/resources/hpke/java-body-vectors.json'), 'utf8'));
  assert.match(vectors.writer, /^Java/);
  assert.ok(vectors.bodies.length >= 4);
  assert.deepEqual(await checkVectors(vectors), []);
  vectors.bodies[1].revision += 1;
  assert.match((await checkVectors(vectors)).join(), /body 1: the encrypted body does not open/);
});

test('fresh bodies both ways: shine-tools.jar opens what JS seals now, JS opens what it seals now', {
  skip: existsSync(TOOLS_JAR) ? false : `${TOOLS_JAR} is not built (scripts/web-test.sh builds it)`,
}, async () => {
  const dir = join(ROOT, 'target', 'hpke');
  await mkdir(dir, { recursive: true });
  const jsFresh = join(dir, 'js-fresh.json');
  const javaFresh = join(dir, 'java-fresh.json');
  await writeFile(jsFresh, `${JSON.stringify(await writeVectors(), null, 2)}\n`);
  const java = (...args) => execFileSync('java', ['-jar', TOOLS_JAR, 'hpke-vectors', ...args],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  assert.match(java('check', jsFresh), /all open \(bodies: 4, key transfers: 1\)/);
  java('write', javaFresh);
  assert.deepEqual(await checkVectors(JSON.parse(await readFile(javaFresh, 'utf8'))), []);
});
