// The private apt fetcher reads its mirror from the machine's own apt sources, never another registry.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { machineDebianMirror } from '../../../dev/debian-packages.js';

function aptDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'apt-'));
  mkdirSync(join(dir, 'sources.list.d'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

describe('machineDebianMirror', () => {
  it('takes the URI of the deb822 stanza of a Debian release, not the security archive', () => {
    const dir = aptDir({
      'sources.list.d/debian.sources': [
        'Types: deb',
        'URIs: http://deb.debian.org/debian-security',
        'Suites: bookworm-security',
        'Components: main',
        '',
        'Types: deb',
        '# a comment',
        'URIs: http://mirror.example/debian/',
        'Suites: bookworm bookworm-updates',
        'Components: main',
      ].join('\n'),
    });
    expect(machineDebianMirror(dir)).toBe('http://mirror.example/debian');
  });

  it('reads a one-line sources.list and skips other archives', () => {
    const dir = aptDir({
      'sources.list':
        'deb https://packages.cloud.google.com/apt cloud-sdk-bookworm main\ndeb [arch=amd64] http://ftp.example/debian bookworm main\n',
    });
    expect(machineDebianMirror(dir)).toBe('http://ftp.example/debian');
  });

  it('says so when the machine names no Debian mirror', () => {
    const dir = aptDir({
      'sources.list.d/node.sources': 'Types: deb\nURIs: https://deb.nodesource.com/node_20.x\nSuites: nodistro\n',
    });
    expect(() => machineDebianMirror(dir)).toThrow(/no Debian mirror/);
  });
});
