// The node's user namespace manager as the agent builds it from its settings: blocks of
// userNamespaces.idsPerPod IDs cut from the node's range, read and checked for maxPods.
import type { Logger } from '../../log/logger.js';
import { readNodeIdRange, type NodeIdRangeFiles } from './node-id-range.js';
import { UserNamespaceManager } from './user-namespaces.js';

export interface NodeUserNamespacesOptions extends NodeIdRangeFiles {
  readonly rootDir: string;
  readonly maxPods: number;
  /** userNamespaces.idsPerPod, validated with the settings (idsPerPodProblem). */
  readonly idsPerPod: number;
  readonly logger: Logger;
}

export function nodeUserNamespaces(o: NodeUserNamespacesOptions): UserNamespaceManager {
  return new UserNamespaceManager({
    rootDir: o.rootDir,
    idsPerPod: o.idsPerPod,
    range: (idsPerPod) => readNodeIdRange(o.maxPods, { etcDir: o.etcDir }, idsPerPod),
    logger: o.logger,
  });
}
