/**
 * @agentmail/protocol: the wire contract of AgentMail, once, as zod schemas and inferred types
 * (see SPEC §3). The Gateway validates requests with these schemas; bridges validate answers
 * and events with the same ones.
 */
export * from './address.js';
export * from './agent.js';
export * from './common.js';
export * from './decode.js';
export * from './directory.js';
export { renderEndpointReference } from './doc.js';
export * from './endpoints.js';
export * from './events.js';
export * from './host.js';
export * from './human.js';
export * from './mail.js';
export * from './permission.js';
export * from './routes.js';
export * from './web.js';
