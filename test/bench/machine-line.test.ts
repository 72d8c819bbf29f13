// The bench's machine line: the calibration (how fast the host was) when the results have it.
import { describe, expect, it } from "vitest";
import { machineLine, type Machine } from "../../bench/report.js";

const machine: Machine = {
  cpus: [
    { model: "AMD EPYC", speedMHz: 2000 },
    { model: "AMD EPYC", speedMHz: 2000 },
  ],
  cpuCount: 2,
  totalMemoryMB: 24064,
  platform: "linux",
  release: "6.1",
  arch: "x64",
  node: "20.20.2",
  gnuTime: true,
};

describe("machineLine", () => {
  it("names the calibration's times when the results hold them, and reads older results without them", () => {
    expect(machineLine({ ...machine, calibrationMs: { before: 734, after: 760 } })).toContain(
      "took 734 ms before the run and 760 ms after it",
    );
    expect(machineLine(machine)).toBe(
      "2 × AMD EPYC, 23.5 GiB RAM, linux 6.1 x64, Node 20.20.2; CPU and peak RSS from GNU time (/usr/bin/time)",
    );
  });
});
