import { describe, expect, it } from 'vitest';
import { parseManifest } from '../../../src/config/parse';
import { WEB_YAML } from './helpers';

const err = (text: string) => {
  const r = parseManifest(text);
  if (r.ok) throw new Error('expected a parse error');
  return r.error;
};

describe('parseManifest', () => {
  it('reads YAML into a plain object', () => {
    const r = parseManifest(WEB_YAML);
    expect(r.ok && r.object.metadata).toEqual({ name: 'web', labels: { app: 'web' } });
  });

  it('reads JSON, tabs and all', () => {
    const r = parseManifest('{\n\t"apiVersion": "v1",\n\t"kind": "Pod",\n\t"metadata": {"name": "web"}\n}\n');
    expect(r.ok && r.object.metadata).toEqual({ name: 'web' });
  });

  it('reads octal modes as the Kubernetes YAML decoder does (0644 = 420)', () => {
    const r = parseManifest(
      'apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  volumes:\n  - name: v\n    secret: {defaultMode: 0644}\n',
    );
    expect(r.ok && JSON.stringify(r.object)).toContain('"defaultMode":420');
  });

  it('names line and column of a YAML syntax error', () => {
    const e = err('apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  labels:\n    a: 1\n   b: 2\n');
    expect(e.line).toBe(7);
    expect(e.column).toBeGreaterThan(0);
    expect(e.message).toMatch(/^line 7, column \d+: /);
    expect(e.message).not.toContain('\n');
  });

  it('names line and column of a JSON syntax error', () => {
    const e = err('{\n  "apiVersion": "v1",\n  "kind": "Pod",\n  "metadata": }\n');
    expect(e.line).toBe(4);
    expect(e.column).toBe(15);
    expect(e.message).toMatch(/^line 4, column 15: invalid JSON/);
    const e2 = err('{\n  "apiVersion": "v1"\n  "kind": "Pod"\n}\n');
    expect(e2.line).toBe(3); // where the missing comma was expected
  });

  it('refuses a second document, naming the line where it starts', () => {
    const e = err(`${WEB_YAML}---\n${WEB_YAML}`);
    expect(e.line).toBe(13);
    expect(e.message).toMatch(/^line 13, column 1: a second YAML document/);
  });

  it('accepts a leading --- and a trailing empty document', () => {
    expect(parseManifest(`---\n${WEB_YAML}---\n`).ok).toBe(true);
  });

  it('refuses duplicate keys, naming the line', () => {
    const e = err('apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  name: b\n');
    expect(e.line).toBe(5);
    expect(e.message).toContain('unique');
    const j = err('{"apiVersion": "v1", "kind": "Pod",\n "metadata": {"name": "a", "name": "b"}}');
    expect(j.line).toBe(2);
  });

  it('refuses a key repeated far apart in a big mapping, and keeps keys that only look alike', () => {
    // The library's own check compared every key with every other (6,000 keys: over a second on
    // the event loop); the duplicate is still found, at its line.
    const keys = Array.from({ length: 6000 }, (_, i) => `  k${i}: v`);
    const text = `apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nx:\n${[...keys, '  k17: again'].join('\n')}\n`;
    expect(err(text).line).toBe(4 + 6000 + 1);
    expect(parseManifest(`apiVersion: v1\nkind: Pod\nx:\n${keys.join('\n')}\n`).ok).toBe(true);
    // 1 and "1" are two keys; merge keys may repeat; a repeat inside an aliased map is found once.
    expect(parseManifest('apiVersion: v1\nkind: Pod\nx: {1: a, "1": b, true: c, "true": d}\n').ok).toBe(true);
    expect(
      parseManifest('apiVersion: v1\nkind: Pod\nb: &b {w: 1}\nc: &c {z: 1}\nm:\n  <<: *b\n  <<: *c\nq: *b\n').ok,
    ).toBe(true);
    expect(err('apiVersion: v1\nkind: Pod\nb: &b {w: 1, w: 2}\nq: *b\n').line).toBe(3);
    expect(err('apiVersion: v1\nkind: Pod\nx:\n  - {a: 1}\n  - {a: 1, a: 2}\n').line).toBe(5);
  });

  it('refuses a PodList', () => {
    expect(err('apiVersion: v1\nkind: PodList\nitems: []\n').message).toBe(
      'kind is "PodList": expected "Pod" (a file holds exactly one Pod; a PodList is not accepted)',
    );
  });

  it('refuses a Deployment and a wrong apiVersion, saying what was found', () => {
    expect(err('apiVersion: apps/v1\nkind: Deployment\n').message).toBe('kind is "Deployment": expected "Pod"');
    expect(err('apiVersion: v2\nkind: Pod\n').message).toBe('apiVersion is "v2": expected "v1"');
    expect(err('kind: Pod\n').message).toBe('apiVersion is missing: expected "v1"');
    expect(err('apiVersion: v1\n').message).toBe('kind is missing: expected "Pod"');
  });

  it('refuses something that is not an object', () => {
    expect(err('- a\n- b\n').message).toBe('expected a Pod object, found a list');
    expect(err('hello\n').message).toBe('expected a Pod object, found a string');
  });

  it('refuses an empty file and a file of comments', () => {
    expect(err('').message).toBe('file is empty');
    expect(err('  \n\n').message).toBe('file is empty');
    expect(err('# nothing here\n').message).toBe('file has no content');
  });

  it('refuses an alias bomb and an unknown alias without throwing', () => {
    expect(err('a: *nope\n').message).toMatch(/alias/i);
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 9; i++)
      bomb.push(
        `${'abcdefghij'[i]}: &${'abcdefghij'[i]} [${Array(9)
          .fill(`*${'abcdefghij'[i - 1]}`)
          .join(', ')}]`,
      );
    expect(parseManifest(bomb.join('\n')).ok).toBe(false);
  });
});
