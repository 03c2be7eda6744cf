// Node allocatable as the kubelet computes it with no kubeReserved or systemReserved: capacity less
// the hard eviction thresholds (bootlet evicts nothing, so these are always the kubelet's defaults).
// The Node's status reports it, admission fits pods into it, and a memory-backed emptyDir is sized by it.
import { totalmem } from 'node:os';
import { parseQuantity } from './quantity.js';

/** The kubelet's default evictionHard on linux (pkg/kubelet/eviction/defaults_linux.go). */
export const DEFAULT_EVICTION_HARD: Record<string, string> = { 'memory.available': '100Mi', 'nodefs.available': '10%', 'nodefs.inodesFree': '5%', 'imagefs.available': '15%', 'imagefs.inodesFree': '5%' };

/** memory.available's hard threshold in bytes: below it the node is under memory pressure. */
export const EVICTION_HARD_MEMORY_BYTES = parseQuantity(DEFAULT_EVICTION_HARD['memory.available']!).value();

/** nodefs.available's hard threshold as a fraction of the file system. */
export const EVICTION_HARD_NODEFS_FRACTION = Number.parseFloat(DEFAULT_EVICTION_HARD['nodefs.available']!) / 100;

/** Allocatable memory of a node with this much memory (default: this machine's). */
export function allocatableMemoryBytes(capacityBytes: number = totalmem()): number {
  return Math.max(0, capacityBytes - EVICTION_HARD_MEMORY_BYTES);
}

/** Allocatable ephemeral storage of a root file system this large. */
export function allocatableEphemeralStorageBytes(totalBytes: number): number {
  return Math.floor(totalBytes * (1 - EVICTION_HARD_NODEFS_FRACTION));
}
