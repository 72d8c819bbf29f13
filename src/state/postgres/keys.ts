// Advisory lock keys: two int4 from a sha256 of the parts, so the (schema, stack, workspace)
// lock of one converge schema never collides with another's, nor with the migration lock.
import { createHash } from "node:crypto";

export function advisoryKey(...parts: string[]): [number, number] {
  const h = createHash("sha256")
    .update(["converge", ...parts].join("\u0000"))
    .digest();
  return [h.readInt32BE(0), h.readInt32BE(4)];
}

/**
 * SQL: whether session `pid` holds the session advisory lock (`k1`, `k2`) now (each an SQL
 * expression: a parameter or a column). pg_locks keeps the two int4 keys as unsigned oids in
 * classid and objid (objsubid 2).
 */
export function advisoryHeld(k1: string, k2: string, pid: string): string {
  return (
    `EXISTS (SELECT 1 FROM pg_locks held WHERE held.locktype = 'advisory' AND held.granted AND held.objsubid ` +
    `= 2
  AND held.classid::bigint = (${k1}::bigint & 4294967295) AND held.objid::bigint = (${k2}::bigint & ` +
    `4294967295) AND held.pid = ${pid})`
  );
}
