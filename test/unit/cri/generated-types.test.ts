// The CRI types are generated from cri.proto (build/gen-proto.mjs). These tests hold the three
// sides of that contract together: the types on disk are what the .proto gives today, the decoder
// builds objects of exactly the shape the output types declare, and the declared conventions
// (int64 as number, enums as numbers, absent messages null) are the ones the decoder follows.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import protobuf from 'protobufjs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import descriptor from '../../../src/cri/generated/cri-descriptor.json';
import type {
  Container,
  ContainerState,
  CriInput,
  CriMessageName,
  CriOutput,
  Mount,
  PodSandboxConfig,
} from '../../../src/cri/cri-types.js';
import {
  criMessageCodec,
  type CriMethodName,
  type CriRequest,
  type CriResponse,
} from '../../../src/cri/grpc-transport.js';

const repoRoot = path.resolve(import.meta.dirname, '../../..');
const root = protobuf.Root.fromJSON(descriptor as protobuf.INamespace);
const messages = (root.lookup('runtime.v1') as protobuf.Namespace).nestedArray.filter(
  (n): n is protobuf.Type => n instanceof protobuf.Type,
);

const LONG_KINDS = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const INT_KINDS = new Set(['int32', 'uint32', 'sint32', 'fixed32', 'sfixed32']);
/** Above 2^32, within 2^53: a long the decoder must hand out as this exact number. */
const A_LONG = 2 ** 40 + 3;

function codec(type: protobuf.Type): { serialize(m: object): Buffer; deserialize(b: Buffer): Record<string, unknown> } {
  const c = criMessageCodec(type.fullName.slice(1));
  return { serialize: (m) => c.serialize(m), deserialize: (b) => c.deserialize(b) as Record<string, unknown> };
}

function scalar(kind: string): unknown {
  if (LONG_KINDS.has(kind)) return A_LONG;
  if (INT_KINDS.has(kind)) return 7;
  if (kind === 'double' || kind === 'float') return 0.5;
  if (kind === 'bool') return true;
  if (kind === 'bytes') return Buffer.from([1, 2]);
  return 'x';
}

/** One value for a field that is not repeated; nested messages are filled all the way down. */
function one(field: protobuf.Field, outer: readonly string[]): unknown {
  const t = field.resolve().resolvedType;
  if (t instanceof protobuf.Type) {
    if (outer.includes(t.fullName)) throw new Error(`${t.fullName} contains itself: give this test a depth limit`);
    return populated(t, [...outer, t.fullName]);
  }
  // The last value: never the zero value, which proto3 does not send.
  if (t instanceof protobuf.Enum) return Math.max(...Object.values(t.values));
  return scalar(field.type);
}

/** Every field of the message set, as bootlet would send it. */
function populated(type: protobuf.Type, outer: readonly string[] = [type.fullName]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of type.fieldsArray) {
    if (f instanceof protobuf.MapField) out[f.name] = { k: scalar(f.type) };
    else out[f.name] = f.repeated ? [one(f, outer)] : one(f, outer);
  }
  return out;
}

/** The value as the output types declare it for this field kind (see the type-level test below). */
function expectDeclaredKind(field: protobuf.Field, value: unknown, where: string): void {
  const t = field.resolve().resolvedType;
  if (t instanceof protobuf.Type) {
    expect(value === null || (typeof value === 'object' && !Array.isArray(value)), `${where}: message or null`).toBe(
      true,
    );
  } else if (t instanceof protobuf.Enum) {
    expect(typeof value, `${where}: enum as number`).toBe('number');
  } else if (
    LONG_KINDS.has(field.type) ||
    INT_KINDS.has(field.type) ||
    field.type === 'double' ||
    field.type === 'float'
  ) {
    expect(typeof value, `${where}: number`).toBe('number');
  } else if (field.type === 'bytes') {
    expect(Buffer.isBuffer(value), `${where}: Buffer`).toBe(true);
  } else {
    expect(typeof value, where).toBe(field.type === 'bool' ? 'boolean' : 'string');
  }
}

/** Every declared field is present, no other, each of the declared kind; `sent` says what was encoded. */
function expectOutputShape(
  type: protobuf.Type,
  got: Record<string, unknown>,
  sent: Record<string, unknown> | undefined,
): void {
  expect(Object.keys(got).sort(), type.name).toEqual(type.fieldsArray.map((f) => f.name).sort());
  for (const f of type.fieldsArray) {
    const where = `${type.name}.${f.name}`;
    const value = got[f.name];
    const t = f.resolve().resolvedType;
    if (f instanceof protobuf.MapField) {
      expect(value, where).toEqual(sent ? { k: scalar(f.type) } : {});
    } else if (f.repeated) {
      expect(Array.isArray(value), `${where}: array`).toBe(true);
      const items = value as unknown[];
      expect(items.length, where).toBe(sent ? 1 : 0);
      for (const item of items) expectDeclaredKind(f, item, where);
    } else if (t instanceof protobuf.Type) {
      // An absent message is null, not undefined and not an empty object.
      if (!sent) expect(value, where).toBeNull();
      else expectOutputShape(t, value as Record<string, unknown>, sent[f.name] as Record<string, unknown>);
    } else {
      expectDeclaredKind(f, value, where);
      if (sent && LONG_KINDS.has(f.type)) expect(value, `${where}: long as an exact number`).toBe(A_LONG);
      if (!sent && t instanceof protobuf.Enum) expect(value, where).toBe(0);
    }
  }
}

