// What the first container starts of a new sandbox need and can have before the sandbox exists:
// the image's status, the container's log directory and its restart count from the log files. The
// runtime takes ~100 ms to make a sandbox; asked while RunPodSandbox is in flight, these no longer
// stand between the sandbox and CreateContainer. Only look-ups and the (empty) log directory the
// start makes anyway: nothing is pulled, nothing runs before its sandbox.
import { mkdir } from 'node:fs/promises';
import type { Container } from 'kubernetes-types/core/v1';
import type { Image, ImageService } from '../cri/cri-types.js';
import { defaultPullPolicy, withDefaultTag } from './images.js';
import { restartCountsWithLogs } from '../node/pod-logs/layout.js';

export interface AheadOfStart {
  /** The image as ImageStatus named it (withDefaultTag), and its answer; absent for pull policy Always. */
  readonly image?: { readonly name: string; readonly status: Promise<Image | undefined> };
  /** The container's log directory, made. */
  readonly logDir: Promise<unknown>;
  /** The next restart count the log files say (0 with none). */
  readonly restartCount: Promise<number>;
}

/** Settled or not, a look-up nobody takes must not become an unhandled rejection. */
function handled<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined);
  return p;
}

export class StartsAhead {
  private readonly byName = new Map<string, AheadOfStart>();

  constructor(images: ImageService, containers: readonly Container[], logDirOf: (name: string) => string) {
    for (const c of containers) {
      let dir: string;
      try {
        dir = logDirOf(c.name);
      } catch {
        // A name no path may be made of: the start itself says so.
        continue;
      }
      const spec = c.image ?? '';
      const policy = c.imagePullPolicy ?? defaultPullPolicy(spec);
      const name = withDefaultTag(spec);
      this.byName.set(c.name, {
        image: spec.trim() === '' || policy === 'Always' ? undefined : { name, status: handled(images.imageStatus({ image: name })) },
        logDir: handled(mkdir(dir, { recursive: true, mode: 0o755 })),
        restartCount: restartCountsWithLogs(dir).then((counts) => (counts[0] === undefined ? 0 : counts[0] + 1)),
      });
    }
  }

  /** Once: a second start of the same name (a restart) looks again. */
  take(name: string): AheadOfStart | undefined {
    const a = this.byName.get(name);
    this.byName.delete(name);
    return a;
  }
}
