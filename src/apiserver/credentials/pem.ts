// PEM blocks in and out. A kubelet pair file holds certificates and a key in one file, so readers
// take the blocks they need and leave the rest.

export interface PemBlock {
  type: string;
  der: Buffer;
}

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/g;

export function pemBlocks(text: string | Buffer): PemBlock[] {
  const out: PemBlock[] = [];
  for (const m of String(text).matchAll(BLOCK))
    out.push({ type: m[1], der: Buffer.from(m[2].replace(/\s+/g, ''), 'base64') });
  return out;
}

export function encodePem(type: string, der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${type}-----\n${lines.join('\n')}\n-----END ${type}-----\n`;
}

/** The blocks of one type, re-encoded: what TLS and the store are given. */
export function pemOf(text: string | Buffer, type: string): string {
  return pemBlocks(text)
    .filter((b) => b.type === type)
    .map((b) => encodePem(b.type, b.der))
    .join('');
}

/** Private key blocks as keyutil.ParsePrivateKeyPEM accepts them. */
export const PRIVATE_KEY_TYPES = ['EC PRIVATE KEY', 'RSA PRIVATE KEY', 'PRIVATE KEY'];
