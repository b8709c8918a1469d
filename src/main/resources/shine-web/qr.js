// A small QR code encoder (ISO/IEC 18004) for what "Add a device" shows a phone: byte mode, error correction M,
// versions 1–10 (up to 213 bytes), the mask with the lowest penalty (rules 1, 2 and 4). `encodeQr` answers the
// modules, `qrPath` an SVG path of them. For the browser and for Node.
//
// The steps (block layout from the raw module count, Reed–Solomon over GF(2^8/0x11D), function patterns, zigzag
// placement, format and version bits) follow the QR Code generator library of Project Nayuki, whose notice is kept:
//   Copyright (c) Project Nayuki. (MIT License) https://www.nayuki.io/page/qr-code-generator-library
//   Permission is hereby granted, free of charge, to any person obtaining a copy of this software and associated
//   documentation files (the "Software"), to deal in the Software without restriction, including without limitation
//   the rights to use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies of the Software, and
//   to permit persons to whom the Software is furnished to do so, subject to the following conditions:
//   - The above copyright notice and this permission notice shall be included in all copies or substantial portions
//     of the Software.
//   - The Software is provided "as is", without warranty of any kind, express or implied, including but not limited
//     to the warranties of merchantability, fitness for a particular purpose and noninfringement. In no event shall
//     the authors or copyright holders be liable for any claim, damages or other liability, whether in an action of
//     contract, tort or otherwise, arising from, out of or in connection with the Software or the use or other
//     dealings in the Software.

const MAX_VERSION = 10;
// error correction M: code words of error correction per block and the number of blocks, by version (index 0 unused)
const ECC_PER_BLOCK = [-1, 10, 16, 26, 18, 24, 16, 18, 22, 22, 26];
const BLOCKS = [-1, 1, 1, 1, 2, 2, 4, 4, 4, 5, 5];
const FORMAT_BITS_M = 0;

/** Raw modules of a version that carry data (all but the function patterns and format/version information). */
function rawDataModules(version) {
  let result = (16 * version + 128) * version + 64;
  if (version >= 2) {
    const align = Math.floor(version / 7) + 2;
    result -= (25 * align - 10) * align - 55;
    if (version >= 7) {
      result -= 36;
    }
  }
  return result;
}

const dataCodewords = (version) => Math.floor(rawDataModules(version) / 8) - ECC_PER_BLOCK[version] * BLOCKS[version];

function alignmentPositions(version, size) {
  if (version === 1) {
    return [];
  }
  const count = Math.floor(version / 7) + 2;
  const step = Math.ceil((version * 4 + 4) / (count * 2 - 2)) * 2;
  const result = [6];
  for (let pos = size - 7; result.length < count; pos -= step) {
    result.splice(1, 0, pos);
  }
  return result;
}

function multiply(x, y) {
  let z = 0;
  for (let i = 7; i >= 0; i--) {
    z = (z << 1) ^ ((z >>> 7) * 0x11d);
    z ^= ((y >>> i) & 1) * x;
  }
  return z;
}

function divisor(degree) {
  const result = new Array(degree).fill(0);
  result[degree - 1] = 1;
  let root = 1;
  for (let i = 0; i < degree; i++) {
    for (let j = 0; j < result.length; j++) {
      result[j] = multiply(result[j], root);
      if (j + 1 < result.length) {
        result[j] ^= result[j + 1];
      }
    }
    root = multiply(root, 0x02);
  }
  return result;
}

function remainder(data, div) {
  const result = div.map(() => 0);
  for (const b of data) {
    const factor = b ^ result.shift();
    result.push(0);
    div.forEach((coef, i) => {
      result[i] ^= multiply(coef, factor);
    });
  }
  return result;
}

/** The data code words of `bytes` in byte mode, padded to the version's capacity. */
function dataBits(bytes, version) {
  const bits = [];
  const push = (value, length) => {
    for (let i = length - 1; i >= 0; i--) {
      bits.push((value >>> i) & 1);
    }
  };
  push(0b0100, 4);
  push(bytes.length, version <= 9 ? 8 : 16);
  for (const b of bytes) {
    push(b, 8);
  }
  const capacity = dataCodewords(version) * 8;
  push(0, Math.min(4, capacity - bits.length));
  push(0, (8 - (bits.length % 8)) % 8);
  const words = [];
  for (let i = 0; i < bits.length; i += 8) {
    words.push(bits.slice(i, i + 8).reduce((n, bit) => (n << 1) | bit, 0));
  }
  for (let pad = 0xec; words.length < capacity / 8; pad ^= 0xec ^ 0x11) {
    words.push(pad);
  }
  return words;
}

