// Whether the agent runs with an API server. Before `kubeadm init` or `join` neither kubeconfig
// exists yet: the kubelet exits and systemd restarts it until they do; bootlet runs its static pods
// standalone meanwhile (kubeadm restarts the service once it has written them). A kubeconfig that
// cannot be used is a start-up error (unless a bootstrap kubeconfig can replace it); a server that
// does not answer is not.
import { existsSync } from 'node:fs';
import type { Logger } from '../log/logger.js';
import type { BootletOptions } from './options.js';

export type ApiModule = typeof import('../apiserver/index.js');

export interface ApiClientMode {
  /** The options, without kubeconfigs when neither exists yet. */
  readonly opts: BootletOptions;
  /** The API side's modules; undefined standalone. */
  readonly apiModule: ApiModule | undefined;
}

/** Throws KubeconfigError for a kubeconfig that cannot be used. */
export async function apiClientMode(opts: BootletOptions, logger: Logger): Promise<ApiClientMode> {
  if (
    opts.kubeconfig &&
    !existsSync(opts.kubeconfig) &&
    !(opts.bootstrapKubeconfig && existsSync(opts.bootstrapKubeconfig))
  ) {
    logger.warn('Neither the kubeconfig nor the bootstrap kubeconfig exists yet: running standalone until restarted', {
      kubeconfig: opts.kubeconfig,
      bootstrapKubeconfig: opts.bootstrapKubeconfig,
    });
    opts = { ...opts, kubeconfig: undefined, bootstrapKubeconfig: undefined };
  }
  if (!opts.kubeconfig) {
    if (opts.bootstrapKubeconfig)
      logger.warn('--bootstrap-kubeconfig is ignored without --kubeconfig: running standalone', {
        bootstrapKubeconfig: opts.bootstrapKubeconfig,
      });
    return { opts, apiModule: undefined };
  }
  // The API side's modules (HTTPS, HTTP/2 client, certificates) load only for a node that has one:
  // a standalone start (kubeadm's first one) does not wait for them.
  const apiModule = await import('../apiserver/index.js');
  apiModule.validateClientConfig(opts.kubeconfig, opts.bootstrapKubeconfig);
  return { opts, apiModule };
}
