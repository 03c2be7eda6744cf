// The IDs this node may give pods' user namespaces, as the kubelet finds them (getKubeletMappings,
// checked by MakeUserNsManager): the subordinate range of the `kubelet` user in /etc/subuid and
// /etc/subgid (what getsubids reads), one range, the same for both; without a `kubelet` user, or
// without an entry for it, every ID from one block up. The range is cut in blocks of
// userNamespaces.idsPerPod IDs (65536 by default), one a pod.
import { readFile } from 'node:fs/promises';
import path from 'node:path';

/** IDs a pod's user namespace maps: the kubelet's default userNamespaces.idsPerPod. */
export const USERNS_IDS_PER_POD = 65536;
/** The unit idsPerPod is counted in (the kubelet's userNsUnitLength). */
const USERNS_UNIT_LENGTH = 65536;
const MAX_UINT32 = 2 ** 32 - 1;

/** The kubelet's check of userNamespaces.idsPerPod (validateKubeletOSConfiguration), the reason in its words. */
export function idsPerPodProblem(idsPerPod: number): string | undefined {
  if (idsPerPod < USERNS_UNIT_LENGTH) return `must not be less than ${USERNS_UNIT_LENGTH}`;
  if (idsPerPod % USERNS_UNIT_LENGTH !== 0) return `must be a multiple of ${USERNS_UNIT_LENGTH}`;
  if (idsPerPod > MAX_UINT32) return `must not be more than ${MAX_UINT32}`;
  return undefined;
}
/** The user whose subordinate IDs the kubelet takes. */
export const KUBELET_USER = 'kubelet';

/** The node's range: `firstId` and `length` are multiples of the block, the first block is never 0. */
export interface NodeIdRange {
  readonly firstId: number;
  readonly length: number;
}

/** Without a `kubelet` user's entry: every ID from the first block to 2^32 - 1, whole blocks only. */
export function defaultNodeIdRange(idsPerPod = USERNS_IDS_PER_POD): NodeIdRange {
  return { firstId: idsPerPod, length: Math.floor((2 ** 32 - idsPerPod) / idsPerPod) * idsPerPod };
}

export interface NodeIdRangeFiles {
  /** Default `/etc`: passwd, subuid and subgid are read there. */
  readonly etcDir?: string;
}

async function readOptional(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** The kubelet user's uid, or undefined when there is no such user. */
function userId(passwd: string | undefined): string | undefined {
  for (const line of (passwd ?? '').split('\n')) {
    const f = line.split(':');
    if (f[0] === KUBELET_USER && f.length >= 3) return f[2];
  }
  return undefined;
}

/** The `start count` ranges of the user (named, or by uid), as getsubids lists them. */
function subordinateRanges(content: string | undefined, uid: string): string[] {
  const out: string[] = [];
  for (const line of (content ?? '').split('\n')) {
    const f = line.trim().split(':');
    if (f.length === 3 && (f[0] === KUBELET_USER || f[0] === uid)) out.push(`${f[1]} ${f[2]}`);
  }
  return out;
}

function parseRange(ranges: readonly string[]): NodeIdRange {
  const listed = ranges.map((r) => `0: ${KUBELET_USER} ${r}`).join('\n');
  if (ranges.length !== 1)
    throw new Error(`error parsing line ${JSON.stringify(listed)}: it must contain only one line`);
  const [first, count] = ranges[0]!.split(' ').map((x) => (/^\d+$/.test(x) ? Number(x) : Number.NaN));
  if (!(first! <= 0xffffffff && count! <= 0xffffffff)) throw new Error(`invalid line ${JSON.stringify(listed)}`);
  return { firstId: first!, length: count! };
}

/** The range as the kubelet checks it before it runs a single pod; throws with the kubelet's words. */
export function checkNodeIdRange(r: NodeIdRange, maxPods: number, idsPerPod = USERNS_IDS_PER_POD): NodeIdRange {
  if (idsPerPod % USERNS_UNIT_LENGTH !== 0)
    throw new Error(`kubelet user namespace length ${idsPerPod} is not a multiple of ${USERNS_UNIT_LENGTH}`);
  if (r.firstId % idsPerPod !== 0)
    throw new Error(`kubelet user assigned ID ${r.firstId} is not a multiple of ${idsPerPod}`);
  if (r.firstId < idsPerPod)
    throw new Error(`kubelet user assigned ID ${r.firstId} must be greater or equal to ${idsPerPod}`);
  if (r.length % idsPerPod !== 0)
    throw new Error(`kubelet user assigned IDs length ${r.length} is not a multiple of ${idsPerPod}`);
  if (Math.floor(r.length / idsPerPod) < maxPods)
    throw new Error(`kubelet user assigned IDs are not enough to support ${maxPods} pods`);
  return r;
}

/** The node's range, checked for `maxPods` blocks of `idsPerPod`; throws (the kubelet would not start) when it is unusable. */
export async function readNodeIdRange(
  maxPods: number,
  files: NodeIdRangeFiles = {},
  idsPerPod = USERNS_IDS_PER_POD,
): Promise<NodeIdRange> {
  const etc = files.etcDir ?? '/etc';
  const uid = userId(await readOptional(path.join(etc, 'passwd')));
  if (uid === undefined) return checkNodeIdRange(defaultNodeIdRange(idsPerPod), maxPods, idsPerPod);
  const uids = subordinateRanges(await readOptional(path.join(etc, 'subuid')), uid);
  const gids = subordinateRanges(await readOptional(path.join(etc, 'subgid')), uid);
  if (uids.length === 0 && gids.length === 0)
    return checkNodeIdRange(defaultNodeIdRange(idsPerPod), maxPods, idsPerPod);
  if (uids.join('\n') !== gids.join('\n'))
    throw new Error(`mismatched subuids and subgids for user ${JSON.stringify(KUBELET_USER)}`);
  return checkNodeIdRange(parseRange(uids), maxPods, idsPerPod);
}
