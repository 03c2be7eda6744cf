// Where the last `n` lines of a file start (tail.FindTailLineStartIndex): newlines are counted
// backwards from the end in 64 KiB blocks, so only the end of a large file is read.
import type { FileHandle } from 'node:fs/promises';

const BLOCK = 64 * 1024;
const NEWLINE = 0x0a;

export async function tailStart(file: FileHandle, size: number, n: number): Promise<number> {
  if (n < 0) return 0;
  let count = 0;
  const buf = Buffer.allocUnsafe(BLOCK);
  for (let right = size; right > 0;) {
    const left = Math.max(0, right - BLOCK);
    const len = right - left;
    const { bytesRead } = await file.read(buf, 0, len, left);
    // Newlines from the end of the block back: the (n+1)th from the end ends the line before ours.
    for (let i = bytesRead - 1; i >= 0; i--) {
      if (buf[i] !== NEWLINE) continue;
      count++;
      if (count > n) return left + i + 1;
    }
    right = left;
  }
  return 0;
}
