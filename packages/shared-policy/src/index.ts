export { PROTOCOL_VERSION } from '@agentmail/protocol';
