// protobufjs generates a message type's encoder, decoder, verifier and converters (five compiled
// functions) on the type's first use, and a nested type's on the first message that carries one.
// Done ahead, in the agent's idle time, a first pod start does not pay for it.
import protobuf from 'protobufjs';

/** Sets up `type` and every message type its fields reach; types in `seen` are skipped. */
export function setUpMessageTypes(type: protobuf.Type, seen: Set<protobuf.Type> = new Set()): void {
  if (seen.has(type)) return;
  seen.add(type);
  // Set up already (by a call) when the generated encoder is the type's own property.
  if (!Object.hasOwn(type, 'encode')) type.setup();
  for (const f of type.fieldsArray) {
    const t = f.resolve().resolvedType;
    if (t instanceof protobuf.Type) setUpMessageTypes(t, seen);
  }
}
