// ImageService over a CriTransport.
import type { ImageService } from './cri-types.js';
import type { CriTransport } from './grpc-transport.js';

export function createImageService(t: CriTransport, requestTimeoutMs: number): ImageService {
  return {
    // A missing image is not an error in CRI: the response simply has no image.
    imageStatus: async (image) =>
      (await t.unary('ImageService', 'ImageStatus', { image }, requestTimeoutMs)).image ?? undefined,
    // No deadline, as the kubelet: a large pull takes as long as it takes; the runtime has its own
    // progress timeout for stalled pulls.
    pullImage: async (image, sandboxConfig, auth) =>
      (
        await t.unary(
          'ImageService',
          'PullImage',
          { image, ...(sandboxConfig ? { sandboxConfig } : {}), ...(auth ? { auth } : {}) },
          undefined,
        )
      ).imageRef,
    listImages: async () => (await t.unary('ImageService', 'ListImages', {}, requestTimeoutMs)).images,
    imageFsInfo: () => t.unary('ImageService', 'ImageFsInfo', {}, requestTimeoutMs),
  };
}
