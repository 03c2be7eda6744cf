import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { containerMatchesSpec, fnv1a64, hashContainer } from '../../../src/kuberuntime/container-hash.js';
import { canonicalJson } from '../../../src/kuberuntime/canonical-json.js';
import type { ContainerMeta } from '../../../src/kuberuntime/labels.js';
import { container } from './fixtures.js';

describe('hashContainer', () => {
  it('is lowercase hex that a uint64 parser accepts', () => {
    const h = hashContainer(container());
    expect(h).toMatch(/^[0-9a-f]{1,16}$/);
  });

  it('FNV-1a 64 matches the published test vectors', () => {
    expect(fnv1a64(Buffer.from('')).toString(16)).toBe('cbf29ce484222325');
    expect(fnv1a64(Buffer.from('a')).toString(16)).toBe('af63dc4c8601ec8c');
    expect(fnv1a64(Buffer.from('foobar')).toString(16)).toBe('85944171f73967e8');
  });

  it('does not depend on key order', () => {
    const a = container({ env: [{ name: 'A', value: '1' }], resources: { limits: { cpu: '1', memory: '1Gi' } } });
    const b = JSON.parse(
      JSON.stringify({
        resources: { limits: { memory: '1Gi', cpu: '1' } },
        env: [{ value: '1', name: 'A' }],
        ...container(),
      }),
    );
    expect(hashContainer(b)).toBe(hashContainer(a));
  });

  it('changes with any spec change, including array order', () => {
    const base = container({ args: ['a', 'b'] });
    const variants = [
      container({ args: ['b', 'a'] }),
      container({ args: ['a', 'b'], image: 'other:1' }),
      container({ args: ['a', 'b'], env: [{ name: 'X', value: '' }] }),
      container({ args: ['a', 'b'], name: 'app2' }),
    ];
    const hashes = new Set([base, ...variants].map(hashContainer));
    expect(hashes.size).toBe(variants.length + 1);
  });

  it('leaves out what an in-place resize changes; a container made before that still matches while its resources do', () => {
    const base = container({ args: ['a'], resources: { requests: { cpu: '100m' } } });
    const resized = {
      ...base,
      resources: { requests: { cpu: '200m' } },
      resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'RestartContainer' }],
    };
    expect(hashContainer(resized)).toBe(hashContainer(base));
    // An older bootlet wrote the whole spec's fingerprint (FNV-1a 64 over the canonical JSON).
    const whole = fnv1a64(Buffer.from(canonicalJson(base), 'utf8')).toString(16);
    const meta = { specHash: whole, hash: '', restartCount: 0 } as unknown as ContainerMeta;
    expect(containerMatchesSpec(meta, base)).toBe(true);
    expect(containerMatchesSpec(meta, resized)).toBe(false);
    expect(containerMatchesSpec({ ...meta, specHash: hashContainer(base) }, resized)).toBe(true);
  });

  it('is the same in another process', () => {
    const spec = container({ command: ['etcd'], env: [{ name: 'Z', value: 'z' }] });
    const script = `import { hashContainer } from './src/kuberuntime/container-hash.ts'; console.log(hashContainer(${JSON.stringify(spec)}));`;
    const out = spawnSync('npx', ['tsx', '--eval', script], { encoding: 'utf8', cwd: process.cwd() });
    expect(out.stderr).toBe('');
    expect(out.stdout.trim()).toBe(hashContainer(spec));
  });
});
