// The kubelet's Test_heuristicsCopyFileLogs: a service the journal does not know is looked for as
// /var/log/<s>, /var/log/<s>.log, /var/log/<s>/<s>.log, the first file found wins.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { copyServiceLogFiles } from '../../../../src/server/node-logs/service-log-files.js';
import { useTmpDir } from '../../../support/tmp.js';

const tmp = useTmpDir('service-log-files');

async function copy(root: string, service: string, signal = AbortSignal.timeout(10_000)): Promise<string> {
  const out = new PassThrough();
  let text = '';
  out.on('data', (d: Buffer) => (text += d.toString()));
  await copyServiceLogFiles(root, [service], out, signal);
  return text;
}

describe('heuristicsCopyFileLogs', () => {
  it('follows the kubelet test step by step', async () => {
    const dir = join(tmp, 'logs');
    mkdirSync(dir);
    expect(await copy(dir, 'service.log')).toContain('log not found for service.log');
    expect(await copy(dir, 'service')).toContain('log not found for service');
    writeFileSync(join(dir, 'service.log'), 'valid logs', { mode: 0o444 });
    expect(await copy(dir, 'service.log')).toBe('valid logs');
    expect(await copy(dir, 'service')).toBe('valid logs');
    // A directory named after the service does not count as its log.
    mkdirSync(join(dir, 'service'));
    expect(await copy(dir, 'service')).toBe('valid logs');
    // The first match wins.
    writeFileSync(join(dir, 'service', 'service.log'), 'error', { mode: 0o444 });
    expect(await copy(dir, 'service')).toBe('valid logs');
  });

  it('finds /var/log/<s>/<s>.log, and reads no link that leads out of the directory', async () => {
    const dir = join(tmp, 'logs2');
    mkdirSync(join(dir, 'kube-proxy'), { recursive: true });
    writeFileSync(join(dir, 'kube-proxy', 'kube-proxy.log'), 'proxy started\n');
    expect(await copy(dir, 'kube-proxy')).toBe('proxy started\n');
    writeFileSync(join(tmp, 'secret'), 'secret\n');
    symlinkSync(join(tmp, 'secret'), join(dir, 'sneaky.log'));
    expect(await copy(dir, 'sneaky')).toBe('\nlog not found for sneaky\n');
  });

  it('says so when the deadline has already passed', async () => {
    const ctl = new AbortController();
    ctl.abort();
    expect(await copy(join(tmp, 'logs'), 'service', ctl.signal)).toBe('\ncontext error: context deadline exceeded\n');
  });
});
