export * from "./members.js";
export * from "./roles.js";
export * from "./conditions.js";
export * from "./policy.js";
