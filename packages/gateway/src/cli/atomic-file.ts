import { chmod, mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Write `text` to `path` with `mode`, atomically (a temp file beside it, then rename), creating
 * its directory with mode 0700 when missing. A reader sees the old file or the new one, never half.
 * @throws Error from the file system when the directory cannot be created or written.
 */
export async function writeFileAtomic(path: string, text: string, mode: number): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, text, { mode });
  // writeFile's mode applies only when it creates the file: a temp file left by a crash keeps its own.
  await chmod(temp, mode);
  await rename(temp, path);
}
