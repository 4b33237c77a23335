import { resolve } from 'node:path';
import { checkDownloadTarget, saveDownload } from '@agentmail/shared-policy/client';
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { CliError } from './errors.js';
import { oneLine, printJson } from './output.js';

/** The shared download errors (`AM_GATEWAY_FILE_EXISTS`, …) as the CLI's, with the flag that fixes them. */
function downloadError(err: unknown, target: string): unknown {
  const code = (err as { code?: unknown }).code;
  if (code === 'AM_GATEWAY_FILE_EXISTS')
    return new CliError('FILE_EXISTS', `${target} already exists; nothing was written`, {
      suggestion: 'choose another file with -o <file>, or replace it with --force',
      cause: err,
    });
  if (code === 'AM_GATEWAY_DOWNLOAD_DIR_MISSING')
    return new CliError('FILE_UNREADABLE', `the directory for ${target} does not exist`, {
      suggestion: 'create it first, or choose another place with -o <file>',
      cause: err,
    });
  return err;
}

/** Register `attachment get`. */
export function registerAttachmentCommands(program: Command, ctx: CliContext): void {
  const attachment = program.command('attachment').description('attachments of your mails');
  attachment
    .command('get')
    .description(
      'download an attachment (its id is listed by agentmail read); never overwrites without --force',
    )
    .argument('<id>', 'attachment id')
    .option(
      '-o, --output <file>',
      'where to save it: a file, or a directory (default: here, under its own name)',
    )
    .option('--force', 'replace the file if it exists')
    .action(async (id: string, opts: { output?: string; force?: boolean }, cmd: Command) => {
      const output = opts.output ?? '.';
      const wantsDir = output === '.' || output.endsWith('/');
      // Any place the person may write to: the CLI is theirs, not a model's (no allowed roots).
      const cwd = ctx.io.cwd ?? process.cwd();
      const target = await checkDownloadTarget(wantsDir ? `${resolve(cwd, output)}/` : resolve(cwd, output), [
        '/',
      ]).catch((err: unknown) => {
        throw downloadError(err, output);
      });
      const api = await ctx.api(cmd);
      const download = await api.download(id);
      const saved = await saveDownload(download, target, { id, overwrite: opts.force === true }).catch(
        (err: unknown) => {
          throw downloadError(err, target.isDir ? `${target.dir}/${download.filename}` : target.file);
        },
      );
      if (ctx.globals(cmd).json) return printJson(ctx.io, saved);
      ctx.io.out(
        `saved ${oneLine(saved.path)} (${saved.size_bytes} bytes, ${oneLine(saved.content_type || 'unknown type')})`,
      );
    });
}
