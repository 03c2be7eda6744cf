// How response messages become objects (protobufjs conversion options). The same JSON is handed to
// proto-loader-gen-types by build/gen-proto.mjs, so the generated output types describe exactly the
// objects decoded with these options: change one and the other follows.
import type { IConversionOptions } from 'protobufjs';
import options from './decode-options.json';

function conversion(name: string): NumberConstructor | StringConstructor {
  if (name === 'Number') return Number;
  if (name === 'String') return String;
  throw new Error(`src/cri/decode-options.json: unknown conversion ${name} (want Number or String)`);
}

export const DECODE_OPTIONS: IConversionOptions & { keepCase: boolean } = {
  ...options,
  longs: conversion(options.longs),
  enums: conversion(options.enums),
};
