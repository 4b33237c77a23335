/**
 * The daemon's look at pi, run in a child process (a worker given the probe as its task) so pi is never
 * loaded into the daemon (see SPEC B-12): loading pi there made the daemon ~150 MB, and every
 * `fork` of a worker then blocked the loop that reads SSE for 10–80 ms; pi's `ModelRuntime` is
 * ~35 ms of synchronous work. The probe verifies that the permission hook registers (P-8) and
 * reads the model catalogue (G-25).
 */
import { GatewayClient } from '@agentmail/shared-policy/client';
import { createMailExtension } from './extension.js';
import { importPiSdk } from './pi-sdk.js';

/** The probe's task (the kit runner's `runTask`): where pi's files are. */
export interface ProbeTask {
  dataDir: string;
  agentDir: string;
}

/** The probe's answer. */
export interface ProbeReport {
  enforcement: { mode: 'native' | 'advisory'; reason?: string };
  /** pi's available models (at most 300), `provider/id` keys; absent when unreadable. */
  models?: Array<{ key: string; name: string }>;
  /** Why the catalogue is unreadable. */
  modelsError?: string;
}

const { DefaultResourceLoader, ModelRuntime, SettingsManager } = (await importPiSdk()).sdk;

/** Most catalogue entries a heartbeat carries (see SPEC G-25). @default 300 */
const CATALOGUE_MAX = 300;

async function verifySeam(job: ProbeTask): Promise<ProbeReport['enforcement']> {
  try {
    // Never called: the probe only checks that the tools and the seam register.
    const client = new GatewayClient({ baseUrl: 'http://127.0.0.1:9', key: 'probe' });
    let installed = false;
    const loader = new DefaultResourceLoader({
      cwd: job.dataDir,
      agentDir: job.agentDir,
      settingsManager: SettingsManager.inMemory({}),
      noExtensions: true,
      noSkills: true,
      noPromptTemplates: true,
      noThemes: true,
      noContextFiles: true,
      extensionFactories: [
        {
          name: 'agentmail-check',
          factory: createMailExtension({
            locale: 'en',
            toolContext: () => ({ client }),
            onSeamInstalled: () => {
              installed = true;
            },
            decide: async () => ({ allow: false, reason: 'the probe runs no tool' }),
          }),
        },
      ],
    });
    await loader.reload();
    const errors = loader.getExtensions().errors;
    return installed && errors.length === 0
      ? { mode: 'native' }
      : {
          mode: 'advisory',
          reason: `permission hook did not load: ${errors.map((e) => e.error).join('; ')}`,
        };
  } catch (err) {
    return { mode: 'advisory', reason: `permission hook check failed: ${String(err)}` };
  }
}

async function catalogue(job: ProbeTask): Promise<Pick<ProbeReport, 'models' | 'modelsError'>> {
  try {
    const runtime = await ModelRuntime.create({
      authPath: `${job.agentDir}/auth.json`,
      modelsPath: `${job.agentDir}/models.json`,
    });
    const models = await runtime.getAvailable();
    return {
      models: models.slice(0, CATALOGUE_MAX).map((m) => ({ key: `${m.provider}/${m.id}`, name: m.name })),
    };
  } catch (err) {
    return { modelsError: String(err) };
  }
}

/** Runs the probe of `job`. Never throws: failures are in the report. */
export async function runProbe(job: ProbeTask): Promise<ProbeReport> {
  return { enforcement: await verifySeam(job), ...(await catalogue(job)) };
}
