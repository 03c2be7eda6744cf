// Whether the status the server has for a mirror pod differs from the one computed here, and the
// strategic-merge patch that makes it equal. Compared normalized (times to the second, key order,
// conditions by type), so a status that did not change never causes a request.
import type { PodCondition, PodStatus } from 'kubernetes-types/core/v1';
import { stableJson } from '../../util/stable-json.js';
import { truncateTime } from '../../util/api-time.js';
import { DISRUPTION_TARGET } from '../../k8s/disruption.js';
import { KUBELET_CONDITIONS } from '../../k8s/pod-conditions.js';

/** Status fields set by others than the kubelet. */
const SERVER_FIELDS = new Set(['nominatedNodeName', 'resize', 'resourceClaimStatuses', 'extendedResourceClaimStatus']);

function normalize(v: unknown): unknown {
  if (typeof v === 'string') return truncateTime(v);
  if (Array.isArray(v)) return v.map(normalize);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined && x !== null) out[k] = normalize(x);
    return out;
  }
  return v;
}

// A code-unit order, not localeCompare: collation would load ICU's data into the agent for a sort of ASCII names.
function byType(list: PodCondition[] | undefined): PodCondition[] {
  return [...(list ?? [])].sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
}

/** The fields of the server's status that ours is compared with. */
function comparable(server: PodStatus, ours: PodStatus): Record<string, unknown> {
  const ourTypes = new Set((ours.conditions ?? []).map((c) => c.type));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(server)) {
    if (SERVER_FIELDS.has(k)) continue;
    if (k === 'qosClass' && ours.qosClass === undefined) continue; // set once by the server at create
    out[k] = v;
  }
  out.conditions = byType(
    (server.conditions ?? []).filter((c) => ourTypes.has(c.type) || KUBELET_CONDITIONS.has(c.type)),
  );
  return out;
}

/**
 * Pairs (the server's status, ours) already found equal, by identity. The 10 s resync looks at every
 * pod (as the kubelet's syncBatch does); the server's copy is replaced whole by a watch event or a
 * patch's answer, and the status manager keeps the object of a status that did not change, so an
 * idle pod's pass is two lookups instead of normalizing and serializing both statuses again.
 * Neither side is ever changed in place.
 */
const equalPairs = new WeakMap<PodStatus, WeakSet<PodStatus>>();

/**
 * The conditions of ours that are sent: the kubelet's own and DisruptionTarget (which it shares);
 * others (readiness gates' conditions) are whoever set them, and the server's copy stands
 * (mergePodStatus), so a stale copy of ours never undoes their change.
 */
function sentConditions(ours: PodStatus): PodCondition[] | undefined {
  return ours.conditions?.filter((c) => KUBELET_CONDITIONS.has(c.type) || c.type === DISRUPTION_TARGET);
}

export function statusesEqual(server: PodStatus | undefined, ours: PodStatus): boolean {
  if (server && equalPairs.get(server)?.has(ours)) return true;
  const mine = { ...ours, conditions: byType(sentConditions(ours)) };
  const equal = stableJson(normalize(comparable(server ?? {}, mine))) === stableJson(normalize(mine));
  if (equal && server) {
    let seen = equalPairs.get(server);
    if (!seen) equalPairs.set(server, (seen = new WeakSet()));
    seen.add(ours);
  }
  return equal;
}

/**
 * The patch for pods/<name>/status, or undefined when nothing differs. Carries metadata.uid so it
 * cannot land on a recreated mirror. containerStatuses are atomic lists (sent whole); conditions
 * merge by type (ours updated, stale ones of ours deleted, the server's own kept).
 */
export function podStatusPatch(
  server: PodStatus | undefined,
  ours: PodStatus,
  mirrorUid: string,
): Record<string, unknown> | undefined {
  if (statusesEqual(server, ours)) return undefined;
  ours = { ...ours, conditions: sentConditions(ours) };
  const s = server ?? {};
  const status: Record<string, unknown> = { ...(normalize(ours) as Record<string, unknown>) };
  for (const k of Object.keys(s)) {
    if (SERVER_FIELDS.has(k) || k === 'qosClass') continue;
    if (!(k in status)) status[k] = null; // gone from ours: remove it there
  }
  const ourTypes = new Set((ours.conditions ?? []).map((c) => c.type));
  const stale = (s.conditions ?? []).filter((c) => KUBELET_CONDITIONS.has(c.type) && !ourTypes.has(c.type));
  // A condition merges field by field into the server's of its type: a field ours no longer has
  // (the reason and message of a Ready that became True) is deleted with null, as the kubelet's
  // two-way merge patch does; otherwise it stays there, and the two never compare equal.
  const theirsByType = new Map((s.conditions ?? []).map((c) => [c.type, c]));
  const conditions = ((status.conditions as Record<string, unknown>[] | undefined) ?? []).map((c) => {
    const theirs = theirsByType.get(String(c.type));
    if (!theirs) return c;
    const out: Record<string, unknown> = { ...c };
    for (const [k, v] of Object.entries(theirs)) if (!(k in out) && v !== undefined && v !== null) out[k] = null;
    return out;
  });
  status.conditions = [...conditions, ...stale.map((c) => ({ type: c.type, $patch: 'delete' }))];
  status['$setElementOrder/conditions'] = (ours.conditions ?? []).map((c) => ({ type: c.type }));
  // podIPs/hostIPs merge by ip: an address we no longer have would linger, so replace those lists.
  for (const k of ['podIPs', 'hostIPs'] as const) {
    const theirs = (s[k] ?? []).map((x) => x.ip);
    const mine = (ours[k] ?? []).map((x) => x.ip);
    if (theirs.some((ip) => !mine.includes(ip)) && Array.isArray(status[k]))
      status[k] = [...(status[k] as unknown[]), { $patch: 'replace' }];
  }
  return { metadata: { uid: mirrorUid }, status };
}
