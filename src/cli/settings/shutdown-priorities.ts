// shutdownGracePeriodByPodPriority ([]ShutdownGracePeriodByPodPriority): in the file only, a list
// of {priority, shutdownGracePeriodSeconds}; the kubelet has no flag for it.
import type { ShutdownPriorityPeriod } from '../../nodeshutdown/shutdown-groups.js';
import { isPlainObject, type ValueType } from './value-types.js';

function integer(v: unknown, what: string, i: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v))
    throw new Error(`[${i}].${what} must be an integer, not ${JSON.stringify(v)}`);
  return v;
}

export const shutdownPriorities: ValueType<ShutdownPriorityPeriod[]> = {
  kind: 'list of {priority, shutdownGracePeriodSeconds}',
  placeholder: 'list',
  fromFlag() {
    throw new Error('is a config file field only');
  },
  fromConfig(v) {
    if (!Array.isArray(v)) throw new Error('must be a list of {priority, shutdownGracePeriodSeconds}');
    return v.map((e: unknown, i) => {
      if (!isPlainObject(e)) throw new Error(`[${i}] must be an object with priority and shutdownGracePeriodSeconds`);
      return {
        priority: integer(e.priority ?? 0, 'priority', i),
        shutdownGracePeriodSeconds: integer(e.shutdownGracePeriodSeconds ?? 0, 'shutdownGracePeriodSeconds', i),
      };
    });
  },
  isZero: (v) => v.length === 0,
  format: (v) => JSON.stringify(v),
};

/** The kubelet's validation of the list (ValidateKubeletConfiguration). */
export function checkShutdownPriorities(v: ShutdownPriorityPeriod[]): string | undefined {
  for (const [i, p] of v.entries()) {
    if (p.shutdownGracePeriodSeconds < 0) return `[${i}].shutdownGracePeriodSeconds must be >= 0`;
    if (p.priority < -2_147_483_648 || p.priority > 2_147_483_647) return `[${i}].priority must be an int32`;
  }
  return undefined;
}
