/**
 * Schema migrations, served by a static provider (bundling-safe, no directory scan). Written
 * dialect-neutral: text ids, `bigint` millisecond timestamps, 0/1 integers for booleans, JSON as
 * text, no autoincrement — so the same migrations run on SQLite and PostgreSQL.
 */
import { type Kysely, type Migration, type MigrationProvider, sql } from 'kysely';

// Migrations must not depend on the current Database type: old migrations see old schemas.
type AnyDb = Kysely<unknown>;

/** 0001: People, their tokens, agents, agent keys and the allowed models (SPEC G-12, G-26). */
async function createIdentityTables(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('is_admin', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('user_tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema
    .createTable('agents')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('registered_at', 'bigint', (c) => c.notNull())
    .addColumn('last_seen', 'bigint')
    .addColumn('mode_enforcement', 'text')
    .addColumn('workspaces', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('platform_sessions', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('models', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('meta', 'text', (c) => c.notNull().defaultTo('{}'))
    .execute();
  await db.schema
    .createTable('agent_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('agent_name', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('agent_keys_agent').on('agent_keys').column('agent_name').execute();
  await db.schema
    .createTable('allowed_models')
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('model_key', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('allowed_models_pk', ['platform', 'position'])
    .execute();
}

/** 0001: Sessions, mails and deliveries, with the constraints that decide races (SPEC G-5, G-32, G-37). */
async function createMailTables(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('agent_name', 'text', (c) => c.notNull().references('agents.name'))
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('alias', 'text')
    .addColumn('default_key', 'text', (c) => c.unique())
    .addColumn('platform_id', 'text')
    .addColumn('title', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('owner_user_id', 'text', (c) => c.references('users.id'))
    .addColumn('permission_mode', 'text', (c) => c.notNull())
    .addColumn('max_rounds', 'integer', (c) => c.notNull())
    .addColumn('rounds_used', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('hop_limit', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    // Unique (agent, alias) and (agent, platform_id): several NULLs are allowed on both dialects,
    // which is what makes "alias only if still empty" and "one local session per platform
    // session" (SPEC G-5, G-37) safe under races.
    .addUniqueConstraint('sessions_agent_alias', ['agent_name', 'alias'])
    .addUniqueConstraint('sessions_agent_platform', ['agent_name', 'platform_id'])
    .execute();
  await db.schema
    .createIndex('sessions_agent_created')
    .on('sessions')
    .columns(['agent_name', 'created_at'])
    .execute();
  await db.schema
    .createTable('mails')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id'))
    .addColumn('from_name', 'text', (c) => c.notNull())
    .addColumn('from_human', 'integer', (c) => c.notNull())
    .addColumn('from_address', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('to_addresses', 'text', (c) => c.notNull())
    .addColumn('cc_addresses', 'text', (c) => c.notNull())
    .addColumn('in_reply_to', 'text')
    .addColumn('relay', 'text')
    .addColumn('relay_key', 'text')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    // SPEC G-32: the same relay key twice from one sender creates one mail, even when two sends
    // race — the constraint decides, not a read-then-write check.
    .addUniqueConstraint('mails_sender_relay_key', ['from_name', 'relay_key'])
    .execute();
  await db.schema.createIndex('mails_session').on('mails').columns(['session_id', 'id']).execute();
  await db.schema
    .createTable('deliveries')
    .addColumn('mail_id', 'text', (c) => c.notNull().references('mails.id').onDelete('cascade'))
    .addColumn('recipient_name', 'text', (c) => c.notNull())
    .addColumn('recipient_human', 'integer', (c) => c.notNull())
    .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id'))
    .addColumn('to_workspace', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('read_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('deliveries_pk', ['mail_id', 'recipient_name'])
    .execute();
  await db.schema
    .createIndex('deliveries_inbox')
    .on('deliveries')
    .columns(['recipient_name', 'read_at', 'mail_id'])
    .execute();
  await db.schema
    .createIndex('deliveries_session')
    .on('deliveries')
    .columns(['session_id', 'mail_id'])
    .execute();
}

/** 0001: Attachments and their links to mails (SPEC G-35). */
async function createAttachmentTables(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('attachments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('uploader_name', 'text', (c) => c.notNull())
    .addColumn('uploader_human', 'integer', (c) => c.notNull())
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('size_bytes', 'bigint', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('blob_key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('mail_attachments')
    .addColumn('mail_id', 'text', (c) => c.notNull().references('mails.id').onDelete('cascade'))
    .addColumn('attachment_id', 'text', (c) => c.notNull().references('attachments.id'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('mail_attachments_pk', ['mail_id', 'attachment_id'])
    .execute();
  await db.schema
    .createIndex('mail_attachments_att')
    .on('mail_attachments')
    .column('attachment_id')
    .execute();
}

/** 0001: The replayable event log per stream and its cursors (SPEC G-22). */
async function createEventTables(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('stream_cursors')
    .addColumn('stream', 'text', (c) => c.primaryKey())
    .addColumn('last_id', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('events')
    .addColumn('stream', 'text', (c) => c.notNull())
    .addColumn('event_id', 'bigint', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('events_pk', ['stream', 'event_id'])
    .execute();
}

/** 0001: Permission and question requests (SPEC G-38). */
async function createPermissionTables(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('permissions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('agent_name', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id'))
    .addColumn('relay_key', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('question', 'text', (c) => c.notNull())
    .addColumn('options', 'text', (c) => c.notNull())
    .addColumn('multi_select', 'integer', (c) => c.notNull())
    .addColumn('context', 'text', (c) => c.notNull())
    .addColumn('target_user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('mail_id', 'text', (c) => c.notNull().references('mails.id'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('decision', 'text')
    .addColumn('note', 'text')
    .addColumn('answers', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('decided_at', 'bigint')
    .addUniqueConstraint('permissions_agent_relay_key', ['agent_name', 'relay_key'])
    .execute();
  await db.schema
    .createIndex('permissions_target')
    .on('permissions')
    .columns(['target_user_id', 'status'])
    .execute();
}

const m0001: Migration = {
  async up(db: AnyDb) {
    await createIdentityTables(db);
    await createMailTables(db);
    await createAttachmentTables(db);
    await createEventTables(db);
    await createPermissionTables(db);
  },
  async down(db: AnyDb) {
    for (const t of [
      'permissions',
      'events',
      'stream_cursors',
      'mail_attachments',
      'attachments',
      'deliveries',
      'mails',
      'sessions',
      'allowed_models',
      'agent_keys',
      'agents',
      'user_tokens',
      'users',
    ]) {
      await db.schema.dropTable(t).ifExists().execute();
    }
  },
};

/** Web mailbox sessions (the cookie's hash, its user and token, expiry). */
const m0002: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .createTable('web_sessions')
      .addColumn('id_hash', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('token_id', 'text', (c) => c.notNull().references('user_tokens.id').onDelete('cascade'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('web_sessions_user').on('web_sessions').column('user_id').execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('web_sessions').ifExists().execute();
  },
};

/**
 * Presence and key use: `agents.offline_since` (a bridge's goodbye, SPEC H-3) and
 * `agent_keys.last_used_at` (for `agentmail agent key list`). Both nullable, so rows of 0001 stay
 * valid as they are.
 */
const m0003: Migration = {
  async up(db: AnyDb) {
    await db.schema.alterTable('agents').addColumn('offline_since', 'bigint').execute();
    await db.schema.alterTable('agent_keys').addColumn('last_used_at', 'bigint').execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('agent_keys').dropColumn('last_used_at').execute();
    await db.schema.alterTable('agents').dropColumn('offline_since').execute();
  },
};

/**
 * `agents.mode_enforcement_reason`: the reason a heartbeat gives for advisory enforcement (SPEC
 * P-8), so `agentmail doctor` learns it from the Gateway. Nullable: rows of 0001 stay valid.
 */
const m0004: Migration = {
  async up(db: AnyDb) {
    await db.schema.alterTable('agents').addColumn('mode_enforcement_reason', 'text').execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('agents').dropColumn('mode_enforcement_reason').execute();
  },
};

/**
 * `agents.sandbox`: the workspace sandbox as the last heartbeat said it (SPEC P-12: `verified` or
 * `unverified: <why>`), shown to people with the agent. Nullable: older rows stay valid.
 */
const m0005: Migration = {
  async up(db: AnyDb) {
    await db.schema.alterTable('agents').addColumn('sandbox', 'text').execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('agents').dropColumn('sandbox').execute();
  },
};

/**
 * `names`: the namespace people and agents share, one row per name with its kind, so a name is
 * claimed by one conditional insert on several Gateways at once (no "is it a person?" read before
 * writing an agent). Filled from the people, then the registered agents, then names only an agent
 * key holds.
 */
const m0006: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .createTable('names')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await sql`insert into names (name, kind, created_at) select name, 'user', created_at from users`.execute(
      db,
    );
    await sql`insert into names (name, kind, created_at)
      select name, 'agent', registered_at from agents where name not in (select name from names)`.execute(db);
    await sql`insert into names (name, kind, created_at)
      select agent_name, 'agent', min(created_at) from agent_keys
      where agent_name not in (select name from names) group by agent_name`.execute(db);
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('names').ifExists().execute();
  },
};

/** `idempotency_keys`: the first answer of each send with an `Idempotency-Key` (SPEC G-41). */
const m0007: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .createTable('idempotency_keys')
      .addColumn('scope', 'text', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('response', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('idempotency_keys_pk', ['scope', 'key'])
      .execute();
    await db.schema
      .createIndex('idempotency_keys_created')
      .on('idempotency_keys')
      .column('created_at')
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('idempotency_keys').ifExists().execute();
  },
};

/**
 * `blob_chunks`: attachment bytes kept in the database, for Gateways on PostgreSQL (every Gateway
 * of the database serves every attachment). Created on both dialects; SQLite keeps files.
 */
const m0008: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .createTable('blob_chunks')
      .addColumn('blob_key', 'text', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      // bytea on PostgreSQL; SQLite takes any type name and stores the bytes as they are.
      .addColumn('data', sql`bytea`, (c) => c.notNull())
      .addColumn('last', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('blob_chunks_pk', ['blob_key', 'seq'])
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('blob_chunks').ifExists().execute();
  },
};

/** Every migration, by name; names sort in application order. */
export const MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0001_init': m0001,
  '0002_web_sessions': m0002,
  '0003_presence_key_use': m0003,
  '0004_mode_enforcement_reason': m0004,
  '0005_agent_sandbox': m0005,
  '0006_names': m0006,
  '0007_idempotency_keys': m0007,
  '0008_blob_chunks': m0008,
};

/** Static migration provider over {@link MIGRATIONS} (no file-system scan, safe when bundled). */
export const migrationProvider: MigrationProvider = {
  getMigrations: async () => ({ ...MIGRATIONS }),
};
