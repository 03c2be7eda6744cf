// Starts the node's pod sources, each feeding the one desired set: the manifest path always,
// staticPodURL when it is set, the API server's pods bound to the node with a kubeconfig.
import type { Logger } from '../../log/logger';
import { startFileSource, type FileSource } from '../file-source';
import { startHttpSource, type HttpSource } from '../http-source';
import type { Pod } from 'kubernetes-types/core/v1';
import type { Informer } from '../../informer/store.js';
import { ApiPodSource, type ApiSourceOptions } from '../api/api-source';
import { PodConfig, type SourceName } from './pod-config';

export interface PodSourcesOptions {
  readonly podManifestPath: string;
  readonly nodeName: string;
  readonly fileCheckFrequencyMs: number;
  readonly staticPodURL?: string;
  readonly staticPodURLHeader?: Readonly<Record<string, readonly string[]>>;
  readonly httpCheckFrequencyMs: number;
}

export interface PodSources {
  /** See FileSource.adoptIdentity. */
  adoptIdentity(file: string, computedUid: string, runtimeUid: string): boolean;
  stop(): Promise<void>;
}

/** The sources the options configure: the set is complete once each has been seen in full (the API server's with a kubeconfig). */
export function configuredSources(
  opts: Pick<PodSourcesOptions, 'staticPodURL'> & { readonly kubeconfig?: string },
): SourceName[] {
  return [
    ...(['file'] as const),
    ...(opts.staticPodURL ? (['http'] as const) : []),
    ...(opts.kubeconfig ? (['api'] as const) : []),
  ];
}

/** The API server's pods source on the node's one pods watch (the API side's, which starts it); it feeds the same set. */
export function startApiPodSource(
  nodePods: Informer<Pod>,
  pods: PodConfig,
  nodeName: string,
  logger: Logger,
  refused?: ApiSourceOptions['refused'],
): { stop(): Promise<void> } {
  const source = new ApiPodSource({
    nodeName,
    events: pods.feed('api'),
    logger: logger.with({ source: 'api' }),
    refused,
  });
  const detach = source.attach(nodePods);
  return {
    stop: async () => detach(),
  };
}

/** The file source also tells the set its refused manifests and the pods they declare (runtime-adoption.ts keeps those running). */
export function startPodSources(opts: PodSourcesOptions, pods: PodConfig, logger: Logger): PodSources {
  const http: HttpSource | undefined = opts.staticPodURL
    ? startHttpSource({
        url: opts.staticPodURL,
        headers: opts.staticPodURLHeader,
        nodeName: opts.nodeName,
        checkFrequencyMs: opts.httpCheckFrequencyMs,
        logger,
        // The source logs each refused answer once.
        events: pods.feed('http'),
      })
    : undefined;
  const file: FileSource = startFileSource({
    path: opts.podManifestPath,
    nodeName: opts.nodeName,
    fileCheckFrequencyMs: opts.fileCheckFrequencyMs,
    logger,
    // The file source logs each refused manifest once, with file and reason.
    events: pods.feed('file'),
  });
  return {
    adoptIdentity: (f, computedUid, runtimeUid) => file.adoptIdentity(f, computedUid, runtimeUid),
    async stop() {
      await Promise.all([file.stop(), http?.stop()]);
    },
  };
}
