// What a program stack leaves open (src/sdk/program-handles.ts): named once the command is done,
// let go (unref, never closed), and forgotten once closed, so a long-lived Automation API process
// running program after program does not keep every handle a program ever opened.
import { describe, expect, it } from "vitest";
import {
  forgetClosedHandles,
  letProgramHandlesGo,
  programClosed,
  programOpened,
} from "../../src/sdk/program-handles.js";

function fakeHandle(open = true) {
  const h = { refd: open, unref: () => void (h.refd = false), hasRef: () => h.refd };
  return h;
}

describe("program handles", () => {
  it("names what is still open, lets it go, and starts over", () => {
    const server = fakeHandle();
    const child = fakeHandle();
    programOpened(1, "TCPSERVERWRAP", server);
    programOpened(2, "PROCESSWRAP", child);
    programOpened(3, "TCPWRAP", fakeHandle(false)); // closed since: not named
    programOpened(4, "TCPWRAP", fakeHandle());
    programClosed(4);
    expect(letProgramHandlesGo()).toBe("1 server and 1 child process");
    expect(server.refd || child.refd).toBe(false);
    expect(letProgramHandlesGo()).toBeUndefined();
  });

  it("forgets the handles closed while the hook was off", () => {
    const open = fakeHandle();
    const closed = fakeHandle();
    programOpened(10, "TCPWRAP", open);
    programOpened(11, "TCPWRAP", closed);
    closed.refd = false;
    expect(forgetClosedHandles()).toBe(1);
    expect(letProgramHandlesGo()).toBe("1 socket");
  });
});
