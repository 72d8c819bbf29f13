// Public surface of the cloud layer.
export * from "./errors.js";
export * from "./retry.js";
export * from "./endpoint.js";
export * from "./auth.js";
export * from "./transport.js";
export * from "./client.js";
export * from "./policy-engine.js";
export * from "./policy-batcher.js";
export * from "./names.js";
