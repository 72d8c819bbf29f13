// The per-resource baseline as a CloudPort wrapper: what the engine's calls cost when every
// resource is its own read and its own read-modify-write, as Terraform's Google provider (and
// Pulumi's google-native) do.
//
//   refresh  one getIamPolicy per state resource on the policy (one after the other, inside the
//            engine's parallelism slot); a policy that holds no state resource is not read at
//            all (an empty policy is returned: such a provider reads nothing before a create)
//   apply    one read + one write per changed resource, serialised per policy: the batched
//            modifications are split per resource and each goes through its own
//            read-modify-write; the policy the plan read is not used
//
// Resources are told apart in a batch by their modifications: each resource brings one, except a
// replacement on one object, whose revoke is followed by a grant of the same role.

const REVOKES = new Set(["removeBinding", "removeMember"]);

/** The batch split into each resource's modifications. */
export function perResourceChunks(mods) {
  const chunks = [];
  for (let i = 0; i < mods.length; i++) {
    const m = mods[i];
    const next = mods[i + 1];
    if (REVOKES.has(m.kind) && next && !REVOKES.has(next.kind) && next.role === m.role) {
      chunks.push([m, next]);
      i++;
    } else chunks.push([m]);
  }
  return chunks;
}

/** `counts`: resources in the state per policy name. */
export function perResourcePort(inner, counts) {
  return {
    async getIamPolicy(kind, name, signal) {
      const k = counts.get(name) ?? 0;
      if (k === 0) return { version: 1, bindings: [], etag: "" };
      let policy;
      for (let i = 0; i < k; i++) policy = await inner.getIamPolicy(kind, name, signal);
      return policy;
    },
    getFederation: (name, signal) => inner.getFederation(name, signal),
    async modifyPolicy(kind, name, mods, _initial, signal) {
      let out;
      let attempts = 0;
      let written = false;
      for (const chunk of perResourceChunks(mods)) {
        out = await inner.modifyPolicy(kind, name, chunk, undefined, signal);
        attempts += out.attempts;
        written ||= out.written;
      }
      return out ? { policy: out.policy, written, attempts } : inner.modifyPolicy(kind, name, [], undefined, signal);
    },
  };
}