function withEcc(data, version) {
  const blocks = BLOCKS[version];
  const eccLength = ECC_PER_BLOCK[version];
  const raw = Math.floor(rawDataModules(version) / 8);
  const shortBlocks = blocks - (raw % blocks);
  const shortLength = Math.floor(raw / blocks);
  const div = divisor(eccLength);
  const all = [];
  for (let i = 0, k = 0; i < blocks; i++) {
    const block = data.slice(k, k + shortLength - eccLength + (i < shortBlocks ? 0 : 1));
    k += block.length;
    const ecc = remainder(block, div);
    if (i < shortBlocks) {
      block.push(0);
    }
    all.push(block.concat(ecc));
  }
  const result = [];
  for (let i = 0; i < all[0].length; i++) {
    all.forEach((block, j) => {
      if (i !== shortLength - eccLength || j >= shortBlocks) {
        result.push(block[i]);
      }
    });
  }
  return result;
}

const MASKS = [
  (x, y) => (x + y) % 2 === 0,
  (x, y) => y % 2 === 0,
  (x) => x % 3 === 0,
  (x, y) => (x + y) % 3 === 0,
  (x, y) => (Math.floor(x / 3) + Math.floor(y / 2)) % 2 === 0,
  (x, y) => ((x * y) % 2) + ((x * y) % 3) === 0,
  (x, y) => (((x * y) % 2) + ((x * y) % 3)) % 2 === 0,
  (x, y) => (((x + y) % 2) + ((x * y) % 3)) % 2 === 0,
];

class Grid {
  constructor(version) {
    this.version = version;
    this.size = version * 4 + 17;
    this.modules = Array.from({ length: this.size }, () => new Array(this.size).fill(false));
    this.function = Array.from({ length: this.size }, () => new Array(this.size).fill(false));
  }

  set(x, y, dark) {
    this.modules[y][x] = dark;
    this.function[y][x] = true;
  }

  drawFunctionPatterns() {
    const { size } = this;
    for (let i = 0; i < size; i++) {
      this.set(6, i, i % 2 === 0);
      this.set(i, 6, i % 2 === 0);
    }
    for (const [cx, cy] of [[3, 3], [size - 4, 3], [3, size - 4]]) {
      for (let dy = -4; dy <= 4; dy++) {
        for (let dx = -4; dx <= 4; dx++) {
          const x = cx + dx;
          const y = cy + dy;
          if (x >= 0 && x < size && y >= 0 && y < size) {
            const dist = Math.max(Math.abs(dx), Math.abs(dy));
            this.set(x, y, dist !== 2 && dist !== 4);
          }
        }
      }
    }
    const align = alignmentPositions(this.version, size);
    const last = align.length - 1;
    align.forEach((cx, i) => align.forEach((cy, j) => {
      if ((i === 0 && j === 0) || (i === 0 && j === last) || (i === last && j === 0)) {
        return;
      }
      for (let dy = -2; dy <= 2; dy++) {
        for (let dx = -2; dx <= 2; dx++) {
          this.set(cx + dx, cy + dy, Math.max(Math.abs(dx), Math.abs(dy)) !== 1);
        }
      }
    }));
    this.drawFormat(0); // reserves the format areas; drawn again with the chosen mask
    if (this.version >= 7) {
      let rem = this.version;
      for (let i = 0; i < 12; i++) {
        rem = (rem << 1) ^ ((rem >>> 11) * 0x1f25);
      }
      const bits = (this.version << 12) | rem;
      for (let i = 0; i < 18; i++) {
        const dark = ((bits >>> i) & 1) !== 0;
        const a = size - 11 + (i % 3);
        const b = Math.floor(i / 3);
        this.set(a, b, dark);
        this.set(b, a, dark);
      }
    }
  }