describe('CRI types generated from cri.proto', () => {
  it('src/cri/generated/ is what the .proto files give today (a field added to cri.proto is in the types)', () => {
    // Throws with the stale files named when a .proto changed since the last `npm run gen`.
    expect(() =>
      execFileSync(process.execPath, ['build/gen-proto.mjs', '--check'], { cwd: repoRoot, stdio: 'pipe' }),
    ).not.toThrow();
  });

  it.each(messages.map((m) => [m.name, m] as const))(
    '%s: an empty answer decodes with every field present, absent messages null',
    (_, type) => {
      expectOutputShape(type, codec(type).deserialize(Buffer.alloc(0)), undefined);
    },
  );

  it.each(messages.map((m) => [m.name, m] as const))(
    '%s: a full answer decodes to the declared kinds, longs exact',
    (_, type) => {
      const sent = populated(type);
      expectOutputShape(type, codec(type).deserialize(codec(type).serialize(sent)), sent);
    },
  );

  it('the output types declare those conventions', () => {
    expectTypeOf<CriOutput<'Container'>['createdAt']>().toEqualTypeOf<number>();
    expectTypeOf<CriOutput<'Image'>['size']>().toEqualTypeOf<number>();
    expectTypeOf<CriOutput<'Container'>['state']>().toEqualTypeOf<ContainerState>();
    expectTypeOf<ContainerState>().toEqualTypeOf<0 | 1 | 2 | 3>();
    expectTypeOf<CriOutput<'Container'>['metadata']>().toEqualTypeOf<CriOutput<'ContainerMetadata'> | null>();
    expectTypeOf<CriOutput<'Container'>['labels']>().toEqualTypeOf<{ [key: string]: string }>();
    expectTypeOf<CriOutput<'ContainerStatus'>['mounts']>().toEqualTypeOf<Mount[]>();
    expectTypeOf<CriOutput<'ExecSyncResponse'>['stdout']>().toEqualTypeOf<Buffer>();
    // No optional key in any output type: the decoder fills every field.
    type WithOptionalKeys = {
      [M in CriMessageName]: CriOutput<M> extends Required<CriOutput<M>> ? never : M;
    }[CriMessageName];
    expectTypeOf<WithOptionalKeys>().toEqualTypeOf<never>();
  });

  it('the transport types each call by the method it names', () => {
    expectTypeOf<CriMethodName<'ImageService'>>().toEqualTypeOf<
      'ImageStatus' | 'ListImages' | 'PullImage' | 'ImageFsInfo'
    >();
    expectTypeOf<CriRequest<'RuntimeService', 'StopContainer'>>().toEqualTypeOf<CriInput<'StopContainerRequest'>>();
    expectTypeOf<CriResponse<'RuntimeService', 'ListContainers'>['containers']>().toEqualTypeOf<Container[]>();
    expectTypeOf<
      CriResponse<'RuntimeService', 'PodSandboxStatus'>['status']
    >().toEqualTypeOf<CriOutput<'PodSandboxStatus'> | null>();
  });

  it('the input types take what bootlet builds: optional fields, enums by number or name', () => {
    expectTypeOf<PodSandboxConfig>().toEqualTypeOf<CriInput<'PodSandboxConfig'>>();
    expectTypeOf<{ metadata: { name: string } }>().toMatchTypeOf<CriInput<'ContainerConfig'>>();
    expectTypeOf<{ state: { state: 1 } }>().toMatchTypeOf<CriInput<'ContainerFilter'>>();
    expectTypeOf<{ state: { state: 'CONTAINER_RUNNING' } }>().toMatchTypeOf<CriInput<'ContainerFilter'>>();
    // What the runtime returned can be sent back as it is.
    expectTypeOf<CriOutput<'PodSandboxConfig'>>().toMatchTypeOf<CriInput<'PodSandboxConfig'>>();
    const encoded = codec(root.lookupType('runtime.v1.ContainerFilter')).serialize({
      state: { state: 'CONTAINER_EXITED' },
    });
    expect(codec(root.lookupType('runtime.v1.ContainerFilter')).deserialize(encoded).state).toEqual({ state: 2 });
  });
});
