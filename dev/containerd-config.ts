// The config.toml of a private containerd: config version 2 for containerd 1.x (the CRI plugin is
// one section, `io.containerd.grpc.v1.cri`), version 3 for 2.x (split into `io.containerd.cri.v1.images`,
// `io.containerd.cri.v1.runtime` and the server's `io.containerd.grpc.v1.cri`). The same settings in
// both: what differs is where each lives.
import * as path from 'node:path';
import { REPO_ROOT } from './paths.js';

export interface CniSettings {
  binDir: string;
  confDir: string;
  /** containerd's conf_template, '' for none. */
  confTemplate: string;
}

export interface ContainerdConfigInput {
  configVersion: 2 | 3;
  socket: string;
  root: string;
  state: string;
  dir: string;
  snapshotter: string;
  sandboxImage: string;
  systemdCgroup: boolean;
  /** runc's path (the runtime options' BinaryName). */
  runtimeBinary: string;
  cni: CniSettings;
}

const toml = (s: string): string => JSON.stringify(s);

export function containerdConfig(c: ContainerdConfigInput): string {
  return c.configVersion === 2 ? configV2(c) : configV3(c);
}

/** What both versions say the same way: the daemon's own paths, sockets, and plugins that must not run. */
function daemonSection(c: ContainerdConfigInput): string {
  return `# Written by bootlet dev/containerd.ts; a private instance for tests (repo ${REPO_ROOT}).
version = ${c.configVersion}
root = ${toml(c.root)}
state = ${toml(c.state)}
# Snapshotters that cannot work here, or that would share host state with a system containerd.
disabled_plugins = [
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing",${
    c.configVersion === 3
      ? `
  "io.containerd.snapshotter.v1.erofs",
  "io.containerd.snapshotter.v1.blockfile",`
      : ''
  }
]

[grpc]
  address = ${toml(c.socket)}

[ttrpc]
  address = ${toml(c.socket + '.ttrpc')}

[debug]
  address = ${toml(path.join(path.dirname(c.socket), 'debug.sock'))}
  level = "info"

[metrics]
  address = ""

[plugins]
  [plugins."io.containerd.internal.v1.opt"]
    path = ${toml(path.join(c.dir, 'opt'))}
  # NRI's socket is machine-wide (/var/run/nri/nri.sock): no private instance may take it.
  [plugins."io.containerd.nri.v1.nri"]
    disable = true
`;
}

/**
 * The runtime settings both layouts share, written into the section `runtime` names: the runtime
 * plugin of 2.x, the one CRI section of 1.x.
 */
function runtimeSettings(): string {
  return `    # runc fails with "can't get final child's PID from pipe" when asked to lower its own score.
    restrict_oom_score_adj = true
    enable_selinux = false
    disable_apparmor = true
    # Pod network namespaces under the instance's state, which its cleanup unmounts.
    netns_mounts_under_state_dir = true
`;
}

/** The runc runtime; `extra` are more lines of the `containerd` table (1.x's snapshotter). */
function runcRuntime(section: string, c: ContainerdConfigInput, extra = ''): string {
  return `    [${section}.containerd]
      default_runtime_name = "runc"
${extra}      [${section}.containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [${section}.containerd.runtimes.runc.options]
          BinaryName = ${toml(c.runtimeBinary)}
          SystemdCgroup = ${c.systemdCgroup}
`;
}

function configV2(c: ContainerdConfigInput): string {
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return `${daemonSection(c)}  [${cri}]
    sandbox_image = ${toml(c.sandboxImage)}
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
${runtimeSettings()}${runcRuntime(cri, c, `      snapshotter = ${toml(c.snapshotter)}\n`)}    [${cri}.cni]
      bin_dir = ${toml(c.cni.binDir)}
      conf_dir = ${toml(c.cni.confDir)}
      conf_template = ${toml(c.cni.confTemplate)}
`;
}

function configV3(c: ContainerdConfigInput): string {
  const images = `plugins."io.containerd.cri.v1.images"`;
  const runtime = `plugins."io.containerd.cri.v1.runtime"`;
  const server = `plugins."io.containerd.grpc.v1.cri"`;
  return `${daemonSection(c)}  [${images}]
    snapshotter = ${toml(c.snapshotter)}
    [${images}.pinned_images]
      sandbox = ${toml(c.sandboxImage)}
  [${runtime}]
${runtimeSettings()}${runcRuntime(runtime, c)}    [${runtime}.cni]
      bin_dirs = [${toml(c.cni.binDir)}]
      conf_dir = ${toml(c.cni.confDir)}
      conf_template = ${toml(c.cni.confTemplate)}
  [${server}]
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
`;
}
