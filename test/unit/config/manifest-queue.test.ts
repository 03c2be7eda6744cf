// The per-name queue of the file source: serial per name, folding, quiet times, failures.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManifestQueue } from '../../../src/config/manifest-queue';
import { memoryLogger } from '../../../src/log/logger';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('ManifestQueue', () => {
  afterEach(() => vi.useRealTimers());

  it('looks at one name once at a time and folds requests during a look into one more', async () => {
    const gate = deferred();
    const looks: string[] = [];
    let inFlight = 0;
    let most = 0;
    const q = new ManifestQueue(async (file) => {
      looks.push(file);
      if (file !== '/m/a.yaml') return;
      most = Math.max(most, ++inFlight);
      if (looks.length === 1) await gate.promise;
      inFlight--;
    }, memoryLogger(0).logger);
    const first = q.run('/m/a.yaml');
    const during = [q.run('/m/a.yaml'), q.run('/m/a.yaml'), q.run('/m/a.yaml')];
    const other = q.run('/m/b.yaml'); // another name does not wait
    await other;
    expect(looks).toEqual(['/m/a.yaml', '/m/b.yaml']);
    gate.resolve();
    await Promise.all([first, ...during]);
    expect(looks).toEqual(['/m/a.yaml', '/m/b.yaml', '/m/a.yaml']);
    expect(most).toBe(1);
  });

  it('logs a failed look with its file, never rejects, and looks again at the next request', async () => {
    const { logger, lines } = memoryLogger(0);
    let fail = true;
    let looks = 0;
    const q = new ManifestQueue(async () => {
      looks++;
      if (fail) throw new Error('disk on fire');
    }, logger);
    await expect(q.run('/m/a.yaml')).resolves.toBeUndefined();
    expect(
      lines.filter(
        (l) => l.includes('Could not process manifest file') && l.includes('/m/a.yaml') && l.includes('disk on fire'),
      ),
    ).toHaveLength(1);
    fail = false;
    await q.run('/m/a.yaml');
    expect(looks).toBe(2);
  });

  it('waits out a quiet time that each event for the name restarts; stop drops what waits', async () => {
    vi.useFakeTimers();
    const looks: string[] = [];
    const q = new ManifestQueue(async (file) => void looks.push(file), memoryLogger(0).logger);
    q.schedule('/m/a.yaml', 10);
    await vi.advanceTimersByTimeAsync(8);
    q.schedule('/m/a.yaml', 10);
    await vi.advanceTimersByTimeAsync(8);
    expect(looks).toEqual([]);
    await vi.advanceTimersByTimeAsync(5);
    expect(looks).toEqual(['/m/a.yaml']);
    q.schedule('/m/b.yaml', 10);
    q.stop();
    await vi.advanceTimersByTimeAsync(50);
    await q.run('/m/c.yaml');
    expect(looks).toEqual(['/m/a.yaml']);
  });
});
