// The emulator is the end-to-end tests' oracle: it must answer per Google even when the client's
// IAM rules are wrong. Here the client's member rules are deliberately broken (a `user:` member
// without "@" passes validation; federated identifiers compare case-insensitively) for the whole
// module graph of this file — the client and the in-process emulator alike. An emulator that
// borrowed the client's rules would agree with the broken client; this one must not.
import { describe, expect, it, vi } from "vitest";
import { CloudError } from "../../src/cloud/errors.js";
import { modifyPolicy } from "../../src/cloud/policy-engine.js";
import { resourceDriver, ENDPOINT_IAM_MEMBER } from "../../src/drivers/registry.js";
import { memberKey, memberProblem } from "../../src/iam/members.js";
import { EP, emulatorClient, ROLE, RP2, useResetEmulator } from "../cloud/emulator-helpers.js";

vi.mock("../../src/iam/members.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../src/iam/members.js")>();
  return {
    ...real,
    memberProblem: (m: string) => (/^user:[^@\s]+$/.test(m) ? undefined : real.memberProblem(m)),
    memberKey: (m: string) => (m.startsWith("principal://") ? m.toLowerCase() : real.memberKey(m)),
  };
});

const emu = useResetEmulator();
const POOL = "principal://iam.googleapis.com/locations/global/workforcePools/staff-pool/subject";

describe("the emulator against a deliberately broken client rule", () => {
  it("refuses a user: member without '@' that the broken client validates and sends", async () => {
    // The bug is in effect on the client side: its validation and its driver accept the member.
    expect(memberProblem("user:alice")).toBeUndefined();
    const driver = resourceDriver(ENDPOINT_IAM_MEMBER)!;
    expect(driver.normalize({ name: EP, role: ROLE, member: "user:alice" }, {}).problems).toEqual([]);

    const client = emulatorClient(emu.hostPort);
    const write = modifyPolicy(client, "endpoint", EP, [{ kind: "addMember", role: ROLE, member: "user:alice" }]);
    const refused = await write.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(CloudError);
    expect((refused as CloudError).status).toBe("INVALID_ARGUMENT");
    expect((refused as CloudError).message).toContain("user:alice");
    const live = await client.getIamPolicy("endpoint", EP);
    expect(live.bindings?.flatMap((b) => b.members)).not.toContain("user:alice");
  });

  it("keeps two federated principals the broken client thinks are one", async () => {
    const upper = `${POOL}/Alice`;
    const lower = `${POOL}/alice`;
    expect(memberKey(upper)).toBe(memberKey(lower));

    const client = emulatorClient(emu.hostPort);
    const written = await client.setIamPolicy("restorePlan", RP2, {
      bindings: [
        { role: ROLE, members: [upper] },
        { role: ROLE, members: [lower, "user:Bob@example.com"] },
        { role: ROLE, members: ["user:bob@example.com"] },
      ],
    });
    // One binding (same role, no condition), Alice and alice distinct, Bob once (emails are case-insensitive).
    expect(written.bindings).toEqual([{ role: ROLE, members: [upper, lower, "user:Bob@example.com"] }]);
    const live = await client.getIamPolicy("restorePlan", RP2);
    expect(live.bindings).toEqual(written.bindings);
  });
});
