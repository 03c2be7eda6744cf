// How editors and tools save a file, syscall for syscall. The vim sequences are what strace shows
// vim 9.0 doing (`vim -u NONE -N -es -c 'set …' -c wq`, outside /tmp, which 'backupskip' exempts);
// emacs and nano are written from their documented defaults (emacs 28: the first save of a session
// renames the file to `file~`, writes a new one and removes the `#file#` auto-save; nano 7 writes in
// place); sed -i and cp are the real tools.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface SavePattern {
  readonly name: string;
  /** Replaces `file`'s content with `content` the way the tool does. */
  save(file: string, content: string): Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** open(O_WRONLY|O_CREAT) + ftruncate + write + fsync: how vim writes the file itself. */
function vimWrite(file: string, content: string): void {
  const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT, 0o644);
  try {
    fs.ftruncateSync(fd, 0);
    fs.writeSync(fd, content);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** The swap file vim keeps while editing (`.file.swp`), written before the save. */
function vimSwap(file: string): string {
  const swap = path.join(path.dirname(file), `.${path.basename(file)}.swp`);
  fs.writeFileSync(swap, Buffer.alloc(4096, 0), { mode: 0o600 });
  return swap;
}

export const SAVE_PATTERNS: readonly SavePattern[] = [
  {
    name: 'vim (backupcopy=auto, writebackup: rename to file~, write new, delete file~)',
    async save(file, content) {
      const swap = vimSwap(file);
      const dir = path.dirname(file);
      // vim checks that it may create files in the directory with a file named 4913.
      const probe = path.join(dir, '4913');
      fs.closeSync(fs.openSync(probe, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o644));
      fs.unlinkSync(probe);
      fs.renameSync(file, `${file}~`);
      vimWrite(file, content);
      fs.unlinkSync(`${file}~`);
      fs.unlinkSync(swap);
    },
  },
  {
    name: 'vim (backupcopy=yes: copy to file~, write in place, delete file~)',
    async save(file, content) {
      const swap = vimSwap(file);
      fs.writeFileSync(`${file}~`, fs.readFileSync(file), { flag: 'wx' });
      vimWrite(file, content);
      fs.unlinkSync(`${file}~`);
      fs.unlinkSync(swap);
    },
  },
  {
    name: 'vim (nowritebackup: write in place)',
    async save(file, content) {
      const swap = vimSwap(file);
      vimWrite(file, content);
      fs.unlinkSync(swap);
    },
  },
  {
    name: 'vim (backup, backupcopy=no: rename to file~, write new, keep file~)',
    async save(file, content) {
      const swap = vimSwap(file);
      fs.renameSync(file, `${file}~`);
      vimWrite(file, content);
      fs.unlinkSync(swap);
    },
  },
  {
    name: 'emacs (lock .#file, auto-save #file#, rename to file~, write new, delete #file#)',
    async save(file, content) {
      const dir = path.dirname(file);
      const base = path.basename(file);
      const lock = path.join(dir, `.#${base}`);
      const autosave = path.join(dir, `#${base}#`);
      fs.symlinkSync(`root@soak.${process.pid}:1700000000`, lock);
      fs.writeFileSync(autosave, content);
      await sleep(20);
      fs.renameSync(file, `${file}~`);
      fs.writeFileSync(file, content);
      fs.unlinkSync(autosave);
      fs.unlinkSync(lock);
    },
  },
  {
    name: 'nano (truncate and write in place)',
    async save(file, content) {
      fs.writeFileSync(file, content);
    },
  },
  {
    name: 'sed -i (the real sed: temp file in the directory, renamed over)',
    async save(file, content) {
      // sed rewrites the file from itself; give it the old content and a script that yields the new.
      const script = path.join(path.dirname(path.dirname(file)), 'sed-script');
      fs.writeFileSync(script, `1,$c\\\n${content.replace(/\n$/, '').split('\n').join('\\\n')}\n`);
      await run('sed', ['-i', '-f', script, file]);
      fs.rmSync(script);
    },
  },
  {
    name: 'rename-over (write .file.tmp, rename)',
    async save(file, content) {
      const tmp = path.join(path.dirname(file), `.${path.basename(file)}.tmp`);
      fs.writeFileSync(tmp, content);
      fs.renameSync(tmp, file);
    },
  },
  {
    name: 'cp over the existing file (the real cp)',
    async save(file, content) {
      const staged = path.join(path.dirname(path.dirname(file)), `staged-${path.basename(file)}`);
      fs.writeFileSync(staged, content);
      await run('cp', [staged, file]);
      fs.rmSync(staged);
    },
  },
  {
    name: 'partial write, 50 ms pause, rest (the first part alone is a valid pod)',
    async save(file, content) {
      // Cut before the second container, so that what is on disk at the pause is a whole pod.
      const cut = content.indexOf('  - name: side1');
      if (cut < 0) throw new Error('the partial-write pattern needs a pod with a second container');
      const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_TRUNC);
      try {
        fs.writeSync(fd, content.slice(0, cut));
        await sleep(50);
        fs.writeSync(fd, content.slice(cut));
      } finally {
        fs.closeSync(fd);
      }
    },
  },
];

/** The real vim, when installed: the default save (backupcopy=auto, writebackup). */
export async function realVim(): Promise<SavePattern | undefined> {
  try {
    await run('vim', ['--version']);
  } catch {
    return undefined;
  }
  return {
    name: 'vim 9 itself (default settings, -u NONE)',
    async save(file, content) {
      const src = path.join(path.dirname(path.dirname(file)), `vim-src-${path.basename(file)}`);
      fs.writeFileSync(src, content);
      // Replace the buffer with the new content (Ex mode: %d leaves no line behind) and write it as vim does.
      await run(
        'vim',
        ['-u', 'NONE', '-N', '-i', 'NONE', '-e', '-s', '-c', '%d', '-c', `0r ${src}`, '-c', 'wq', file],
        { timeout: 30_000 },
      );
      fs.rmSync(src);
    },
  };
}
