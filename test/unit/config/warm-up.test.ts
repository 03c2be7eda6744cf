// The warm-up's manifest is one the agent accepts, so the warm-up runs the whole of a load.
import { describe, expect, it } from 'vitest';
import { loadManifest } from '../../../src/config/manifest';
import { WARM_UP_SAMPLE, warmUpManifestLoading } from '../../../src/config/warm-up';

describe('warmUpManifestLoading', () => {
  it('loads a manifest that is accepted with no warning, and returns nothing', () => {
    const r = loadManifest('/warm-up/warm-up.yaml', WARM_UP_SAMPLE, 'node-1', new Date(0));
    if ('error' in r) throw new Error(r.error.message);
    expect(r.warnings).toEqual([]);
    expect(r.pod.pod.spec?.volumes?.map((v) => v.hostPath?.type)).toEqual(['FileOrCreate', 'DirectoryOrCreate']);
    expect(warmUpManifestLoading('node-1')).toBeUndefined();
  });
});