  drawFormat(mask) {
    const { size } = this;
    const data = (FORMAT_BITS_M << 3) | mask;
    let rem = data;
    for (let i = 0; i < 10; i++) {
      rem = (rem << 1) ^ ((rem >>> 9) * 0x537);
    }
    const bits = ((data << 10) | rem) ^ 0x5412;
    const bit = (i) => ((bits >>> i) & 1) !== 0;
    for (let i = 0; i <= 5; i++) {
      this.set(8, i, bit(i));
    }
    this.set(8, 7, bit(6));
    this.set(8, 8, bit(7));
    this.set(7, 8, bit(8));
    for (let i = 9; i < 15; i++) {
      this.set(14 - i, 8, bit(i));
    }
    for (let i = 0; i < 8; i++) {
      this.set(size - 1 - i, 8, bit(i));
    }
    for (let i = 8; i < 15; i++) {
      this.set(8, size - 15 + i, bit(i));
    }
    this.set(8, size - 8, true);
  }

  drawCodewords(words) {
    const { size } = this;
    let i = 0;
    for (let right = size - 1; right >= 1; right -= 2) {
      if (right === 6) {
        right = 5;
      }
      for (let vert = 0; vert < size; vert++) {
        for (let j = 0; j < 2; j++) {
          const x = right - j;
          const upward = ((right + 1) & 2) === 0;
          const y = upward ? size - 1 - vert : vert;
          if (!this.function[y][x] && i < words.length * 8) {
            this.modules[y][x] = ((words[i >>> 3] >>> (7 - (i & 7))) & 1) !== 0;
            i++;
          }
        }
      }
    }
  }

  applyMask(mask) {
    for (let y = 0; y < this.size; y++) {
      for (let x = 0; x < this.size; x++) {
        if (!this.function[y][x] && MASKS[mask](x, y)) {
          this.modules[y][x] = !this.modules[y][x];
        }
      }
    }
  }

  /** Runs of five or more, 2×2 blocks and the dark/light balance (penalty rules 1, 2 and 4). */
  penalty() {
    const { size, modules } = this;
    let score = 0;
    let dark = 0;
    for (let a = 0; a < size; a++) {
      for (const line of [(b) => modules[a][b], (b) => modules[b][a]]) {
        let run = 1;
        for (let b = 1; b <= size; b++) {
          if (b < size && line(b) === line(b - 1)) {
            run++;
          } else {
            score += run >= 5 ? run - 2 : 0;
            run = 1;
          }
        }
      }
      for (let b = 0; b < size; b++) {
        dark += modules[a][b] ? 1 : 0;
        if (a + 1 < size && b + 1 < size && modules[a][b] === modules[a][b + 1] && modules[a][b] === modules[a + 1][b]
            && modules[a][b] === modules[a + 1][b + 1]) {
          score += 3;
        }
      }
    }
    const total = size * size;
    return score + Math.floor(Math.abs(dark * 20 - total * 10) / total) * 10;
  }
}

/** The QR code of `text` (UTF-8, byte mode, level M): {version, size, modules: rows of booleans, true = dark}. */
export function encodeQr(text) {
  const bytes = [...new TextEncoder().encode(text)];
  let version = 1;
  while (version <= MAX_VERSION && 4 + (version <= 9 ? 8 : 16) + bytes.length * 8 > dataCodewords(version) * 8) {
    version++;
  }
  if (version > MAX_VERSION) {
    throw new Error(`too long for a QR code of version ${MAX_VERSION}: ${bytes.length} bytes`);
  }
  const words = withEcc(dataBits(bytes, version), version);
  let best = null;
  for (let mask = 0; mask < MASKS.length; mask++) {
    const grid = new Grid(version);
    grid.drawFunctionPatterns();
    grid.drawCodewords(words);
    grid.applyMask(mask);
    grid.drawFormat(mask);
    const score = grid.penalty();
    if (!best || score < best.score) {
      best = { score, grid };
    }
  }
  return { version, size: best.grid.size, modules: best.grid.modules };
}

/** An SVG path (one square per dark module) for a viewBox of size + 2·border on each side. */
export function qrPath(qr, border = 4) {
  const parts = [];
  qr.modules.forEach((row, y) => row.forEach((dark, x) => {
    if (dark) {
      parts.push(`M${x + border},${y + border}h1v1h-1z`);
    }
  }));
  return parts.join('');
}
