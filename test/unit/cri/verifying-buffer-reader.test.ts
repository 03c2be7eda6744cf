// CRI responses decode with Node's UTF-8 check and decoder in place of protobufjs's JavaScript one:
// the same objects for any text (ASCII, multi-byte, long, empty), bytes fields untouched, and
// invalid UTF-8 in a string field refused as protobufjs's strict reader refuses it.
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import descriptor from '../../../src/cri/generated/cri-descriptor.json';
import { criMessageCodec } from '../../../src/cri/grpc-transport.js';
import { DECODE_OPTIONS } from '../../../src/cri/decode-options.js';

const root = protobuf.Root.fromJSON(descriptor as protobuf.INamespace);
const listType = root.lookupType('runtime.v1.ListContainersResponse');
const list = criMessageCodec('runtime.v1.ListContainersResponse');

const texts = [
  '',
  'a',
  'io.kubernetes.pod.name',
  'ünïcødé ✓ 日本語 🚀',
  'x'.repeat(5000),
  `${'é'.repeat(300)}z`,
  '\u0000ctl\u0001',
];

function container(i: number, text: string): Record<string, unknown> {
  return {
    id: `c${i}`,
    podSandboxId: `s${i}`,
    metadata: { name: text, attempt: i },
    image: { image: `img:${text}` },
    imageRef: 'sha256:abc',
    state: 1,
    createdAt: 1_700_000_000_000_000_000 + i,
    labels: { 'io.kubernetes.pod.name': text, [`k-${text}`]: 'v' },
    annotations: { note: text },
  };
}

describe('VerifyingBufferReader', () => {
  it('decodes what protobufjs itself decodes, for any text', () => {
    const bytes = list.serialize({ containers: texts.map((t, i) => container(i, t)) });
    const ours = list.deserialize(bytes);
    const theirs = listType.toObject(listType.decode(bytes), DECODE_OPTIONS);
    expect(ours).toEqual(theirs);
    const names = (ours as { containers: { metadata: { name: string } }[] }).containers.map((c) => c.metadata.name);
    expect(names).toEqual(texts);
  });

  it('leaves bytes fields as they are', () => {
    const exec = criMessageCodec('runtime.v1.ExecSyncResponse');
    const stdout = Buffer.from([0xff, 0xfe, 0x00, 0x41]);
    const out = exec.deserialize(exec.serialize({ stdout, stderr: Buffer.from('é'), exitCode: 3 })) as {
      stdout: Uint8Array;
      stderr: Uint8Array;
      exitCode: number;
    };
    expect(Buffer.from(out.stdout).equals(stdout)).toBe(true);
    expect(Buffer.from(out.stderr).toString()).toBe('é');
    expect(out.exitCode).toBe(3);
  });

  it('refuses a string field that is not UTF-8', () => {
    const bytes = Buffer.from(list.serialize({ containers: [container(1, 'AAAA')] }));
    // The id field's "c1" becomes an invalid sequence in place (same length).
    const at = bytes.indexOf(Buffer.from('c1'));
    expect(at).toBeGreaterThan(0);
    bytes[at] = 0xc3;
    bytes[at + 1] = 0x28;
    expect(() => list.deserialize(bytes)).toThrow();
    expect(() => listType.decode(bytes)).toThrow();
  });
});
