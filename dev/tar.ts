// A deterministic ustar writer: sorted entries, owner 0:0, a fixed mtime, parents added as needed.
// Enough for image layers and OCI image-layout archives; nothing here needs long names or xattrs.

export type TarEntry =
  | { type: 'file'; path: string; mode: number; data: Buffer }
  | { type: 'dir'; path: string; mode: number }
  | { type: 'symlink'; path: string; target: string };

const BLOCK = 512;
const FIXED_MTIME = 0;

function normalize(p: string): string {
  const parts = p.split('/').filter((s) => s && s !== '.');
  if (parts.some((s) => s === '..')) throw new Error(`tar: '..' in path ${p}`);
  return parts.join('/');
}

function octal(n: number, width: number): string {
  // width includes the trailing NUL
  return n.toString(8).padStart(width - 1, '0') + '\0';
}

function splitName(p: string): { name: string; prefix: string } {
  if (Buffer.byteLength(p) <= 100) return { name: p, prefix: '' };
  for (let i = p.lastIndexOf('/'); i > 0; i = p.lastIndexOf('/', i - 1)) {
    const prefix = p.slice(0, i);
    const name = p.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100) return { name, prefix };
  }
  throw new Error(`tar: path too long for ustar: ${p}`);
}

function header(path: string, typeflag: string, mode: number, size: number, linkname = ''): Buffer {
  const h = Buffer.alloc(BLOCK, 0);
  const { name, prefix } = splitName(path);
  if (Buffer.byteLength(linkname) > 100) throw new Error(`tar: link target too long: ${linkname}`);
  h.write(name, 0, 100, 'utf8');
  h.write(octal(mode & 0o7777, 8), 100, 8, 'ascii');
  h.write(octal(0, 8), 108, 8, 'ascii');
  h.write(octal(0, 8), 116, 8, 'ascii');
  h.write(octal(size, 12), 124, 12, 'ascii');
  h.write(octal(FIXED_MTIME, 12), 136, 12, 'ascii');
  h.write('        ', 148, 8, 'ascii');
  h.write(typeflag, 156, 1, 'ascii');
  h.write(linkname, 157, 100, 'utf8');
  h.write('ustar\0', 257, 6, 'ascii');
  h.write('00', 263, 2, 'ascii');
  h.write('root', 265, 32, 'ascii');
  h.write('root', 297, 32, 'ascii');
  h.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 8, 'ascii');
  return h;
}

/** Builds the archive in memory. Later entries with the same path replace earlier ones. */
export function tarArchive(entries: TarEntry[]): Buffer {
  const byPath = new Map<string, TarEntry>();
  for (const e of entries) {
    const p = normalize(e.path);
    if (!p) continue;
    byPath.set(p, { ...e, path: p });
  }
  for (const p of [...byPath.keys()]) {
    const parts = p.split('/');
    for (let i = 1; i < parts.length; i++) {
      const parent = parts.slice(0, i).join('/');
      if (!byPath.has(parent)) byPath.set(parent, { type: 'dir', path: parent, mode: 0o755 });
    }
  }
  const sorted = [...byPath.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const chunks: Buffer[] = [];
  for (const e of sorted) {
    switch (e.type) {
      case 'dir':
        chunks.push(header(e.path + '/', '5', e.mode, 0));
        break;
      case 'symlink':
        chunks.push(header(e.path, '2', 0o777, 0, e.target));
        break;
      case 'file': {
        chunks.push(header(e.path, '0', e.mode, e.data.length), e.data);
        const pad = (BLOCK - (e.data.length % BLOCK)) % BLOCK;
        if (pad) chunks.push(Buffer.alloc(pad, 0));
        break;
      }
    }
  }
  chunks.push(Buffer.alloc(BLOCK * 2, 0));
  return Buffer.concat(chunks);
}
