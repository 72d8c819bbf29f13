// --backend's choices are written in src/cli/common.ts so that loading it does not load every
// state backend (validate's start-up): they must stay state/factory.ts's BACKEND_TYPES.
import { describe, expect, it } from "vitest";
import { BACKEND_CHOICES, backendOption } from "../../src/cli/common.js";
import { BACKEND_TYPES } from "../../src/state/factory.js";

describe("--backend choices", () => {
  it("are the state backends", () => {
    expect(BACKEND_CHOICES).toEqual(BACKEND_TYPES);
    expect(backendOption().argChoices).toEqual([...BACKEND_TYPES]);
  });
});
