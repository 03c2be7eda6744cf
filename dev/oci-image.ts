// Writes an OCI image-layout tarball (oci-layout, index.json, blobs/sha256/*) with one layer, the
// shape `ctr images import` reads. No docker, no registry.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';
import { tarArchive, type TarEntry } from './tar.js';

export interface ImageConfig {
  Entrypoint?: string[];
  Cmd?: string[];
  Env?: string[];
  WorkingDir?: string;
  StopSignal?: string;
  User?: string;
}

export interface OciImageSpec {
  /** Full reference, e.g. `bootlet.local/busybox:1.36`. */
  name: string;
  /** More references to the same manifest (one index entry each: `ctr images import` names them all). */
  aliases?: string[];
  /** Files of the single layer. */
  files: TarEntry[];
  config: ImageConfig;
  /** GOARCH-style name, e.g. amd64. */
  architecture: string;
}

export interface BuiltImage {
  name: string;
  manifestDigest: string;
  configDigest: string;
  layerDigest: string;
  diffId: string;
}

const MEDIA = {
  index: 'application/vnd.oci.image.index.v1+json',
  manifest: 'application/vnd.oci.image.manifest.v1+json',
  config: 'application/vnd.oci.image.config.v1+json',
  layerGzip: 'application/vnd.oci.image.layer.v1.tar+gzip',
} as const;

const EPOCH = '1970-01-01T00:00:00Z';

function sha256(b: Buffer): string {
  return 'sha256:' + createHash('sha256').update(b).digest('hex');
}

/** Maps `uname -m` / Node's process.arch to the OCI architecture name. */
export function ociArchitecture(arch: string = process.arch): string {
  const map: Record<string, string> = {
    x64: 'amd64',
    x86_64: 'amd64',
    arm64: 'arm64',
    aarch64: 'arm64',
    arm: 'arm',
    s390x: 's390x',
    ppc64: 'ppc64le',
    ppc64le: 'ppc64le',
  };
  const a = map[arch];
  if (!a) throw new Error(`unsupported architecture ${arch}`);
  return a;
}

/** Tag part of a reference (`3.10` of `bootlet.local/pause:3.10`), what OCI's ref.name holds. */
function tagOf(name: string): string {
  const slash = name.lastIndexOf('/');
  const colon = name.lastIndexOf(':');
  return colon > slash ? name.slice(colon + 1) : 'latest';
}

/** Builds the image and writes its layout as a tar at `outFile` (atomically: tmp file + rename). */
export function writeOciImage(spec: OciImageSpec, outFile: string): BuiltImage {
  const layerTar = tarArchive(spec.files);
  const diffId = sha256(layerTar);
  const layer = gzipSync(layerTar, { level: 6 });
  const layerDigest = sha256(layer);

  const config = Buffer.from(
    JSON.stringify({
      created: EPOCH,
      architecture: spec.architecture,
      os: 'linux',
      config: spec.config,
      rootfs: { type: 'layers', diff_ids: [diffId] },
      history: [{ created: EPOCH, created_by: 'bootlet dev/oci-image.ts', comment: spec.name }],
    }),
  );
  const configDigest = sha256(config);

  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MEDIA.manifest,
      config: { mediaType: MEDIA.config, digest: configDigest, size: config.length },
      layers: [{ mediaType: MEDIA.layerGzip, digest: layerDigest, size: layer.length }],
    }),
  );
  const manifestDigest = sha256(manifest);

  const index = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MEDIA.index,
      manifests: [spec.name, ...(spec.aliases ?? [])].map((name) => ({
        mediaType: MEDIA.manifest,
        digest: manifestDigest,
        size: manifest.length,
        platform: { architecture: spec.architecture, os: 'linux' },
        annotations: {
          'io.containerd.image.name': name,
          'org.opencontainers.image.ref.name': tagOf(name),
        },
      })),
    }),
  );

  const blob = (digest: string, data: Buffer): TarEntry => ({
    type: 'file',
    path: `blobs/sha256/${digest.slice('sha256:'.length)}`,
    mode: 0o644,
    data,
  });
  const archive = tarArchive([
    {
      type: 'file',
      path: 'oci-layout',
      mode: 0o644,
      data: Buffer.from(JSON.stringify({ imageLayoutVersion: '1.0.0' })),
    },
    { type: 'file', path: 'index.json', mode: 0o644, data: index },
    blob(layerDigest, layer),
    blob(configDigest, config),
    blob(manifestDigest, manifest),
  ]);
  fs.mkdirSync(path.dirname(outFile), { recursive: true });
  const tmp = `${outFile}.${process.pid}.${Date.now()}.tmp`;
  fs.writeFileSync(tmp, archive);
  fs.renameSync(tmp, outFile);
  return { name: spec.name, manifestDigest, configDigest, layerDigest, diffId };
}
