// The emulator's schema messages are the shared ones (src/schemas/problem.ts).
export { schemaProblem } from "../schemas/problem.js";
