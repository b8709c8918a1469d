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
  b64decode, b64encode, baseKey, decodeBody, encodeBody, messageKey, parseContainer, signContainer, unsignedBytes,
  verifyContainer,
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

test('a keygen file imports, exports to the same fields, and a mismatched public key is refused', async () => {
  assert.equal(identity.login, 'alice');
  const exported = JSON.parse(await keyFileText(identity));
  assert.deepEqual(exported, vectors.key);
  const other = { ...vectors.key, publicKeyB64: b64encode(new Uint8Array(32).fill(9)) };
  await assert.rejects(keyFromFile(JSON.stringify(other)));
  await assert.rejects(keyFromFile('not json'));
  assert.throws(() => unsignedBytes({ ...fieldsOf(vectors.containers[0]), from: 'Not A Login' }));
});
