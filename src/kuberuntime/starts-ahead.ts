// What the first container starts of a new sandbox need and can have before the sandbox exists:
// the image's status, the container's log directory and its restart count from the log files, and
// for a host-network pod (whose IPs are the node's, known before its sandbox) its volumes and the
// API objects its env reads. The runtime takes ~100 ms to make a sandbox; asked while RunPodSandbox
// is in flight, these no longer stand between the sandbox and CreateContainer. The kubelet's volume
// manager, too, has a pod's volumes ready before its sandbox is made. Nothing is pulled and nothing
// runs before its sandbox.
import { mkdir } from 'node:fs/promises';
import type { Container } from 'kubernetes-types/core/v1';
import type { Image, ImageService, Mount } from '../cri/cri-types.js';
import type { EnvObjects } from './env-objects.js';
import { defaultPullPolicy, withDefaultTag } from './images.js';
import { restartCountsWithLogs } from '../node/pod-logs/layout.js';

/** What a container's config is built from besides its image and restart count. */
export interface ContainerInputs {
  readonly mounts: Mount[];
  readonly envObjects: EnvObjects | undefined;
}

export interface AheadOfStart {
  /** The image as ImageStatus named it (withDefaultTag), and its answer; absent for pull policy Always. */
  readonly image?: { readonly name: string; readonly status: Promise<Image | undefined> };
  /** The container's log directory, made. */
  readonly logDir: Promise<unknown>;
  /** The next restart count the log files say (0 with none). */
  readonly restartCount: Promise<number>;
  /**
   * Its volumes made ready and its env's objects read, once its image is known to be there (an image
   * still to pull may never come, and a start that fails leaves no files of its own); undefined then.
   */
  readonly inputs?: Promise<ContainerInputs | undefined>;
}

export interface StartsAheadOptions {
  readonly images: ImageService;
  readonly containers: readonly Container[];
  readonly logDirOf: (name: string) => string;
  /** Set for a pod whose containers' inputs need nothing of the sandbox (host network). */
  readonly inputsOf?: (c: Container) => Promise<ContainerInputs>;
  /** The pod cgroup, made with its limits for this sandbox: its first starts need not look again. */
  readonly podCgroup?: Promise<void>;
}

/** Settled or not, a look-up nobody takes must not become an unhandled rejection. */
function handled<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined);
  return p;
}

export class StartsAhead {
  private readonly byName = new Map<string, AheadOfStart>();
  private readonly all: Promise<unknown>[] = [];
  readonly podCgroup: Promise<void> | undefined;

  constructor(o: StartsAheadOptions) {
    this.podCgroup = o.podCgroup;
    for (const c of o.containers) {
      let dir: string;
      try {
        dir = o.logDirOf(c.name);
      } catch {
        // A name no path may be made of: the start itself says so.
        continue;
      }
      const spec = c.image ?? '';
      const policy = c.imagePullPolicy ?? defaultPullPolicy(spec);
      const name = withDefaultTag(spec);
      const status =
        spec.trim() === '' || policy === 'Always' ? undefined : handled(o.images.imageStatus({ image: name }));
      const inputsOf = o.inputsOf;
      const a: AheadOfStart = {
        image: status && { name, status },
        logDir: handled(mkdir(dir, { recursive: true, mode: 0o755 })),
        restartCount: handled(
          restartCountsWithLogs(dir).then((counts) => (counts[0] === undefined ? 0 : counts[0] + 1)),
        ),
        inputs: status && inputsOf ? handled(status.then((image) => (image ? inputsOf(c) : undefined))) : undefined,
      };
      this.byName.set(c.name, a);
      this.all.push(a.logDir, a.restartCount, ...(a.image ? [a.image.status] : []), ...(a.inputs ? [a.inputs] : []));
    }
    if (this.podCgroup) this.all.push(handled(this.podCgroup));
  }

  /** Once: a second start of the same name (a restart) looks again. */
  take(name: string): AheadOfStart | undefined {
    const a = this.byName.get(name);
    this.byName.delete(name);
    return a;
  }

  /** Every look-up done, whatever its outcome: nothing of them still writes under the pod's directories. */
  async settled(): Promise<void> {
    await Promise.allSettled(this.all);
  }
}
