// The reader every CRI response is decoded with. proto3 strings are verified UTF-8 (protobufjs's
// `stringVerify`), and protobufjs's BufferReader, which reads plain strings with the Buffer's
// native decoder, verifies them with a JavaScript loop instead: a character at a time into a
// string, slow on the executable's baseline-only V8 (`--max-opt=1`), and run for every label and
// annotation of the 10 s relist. Here the native decoder reads the string; only one that holds a
// replacement character (what the decoder makes of invalid bytes, or a real U+FFFD) is checked
// strictly. The same strings come out, and the same bytes are refused.
import protobuf from 'protobufjs';

const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export class VerifyingBufferReader extends protobuf.BufferReader {
  /** The message's bytes as a Buffer (not `bytes`: that is the reader's method for bytes fields). */
  private readonly source: Buffer;

  constructor(source: Buffer) {
    super(source);
    this.source = source;
  }

  override stringVerify(): string {
    const length = this.size();
    const start = this.pos;
    const end = start + length;
    if (end > this.len) throw new RangeError(`index out of range: ${this.pos} + ${length} > ${this.len}`);
    this.pos = end;
    const text = this.source.toString('utf8', start, end);
    // Throws on invalid UTF-8 as protobufjs's strict reader does.
    if (text.includes('\ufffd')) return strict.decode(this.source.subarray(start, end));
    return text;
  }
}
