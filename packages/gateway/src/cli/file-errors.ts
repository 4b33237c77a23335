/** A file system error of a file a person named, in their words. */
export function fileErrorWords(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'not readable by you';
  return err instanceof Error ? err.message : String(err);
}
