// The PLEG's own health, as the kubelet's GenericPLEG.Healthy() words it: a PLEG that has not
// relisted for longer than the threshold is unhealthy (systemd's STATUS says so).
import { formatDuration } from '../util/duration.js';

/** The kubelet's genericPlegRelistThreshold. */
export const PLEG_RELIST_THRESHOLD_MS = 3 * 60_000;

/** Why the PLEG is not healthy, or undefined. */
export function plegHealthProblem(sinceLastRelistMs: number): string | undefined {
  if (sinceLastRelistMs <= PLEG_RELIST_THRESHOLD_MS) return undefined;
  return `PLEG is not healthy: pleg was last seen active ${formatDuration(Math.floor(sinceLastRelistMs / 1000) * 1000)} ago; threshold is ${formatDuration(PLEG_RELIST_THRESHOLD_MS)}`;
}
