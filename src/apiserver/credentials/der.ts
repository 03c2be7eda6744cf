// DER writing for the few X.509 structures bootlet makes itself (certificate requests, the
// kubelet's self-signed serving certificate): tag-length-value framing and the primitive types
// Go's encoding/asn1 writes for them. Keys and signatures are node:crypto's.
import { isIP } from 'node:net';

export function tlv(tag: number, body: Buffer): Buffer {
  const n = body.length;
  let len: number[];
  if (n < 0x80) len = [n];
  else {
    const bytes: number[] = [];
    for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
    len = [0x80 | bytes.length, ...bytes];
  }
  return Buffer.concat([Buffer.from([tag, ...len]), body]);
}

export const sequence = (...parts: Buffer[]): Buffer => tlv(0x30, Buffer.concat(parts));
export const set = (...parts: Buffer[]): Buffer => tlv(0x31, Buffer.concat(parts));
export const octetString = (body: Buffer): Buffer => tlv(0x04, body);
export const NULL = Buffer.from([0x05, 0x00]);
export const TRUE = Buffer.from([0x01, 0x01, 0xff]);

/** [n] EXPLICIT: a constructed context tag around one element. */
export const explicit = (n: number, body: Buffer): Buffer => tlv(0xa0 | n, body);

export function objectIdentifier(dotted: string): Buffer {
  const [a = 0, b = 0, ...rest] = dotted.split('.').map(Number);
  const out = [40 * a + b];
  for (const v of rest) {
    const bytes = [v & 0x7f];
    for (let x = Math.floor(v / 128); x > 0; x = Math.floor(x / 128)) bytes.unshift((x & 0x7f) | 0x80);
    out.push(...bytes);
  }
  return tlv(0x06, Buffer.from(out));
}

/** A non-negative INTEGER from big-endian bytes (a leading 0 when the high bit is set, leading zeros dropped). */
export function unsignedInteger(bytes: Buffer): Buffer {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  const body = bytes.subarray(i);
  return tlv(
    0x02,
    (body[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), body]) : Buffer.from(body.length ? body : [0]),
  );
}

export const smallInteger = (n: number): Buffer => unsignedInteger(Buffer.from([n & 0xff]));

/** BIT STRING with no unused bits (signatures, keys). */
export const bitString = (body: Buffer): Buffer => tlv(0x03, Buffer.concat([Buffer.from([0]), body]));

/** Go's asn1 writes a PrintableString when it can, else UTF8String. */
export function directoryString(value: string): Buffer {
  const printable = /^[A-Za-z0-9 '()+,\-./:=?]*$/.test(value);
  return tlv(printable ? 0x13 : 0x0c, Buffer.from(value, 'utf8'));
}

/** UTCTime until 2049, GeneralizedTime from 2050 (RFC 5280 4.1.2.5), whole seconds, Z. */
export function time(d: Date): Buffer {
  const iso = d
    .toISOString()
    .replace(/[-:T]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(iso.slice(2))) : tlv(0x18, Buffer.from(iso));
}

export const OID_CN = '2.5.4.3';
export const OID_O = '2.5.4.10';

export interface DistinguishedName {
  commonName: string;
  organization: string[];
}

/** One attribute per RDN, in pkix.Name.ToRDNSequence order (O before CN). */
export function name(subject: DistinguishedName): Buffer {
  const rdns = [...subject.organization.map((o) => [OID_O, o] as const), [OID_CN, subject.commonName] as const];
  return sequence(...rdns.map(([oid, value]) => set(sequence(objectIdentifier(oid), directoryString(value)))));
}

export interface AltNames {
  dnsNames: string[];
  ipAddresses: string[];
}

function ipv4Bytes(ip: string): number[] {
  return ip.split('.').map(Number);
}

/** 16-bit groups of an IPv6 text, a trailing dotted quad included. */
function ipv6Groups(text: string): number[] {
  if (text === '') return [];
  return text.split(':').flatMap((g) => {
    if (!g.includes('.')) return [parseInt(g, 16)];
    const [a = 0, b = 0, c = 0, d = 0] = ipv4Bytes(g);
    return [(a << 8) | b, (c << 8) | d];
  });
}

/** An IPv4 address as 4 bytes, IPv6 as 16 (as Go's marshalSANs writes them). Throws for anything else. */
export function ipBytes(ip: string): Buffer {
  const family = isIP(ip);
  if (family === 4) return Buffer.from(ipv4Bytes(ip));
  if (family !== 6) throw new Error(`not an IP address: ${JSON.stringify(ip)}`);
  const [head = '', tail] = ip.split('::');
  const h = ipv6Groups(head);
  const t = tail === undefined ? [] : ipv6Groups(tail);
  const groups = tail === undefined ? h : [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
  return Buffer.from(groups.flatMap((g) => [g >> 8, g & 0xff]));
}

/** GeneralNames: dNSName [2] IA5String, iPAddress [7] OCTET STRING. */
export function subjectAltNames(alt: AltNames): Buffer {
  return sequence(
    ...alt.dnsNames.map((d) => tlv(0x82, Buffer.from(d, 'ascii'))),
    ...alt.ipAddresses.map((ip) => tlv(0x87, ipBytes(ip))),
  );
}

export const OID_SUBJECT_ALT_NAME = '2.5.29.17';

/** Extension ::= SEQUENCE { extnID, critical BOOLEAN DEFAULT FALSE, extnValue OCTET STRING }. */
export function extension(oid: string, critical: boolean, value: Buffer): Buffer {
  return sequence(objectIdentifier(oid), ...(critical ? [TRUE] : []), octetString(value));
}
