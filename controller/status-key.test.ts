import type { CoreV1Api, V1Secret } from '@kubernetes/client-node';
import { loadStatusKeys, parseSecretRef } from './status-key.js';

/** apiError is what client-node throws for an HTTP status. */
const apiError = (code: number) => Object.assign(new Error(`HTTP ${code}`), { code });

function fakeCore(o: { existing?: V1Secret; raceWith?: V1Secret }) {
  const calls: string[] = [];
  let stored = o.existing;
  const core = {
    readNamespacedSecret: async ({ name, namespace }: { name: string; namespace: string }) => {
      calls.push(`read ${namespace}/${name}`);
      if (!stored) throw apiError(404);
      return stored;
    },
    createNamespacedSecret: async ({ body }: { namespace: string; body: V1Secret }) => {
      calls.push(`create ${body.metadata?.namespace}/${body.metadata?.name}`);
      if (o.raceWith) {
        stored = o.raceWith;
        throw apiError(409);
      }
      stored = body;
      return body;
    },
  };
  return { core: core as unknown as CoreV1Api, calls };
}

const secret = (key: Buffer, previous?: Buffer): V1Secret => ({ data: { key: key.toString('base64'), ...(previous ? { previous: previous.toString('base64') } : {}) } });

describe('the status key Secret', () => {
  it('is read when it exists, previous key included', async () => {
    const { core, calls } = fakeCore({ existing: secret(Buffer.alloc(32, 7), Buffer.alloc(32, 6)) });
    const got = await loadStatusKeys(core, 'phased-rollout-system/status-key');
    expect(got.created).toBe(false);
    expect(got.keys.sign.equals(Buffer.alloc(32, 7))).toBe(true);
    expect(got.keys.verify).toHaveLength(2);
    expect(calls).toEqual(['read phased-rollout-system/status-key']);
  });

  it('is made with a random 32-byte key when absent, and two starts never make two keys', async () => {
    const { core, calls } = fakeCore({});
    const a = await loadStatusKeys(core, 'ns/k');
    expect(a.created).toBe(true);
    expect(a.keys.sign).toHaveLength(32);
    expect((await loadStatusKeys(core, 'ns/k')).keys.sign.equals(a.keys.sign)).toBe(true);
    expect(calls).toEqual(['read ns/k', 'create ns/k', 'read ns/k']);
    // Another replica made it between our read and our create: its key is used.
    const theirs = Buffer.alloc(32, 9);
    const race = fakeCore({ raceWith: secret(theirs) });
    expect((await loadStatusKeys(race.core, 'ns/k')).keys.sign.equals(theirs)).toBe(true);
  });

  it('a key that is too short, or a reference that is not NAMESPACE/NAME, is an error', async () => {
    await expect(loadStatusKeys(fakeCore({ existing: secret(Buffer.alloc(4)) }).core, 'ns/k')).rejects.toThrow('at least 32 bytes');
    expect(() => parseSecretRef('just-a-name')).toThrow('NAMESPACE/NAME');
    expect(parseSecretRef('a/b.c')).toEqual({ namespace: 'a', name: 'b.c' });
  });
});
