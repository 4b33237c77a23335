/**
 * Global setup of the `gateway-postgres` project: one throwaway PostgreSQL cluster for the run
 * (or the server named by AGENTMAIL_TEST_POSTGRES_URL), provided to the tests as `postgresUrl`.
 */
import type { TestProject } from 'vitest/node';
import { POSTGRES_URL_ENV, startPostgresCluster } from './helpers/postgres-cluster.js';

export default function setup(project: TestProject): () => void {
  const given = process.env[POSTGRES_URL_ENV];
  if (given) {
    project.provide('postgresUrl', given);
    return () => {};
  }
  const cluster = startPostgresCluster();
  project.provide('postgresUrl', cluster.url);
  return () => cluster.stop();
}
