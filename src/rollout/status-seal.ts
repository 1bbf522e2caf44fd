// The status annotation, sealed: an HMAC of the status and the StatefulSet's UID by a key only the
// controller reads. The status is the controller's record of where a rollout started and what it
// verified, and some of what it says lets pods go back without a gate (a rollback's restore, an undo).
// The webhook refuses status edits by anyone else, but an admission gap (a webhook entry that does not
// match, a policy disabled, the webhook unregistered, a StatefulSet deleted with --cascade=orphan and
// created again from `kubectl get -o yaml`) would let a hand-written or copied status through. A status
// whose seal does not verify is no record at all: the planner's safe path (src/rollout/plan.ts).
// Pure: node:crypto only.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { KEYS } from '../annotations.js';
import type { RolloutStatus } from './types.js';

/** StatusKeys: `sign` seals every status written; every key of `verify` (sign among them) is accepted. */
export interface StatusKeys {
  sign: Buffer;
  verify: readonly Buffer[];
}

/** Trust says what the status annotation of a StatefulSet is: none, sealed by one of our keys, or not. */
export type Trust = 'absent' | 'sealed' | 'unsealed' | 'forged';

/** mac is the seal of a status's JSON (without its seal) for the StatefulSet with this UID. */
function mac(key: Buffer, uid: string, body: string): string {
  return createHmac('sha256', key).update(uid).update('\n').update(body).digest('base64url');
}

/**
 * sealStatus is the annotation value of a status: its JSON with `seal` last, the HMAC of the JSON
 * before it and the StatefulSet's UID (a status copied onto another object, even one of the same name
 * made anew, does not verify). Without keys, the plain JSON.
 */
export function sealStatus(status: RolloutStatus, uid: string, keys: StatusKeys | undefined): string {
  const { seal: _old, ...rest } = status;
  const body = JSON.stringify(rest);
  if (!keys) return body;
  return `${body.slice(0, -1)},"seal":${JSON.stringify(mac(keys.sign, uid, body))}}`;
}

/**
 * statusTrust verifies the status annotation against the keys. JSON.stringify of the parsed object
 * less its seal gives back the bytes that were sealed: the value is written by sealStatus and parsed
 * by JSON.parse, which keeps the order of keys and the numbers as they were.
 */
export function statusTrust(annotations: Record<string, string>, uid: string, keys: StatusKeys): Trust {
  const raw = annotations[KEYS.status];
  if (raw === undefined) return 'absent';
  let o: unknown;
  try {
    o = JSON.parse(raw);
  } catch {
    return 'forged';
  }
  if (!o || typeof o !== 'object' || Array.isArray(o)) return 'forged';
  const { seal, ...rest } = o as Record<string, unknown>;
  if (seal === undefined) return 'unsealed';
  if (typeof seal !== 'string') return 'forged';
  const body = JSON.stringify(rest);
  const given = Buffer.from(seal);
  for (const key of keys.verify) {
    const want = Buffer.from(mac(key, uid, body));
    if (want.length === given.length && timingSafeEqual(want, given)) return 'sealed';
  }
  return 'forged';
}

/**
 * trustedAnnotations are the annotations the planner may read: as they are when the status is sealed
 * by one of the keys (or there are no keys: nothing is sealed), without the status otherwise.
 */
export function trustedAnnotations(annotations: Record<string, string>, uid: string, keys: StatusKeys | undefined): { annotations: Record<string, string>; trust: Trust } {
  if (!keys) return { annotations, trust: annotations[KEYS.status] === undefined ? 'absent' : 'sealed' };
  const trust = statusTrust(annotations, uid, keys);
  if (trust === 'absent' || trust === 'sealed') return { annotations, trust };
  const { [KEYS.status]: _dropped, ...rest } = annotations;
  return { annotations: rest, trust };
}

/**
 * parseStatusKeys reads the key Secret's data (base64-decoded): `key` signs and verifies, `previous`
 * (optional) only verifies, for a rotation. Each at least 32 bytes. Throws with what is wrong.
 */
export function parseStatusKeys(data: Record<string, Buffer>): StatusKeys {
  const sign = data.key;
  if (!sign || sign.length < 32) throw new Error('the status key Secret needs a data key "key" of at least 32 bytes');
  const previous = data.previous;
  if (previous !== undefined && previous.length < 32) throw new Error('the status key Secret\'s "previous" must be at least 32 bytes when present');
  return { sign, verify: previous ? [sign, previous] : [sign] };
}
