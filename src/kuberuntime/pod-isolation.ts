// What isolates a pod beyond its security context, decided before its sandbox is asked for, as the
// kubelet's generatePodSandboxConfig and createPodSandbox decide it: the runtime handler of its
// RuntimeClass, and its user namespace (GetOrCreateUserNamespaceMappings): the node's own unless
// `hostUsers: false`, which needs a handler whose features say it supports user namespaces and then
// gets the pod's block of IDs (node/userns). Also whether the handler takes recursive read-only
// mounts. A pod this cannot be honoured for fails here, in the kubelet's words, and never runs without.
import type { Pod } from 'kubernetes-types/core/v1';
import { NamespaceMode, type NamespaceOption, type RuntimeHandler, type UserNamespace } from '../cri/cri-types.js';
import type { Logger } from '../log/logger.js';
import type { PodUserNamespace } from '../node/userns/user-namespaces.js';
import { errorMessage } from '../util/error-message.js';
import { namespacesForPod } from './namespaces.js';
import { lookupRuntimeHandler, NO_RUNTIME_CLASSES, type RuntimeClasses } from './runtime-class.js';

export interface RuntimeHandlerSource {
  /** The handlers of the runtime's last Status answer (after one round if none came yet); undefined: not set. */
  answeredHandlers(): Promise<readonly RuntimeHandler[] | undefined>;
}

export interface UserNamespaces {
  getOrCreate(uid: string): Promise<PodUserNamespace>;
  release(uid: string): Promise<void>;
}

export interface PodIsolationOptions {
  /** The API server's RuntimeClasses; absent (standalone), a pod naming one fails. */
  readonly runtimeClasses?: RuntimeClasses;
  readonly handlers: RuntimeHandlerSource;
  readonly userNamespaces: UserNamespaces;
  readonly logger: Logger;
}

export interface SandboxIsolation {
  /** RunPodSandbox's runtime_handler. */
  readonly runtimeHandler: string;
  /** The namespaces of the sandbox and of every container, with the user namespace. */
  readonly namespaceOptions: NamespaceOption;
}

/** The node's user namespace: what the kubelet sends for a pod that does not ask for its own. */
const NODE_USERNS: UserNamespace = { mode: NamespaceMode.NODE, uids: [], gids: [] };

/** HandlerSupportsUserNamespaces: an error when the runtime listed no such handler. */
function handlerSupportsUserNamespaces(handlers: readonly RuntimeHandler[] | undefined, name: string): boolean {
  if (handlers === undefined) throw new Error('runtime handlers are not set');
  const h = handlers.find((x) => x.name === name);
  if (!h) throw new Error(`the handler ${JSON.stringify(name)} is not known`);
  return h.features?.userNamespaces === true;
}

/** No block of IDs to give: a pod that gets this far without a manager fails. */
const NO_USER_NAMESPACES: UserNamespaces = {
  getOrCreate: () => Promise.reject(new Error('no user namespace manager')),
  release: () => Promise.resolve(),
};

export class PodIsolation {
  private readonly classes: RuntimeClasses;

  /** No RuntimeClasses, no runtime handlers known: the default handler and the node's user namespace only. */
  static withoutRuntimeFeatures(logger: Logger): PodIsolation {
    return new PodIsolation({
      handlers: { answeredHandlers: () => Promise.resolve(undefined) },
      userNamespaces: NO_USER_NAMESPACES,
      logger,
    });
  }

  constructor(private readonly o: PodIsolationOptions) {
    this.classes = o.runtimeClasses ?? NO_RUNTIME_CLASSES;
  }

  runtimeHandler(pod: Pod): Promise<string> {
    return lookupRuntimeHandler(this.classes, pod.spec?.runtimeClassName);
  }

  /** The pod's runtime handler and namespaces; rejects with the kubelet's message when it cannot be isolated as asked. */
  async forPod(pod: Pod & { metadata: { uid: string } }): Promise<SandboxIsolation> {
    const runtimeHandler = await this.runtimeHandler(pod);
    const userns = await this.userNamespace(pod, runtimeHandler);
    return { runtimeHandler, namespaceOptions: { ...namespacesForPod(pod), usernsOptions: userns } };
  }

  private async userNamespace(pod: Pod & { metadata: { uid: string } }, handler: string): Promise<UserNamespace> {
    if (pod.spec?.hostUsers !== false) return NODE_USERNS;
    let supported = false;
    let why: string | undefined;
    try {
      supported = handlerSupportsUserNamespaces(await this.o.handlers.answeredHandlers(), handler);
    } catch (err) {
      why = errorMessage(err);
    }
    if (!supported) {
      const msg =
        handler === ''
          ? "can't set `spec.hostUsers: false`, runtime does not support user namespaces"
          : `can't set \`spec.hostUsers: false\`, RuntimeClass handler ${JSON.stringify(handler)} does not support user namespaces`;
      throw new Error(why === undefined ? msg : `${msg}: ${why}`);
    }
    const m = await this.o.userNamespaces.getOrCreate(pod.metadata.uid);
    return {
      mode: NamespaceMode.POD,
      uids: m.uidMappings.map((x) => ({ hostId: x.hostId, containerId: x.containerId, length: x.length })),
      gids: m.gidMappings.map((x) => ({ hostId: x.hostId, containerId: x.containerId, length: x.length })),
    };
  }

  /**
   * runtimeClassSupportsRecursiveReadOnlyMounts: the pod's handler lists the feature. A handler that
   * cannot be found or is not listed does not (the container's mount then fails, or is not recursive
   * when it only asked IfPossible).
   */
  async supportsRecursiveReadOnly(pod: Pod): Promise<boolean> {
    let handler: string;
    try {
      handler = await this.runtimeHandler(pod);
    } catch (err) {
      this.o.logger.error('failed to look up the runtime handler', {
        runtimeClassName: pod.spec?.runtimeClassName,
        err: errorMessage(err),
      });
      return false;
    }
    const handlers = await this.o.handlers.answeredHandlers();
    if (!handlers || handlers.length === 0) return false;
    const h = handlers.find((x) => x.name === handler);
    if (!h) {
      this.o.logger.error('Unknown runtime handler', { runtimeHandlerName: handler });
      return false;
    }
    return h.features?.recursiveReadOnlyMounts === true;
  }

  /** The pod is gone: its user namespace block is free. */
  release(uid: string): Promise<void> {
    return this.o.userNamespaces.release(uid);
  }
}
