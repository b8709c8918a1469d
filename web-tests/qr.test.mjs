// qr.js, the page's own QR encoder for "Add a device": what it draws decodes (with jsQR, a dev dependency only) to
// the text it was given, at every version it makes, and a text too long for it is refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import jsQR from 'jsqr';

const { encodeQr, qrPath } = await import('../src/main/resources/shine-web/qr.js');

/** The modules as RGBA pixels, `scale` pixels a module, with the 4-module quiet zone. */
function pixels(qr, scale = 4) {
  const side = (qr.size + 8) * scale;
  const data = new Uint8ClampedArray(side * side * 4).fill(255);
  qr.modules.forEach((row, y) => row.forEach((dark, x) => {
    if (!dark) {
      return;
    }
    for (let dy = 0; dy < scale; dy++) {
      for (let dx = 0; dx < scale; dx++) {
        const at = (((y + 4) * scale + dy) * side + (x + 4) * scale + dx) * 4;
        data.fill(0, at, at + 3);
      }
    }
  }));
  return { data, side };
}

function decode(qr) {
  const { data, side } = pixels(qr);
  const found = jsQR(data, side, side);
  return found && found.data;
}

test('every version 1 to 10 decodes to the text it was made of', () => {
  const seen = new Set();
  for (const length of [1, 10, 14, 20, 26, 40, 42, 60, 62, 84, 100, 106, 122, 140, 152, 180, 213]) {
    const text = Array.from({ length }, (_, i) => 'SHiNE+/=0123456789abcdefghijklmnop'[(i * 7 + length) % 33]).join('');
    const qr = encodeQr(text);
    seen.add(qr.version);
    assert.equal(qr.size, qr.version * 4 + 17);
    assert.equal(decode(qr), text, `${length} characters, version ${qr.version}`);
  }
  assert.deepEqual([...seen].sort((a, b) => a - b), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
});

test('what "Add a device" shows decodes, UTF-8 included; more than version 10 holds is refused', () => {
  const text = 'SHiNE add device\nlogin: alice\ndevice key: 5Ys0pV3wq1m7Zb0yTq9q3bq0d3sTt0bqv0j0Z2r0dXc=\n'
    + 'transfer key: nQ7c8m1y1d0aY0b7u6x3zR9q0w8e7r6t5y4u3i2o1pA=';
  assert.equal(decode(encodeQr(text)), text);
  assert.equal(decode(encodeQr('ёжик 🦔')), 'ёжик 🦔');
  assert.throws(() => encodeQr('x'.repeat(214)), /too long/);
  assert.match(qrPath(encodeQr('a')), /^M4,4h1v1h-1z/);
});
