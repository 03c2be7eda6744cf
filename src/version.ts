// Set at build time by esbuild (`define`); "dev" when run from source.
declare const __BOOTLET_VERSION__: string | undefined;

export const BOOTLET_VERSION: string = typeof __BOOTLET_VERSION__ === 'string' ? __BOOTLET_VERSION__ : 'dev';
