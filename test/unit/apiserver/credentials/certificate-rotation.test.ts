import { describe, expect, it } from 'vitest';
import type { CertificatePair } from '../../../../src/apiserver/credentials/certificate-pair.js';
import {
  jitteryDuration,
  nextRotationDeadline,
  satisfiesSubject,
} from '../../../../src/apiserver/credentials/certificate-rotation.js';

const subject = { commonName: 'system:node:n1', organization: ['system:nodes'] };
function pair(notBefore: string, notAfter: string, cn = 'system:node:n1', o = ['system:nodes']): CertificatePair {
  return {
    certPem: '',
    keyPem: '',
    privateKey: undefined as never,
    commonName: cn,
    organization: o,
    notBefore: new Date(notBefore),
    notAfter: new Date(notAfter),
  };
}
const now = new Date('2026-03-01T00:00:00Z');

describe('the rotation deadline', () => {
  it('falls at 70 % to 90 % of the lifetime, as wait.Jitter(d, 0.2) - 0.3 d', () => {
    expect(jitteryDuration(1000, () => 0)).toBeCloseTo(700);
    expect(jitteryDuration(1000, () => 0.5)).toBeCloseTo(800);
    expect(jitteryDuration(1000, () => 0.999999)).toBeCloseTo(900, 2);
  });

  it('is counted from notBefore (the signer backdates it), not from now', () => {
    // 1 year from 2026-01-01: 365 days; 80 % is day 292.
    const p = pair('2026-01-01T00:00:00Z', '2027-01-01T00:00:00Z');
    expect(nextRotationDeadline(p, subject, now, () => 0.5).toISOString()).toBe(
      new Date(Date.parse('2026-01-01T00:00:00Z') + 0.8 * 365 * 86_400_000).toISOString(),
    );
    const earliest = nextRotationDeadline(p, subject, now, () => 0).getTime();
    const latest = nextRotationDeadline(p, subject, now, () => 1).getTime();
    expect((earliest - Date.parse('2026-01-01T00:00:00Z')) / (365 * 86_400_000)).toBeCloseTo(0.7);
    expect((latest - Date.parse('2026-01-01T00:00:00Z')) / (365 * 86_400_000)).toBeCloseTo(0.9);
  });

  it('is now without a pair, or for a pair of another node, or without the node group', () => {
    expect(nextRotationDeadline(undefined, subject, now, () => 0.5)).toBe(now);
    expect(
      nextRotationDeadline(
        pair('2026-01-01T00:00:00Z', '2027-01-01T00:00:00Z', 'system:node:other'),
        subject,
        now,
        () => 0.5,
      ),
    ).toBe(now);
    expect(
      nextRotationDeadline(
        pair('2026-01-01T00:00:00Z', '2027-01-01T00:00:00Z', 'system:node:n1', []),
        subject,
        now,
        () => 0.5,
      ),
    ).toBe(now);
  });

  it('lets a pair carry more organizations than asked for', () => {
    expect(
      satisfiesSubject(
        pair('2026-01-01T00:00:00Z', '2027-01-01T00:00:00Z', 'system:node:n1', ['system:nodes', 'extra']),
        subject,
      ),
    ).toBe(true);
  });

  it('is in the past for an expired pair, so it is replaced at once', () => {
    const p = pair('2025-01-01T00:00:00Z', '2025-06-01T00:00:00Z');
    expect(nextRotationDeadline(p, subject, now, () => 0.5).getTime()).toBeLessThan(now.getTime());
  });
});
