// The node's user namespace range as the kubelet finds and checks it (getKubeletMappings,
// MakeUserNsManager): the defaults, the `kubelet` user's subordinate IDs, and each refusal.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  checkNodeIdRange,
  defaultNodeIdRange,
  idsPerPodProblem,
  readNodeIdRange,
  USERNS_IDS_PER_POD,
} from '../../../../src/node/userns/node-id-range.js';
import { useTmpDir } from '../../../support/tmp.js';

const tmp = useTmpDir('userns-range');
let n = 0;

function etc(files: Record<string, string>): string {
  const dir = path.join(tmp, `etc-${n++}`);
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), content);
  return dir;
}

const PASSWD = 'root:x:0:0:root:/root:/bin/bash\nkubelet:x:998:998::/home/kubelet:/usr/sbin/nologin\n';

describe('the node ID range', () => {
  it('without a kubelet user: every 65536-ID block from 65536 to 2^32', async () => {
    expect(defaultNodeIdRange()).toEqual({ firstId: 65536, length: 2 ** 32 - 65536 });
    expect(await readNodeIdRange(110, { etcDir: etc({ passwd: 'root:x:0:0:root:/root:/bin/bash\n' }) })).toEqual(
      defaultNodeIdRange(),
    );
    expect(await readNodeIdRange(110, { etcDir: etc({}) })).toEqual(defaultNodeIdRange());
  });

  it("the kubelet user's one range, named or by uid, the same in subuid and subgid", async () => {
    const range = { firstId: 65536 * 10, length: 65536 * 200 };
    const line = `${range.firstId}:${range.length}\n`;
    expect(
      await readNodeIdRange(110, {
        etcDir: etc({ passwd: PASSWD, subuid: `alice:100000:65536\nkubelet:${line}`, subgid: `998:${line}` }),
      }),
    ).toEqual(range);
  });

  it('a kubelet user without subordinate IDs gets the default range', async () => {
    expect(await readNodeIdRange(110, { etcDir: etc({ passwd: PASSWD, subuid: 'alice:100000:65536\n' }) })).toEqual(
      defaultNodeIdRange(),
    );
  });

  const refused: [string, Record<string, string>, string][] = [
    [
      'subuid and subgid differ',
      { passwd: PASSWD, subuid: 'kubelet:65536:7208960\n', subgid: 'kubelet:131072:7208960\n' },
      'mismatched subuids and subgids for user "kubelet"',
    ],
    [
      'more than one range',
      {
        passwd: PASSWD,
        subuid: 'kubelet:65536:7208960\nkubelet:8000000000:65536\n',
        subgid: 'kubelet:65536:7208960\nkubelet:8000000000:65536\n',
      },
      'it must contain only one line',
    ],
    [
      'a first ID not on a block',
      { passwd: PASSWD, subuid: 'kubelet:100000:7208960\n', subgid: 'kubelet:100000:7208960\n' },
      'kubelet user assigned ID 100000 is not a multiple of 65536',
    ],
    [
      'a length not of whole blocks',
      { passwd: PASSWD, subuid: 'kubelet:65536:7208961\n', subgid: 'kubelet:65536:7208961\n' },
      'kubelet user assigned IDs length 7208961 is not a multiple of 65536',
    ],
    [
      'too few blocks for maxPods',
      { passwd: PASSWD, subuid: 'kubelet:65536:655360\n', subgid: 'kubelet:65536:655360\n' },
      'kubelet user assigned IDs are not enough to support 110 pods',
    ],
  ];
  it.each(refused)('refuses %s', async (_name, files, message) => {
    await expect(readNodeIdRange(110, { etcDir: etc(files) })).rejects.toThrow(message);
  });

  it('never maps host ID 0 to a pod (the first block is refused)', () => {
    expect(() => checkNodeIdRange({ firstId: 0, length: USERNS_IDS_PER_POD * 200 }, 110)).toThrow(
      'kubelet user assigned ID 0 must be greater or equal to 65536',
    );
  });

  describe('with userNamespaces.idsPerPod set', () => {
    const IDS = 65536 * 16; // 1048576

    it('without a kubelet user: blocks of idsPerPod from the first block to 2^32', async () => {
      expect(await readNodeIdRange(110, { etcDir: etc({}) }, IDS)).toEqual({ firstId: IDS, length: 2 ** 32 - IDS });
      // Not a power of two: whole blocks only, the last partial one left out.
      const three = 65536 * 3;
      const r = await readNodeIdRange(110, { etcDir: etc({}) }, three);
      expect(r.firstId).toBe(three);
      expect(r.length % three).toBe(0);
      expect(r.firstId + r.length).toBeLessThanOrEqual(2 ** 32);
      expect(r.firstId + r.length + three).toBeGreaterThan(2 ** 32);
    });

    it("takes the kubelet user's range when it is cut in blocks of idsPerPod", async () => {
      const line = `kubelet:${IDS}:${IDS * 110}\n`;
      expect(await readNodeIdRange(110, { etcDir: etc({ passwd: PASSWD, subuid: line, subgid: line }) }, IDS)).toEqual({
        firstId: IDS,
        length: IDS * 110,
      });
    });

    const refusedCustom: [string, string, string][] = [
      [
        'a first ID on 65536 but not on idsPerPod',
        `kubelet:${65536 * 2}:${IDS * 110}\n`,
        `kubelet user assigned ID 131072 is not a multiple of ${IDS}`,
      ],
      [
        'a first ID below one block',
        `kubelet:0:${IDS * 110}\n`,
        `kubelet user assigned ID 0 must be greater or equal to ${IDS}`,
      ],
      [
        'a length not of whole idsPerPod blocks',
        `kubelet:${IDS}:${IDS * 110 + 65536}\n`,
        `kubelet user assigned IDs length ${IDS * 110 + 65536} is not a multiple of ${IDS}`,
      ],
      [
        'enough 65536 blocks but too few idsPerPod blocks',
        `kubelet:${IDS}:${IDS * 100}\n`,
        'kubelet user assigned IDs are not enough to support 110 pods',
      ],
    ];
    it.each(refusedCustom)('refuses %s', async (_name, line, message) => {
      await expect(
        readNodeIdRange(110, { etcDir: etc({ passwd: PASSWD, subuid: line, subgid: line }) }, IDS),
      ).rejects.toThrow(message);
    });

    it("refuses a block size that is not of whole 65536-ID units, in MakeUserNsManager's words", () => {
      expect(() => checkNodeIdRange({ firstId: 100000, length: 100000 * 200 }, 110, 100000)).toThrow(
        'kubelet user namespace length 100000 is not a multiple of 65536',
      );
    });
  });

  it("checks the setting as the kubelet's configuration validation does", () => {
    expect(idsPerPodProblem(65536)).toBeUndefined();
    expect(idsPerPodProblem(65536 * 65535)).toBeUndefined();
    expect(idsPerPodProblem(0)).toBe('must not be less than 65536');
    expect(idsPerPodProblem(65535)).toBe('must not be less than 65536');
    expect(idsPerPodProblem(65536 + 1)).toBe('must be a multiple of 65536');
    expect(idsPerPodProblem(2 ** 32)).toBe('must not be more than 4294967295');
  });
});
