// The binding and member drivers' normalisation builds the members list once (no map(String) then
// a copy) and returns the same inputs and problems as the definition it replaced
// (test/drivers/reference/), on many seeded awkward inputs; normalizeOwnMembers agrees with
// normalizeMembers.
import { describe, expect, it } from "vitest";
import { normalizeMembers, normalizeOwnMembers } from "../../src/iam/members.js";
import {
  ENDPOINT_IAM_BINDING,
  ENDPOINT_IAM_MEMBER,
  RESTORE_PLAN_IAM_BINDING,
  RESTORE_PLAN_IAM_MEMBER,
  resourceDriver,
} from "../../src/drivers/registry.js";
import { normalizeInputs as reference } from "./reference/normalize-inputs-4615a91.js";
import { seededRandom } from "../support/seeded-random.js";

const MEMBERS = [
  "user:a@example.com",
  "user:A@Example.com",
  "user:b@example.com",
  "group:t@example.com",
  "serviceAccount:s@p.iam.gserviceaccount.com",
  "domain:example.com",
  "domain:bad_domain",
  "allUsers",
  "allAuthenticatedUsers",
  "principal://x/y",
  "principalSet://",
  "deleted:user:a@example.com?uid=1",
  "deleted:serviceAccount:S@x.com?uid=2",
  "usr:a@example.com",
  "user:a b@example.com",
  " user:a@example.com",
  "user:a@example",
  "",
  "nocolon",
  "\uD800x",
  "user:é@example.com",
];
const OTHER = [null, undefined, 3, true, { a: 1 }, ["x"]];
const NAMES = [
  "rp-1",
  "us-east1/rp-2",
  "projects/p/locations/l/restorePlans/rp-3",
  "projects/p/locations/l/endpoints/e-1",
  "e-2",
  "a/b/c",
  "",
  "bad name",
  null,
  7,
];
const ROLES = [
  "roles/x.y",
  "roles/viewer",
  "projects/abcdef/roles/custom_1",
  "organizations/12/roles/abc",
  "rolez/x",
  "roles/a b",
  "",
  null,
  5,
  "\uDC00",
];
const CONDITIONS = [
  undefined,
  null,
  { title: "t", expression: "true" },
  { title: "t", description: "", expression: "e" },
  { expression: "e", title: "t", description: "d", location: "x" },
];

function pick<T>(rand: () => number, xs: readonly T[]): T {
  return xs[Math.floor(rand() * xs.length)]!;
}

function memberList(rand: () => number): unknown {
  if (rand() < 0.05) return pick(rand, OTHER);
  const n = Math.floor(rand() * 6);
  const list: unknown[] = [];
  for (let i = 0; i < n; i++) list.push(rand() < 0.1 ? pick(rand, OTHER) : pick(rand, MEMBERS));
  return list;
}

function randomProperties(rand: () => number): Record<string, unknown> {
  const p: Record<string, unknown> = {};
  if (rand() < 0.95) p.name = pick(rand, NAMES);
  if (rand() < 0.95) p.role = pick(rand, ROLES);
  if (rand() < 0.9) p.members = memberList(rand);
  if (rand() < 0.9) p.member = rand() < 0.9 ? pick(rand, MEMBERS) : pick(rand, OTHER);
  const c = pick(rand, CONDITIONS);
  if (c !== undefined) p.condition = c;
  return p;
}

describe("binding and member normalisation", () => {
  it("gives the inputs and problems of the definition it replaced", () => {
    const rand = seededRandom(20261123);
    const tokens = [RESTORE_PLAN_IAM_BINDING, RESTORE_PLAN_IAM_MEMBER, ENDPOINT_IAM_BINDING, ENDPOINT_IAM_MEMBER];
    const defaultsList = [{ project: "bench-project", location: "us-central1" }, { project: "p" }, {}];
    for (let run = 0; run < 20_000; run++) {
      const driver = resourceDriver(pick(rand, tokens))!;
      const raw = randomProperties(rand);
      const defaults = pick(rand, defaultsList);
      let want: unknown;
      try {
        want = reference(
          { kind: driver.kind as never, ownership: driver.ownership as "binding" | "member" },
          raw,
          defaults,
        );
      } catch (e) {
        expect(() => driver.normalize({ ...raw }, defaults)).toThrow((e as Error).message);
        continue;
      }
      const got = driver.normalize({ ...raw }, defaults);
      expect(got).toStrictEqual(want);
      // The same keys in the same order (inputs are written to plans and state as JSON).
      expect(JSON.stringify(got)).toBe(JSON.stringify(want));
    }
  });

  it("keeps a hole in a sparse members list a hole, as before", () => {
    const driver = resourceDriver(RESTORE_PLAN_IAM_BINDING)!;
    // eslint-disable-next-line no-sparse-arrays
    const raw = { name: "rp-1", role: "roles/x.y", members: ["user:a@example.com", , "user:b@example.com"] };
    const defaults = { project: "p", location: "l" };
    let want: unknown;
    let wantError: string | undefined;
    try {
      want = reference({ kind: driver.kind as never, ownership: "binding" }, raw, defaults);
    } catch (e) {
      wantError = (e as Error).message;
    }
    if (wantError !== undefined) expect(() => driver.normalize({ ...raw }, defaults)).toThrow(wantError);
    else expect(driver.normalize({ ...raw }, defaults)).toStrictEqual(want);
  });

  it("normalizeOwnMembers gives what normalizeMembers gives (the list itself when already normal)", () => {
    const rand = seededRandom(99);
    for (let run = 0; run < 5000; run++) {
      const list = Array.from({ length: Math.floor(rand() * 6) }, () =>
        pick(
          rand,
          MEMBERS.filter((m) => m !== "\uD800x"),
        ),
      );
      const own = [...list];
      const got = normalizeOwnMembers(own);
      expect(got).toStrictEqual(normalizeMembers(list));
      expect(own).toStrictEqual(list);
    }
  });
});
