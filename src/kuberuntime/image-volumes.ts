// The image volumes a container mounts (KEP-4639), pulled as the kubelet's getImageVolumes pulls them:
// each volume's reference with its own pullPolicy, through the one image manager (images.ts) and the
// pod's pull secrets, before the container's own image. Each pulled image becomes the ImageSpec of the
// volume's mounts (node/volumes.ts): the reference PullImage resolved, the one the pod named, the pod's
// annotations. A failed pull is the container's, with the image manager's reason (ErrImagePull,
// ErrImageNeverPull, ...) and the volume's image named, so that its pull back-off is that image's.
import type { Container, EphemeralContainer, Volume } from 'kubernetes-types/core/v1';
import type { ImageService, PodSandboxConfig } from '../cri/cri-types.js';
import type { DefaultedPod } from '../k8s/pod.js';
import type { VolumeImage } from '../node/volumes.js';
import { ensureImage, ImageError, type PullOptions } from './images.js';

/** An image volume's image, ready to mount. */
export interface PulledVolumeImage {
  readonly volume: string;
  /** The reference the pod names (`spec.volumes[].image.reference`). */
  readonly reference: string;
  readonly spec: VolumeImage;
  /** Set when it had to be pulled, with how long that took. */
  readonly pullMs?: number;
}

/** A pull of an image volume's image failed: the image manager's reason and words, and which image. */
export class VolumeImageError extends ImageError {
  override name = 'VolumeImageError';
  constructor(
    err: ImageError,
    readonly reference: string,
  ) {
    super(err.reason, err.message);
  }
}

/** Whether the pod has an image volume at all. */
export function hasImageVolumes(pod: DefaultedPod): boolean {
  return (pod.spec?.volumes ?? []).some((v) => v.image !== undefined);
}

/** The pod's image volumes that the container mounts, in the pod's order of volumes (the kubelet's pull order). */
export function imageVolumesOf(pod: DefaultedPod, container: Container | EphemeralContainer): Volume[] {
  const mounted = new Set((container.volumeMounts ?? []).map((m) => m.name));
  return (pod.spec?.volumes ?? []).filter((v) => v.image !== undefined && mounted.has(v.name));
}

/**
 * Pulls (or finds) each image volume's image the container mounts. As the kubelet: every one is
 * tried, and the container fails with the last that could not be had.
 */
export async function ensureVolumeImages(
  images: ImageService,
  pod: DefaultedPod,
  container: Container | EphemeralContainer,
  sandboxConfig: PodSandboxConfig,
  opts: Pick<PullOptions, 'pullSecrets' | 'beforePull'> = {},
): Promise<PulledVolumeImage[]> {
  const pulled: PulledVolumeImage[] = [];
  let failed: VolumeImageError | undefined;
  for (const v of imageVolumesOf(pod, container)) {
    const reference = v.image?.reference ?? '';
    const t0 = Date.now();
    try {
      const ensured = await ensureImage(
        images,
        { image: reference, imagePullPolicy: v.image?.pullPolicy },
        sandboxConfig,
        opts,
      );
      pulled.push({
        volume: v.name,
        reference,
        spec: {
          image: ensured.imageRef,
          userSpecifiedImage: reference,
          annotations: { ...(pod.metadata.annotations ?? {}) },
          runtimeHandler: '',
        },
        ...(ensured.pulled ? { pullMs: Date.now() - t0 } : {}),
      });
    } catch (err) {
      if (!(err instanceof ImageError)) throw err;
      failed = new VolumeImageError(err, reference);
    }
  }
  if (failed) throw failed;
  return pulled;
}
