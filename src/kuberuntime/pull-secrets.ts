// The pod's imagePullSecrets as the kubelet reads them (getPullSecretsForPod): each named Secret
// that can be read, in order; one that cannot is logged by name and left out, and the pull goes
// on with the others (or anonymously).
import type { Pod, Secret } from 'kubernetes-types/core/v1';
import type { Logger } from '../log/logger.js';
import type { PodObjects } from '../node/pod-objects.js';
import { errorMessage } from '../util/error-message.js';

export async function podPullSecrets(pod: Pod, podObjects: PodObjects, logger: Logger): Promise<Secret[]> {
  const ns = pod.metadata?.namespace ?? '';
  // An entry with an empty name passed old API validation; it names nothing.
  const names = (pod.spec?.imagePullSecrets ?? []).map((r) => r.name ?? '').filter((n) => n !== '');
  const got = await Promise.all(
    names.map(async (name) => {
      try {
        const s = await podObjects.getSecret(ns, name);
        if (s === undefined) throw new Error(`secret ${JSON.stringify(name)} not found`);
        return s;
      } catch (err) {
        logger.info('Unable to retrieve pull secret, the image pull may not succeed.', {
          pod: `${ns}/${pod.metadata?.name ?? ''}`,
          secret: `${ns}/${name}`,
          err: errorMessage(err),
        });
        return undefined;
      }
    }),
  );
  return got.filter((s): s is Secret => s !== undefined);
}
