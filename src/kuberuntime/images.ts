// Making sure a container's image (or an image volume's) is present, honouring its pull policy as the
// kubelet's image manager does (pkg/kubelet/images). Back-off between failed pulls is the pod worker's business.
import type { Container, Secret } from 'kubernetes-types/core/v1';
import type { AuthConfig, Image, ImageService, PodSandboxConfig } from '../cri/cri-types.js';
import { imageRepository, keyringFromSecrets, PullSecretError, type RegistryCredential } from './docker-keyring.js';
import { CriError } from '../cri/cri-types.js';
import { errorMessage } from '../util/error-message.js';

export type ImageErrorReason = 'ErrImagePull' | 'ErrImageNeverPull' | 'InvalidImageName' | 'ImageInspectError';

export class ImageError extends Error {
  override name = 'ImageError';
  constructor(
    /** The waiting reason a container status shows. */
    readonly reason: ImageErrorReason,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Appends `:latest` when the reference has neither tag nor digest. A colon before the last '/'
 * belongs to a registry host:port, not a tag.
 */
export function withDefaultTag(image: string): string {
  if (image.includes('@')) return image;
  const lastSlash = image.lastIndexOf('/');
  return image.slice(lastSlash + 1).includes(':') ? image : `${image}:latest`;
}

/** The API's default: Always for `:latest` or untagged (no digest) images, else IfNotPresent. */
export function defaultPullPolicy(image: string): 'Always' | 'IfNotPresent' {
  if (image.includes('@')) return 'IfNotPresent';
  const last = image.slice(image.lastIndexOf('/') + 1);
  const colon = last.lastIndexOf(':');
  return colon === -1 || last.slice(colon + 1) === 'latest' ? 'Always' : 'IfNotPresent';
}

function messageOf(err: unknown): string {
  return err instanceof CriError ? err.details : errorMessage(err);
}

export interface EnsuredImage {
  /** What CreateContainer gets as image.image: the id the runtime resolved. */
  imageRef: string;
  pulled: boolean;
}

function authConfig(c: RegistryCredential): AuthConfig {
  return { username: c.username, password: c.password, ...(c.identityToken ? { identityToken: c.identityToken } : {}) };
}

/** As the kubelet's PullImage: with no matching credential one anonymous pull, else each credential in turn until one works. */
async function pullWithCredentials(
  images: ImageService,
  image: string,
  sandboxConfig: PodSandboxConfig,
  credentials: readonly RegistryCredential[],
): Promise<string> {
  if (credentials.length === 0) return images.pullImage({ image }, sandboxConfig);
  const errs: string[] = [];
  for (const c of credentials) {
    try {
      return await images.pullImage({ image }, sandboxConfig, authConfig(c));
    } catch (err) {
      errs.push(messageOf(err));
    }
  }
  // An aggregate of one is its message; of several, the list in brackets.
  throw new Error(errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`);
}

export interface PullOptions {
  /** The pod's imagePullSecrets that could be read, in order; asked only when a pull is needed. */
  pullSecrets?: () => Promise<readonly Secret[]>;
  /** Awaited once a pull is needed, before it starts; a rejection is thrown as it is and nothing is pulled. */
  beforePull?: () => Promise<unknown>;
  /** ImageStatus of the image (with its default tag) already asked, e.g. while the sandbox was made. */
  status?: { readonly name: string; readonly status: Promise<Image | undefined> };
}

/** A container's image or an image volume's: what to pull, and when. */
export type ImageToEnsure = Pick<Container, 'image' | 'imagePullPolicy'>;

export async function ensureImage(
  images: ImageService,
  container: ImageToEnsure,
  sandboxConfig: PodSandboxConfig,
  opts: PullOptions = {},
): Promise<EnsuredImage> {
  const spec = container.image ?? '';
  if (spec.trim() === '')
    throw new ImageError(
      'InvalidImageName',
      `Failed to apply default image tag ${JSON.stringify(spec)}: image name is empty`,
    );
  const image = withDefaultTag(spec);
  const policy = container.imagePullPolicy ?? defaultPullPolicy(spec);

  if (policy !== 'Always') {
    let present;
    try {
      present = await (opts.status?.name === image ? opts.status.status : images.imageStatus({ image }));
    } catch (err) {
      throw new ImageError('ImageInspectError', `Failed to inspect image ${JSON.stringify(spec)}: ${messageOf(err)}`);
    }
    if (present) return { imageRef: present.id, pulled: false };
    if (policy === 'Never') {
      throw new ImageError(
        'ErrImageNeverPull',
        `Container image ${JSON.stringify(spec)} is not present with pull policy of Never`,
      );
    }
  }
  await opts.beforePull?.();
  let credentials: RegistryCredential[] = [];
  if (opts.pullSecrets) {
    try {
      credentials = keyringFromSecrets(await opts.pullSecrets()).lookup(imageRepository(image));
    } catch (err) {
      if (err instanceof PullSecretError) throw new ImageError('ErrImagePull', err.message);
      throw err;
    }
  }
  let ref: string;
  try {
    ref = await pullWithCredentials(images, image, sandboxConfig, credentials);
  } catch (err) {
    // containerd's own message usually starts with "failed to pull and unpack image"; say it once.
    const msg = messageOf(err);
    throw new ImageError(
      'ErrImagePull',
      /^failed to pull/.test(msg) ? msg : `failed to pull and unpack image ${JSON.stringify(image)}: ${msg}`,
    );
  }
  return { imageRef: ref, pulled: true };
}
