// The options of the calls that make and end sessions, shared by the client and the
// session handles.
import type { Policy } from './gen/ctxd/v1/Policy.js';
import type { ToolsInput } from './types.js';

/** What `build` and `check` use when a call does not say (kept in the handle, not on the server). */
export interface RequestDefaults {
  systemPrompt?: string;
  tools?: ToolsInput;
}

/**
 * A session's options at creation; unset policy fields take the server's defaults. The
 * system prompt and tools are the handle's defaults for build and check.
 */
export interface CreateSessionOptions extends RequestDefaults {
  /** 1 to 128 characters from [A-Za-z0-9._:-]; omitted: the server generates one. */
  id?: string;
  policy?: Policy;
  metadata?: Record<string, string>;
  /**
   * Makes the session a subagent's: the child of this session, spawned by its tool call
   * `parentToolCallId` (one it made and has not answered). See `Session.spawn`.
   */
  parentSessionId?: string;
  parentToolCallId?: string;
}

/**
 * A fork's options: unset policy fields keep the source's (the tokenizer cannot change);
 * metadata entries are set over the source's. The system prompt and tools are the fork
 * handle's defaults for build and check.
 */
export interface ForkSessionOptions extends RequestDefaults {
  /** The fork's id, as createSession's; omitted: the server generates one. */
  id?: string;
  /** The source's last seq the fork shares, from 0 (nothing); omitted: the source's last seq. */
  atSeq?: number;
  policy?: Policy;
  metadata?: Record<string, string>;
}

export interface FinishOptions {
  /**
   * Append the final answer to the parent as the result of the tool call that spawned
   * the session (default: when there is a final answer).
   */
  appendToParent?: boolean;
}
