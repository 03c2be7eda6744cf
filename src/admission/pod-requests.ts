// A pod's requests as the scheduler's noderesources fit counts them (resource.PodRequests): the sum
// of its containers and restartable (sidecar) init containers, or the largest one-off init
// container together with the sidecars started before it if that is more, plus the pod overhead.
// A negative quantity counts as nothing: validation refuses one, and admission must not be the
// place where a pod asking for -1000Gi of memory makes room for others.
import type { Container, Pod } from 'kubernetes-types/core/v1';
import { parseQuantity } from '../k8s/quantity.js';
import { isRestartableInit } from '../k8s/restart.js';

export interface PodRequests {
  readonly milliCPU: number;
  readonly memory: number;
  readonly ephemeralStorage: number;
}

type Mutable = { milliCPU: number; memory: number; ephemeralStorage: number };

const ZERO: PodRequests = { milliCPU: 0, memory: 0, ephemeralStorage: 0 };

function of(list: Record<string, string | number> | undefined): PodRequests {
  if (!list) return ZERO;
  const q = (name: string, milli: boolean): number => {
    const v = list[name];
    if (v === undefined) return 0;
    const p = parseQuantity(v);
    // Validation refuses a negative quantity; should one get here, it must not free room for others.
    return Math.max(0, milli ? p.milliValue() : p.value());
  };
  return { milliCPU: q('cpu', true), memory: q('memory', false), ephemeralStorage: q('ephemeral-storage', false) };
}

function add(a: Mutable, b: PodRequests): void {
  a.milliCPU += b.milliCPU;
  a.memory += b.memory;
  a.ephemeralStorage += b.ephemeralStorage;
}

function maxInto(a: Mutable, b: PodRequests): void {
  a.milliCPU = Math.max(a.milliCPU, b.milliCPU);
  a.memory = Math.max(a.memory, b.memory);
  a.ephemeralStorage = Math.max(a.ephemeralStorage, b.ephemeralStorage);
}

function containerRequests(c: Container): PodRequests {
  return of(c.resources?.requests as Record<string, string | number> | undefined);
}

/** By pod object: a desired pod never changes in place, and admission reads the others' requests for every new pod. */
const cache = new WeakMap<Pod, PodRequests>();

export function podRequests(pod: Pod): PodRequests {
  let r = cache.get(pod);
  if (!r) cache.set(pod, (r = computePodRequests(pod)));
  return r;
}

function computePodRequests(pod: Pod): PodRequests {
  const sum: Mutable = { ...ZERO };
  for (const c of pod.spec?.containers ?? []) add(sum, containerRequests(c));
  const sidecars: Mutable = { ...ZERO };
  const initPeak: Mutable = { ...ZERO };
  for (const c of pod.spec?.initContainers ?? []) {
    const r = containerRequests(c);
    if (isRestartableInit(c)) {
      add(sum, r);
      add(sidecars, r);
      // A sidecar runs beside every init container after it.
      maxInto(initPeak, { ...sidecars });
    } else {
      const withSidecars: Mutable = { ...sidecars };
      add(withSidecars, r);
      maxInto(initPeak, withSidecars);
    }
  }
  maxInto(sum, initPeak);
  add(sum, of(pod.spec?.overhead as Record<string, string | number> | undefined));
  return sum;
}
