// Fingerprints of a container spec, written on each container so that the sync loop can tell
// "this running container was made from this spec" after a restart of the agent, or after another
// agent made it.
//
// - `io.kubernetes.container.hash`, exactly as a kubelet >= 1.31 computes it: FNV-32a over Go's
//   debug print of the JSON of {name, image}. Only name and image count (a static pod whose other
//   fields change gets a new UID anyway). Writing it the kubelet's way is what lets a kubelet
//   adopt bootlet's containers without a restart, and bootlet adopt a kubelet's.
// - `bootlet.io/container.hash`: bootlet's own fingerprint of the spec (64-bit FNV-1a over the
//   canonical JSON), so that any change to a container bootlet made (a new flag in `command`)
//   restarts it, as it would be restarted for a new UID. What an in-place resize changes (resources,
//   resizePolicy) is left out: the resize is applied to the running container, or restarts it where
//   its policy says so. A container made before that carries the whole spec's fingerprint, which
//   still matches while its resources are unchanged.
import type { Container } from 'kubernetes-types/core/v1';
import { canonicalJson } from './canonical-json.js';
import type { ContainerMeta } from './labels.js';

const FNV64_OFFSET = 0xcbf29ce484222325n;
const FNV64_PRIME = 0x100000001b3n;
const MASK64 = 0xffffffffffffffffn;

export function fnv1a64(data: Uint8Array): bigint {
  let h = FNV64_OFFSET;
  for (const byte of data) {
    h ^= BigInt(byte);
    h = (h * FNV64_PRIME) & MASK64;
  }
  return h;
}

export function fnv1a32(data: Uint8Array): number {
  let h = 0x811c9dc5;
  for (const byte of data) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/**
 * Fingerprints already computed, by spec object: every sync of every pod (the 1 m resync too) asks
 * for each container's, and a desired pod's spec is replaced whole on an update, never changed in
 * place.
 */
const hashes = new WeakMap<Container, string>();

const fingerprint = (c: Container): string => fnv1a64(Buffer.from(canonicalJson(c), 'utf8')).toString(16);

/** bootlet's fingerprint of the container spec less what a resize changes (lowercase hex, no padding). */
export function hashContainer(container: Container): string {
  let h = hashes.get(container);
  if (h === undefined) {
    const { resources: _r, resizePolicy: _p, ...rest } = container;
    hashes.set(container, (h = fingerprint(rest)));
  }
  return h;
}

/** A string as Go's encoding/json writes it (HTML-safe escapes, \u00XX for other control characters). */
function goJsonString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || ch === '<' || ch === '>' || ch === '&' || c === 0x2028 || c === 0x2029)
      out += `\\u${c.toString(16).padStart(4, '0')}`;
    else if (c >= 0xd800 && c <= 0xdfff)
      out += '\\ufffd'; // a lone surrogate is invalid UTF-8 to Go
    else out += ch;
  }
  return `${out}"`;
}

/** The `io.kubernetes.container.hash` a kubelet >= 1.31 writes for this container (lowercase hex). */
export function kubeletContainerHash(container: Pick<Container, 'name' | 'image'>): string {
  // json.Marshal of map[string]string sorts the keys: image before name.
  const json = Buffer.from(
    `{"image":${goJsonString(container.image ?? '')},"name":${goJsonString(container.name)}}`,
    'utf8',
  );
  // DeepHashObject prints the []byte with spew's %#v: "([]uint8)[123 34 ...]".
  const printed = `([]uint8)[${[...json].join(' ')}]`;
  return fnv1a32(Buffer.from(printed, 'utf8')).toString(16);
}

/**
 * Whether a running (or created) container was made from `spec`: by bootlet's whole-spec hash when
 * bootlet made it, by the kubelet's name-and-image hash when a kubelet made it.
 */
export function containerMatchesSpec(meta: ContainerMeta, spec: Container): boolean {
  if (meta.specHash !== undefined) return meta.specHash === hashContainer(spec) || meta.specHash === fingerprint(spec);
  return meta.hash === kubeletContainerHash(spec);
}
