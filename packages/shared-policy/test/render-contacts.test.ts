import type { Contact } from '@agentmail/protocol';
import { describe, expect, it } from 'vitest';
import { renderContacts } from '../src/index.js';

const base = {
  platform: '',
  online: false,
  last_seen: null,
  offline_since: null,
  workspaces: [],
  sandbox: null,
};

describe('list_contacts (renderContacts)', () => {
  it('regression (issue 20): a person shows no presence ("last seen" is an agent\'s heartbeat, G-25); an agent does', () => {
    const contacts: Contact[] = [
      { ...base, name: 'admin', kind: 'person', address: 'admin@.' },
      { ...base, name: 'echo', kind: 'agent', platform: 'pi', address: 'echo@.' },
      { ...base, name: 'pi', kind: 'agent', platform: 'pi', online: true, address: 'pi@.' },
    ];
    const lines = renderContacts({ contacts }, 'en').split('\n');
    expect(lines).toContain('- admin (person) <admin@.>');
    expect(lines.find((l) => l.startsWith('- admin'))).not.toMatch(/last seen|never|offline/);
    expect(lines).toContain('- echo (agent) <echo@.> · offline, last seen: never · Platform: pi');
    expect(lines).toContain('- pi (agent) <pi@.> · online · Platform: pi');
    // The same in Chinese: no presence words on a person's line.
    const zh = renderContacts({ contacts }, 'zh-CN').split('\n');
    expect(zh.find((l) => l.startsWith('- admin'))).not.toMatch(/从未/);
  });
});
