// What the start-up log says about the settings: the line that starts the agent with the ones an
// operator looks for first, each deprecated flag as the kubelet says it, then one line naming
// everything set that bootlet does not do, one for unknown config fields.
import type { Logger } from '../log/logger.js';
import { formatDuration } from '../util/duration.js';
import { BOOTLET_VERSION, KUBERNETES_VERSION, kubeletVersion } from '../version.js';
import type { BootletOptions, StartupNotes } from './options.js';

export function logStarting(opts: BootletOptions, logger: Logger): void {
  logger.info('Starting bootlet', {
    version: BOOTLET_VERSION,
    kubeletVersion: kubeletVersion(),
    node: opts.nodeName,
    nodeIP: opts.nodeIP,
    podManifestPath: opts.podManifestPath,
    containerRuntimeEndpoint: opts.containerRuntimeEndpoint,
    fileCheckFrequency: formatDuration(opts.fileCheckFrequencyMs),
    syncFrequency: formatDuration(opts.syncFrequencyMs),
    kubeconfig: opts.kubeconfig,
    bootstrapKubeconfig: opts.bootstrapKubeconfig,
    rotateCertificates: opts.rotateCertificates,
  });
}

export function logStartupNotes(notes: StartupNotes, logger: Logger, configFile: string | undefined): void {
  for (const line of notes.deprecations) logger.warn(line);
  if (notes.notImplemented.length > 0) {
    logger.warn('Settings that bootlet does not implement are ignored', { settings: notes.notImplemented.join(',') });
  }
  if (notes.unknownFields.length > 0) {
    logger.warn(
      `Unknown KubeletConfiguration fields are ignored: not in kubelet.config.k8s.io/v1beta1 of Kubernetes ${KUBERNETES_VERSION}`,
      {
        file: configFile,
        fields: notes.unknownFields.join(','),
      },
    );
  }
  if (notes.duplicateFields.length > 0) {
    logger.warn('KubeletConfiguration fields given more than once: the last one counts', {
      file: configFile,
      fields: notes.duplicateFields.join(','),
    });
  }
  for (const s of notes.skipped) logger.warn(`Skipped: ${s}`, { file: configFile });
}
