// Google's error envelope (google.rpc.Status as JSON) and its HTTP mapping, so that clients see
// exactly what the real APIs send.

/** Canonical codes with the HTTP status Google's front end maps each one to. */
export const HTTP_STATUS = {
  CANCELLED: 499,
  UNKNOWN: 500,
  INVALID_ARGUMENT: 400,
  DEADLINE_EXCEEDED: 504,
  NOT_FOUND: 404,
  ALREADY_EXISTS: 409,
  PERMISSION_DENIED: 403,
  UNAUTHENTICATED: 401,
  RESOURCE_EXHAUSTED: 429,
  FAILED_PRECONDITION: 400,
  ABORTED: 409,
  OUT_OF_RANGE: 400,
  UNIMPLEMENTED: 501,
  INTERNAL: 500,
  UNAVAILABLE: 503,
  DATA_LOSS: 500,
} as const;

export type CanonicalCode = keyof typeof HTTP_STATUS;

export function isCanonicalCode(s: string): s is CanonicalCode {
  return Object.prototype.hasOwnProperty.call(HTTP_STATUS, s);
}

export const JSON_CONTENT_TYPE = "application/json; charset=UTF-8";

/** An error answered to the client; thrown or returned by handlers, rendered by the server. */
export class ApiError extends Error {
  readonly status: CanonicalCode;
  readonly reason: string;
  readonly metadata: Record<string, string>;
  /** Extra google.rpc detail messages after the ErrorInfo (BadRequest, RetryInfo…). */
  readonly extraDetails: Record<string, unknown>[];
  readonly headers: Record<string, string>;

  constructor(
    status: CanonicalCode,
    message: string,
    opts: {
      reason?: string;
      metadata?: Record<string, string>;
      details?: Record<string, unknown>[];
      headers?: Record<string, string>;
    } = {},
  ) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.reason = opts.reason ?? status;
    this.metadata = opts.metadata ?? {};
    this.extraDetails = opts.details ?? [];
    this.headers = opts.headers ?? {};
  }

  get httpStatus(): number {
    return HTTP_STATUS[this.status];
  }

  toJSON(): unknown {
    return {
      error: {
        code: this.httpStatus,
        message: this.message,
        status: this.status,
        details: [
          {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            reason: this.reason,
            domain: "googleapis.com",
            metadata: this.metadata,
          },
          ...this.extraDetails,
        ],
      },
    };
  }
}

export function invalidArgument(message: string, field?: string, metadata: Record<string, string> = {}): ApiError {
  return new ApiError("INVALID_ARGUMENT", message, {
    reason: "BAD_REQUEST",
    metadata,
    details: field
      ? [{ "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [{ field, description: message }] }]
      : [],
  });
}

export function notFound(message: string, resource?: string): ApiError {
  return new ApiError("NOT_FOUND", message, { reason: "RESOURCE_NOT_FOUND", metadata: resource ? { resource } : {} });
}
