// The crash tests' waitForLine (./helpers.ts) must not mistake a child that printed its line and
// exited at once for one that printed nothing: node may emit "exit" before the pipe's last data
// (seen once in a clean-clone run: "child exited (0) before printing /^(WON|LOST) /"). Here a fake
// child emits them in that order, deterministically.
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { waitForLine } from "./helpers.js";

function fakeChild() {
  const proc = new EventEmitter() as EventEmitter & { stdout: EventEmitter; stderr: EventEmitter };
  proc.stdout = new EventEmitter();
  proc.stderr = new EventEmitter();
  return proc;
}

describe("waitForLine", () => {
  it("finds a line whose data arrives after the child's exit event, before its close", async () => {
    const proc = fakeChild();
    const line = waitForLine(proc as never, /^(WON|LOST) /);
    proc.emit("exit", 0, null);
    proc.stdout.emit("data", Buffer.from("LOST state is locked\n"));
    proc.emit("close", 0, null);
    await expect(line).resolves.toBe("LOST state is locked");
  });

  it("rejects when the output ends without the line", async () => {
    const proc = fakeChild();
    const line = waitForLine(proc as never, /^(WON|LOST) /);
    proc.stdout.emit("data", Buffer.from("something else\n"));
    proc.emit("exit", 1, null);
    proc.emit("close", 1, null);
    await expect(line).rejects.toThrow(/child exited \(1\) before printing/);
  });
});
