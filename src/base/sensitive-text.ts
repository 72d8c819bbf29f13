// What every view shows in place of a secret value (../config/redact.ts scrubs output of them).
export const SENSITIVE_TEXT = "(sensitive value)";
