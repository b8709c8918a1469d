// Encrypted bodies for the other implementation to open (PROTOCOL §4: "Java and JS implementations pass each other's
// vectors"), in the format of the Java side's org.shine.tools.vectors.HpkeVectors: `bodies` sealed with sealBody and
// `keyTransfers` with sealKeyTransfer, each with its recipient's raw private key, what its info is made of and the
// plaintext it must open to. hpke.test.mjs uses writeVectors and checkVectors; run alone it writes or checks a file:
//   node web-tests/hpke-vectors.mjs write src/test/resources/hpke/js-body-vectors.json
//   node web-tests/hpke-vectors.mjs check src/test/resources/hpke/java-body-vectors.json
import { readFile, writeFile } from 'node:fs/promises';
import { webcrypto } from 'node:crypto';
import { fileURLToPath } from 'node:url';

globalThis.crypto ??= webcrypto;
const { b64decode, b64encode } = await import('../src/main/resources/shine-web/codec.js');
const {
  exportPrivateKey, generateKeyPair, importPrivateKey, openBody, openKeyTransfer, privateKeysOf, sealBody,
  sealKeyTransfer,
} = await import('../src/main/resources/shine-web/hpke.js');

const BASE_KEY = 'alice|bob|1700000000000|4242';
const TEXTS = ['hi bob', 'Привет, ёжик 🦔 — «ok»', '', 'long '.repeat(500)];
const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Fresh bodies (kinds 1 and 2, revisions 0 to 3, texts from empty to 2,500 characters) and one key transfer. */
export async function writeVectors() {
  const bodies = [];
  for (const [revision, text] of TEXTS.entries()) {
    const owner = await generateKeyPair({ extractable: true });
    const kind = revision % 2 === 0 ? 1 : 2;
    const plaintext = JSON.stringify({ v: 1, text });
    const body = await sealBody(utf8.encode(plaintext), owner.publicKey, BASE_KEY, kind, revision);
    bodies.push({
      privateKeyB64: b64encode(await exportPrivateKey(owner.privateKey)), baseKey: BASE_KEY, kind, revision,
      plaintext, body: strictUtf8.decode(body),
    });
  }
  const transfer = await generateKeyPair({ extractable: true });
  const deviceKeyB64 = b64encode(new Uint8Array(32));
  const secret = JSON.stringify([b64encode(await exportPrivateKey((await generateKeyPair({ extractable: true }))
    .privateKey))]);
  const sealed = await sealKeyTransfer(utf8.encode(secret), transfer.publicKey, 'bob', deviceKeyB64);
  return {
    writer: 'JS shine-web/hpke.js (node web-tests/hpke-vectors.mjs write FILE)',
    bodies,
    keyTransfers: [{
      privateKeyB64: b64encode(await exportPrivateKey(transfer.privateKey)), login: 'bob', deviceKeyB64,
      plaintext: secret, sealed: strictUtf8.decode(sealed),
    }],
  };
}

/** What is wrong with a vector file: one line per body that does not open to its plaintext; empty when all do. */
export async function checkVectors(file) {
  const problems = [];
  if (!file.bodies?.length || !file.keyTransfers?.length) {
    problems.push('the file has no bodies or no key transfers');
  }
  const keysOf = async (vector) => privateKeysOf([await importPrivateKey(b64decode(vector.privateKeyB64))]);
  const expect = (name, opened, vector) => {
    if (strictUtf8.decode(opened) !== vector.plaintext) {
      problems.push(`${name}: opens to something else than its plaintext ${vector.plaintext}`);
    }
  };
  for (const [index, vector] of (file.bodies || []).entries()) {
    try {
      expect(`body ${index}`, await openBody(utf8.encode(vector.body), await keysOf(vector), vector.baseKey,
        vector.kind, vector.revision), vector);
    } catch (e) {
      problems.push(`body ${index}: ${e.message}`);
    }
  }
  for (const [index, vector] of (file.keyTransfers || []).entries()) {
    try {
      expect(`key transfer ${index}`, await openKeyTransfer(utf8.encode(vector.sealed), await keysOf(vector),
        vector.login, vector.deviceKeyB64), vector);
    } catch (e) {
      problems.push(`key transfer ${index}: ${e.message}`);
    }
  }
  return problems;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [command, path] = process.argv.slice(2);
  if (command === 'write' && path) {
    await writeFile(path, `${JSON.stringify(await writeVectors(), null, 2)}\n`);
  } else if (command === 'check' && path) {
    const problems = await checkVectors(JSON.parse(await readFile(path, 'utf8')));
    problems.forEach((problem) => console.error(`${path}: ${problem}`));
    process.exitCode = problems.length === 0 ? 0 : 1;
  } else {
    console.error('usage: node hpke-vectors.mjs write|check FILE');
    process.exitCode = 2;
  }
}
