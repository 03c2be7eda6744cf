// The value of the io.kubernetes.container.hash annotation: a fingerprint of the container spec
// that lets the sync loop tell "this running container was made from this spec" after a restart
// of the agent. 64-bit FNV-1a, printed as lowercase hex without padding, the form the kubelet
// writes and parses (strconv.FormatUint(h, 16) / ParseUint(s, 16, 64)).
import type { Container } from 'kubernetes-types/core/v1';
import { canonicalJson } from './canonical-json.js';

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

export function hashContainer(container: Container): string {
  return fnv1a64(Buffer.from(canonicalJson(container), 'utf8')).toString(16);
}
