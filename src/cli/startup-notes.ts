// What the start-up log says about the settings: each deprecated flag as the kubelet says it, then
// one line naming everything set that bootlet does not do, one for unknown config fields.
import type { Logger } from '../log/logger.js';
import { KUBERNETES_VERSION } from '../version.js';
import type { StartupNotes } from './options.js';

export function logStartupNotes(notes: StartupNotes, logger: Logger, configFile: string | undefined): void {
  for (const line of notes.deprecations) logger.warn(line);
  if (notes.notImplemented.length > 0) {
    logger.warn('Settings that bootlet does not implement are ignored', { settings: notes.notImplemented.join(',') });
  }
  if (notes.unknownFields.length > 0) {
    logger.warn(`Unknown KubeletConfiguration fields are ignored: not in kubelet.config.k8s.io/v1beta1 of Kubernetes ${KUBERNETES_VERSION}`, {
      file: configFile,
      fields: notes.unknownFields.join(','),
    });
  }
  if (notes.duplicateFields.length > 0) {
    logger.warn('KubeletConfiguration fields given more than once: the last one counts', { file: configFile, fields: notes.duplicateFields.join(',') });
  }
  for (const s of notes.skipped) logger.warn(`Skipped: ${s}`, { file: configFile });
}
