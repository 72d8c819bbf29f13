// The local file backend passes the state-store conformance suite.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { localStateStore } from "../../src/state/index.js";
import { stateStoreConformance } from "./conformance.js";
import { tempDir } from "./helpers.js";

stateStoreConformance("local file", async (stack) => {
  const { dir, cleanup } = await tempDir();
  const path = join(dir, "state", `${stack}.json`);
  return {
    store: localStateStore(path, { stack }),
    second: () => localStateStore(path, { stack }),
    cleanup,
    plant: (text) => writeFile(path, text),
    otherStack: (other) => localStateStore(join(dir, "state", `${other}.json`), { stack: other }),
  };
});
