// ctxd's TypeScript client. See README.md.
export { CtxdClient } from './client.js';
export type { CreateSessionOptions, FinishOptions, ForkSessionOptions, RequestDefaults } from './options.js';
export type { CallOptions, ClientOptions, TlsOptions } from './transport.js';
export {
  AlreadyExistsError,
  ConflictError,
  CtxdError,
  DoesNotFitError,
  FailedPreconditionError,
  InvalidArgumentError,
  NotFoundError,
  OutOfRangeError,
  PermissionDeniedError,
  DeadlineExceededError,
  ResourceExhaustedError,
  UnauthenticatedError,
  UnavailableError,
  type ErrorInfo,
  type FieldViolation,
  type PreconditionViolation,
  type QuotaViolation,
  type StatusDetails,
} from './errors.js';
export { EventStream, type Event, type EventsOptions } from './events.js';
export type { RetryOptions } from './retry.js';
export type {
  AnthropicBlock,
  AnthropicMessagesBody,
  Bodies,
  BodyOf,
  GeminiBody,
  GeminiPart,
  NativeBlock,
  OpenAIChatBody,
  OpenAIChatMessage,
  OpenAIResponsesBody,
  ResponsesItem,
} from './bodies.js';
export type { LedgerNote, LedgerTodo, LedgerUpdate, UpdateLedgerResponse } from './ledger.js';
export type { SearchHit, SearchOptions } from './search.js';
export type { ListSessionsOptions } from './listing.js';
export {
  Session,
  type AppendOptions,
  type AppendResponseOptions,
  type AppendTurnOptions,
  type BuildOptions,
  type Built,
  type CheckOptions,
  type CompactModeName,
  type CompactOptions,
  type ExpandTarget,
  type NativeOptions,
  type RevertOptions,
  type RevertTarget,
  type SpawnOptions,
} from './session.js';
export { RECALL_TOOLS, ToolResult, isRecallTool, type Format, type JsonFormat, type MessageInput, type RoleName, type ToolInput, type ToolsInput } from './types.js';
export type { AppendTurnResponse__Output as AppendResult } from './gen/ctxd/v1/AppendTurnResponse.js';
export type { BudgetReport__Output as BudgetReport } from './gen/ctxd/v1/BudgetReport.js';
export type { ChildSession__Output as ChildSession } from './gen/ctxd/v1/ChildSession.js';
export type { CompactResponse__Output as CompactResult } from './gen/ctxd/v1/CompactResponse.js';
export type { EventKind } from './gen/ctxd/v1/EventKind.js';
export type { ExpandResponse__Output as ExpandResult } from './gen/ctxd/v1/ExpandResponse.js';
export type { FinishSessionResponse__Output as FinishResult } from './gen/ctxd/v1/FinishSessionResponse.js';
export type { RevertCompactionResponse__Output as RevertResult } from './gen/ctxd/v1/RevertCompactionResponse.js';
export type { GetSessionResponse__Output as SessionState } from './gen/ctxd/v1/GetSessionResponse.js';
export type { Job__Output as Job } from './gen/ctxd/v1/Job.js';
export type { Message__Output as Message } from './gen/ctxd/v1/Message.js';
export type { Policy } from './gen/ctxd/v1/Policy.js';
export type { Session__Output as SessionInfo } from './gen/ctxd/v1/Session.js';
export type { SubtreeTotals__Output as SubtreeTotals } from './gen/ctxd/v1/SubtreeTotals.js';
export type { Usage } from './gen/ctxd/v1/Usage.js';
