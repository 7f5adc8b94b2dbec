// ctxd's TypeScript client. See README.md.
export { CtxdClient } from './client.js';
export { AlreadyExistsError, ConflictError, CtxdError, DoesNotFitError, FailedPreconditionError, InvalidArgumentError, NotFoundError, OutOfRangeError, PermissionDeniedError, DeadlineExceededError, ResourceExhaustedError, UnauthenticatedError, UnavailableError, } from './errors.js';
export { EventStream } from './events.js';
export { Session, } from './session.js';
export { RECALL_TOOLS, ToolResult, isRecallTool } from './types.js';
