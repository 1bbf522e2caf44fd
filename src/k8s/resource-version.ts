// Ordering two versions of one object, for read-your-writes (our last write against the cache).
//
// The API conventions call resourceVersion opaque: clients may compare for equality only. The one
// storage kube-apiserver has (etcd3) makes it the etcd revision of the object's last write, a decimal
// integer that grows with every write in the cluster, and the watch cache and LISTs compare them as
// such. So two versions of the same object (same UID) from one API server order as integers. Compared
// exactly (BigInt: a revision can outgrow 2^53 on a long-lived, busy cluster). Anything else cannot
// be ordered and the cache is taken. For a StatefulSet's own steps that is only slower: every step
// patches with `test` ops on the generation and the partition, so a decision made on a stale view is
// refused (422) and made again. For a group peer's last step it would matter (a peer mid-step could
// look settled), which is why this refuses to guess rather than trust a lexical or float order; built-in
// resources such as StatefulSets are stored in etcd3 by every kube-apiserver, so it does not arise.

const DECIMAL = /^(0|[1-9][0-9]*)$/;

/** newerVersion is true when resourceVersion `a` is known to be later than `b`; false when not or unknown. */
export function newerVersion(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined || !DECIMAL.test(a) || !DECIMAL.test(b)) return false;
  return BigInt(a) > BigInt(b);
}
