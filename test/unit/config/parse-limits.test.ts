// The hostile and careless inputs of the hardening issue: each is refused with a line that names the
// limit, and none is built before it is refused (no crash, no runaway memory).
import { describe, expect, it } from 'vitest';
import { parseManifest } from '../../../src/config/parse';
import { loadManifest } from '../../../src/config/manifest';
import { MAX_DEPTH, MAX_NODES } from '../../../src/config/parse/limits';

const HEAD = 'apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n';

function refused(text: string): string {
  const r = parseManifest(text);
  if (r.ok) throw new Error('expected the manifest to be refused');
  return r.error.message;
}

describe('parse limits', () => {
  it('refuses JSON nested 1000 deep (once a V8 abort), naming the limit', () => {
    const text = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"x":${'['.repeat(1000)}${']'.repeat(1000)}}`;
    expect(refused(text)).toBe(`nested deeper than ${MAX_DEPTH} levels (the limit for a manifest)`);
  });

  it('refuses deep YAML in flow style, block mappings and block sequences', () => {
    expect(refused(`${HEAD}x: ${'['.repeat(500)}${']'.repeat(500)}\n`)).toMatch(/nested deeper than/);
    let block = `${HEAD}x:\n`;
    for (let i = 1; i < 200; i++) block += `${' '.repeat(i)}a:\n`;
    expect(refused(block)).toMatch(/nested deeper than/);
    expect(refused(`${HEAD}x:\n${'- '.repeat(300)}y\n`)).toMatch(/nested deeper than/);
  });

  it('accepts nesting up to the limit', () => {
    const ok = `{"apiVersion":"v1","kind":"Pod","x":${'['.repeat(MAX_DEPTH - 1)}${']'.repeat(MAX_DEPTH - 1)}}`;
    expect(parseManifest(ok).ok).toBe(true);
  });

  it('refuses a 10 MiB YAML flow list and block list (once 80 s and an OOM), by count', () => {
    expect(refused(`${HEAD}x: [${'1,'.repeat(5 * 1024 * 1024)}1]\n`)).toBe(
      `more than ${MAX_NODES} values (the limit for a manifest)`,
    );
    expect(refused(`${HEAD}x:\n${'- 1\n'.repeat(2.5 * 1024 * 1024)}`)).toMatch(/more than \d+ values/);
  });

  it('refuses a 1 MiB JSON array by count', () => {
    expect(refused(`{"apiVersion":"v1","kind":"Pod","x":[${'1,'.repeat(512 * 1024)}1]}`)).toMatch(
      /more than \d+ values/,
    );
  });

  it('refuses aliases that expand to more than the value limit (99 aliases to a 20k list)', () => {
    let text = `${HEAD}base: &a [${'1,'.repeat(20_000)}1]\n`;
    for (let i = 0; i < 99; i++) text += `k${i}: *a\n`;
    expect(refused(text)).toBe(`aliases expand to more than ${MAX_NODES} values (the limit for a manifest)`);
  });

  it('refuses more than 100 aliases, an alias to its own anchor, and an unknown alias', () => {
    let text = `${HEAD}base: &a 1\n`;
    for (let i = 0; i < 101; i++) text += `k${i}: *a\n`;
    expect(refused(text)).toMatch(/more than 100 aliases/);
    expect(refused(`${HEAD}a: &a [1, *a]\n`)).toMatch(/alias/);
    expect(refused(`${HEAD}a: *nope\n`)).toMatch(/alias/i);
  });

  it('still reads a small merge key and a few aliases', () => {
    const r = parseManifest(`${HEAD}base: &b {x: 1}\nm:\n  <<: *b\n  z: 2\nn: *b\n`);
    expect(r.ok && r.object.m).toEqual({ x: 1, z: 2 });
  });

  it('locates an error at the end of a broken 10 MiB JSON file without quoting the content', () => {
    const r = parseManifest(`{"a": "${'s3cr3t'.repeat(1024 * 1024)}", }`);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.line).toBe(1);
    expect(r.error.message).not.toContain('s3cr3t');
  });

  it('never quotes file content in a JSON syntax error', () => {
    const r = parseManifest('{"apiVersion": "v1", "kind": "Pod", "password": hunter2}');
    expect(!r.ok && r.error.message).toBe('line 1, column 49: invalid JSON: expected a value');
  });

  it('refuses a decoded pod over the size limit: strings shared by aliases are counted once per use', () => {
    const big = 'x'.repeat(100 * 1024);
    let text = `${HEAD}spec:\n  containers:\n  - name: c\n    image: i\n    args: [&s "${big}"`;
    for (let i = 0; i < 20; i++) text += ', *s';
    text += ']\n';
    const r = loadManifest('/m/x.yaml', text, 'n', new Date(0));
    expect('error' in r && r.error.message).toBe('the pod is larger than 1.5 MiB (the limit for a manifest)');
  });
});
