// Runtime answers for fakes, shaped exactly as the transport decodes them: the fields a test names,
// and every other field as the decoder fills it (zero values, empty lists and maps, null messages).
import type { CriMessageName, CriOutput } from '../../src/cri/cri-types.js';
import { criMessageCodec } from '../../src/cri/grpc-transport.js';

export function criOutput<M extends CriMessageName>(name: M, fields: Partial<CriOutput<M>> = {}): CriOutput<M> {
  // Generic over M, TypeScript cannot see the merge is a CriOutput<M>; the fields come from it.
  return Object.assign(
    criMessageCodec(`runtime.v1.${name}`).deserialize(Buffer.alloc(0)) as object,
    fields,
  ) as CriOutput<M>;
}
