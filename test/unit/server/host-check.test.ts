import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.js';
import { hostOfHeader, isAllowedHost, RefusalLog } from '../../../src/server/host-check.js';

describe('Host check of the unauthenticated endpoints', () => {
  it.each([
    'localhost',
    'localhost:10248',
    'LOCALHOST:10255',
    'localhost.',
    '127.0.0.1',
    '127.0.0.1:10248',
    '127.1.2.3:80',
    '[::1]',
    '[::1]:10255',
    '[0:0:0:0:0:0:0:1]:10255',
    '[::ffff:127.0.0.1]:10255',
  ])('answers Host %s', (host) => {
    expect(isAllowedHost(host, '1.1', '127.0.0.1')).toBe(true);
  });

  it.each([
    'evil.example',
    'evil.example:10255',
    'localhost.evil.example',
    'evil-localhost',
    '127.0.0.1.nip.io:10255',
    '128.0.0.1',
    '0.0.0.0:10248',
    '10.0.0.5:10248',
    '[::2]:10255',
    '::1', // an IPv6 literal needs brackets in Host
    'localhost:http',
    'localhost:10255:1',
    '[::1',
    '',
  ])('refuses Host %s', (host) => {
    expect(isAllowedHost(host, '1.1', '127.0.0.1')).toBe(false);
  });

  it('accepts the literal address the connection arrived on, which no rebinding page can use', () => {
    expect(isAllowedHost('10.0.0.5:10248', '1.1', '10.0.0.5')).toBe(true);
    expect(isAllowedHost('10.0.0.5:10248', '1.1', '::ffff:10.0.0.5')).toBe(true);
    expect(isAllowedHost('[fd00::5]:10248', '1.1', 'fd00::5')).toBe(true);
    expect(isAllowedHost('10.0.0.6:10248', '1.1', '10.0.0.5')).toBe(false);
    expect(isAllowedHost('node1:10248', '1.1', '10.0.0.5')).toBe(false);
  });

  it('answers an HTTP/1.0 request without Host (no browser sends one), not an HTTP/1.1 one', () => {
    expect(isAllowedHost(undefined, '1.0', '127.0.0.1')).toBe(true);
    expect(isAllowedHost(undefined, '1.1', '127.0.0.1')).toBe(false);
    expect(isAllowedHost('', '1.1', '127.0.0.1')).toBe(false);
  });

  it('takes the host out of a Host header', () => {
    expect(hostOfHeader('[::1]:8080')).toBe('::1');
    expect(hostOfHeader('Node1:8080')).toBe('node1');
    expect(hostOfHeader('[nonsense]')).toBeUndefined();
    expect(hostOfHeader(':8080')).toBeUndefined();
  });
});

describe('RefusalLog', () => {
  it('logs the first refusal, then at most one line per interval with the count in between', () => {
    const lines: string[] = [];
    const logger = createLogger({ format: 'json', verbosity: 0, sink: { write: (l) => lines.push(l) } });
    let t = 1_000_000;
    const log = new RefusalLog(logger, 'healthz', 60_000, () => t);
    log.refused('evil.example:10248', '127.0.0.1');
    for (let i = 0; i < 50; i++) log.refused('evil.example:10248', '127.0.0.1');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      severity: 'warning',
      endpoint: 'healthz',
      host: 'evil.example:10248',
      remote: '127.0.0.1',
    });
    t += 60_000;
    log.refused('x'.repeat(5000), '127.0.0.1');
    expect(lines).toHaveLength(2);
    const second = JSON.parse(lines[1]!) as { host: string; refusedSinceLastLine: number };
    expect(second.refusedSinceLastLine).toBe(50);
    expect(second.host).toHaveLength(100);
  });
});
