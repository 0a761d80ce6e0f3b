// Reads what headless Chromium left after rendering a page (tests/leaderboard_html_test.sh):
//   node check_page.mjs netlog NET_LOG.json            prints every request the page initiated
//   node check_page.mjs pixels SHOT.png '#1f77b4' ...  prints, per colour, how many pixels match
// The browser's own background requests (component updates and the like) carry the initiator
// "not an origin"; anything else was asked for by the page.
import { readFileSync } from 'node:fs';
import { inflateSync } from 'node:zlib';

function pageRequests(file) {
  const log = JSON.parse(readFileSync(file, 'utf8'));
  const types = Object.fromEntries(Object.entries(log.constants.logEventTypes).map(([k, v]) => [v, k]));
  const out = [];
  for (const e of log.events) {
    if (types[e.type] !== 'URL_REQUEST_START_JOB') continue;
    const p = e.params || {};
    if (!p.url || p.initiator === 'not an origin') continue;
    out.push(`${p.method} ${p.url} (initiator ${p.initiator})`);
  }
  return out;
}

// A PNG decoder for what Chromium writes: 8-bit RGB or RGBA, non-interlaced.
function decodePng(file) {
  const b = readFileSync(file);
  if (b.readUInt32BE(0) !== 0x89504e47) throw new Error(`${file}: not a PNG`);
  let off = 8, width = 0, height = 0, colourType = 0, depth = 0;
  const idat = [];
  while (off < b.length) {
    const len = b.readUInt32BE(off);
    const type = b.toString('ascii', off + 4, off + 8);
    const data = b.subarray(off + 8, off + 8 + len);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0); height = data.readUInt32BE(4);
      depth = data[8]; colourType = data[9];
      if (data[12] !== 0) throw new Error('interlaced PNG');
    } else if (type === 'IDAT') {
      idat.push(data);
    }
    off += 12 + len;
  }
  if (depth !== 8 || (colourType !== 2 && colourType !== 6)) {
    throw new Error(`unsupported PNG: depth ${depth}, colour type ${colourType}`);
  }
  const bpp = colourType === 6 ? 4 : 3, stride = width * bpp;
  const raw = inflateSync(Buffer.concat(idat));
  const px = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    for (let x = 0; x < stride; x++) {
      const v = raw[y * (stride + 1) + 1 + x];
      const a = x >= bpp ? px[y * stride + x - bpp] : 0;
      const up = y > 0 ? px[(y - 1) * stride + x] : 0;
      const c = x >= bpp && y > 0 ? px[(y - 1) * stride + x - bpp] : 0;
      let pred = 0;
      if (filter === 1) pred = a;
      else if (filter === 2) pred = up;
      else if (filter === 3) pred = (a + up) >> 1;
      else if (filter === 4) {
        const p = a + up - c, pa = Math.abs(p - a), pb = Math.abs(p - up), pc = Math.abs(p - c);
        pred = pa <= pb && pa <= pc ? a : pb <= pc ? up : c;
      }
      px[y * stride + x] = (v + pred) & 0xff;
    }
  }
  return { width, height, bpp, px };
}

const [mode, file, ...rest] = process.argv.slice(2);
if (mode === 'netlog') {
  for (const r of pageRequests(file)) console.log(r);
} else if (mode === 'pixels') {
  const img = decodePng(file);
  for (const hex of rest) {
    const want = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
    let n = 0;
    for (let i = 0; i < img.px.length; i += img.bpp) {
      if (want.every((w, k) => Math.abs(img.px[i + k] - w) <= 6)) n++;
    }
    console.log(`${hex} ${n}`);
  }
} else {
  console.error('usage: check_page.mjs netlog FILE | pixels FILE #rrggbb...');
  process.exit(2);
}
